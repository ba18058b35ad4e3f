// Load for bench/server-cost.js: one lane, one operation, VUS VUs for SECONDS,
// straight to a reference server. The bench reads the server's CPU time around
// the run and divides it by `ops` (operations answered right); `op_errors`
// counts the rest. Bare k6 calls with cheap checks, so k6 spends as little of
// the shared CPU as it can.
//
//   -e LANE=h1|h1-fresh|h1-tls|h2|ws|wss|grpc|connect-grpc|connect-json|connect-proto|grpc-web
//   -e OP=book|payload  -e URL=<http(s) or ws(s) URL> | -e ADDR=<host:port>  -e VUS=8 -e SECONDS=5
// book: study 000's alternating query and mutation (bookOperation); over gRPC,
// Connect and gRPC-Web GetBook, which has no mutation beside it. payload:
// payload(size: 100000) / Payload(size: 100000). h1-tls is HTTP/1.1 over TLS: k6
// offers h2 by ALPN, so the bench runs this lane with GODEBUG=http2client=0 and
// the check below proves which protocol answered. grpc and connect-grpc are the
// same gRPC calls (ADDR: the grpc-js server's port or the Connect server's h2c
// port); connect-json, connect-proto and grpc-web are the browser's RPC on the
// Connect server's HTTP/1.1 port, keep-alive (URL: its base, http://host:port).
import http from 'k6/http';
import exec from 'k6/execution';
import grpc from 'k6/net/grpc';
import { Counter } from 'k6/metrics';
import { WebSocket } from 'k6/websockets';
import { PAYLOAD_QUERY, bookId, bookOperation } from '../../scenarios/lib/queries.js';
import { rawSetting, setting } from '../../common/settings.js';
import {
  BOOKS_METHODS,
  BOOKS_SERVICE,
  RPC_PROTOCOLS,
  judgeRpc,
  requestBody,
  validateRpcPayload,
} from '../../scenarios/lib/rpc-web.js';

const LANE = rawSetting(__ENV, 'LANE');
const OP = rawSetting(__ENV, 'OP');
const URL = rawSetting(__ENV, 'URL');
const ADDR = rawSetting(__ENV, 'ADDR');
const VUS = setting(__ENV, 'VUS', 8);
const SECONDS = setting(__ENV, 'SECONDS', 5);
export const PAYLOAD_SIZE = 100000;
// A socket's operations stop at the slot's end or at this count, whichever comes first.
const MAX_WS_OPS = 1000000;

const ops = new Counter('ops');
const opErrors = new Counter('op_errors');

export const options = {
  scenarios: { load: { executor: 'constant-vus', vus: VUS, duration: `${SECONDS}s`, gracefulStop: '5s' } },
  insecureSkipTLSVerify: true,
  summaryTrendStats: ['med', 'count'],
};

const PROTO = {
  h1: 'HTTP/1.1',
  'h1-fresh': 'HTTP/1.1',
  'h1-tls': 'HTTP/1.1',
  h2: 'HTTP/2.0',
  'connect-json': 'HTTP/1.1',
  'connect-proto': 'HTTP/1.1',
  'grpc-web': 'HTTP/1.1',
};

// The i-th operation of this VU as { query, variables, expect }: `expect` is a
// string the answer must contain.
function operation(i) {
  if (OP === 'payload')
    return { query: PAYLOAD_QUERY, variables: { size: PAYLOAD_SIZE }, expect: `"size":${PAYLOAD_SIZE}` };
  const op = bookOperation(__VU, i);
  return { query: op.query, variables: op.variables, expect: `"${op.variables.id}"` };
}

let logged = 0; // the first few failures of each VU are printed
function count(ok, what) {
  if (ok) return ops.add(1);
  opErrors.add(1);
  if (logged++ < 3) console.error(`${LANE} ${OP}: ${what}`);
}

// ---- GraphQL over HTTP ----

const HEADERS = { 'Content-Type': 'application/json' };
const FRESH_HEADERS = { 'Content-Type': 'application/json', Connection: 'close' };

function httpOp() {
  const op = operation(exec.vu.iterationInScenario);
  const res = http.post(URL, JSON.stringify({ query: op.query, variables: op.variables }), {
    headers: LANE === 'h1-fresh' ? FRESH_HEADERS : HEADERS,
  });
  const body = typeof res.body === 'string' ? res.body : '';
  const ok =
    res.status === 200 &&
    res.proto === PROTO[LANE] &&
    body.indexOf('"errors"') === -1 &&
    body.indexOf(op.expect) !== -1;
  count(ok, `status ${res.status} ${res.proto} ${res.error || body.slice(0, 200)}`);
}

// ---- GraphQL over WebSocket: one socket per VU, operations one after another ----

function wsOps() {
  const end = exec.scenario.startTime + SECONDS * 1000;
  return new Promise((resolve) => {
    const ws = new WebSocket(URL, 'graphql-transport-ws');
    let n = 0;
    let current = null;
    const subscribe = () => {
      current = operation(n);
      n += 1;
      ws.send(
        JSON.stringify({
          id: String(n),
          type: 'subscribe',
          payload: { query: current.query, variables: current.variables },
        }),
      );
    };
    ws.onopen = () => ws.send('{"type":"connection_init"}');
    ws.onmessage = (e) => {
      const data = e.data;
      const head = data.slice(0, 60);
      if (head.indexOf('"type":"next"') !== -1) {
        count(head.indexOf('"payload":{"errors"') === -1 && data.indexOf(current.expect) !== -1, data.slice(0, 200));
      } else if (head.indexOf('"type":"complete"') !== -1 || head.indexOf('"type":"connection_ack"') !== -1) {
        if (Date.now() < end && n < MAX_WS_OPS) subscribe();
        else ws.close();
      } else {
        count(false, data.slice(0, 200));
        ws.close();
      }
    };
    ws.onerror = (e) => {
      count(false, String(e.error));
    };
    ws.onclose = () => resolve();
  });
}

