// A/B slots for bench/overhead.js: pairs of sides, each side a client (bare
// k6 or the pack's scenarios/lib) against a target, run in alternating slots
// (A B, then B A, ...) so drift and neighbours' noise fall on both alike.
// Every slot is a constant-vus k6 scenario named <side>_<round> (round 0 is a
// warm-up); the bench reads iterations{scenario:...} and
// iteration_duration{scenario:...} from k6's --summary-export.
//
//   -e PLAN='{"a":{"exec":"bareHttp","env":{"URL":"..."}},"b":{...},"rounds":5,"slotSeconds":4,"vus":1}'
// One iteration is one request (http, grpc), or one socket carrying WS_OPS
// operations (ws: a socket lives inside an iteration in k6).
// The lib side's targets are the run's GRAPHQL_HTTP_URL / GRAPHQL_WS_URL / GRPC_ADDR.
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { WebSocket } from 'k6/websockets';
import { Channel, newClient } from '../../scenarios/lib/grpc.js';
import { graphqlHttp } from '../../scenarios/lib/http.js';
import { BOOK_QUERY, validateBook } from '../../scenarios/lib/queries.js';
import { GraphqlWs, wsUrl } from '../../scenarios/lib/ws.js';

const PLAN = JSON.parse(__ENV.PLAN);
const GRACE_SECONDS = 1;
export const WS_OPS = Number(__ENV.WS_OPS || 50);
const ID = 'book-1';
const VARIABLES = { id: ID };
const BODY = JSON.stringify({ query: BOOK_QUERY, variables: VARIABLES });

// Pairs run round after round; inside a round each pair's two sides run one
// after the other, A first in odd rounds and B first in even ones.
function slots() {
  const scenarios = {};
  const thresholds = {};
  let start = 0;
  const add = (pair, side, round, seconds) => {
    const name = `${pair}_${side}_${round}`;
    const s = PLAN.pairs[pair][side];
    scenarios[name] = {
      executor: 'constant-vus',
      vus: PLAN.vus,
      duration: `${seconds}s`,
      startTime: `${start}s`,
      // Iterations finish rather than being cut: k6 v1.8.1 can wedge a VU
      // whose iteration is interrupted while a WebSocket and a timer are both
      // pending (its later iterations get neither socket events nor timers),
      // which left the lib's WS side with no iterations in later slots.
      gracefulStop: `${GRACE_SECONDS}s`,
      exec: s.exec,
      env: s.env || {},
    };
    // k6 reports a sub-metric only when it has a threshold.
    thresholds[`iterations{scenario:${name}}`] = ['count>=0'];
    thresholds[`iteration_duration{scenario:${name}}`] = ['max>=0'];
    start += seconds + GRACE_SECONDS + 0.5;
  };
  for (let r = 0; r <= PLAN.rounds; r++) {
    for (const pair of Object.keys(PLAN.pairs)) {
      for (const side of r % 2 ? ['a', 'b'] : ['b', 'a']) add(pair, side, r, r === 0 ? PLAN.warmupSeconds || 1 : PLAN.slotSeconds);
    }
  }
  return { scenarios, thresholds };
}

export const options = {
  ...slots(),
  insecureSkipTLSVerify: true,
  summaryTrendStats: ['avg', 'med', 'p(95)', 'count'],
};

// ---- bare k6: the request and nothing else ----

export function bareHttp() {
  http.post(__ENV.URL, BODY, { headers: { 'Content-Type': 'application/json' } });
}

const bareClient = new grpc.Client();
bareClient.load([import.meta.resolve('../../servers/proto').replace(/^file:\/\//, '')], 'books.proto');
let bareConnected = false;
export function bareGrpc() {
  if (!bareConnected) {
    bareClient.connect(__ENV.ADDR, { plaintext: true });
    bareConnected = true;
  }
  bareClient.invoke('books.v1.Books/GetBook', { id: ID });
}

export function bareWs() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(__ENV.URL, 'graphql-transport-ws');
    let n = 0;
    const subscribe = () => ws.send(JSON.stringify({ id: String(++n), type: 'subscribe', payload: { query: BOOK_QUERY, variables: VARIABLES } }));
    ws.onopen = () => ws.send('{"type":"connection_init"}');
    ws.onmessage = (e) => {
      const type = JSON.parse(e.data).type;
      if (type === 'connection_ack') subscribe();
      else if (type === 'complete') {
        if (n < WS_OPS) subscribe();
        else ws.close();
      }
    };
    ws.onerror = (e) => reject(new Error(String(e.error)));
    ws.onclose = () => resolve();
  });
}

// ---- the pack's clients (scenarios/lib), as the scenarios use them ----

export function libHttp() {
  graphqlHttp({ transport: 'http-keepalive', query: BOOK_QUERY, variables: VARIABLES, validate: validateBook(ID) });
}

const channel = new Channel(newClient());
export function libGrpc() {
  channel.call('GetBook', { id: ID }, { validate: (b) => (b && b.id === ID ? null : `GetBook answered ${b && b.id}`) });
}

export async function libWs() {
  const ws = new GraphqlWs(wsUrl(false));
  await ws.open();
  for (let i = 0; i < WS_OPS; i++) await ws.execute({ query: BOOK_QUERY, variables: VARIABLES, validate: validateBook(ID) });
  await ws.close();
}
