/*
 * Study 000: GraphQL over WebSocket vs HTTP(S).
 * The same query and mutation (book(id), rateBook) over
 *   HTTP with a fresh connection per request, HTTP/1.1 keep-alive, and one
 *   graphql-transport-ws socket per VU on cleartext; HTTPS with a fresh
 *   connection per request (TCP + TLS + h2 each time), HTTP/2 on one kept
 *   connection, and wss on TLS.
 * Servers: the GraphQL server (HTTP + ws, TLS h2/h1.1 + wss) behind Toxiproxy.
 * Default profile: 3g (RTT 300 ms), where the study saw ~600 ms saved per operation.
 * Look at: op_duration p50 per lane. Round-trip model (NETWORK.md): ws, keep-alive
 * and http2 pay R; http-fresh pays 2R (TCP handshake); https fresh pays 3R (TCP + TLS 1.3).
 * setup_duration{phase:ws_upgrade|ws_init} is the socket's one-off cost (2R + R).
 *
 *   npx k6pack up && k6 run scenarios/ws-vs-http.js
 *   k6 run -e PROFILE=lte -e LOAD=full scenarios/ws-vs-http.js
 */
import exec from 'k6/execution';
import { graphqlHttp } from './lib/http.js';
import { bookOperation } from './lib/queries.js';
import { defineScenario, lane, rttOf } from './lib/scenario.js';
import { wsSession } from './lib/sessions.js';
import { DEFAULT_COLUMNS } from './lib/summary.js';

const lanes = [
  lane('http_fresh', 'http-fresh', false),
  lane('http_keepalive', 'http-keepalive', false),
  lane('ws', 'ws', false),
  lane('https_fresh', 'http-fresh', true),
  lane('http2', 'http2', true),
  lane('wss', 'ws', true),
];

const s = defineScenario('ws-vs-http', {
  defaultProfile: '3g',
  lanes,
  // An HTTP iteration is one request and a lane's first one pays the
  // connection set-up: under slow profiles a short (ci) step must still hold
  // several warm ones, or its p50 is the set-up's (3g: ~1 s an iteration).
  minIterations: 4,
  columns: [
    ...DEFAULT_COLUMNS,
    { title: 'tls setup p50', metric: 'setup_duration', tags: { phase: 'tls' }, stat: 'med', unit: 'ms' },
    { title: 'ws upgrade p50', metric: 'setup_duration', tags: { phase: 'ws_upgrade' }, stat: 'med', unit: 'ms' },
    { title: 'ws init p50', metric: 'setup_duration', tags: { phase: 'ws_init' }, stat: 'med', unit: 'ms' },
  ],
  // The slowest HTTP iteration: one operation on a fresh TLS connection (3 RTT).
  iterationSeconds: (profile) => (3 * rttOf(profile)) / 1000 + 0.1,
});
export const { options, setup, teardown, handleSummary } = s;

const operation = (i) => bookOperation(exec.vu.idInTest, i);

function httpOp(transport, tls) {
  const op = operation(exec.vu.iterationInScenario);
  graphqlHttp({ transport, tls, ...op });
}

export function httpFresh() {
  httpOp('http-fresh', false);
}
export function httpKeepalive() {
  httpOp('http-keepalive', false);
}
export function httpsFresh() {
  httpOp('http-fresh', true);
}
export function http2() {
  httpOp('http2', true);
}

// One socket per VU for the whole step; operations one after another.
function wsLane(tls) {
  return wsSession({ tls, tags: {}, op: (socket, i) => socket.execute(operation(i)) });
}

export function ws() {
  return wsLane(false);
}
export function wss() {
  return wsLane(true);
}
