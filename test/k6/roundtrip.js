// Probe for test/roundtrip.test.js: what connection set-up and warm operations cost
// under a network profile. One VU, one iteration; each operation runs SAMPLES times
// back to back after one unrecorded warm-up, wall-clock per operation.
//
//   k6 run -e PROFILE=3g -e SAMPLES=5 test/k6/roundtrip.js   (against `npx k6pack up`)
//
// Trends (ms, tagged with the profile):
//   http_warm    GraphQL POST on a kept-alive HTTP/1.1 connection          R
//   http_big     the same, answered with BIG_BYTES of payload              R + bytes/down-rate + server time
//                (big_server: the server's own time, from its Server-Timing header)
//   http_fresh   the same with `Connection: close`: a new TCP connection   2R
//   https_fresh  the same over TLS 1.3: TCP + TLS handshakes              3R
//   ws_open      WebSocket connect + graphql-transport-ws init/ack         3R
//   wss_open     the same over TLS                                         4R
//   ws_op        subscribe -> next on an open socket                       R
//   grpc_warm    unary GetBook on a connected channel                      R
//   grpc_fresh   connect a channel + the first unary call                  3R
// -e KEEP_TOXICS=1 leaves Toxiproxy alone (the caller applied the toxics itself).
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { WebSocket } from 'k6/websockets';
import { Trend } from 'k6/metrics';
import { TARGET_DEFAULTS } from '../../common/defaults.js';
import { applyNetwork, networkProfile, profileTags, restoreNetwork } from '../../scenarios/lib/network.js';

const profile = networkProfile('lan');
const keepToxics = Boolean(__ENV.KEEP_TOXICS);
const SAMPLES = Number(__ENV.SAMPLES || 5);
const env = (name) => __ENV[name] || TARGET_DEFAULTS[name];
// Fresh-connection requests go to another host name (same address), so they never pick up
// the kept-alive connection from the pool, and never close it.
const FRESH_HOST = 'fresh.k6pack.test';
const fresh = (url) => url.replace('127.0.0.1', FRESH_HOST);

export const options = {
  vus: 1,
  iterations: 1,
  insecureSkipTLSVerify: true, // the servers' self-signed certificate
  hosts: { [FRESH_HOST]: '127.0.0.1' },
  tlsVersion: { min: 'tls1.3', max: 'tls1.3' },
  summaryTrendStats: ['min', 'med', 'max', 'count'],
};

export const OPS = [
  'http_warm',
  'http_big',
  'big_server',
  'http_fresh',
  'https_fresh',
  'ws_open',
  'wss_open',
  'ws_op',
  'grpc_warm',
  'grpc_fresh',
];
const trends = Object.fromEntries(OPS.map((op) => [op, new Trend(op, true)]));
const record = (op, ms) => trends[op].add(ms, profileTags(profile));

// One channel kept for the run, one connected and closed per sample (load() is init-only).
const [warmClient, freshClient] = [new grpc.Client(), new grpc.Client()];
for (const c of [warmClient, freshClient]) c.load(['../../servers/proto'], 'books.proto');

const QUERY = '{ book(id: "book-1") { id name } }';
const BIG_BYTES = Number(__ENV.BIG_BYTES || 100000);
const BIG_QUERY = `{ payload(size: ${BIG_BYTES}) { size data } }`;

export function setup() {
  return keepToxics ? {} : { network: applyNetwork(profile) };
}

export function teardown(data) {
  if (!keepToxics) restoreNetwork(data.network);
}

function check(op, ok) {
  if (!ok) throw new Error(`${op} failed`);
}

// Runs fn SAMPLES + 1 times, recording all but the first; fn returns its duration in ms.
async function sample(op, fn) {
  for (let i = 0; i <= SAMPLES; i++) {
    const ms = await fn();
    if (i > 0) record(op, ms);
  }
}

function post(op, url, { headers = {}, query = QUERY, ok = (res) => res.json('data.book.id') === 'book-1' } = {}) {
  const t0 = Date.now();
  const res = http.post(url, JSON.stringify({ query }), {
    headers: { 'Content-Type': 'application/json', ...headers },
  });
  const ms = Date.now() - t0;
  check(op, res.status === 200 && ok(res));
  return { ms, res };
}

// The server's own time for a request: Server-Timing `total;dur=` (ms).
const serverMs = (res) => Number((/total;dur=([\d.]+)/.exec(res.headers['Server-Timing'] || '') || [])[1] || 0);

function getBook(op, client) {
  check(op, client.invoke('books.v1.Books/GetBook', { id: 'book-1' }).status === grpc.StatusOK);
}

// A graphql-transport-ws session: connect, init/ack, `ops` subscribe -> next round trips
// one after another, close. Resolves { open: ms to connection_ack, ops: [ms per operation] }.
function wsSession(url, op, ops = 1) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const r = { open: 0, ops: [] };
    let sent = 0;
    const ws = new WebSocket(url, 'graphql-transport-ws');
    const subscribe = () => {
      sent = Date.now();
      ws.send(JSON.stringify({ id: String(r.ops.length + 1), type: 'subscribe', payload: { query: QUERY } }));
    };
    ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init' }));
    ws.onerror = (e) => reject(new Error(`${op}: ${e.error}`));
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.type === 'connection_ack') {
        r.open = Date.now() - t0;
        subscribe();
      } else if (msg.type === 'next') {
        r.ops.push(Date.now() - sent);
      } else if (msg.type === 'complete') {
        if (r.ops.length < ops) subscribe();
        else ws.close();
      }
    };
    ws.onclose = () =>
      r.ops.length === ops
        ? resolve(r)
        : reject(new Error(`${op}: socket closed after ${r.ops.length} of ${ops} operations`));
  });
}

export default async function () {
  const close = { headers: { Connection: 'close' } };
  await sample('http_warm', () => post('http_warm', env('GRAPHQL_HTTP_URL')).ms);
  const bigServer = [];
  await sample('http_big', () => {
    const { ms, res } = post('http_big', env('GRAPHQL_HTTP_URL'), {
      query: BIG_QUERY,
      ok: (r) => r.json('data.payload.size') === BIG_BYTES,
    });
    bigServer.push(serverMs(res));
    return ms;
  });
  bigServer.slice(1).forEach((ms) => record('big_server', ms));
  await sample('http_fresh', () => post('http_fresh', fresh(env('GRAPHQL_HTTP_URL')), close).ms);
  await sample('https_fresh', () => post('https_fresh', fresh(env('GRAPHQL_HTTPS_URL')), close).ms);

  warmClient.connect(env('GRPC_ADDR'), { plaintext: true });
  await sample('grpc_warm', () => {
    const t0 = Date.now();
    getBook('grpc_warm', warmClient);
    return Date.now() - t0;
  });
  warmClient.close();
  await sample('grpc_fresh', () => {
    const t0 = Date.now();
    freshClient.connect(env('GRPC_ADDR'), { plaintext: true });
    getBook('grpc_fresh', freshClient);
    const ms = Date.now() - t0;
    freshClient.close();
    return ms;
  });

  await sample('ws_open', async () => (await wsSession(env('GRAPHQL_WS_URL'), 'ws_open')).open);
  await sample('wss_open', async () => (await wsSession(env('GRAPHQL_WSS_URL'), 'wss_open')).open);
  // One socket, SAMPLES + 1 operations on it; the first is the warm-up.
  const session = await wsSession(env('GRAPHQL_WS_URL'), 'ws_op', SAMPLES + 1);
  session.ops.slice(1).forEach((ms) => record('ws_op', ms));
}