// GetBook's id for this VU's current call (gRPC, Connect and gRPC-Web alike).
const rpcBookId = () => bookId(1 + ((__VU * 7919 + exec.vu.iterationInScenario) % 1000));

// ---- gRPC (plaintext, one warm channel per VU) ----

const client = new grpc.Client();
client.load([import.meta.resolve('../../servers/proto').replace(/^file:\/\//, '')], 'books.proto');
let connected = false;

function grpcOp() {
  if (!connected) {
    client.connect(ADDR, { plaintext: true });
    connected = true;
  }
  if (OP === 'payload') {
    const res = client.invoke('books.v1.Books/Payload', { size: PAYLOAD_SIZE });
    count(
      res.status === grpc.StatusOK && res.message && res.message.data.length === PAYLOAD_SIZE,
      `status ${res.status} ${res.error && res.error.message}`,
    );
  } else {
    const id = rpcBookId();
    const res = client.invoke('books.v1.Books/GetBook', { id });
    count(
      res.status === grpc.StatusOK && res.message && res.message.id === id,
      `status ${res.status} ${res.error && res.error.message}`,
    );
  }
}

// ---- the browser's RPC on the Connect server: Connect JSON, Connect protobuf, gRPC-Web ----
// HTTP/1.1 keep-alive (k6's default). The request as scenarios/lib/rpc-web.js makes
// it (requestBody, the protocol's headers); protobuf and gRPC-Web answers judged by
// its judgeRpc (frames, trailers, grpc-status, the message), cheap on binary; a JSON
// answer by string search, as the GraphQL lanes', not JSON.parse of 100 KB in k6.

const RPC_PROTOCOL = RPC_PROTOCOLS[LANE] ? LANE : null; // the lanes are named as rpc-web.js's protocols
const RPC_METHOD = OP === 'payload' ? 'Payload' : 'GetBook';
const RPC_URL = `${URL}/${BOOKS_SERVICE}/${RPC_METHOD}`;
const RPC_PARAMS = RPC_PROTOCOL && {
  headers: {
    'Content-Type': RPC_PROTOCOLS[RPC_PROTOCOL].contentType,
    ...(RPC_PROTOCOL === 'grpc-web' ? { 'X-Grpc-Web': '1' } : { 'Connect-Protocol-Version': '1' }),
  },
  responseType: RPC_PROTOCOLS[RPC_PROTOCOL].binary ? 'binary' : 'text',
};
const validatePayload = validateRpcPayload(PAYLOAD_SIZE);
const PAYLOAD_BODY = RPC_PROTOCOL && requestBody(RPC_PROTOCOL, BOOKS_METHODS.Payload, { size: PAYLOAD_SIZE });

function rpcWebOp() {
  const id = OP === 'payload' ? null : rpcBookId();
  const body = id === null ? PAYLOAD_BODY : requestBody(RPC_PROTOCOL, BOOKS_METHODS.GetBook, { id });
  const res = http.post(RPC_URL, body, RPC_PARAMS);
  if (res.proto !== PROTO[LANE] && res.status !== 0)
    return count(false, `status ${res.status} over ${res.proto}, not ${PROTO[LANE]}`);
  if (RPC_PROTOCOL === 'connect-json') {
    const text = typeof res.body === 'string' ? res.body : '';
    const type = String(res.headers['Content-Type'] || '');
    const ok =
      res.status === 200 &&
      type.startsWith('application/json') &&
      (id === null
        ? text.length > PAYLOAD_SIZE && text.indexOf(`"size":${PAYLOAD_SIZE}`) !== -1
        : text.indexOf(`"id":"${id}"`) !== -1);
    return count(ok, `status ${res.status} ${type} ${res.error || text.slice(0, 200)}`);
  }
  const verdict = judgeRpc(res, {
    protocol: RPC_PROTOCOL,
    transport: 'http-keepalive',
    method: BOOKS_METHODS[RPC_METHOD],
    validate: id === null ? validatePayload : (m) => (m.id === id ? null : `book ${id} expected, got ${m.id}`),
  });
  return count(verdict.ok, verdict.reason);
}

const LANES = {
  h1: httpOp,
  'h1-fresh': httpOp,
  'h1-tls': httpOp,
  h2: httpOp,
  ws: wsOps,
  wss: wsOps,
  grpc: grpcOp,
  'connect-grpc': grpcOp,
  'connect-json': rpcWebOp,
  'connect-proto': rpcWebOp,
  'grpc-web': rpcWebOp,
};
if (!LANES[LANE]) throw new Error(`LANE=${LANE}: use one of ${Object.keys(LANES).join(', ')}`);
if (OP !== 'book' && OP !== 'payload') throw new Error(`OP=${OP}: use book or payload`);

export default function () {
  return LANES[LANE]();
}
