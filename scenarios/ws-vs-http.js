/*
 * Study 000: GraphQL over WebSocket vs HTTP(S).
 * The same query and mutation (book(id), rateBook) over
 *   HTTP with a fresh connection per request, HTTP/1.1 keep-alive, and one
 *   graphql-transport-ws socket per VU on cleartext; HTTPS with a fresh
 *   connection per request (TCP + TLS + h2 each time), HTTP/2 on one kept
 *   connection, and wss on TLS.
 *   Beside them the browser's RPC (servers/connect): GetBook over Connect JSON,
 *   Connect protobuf and gRPC-Web on HTTP/1.1 keep-alive (books.v1 has no rating
 *   call: the book query only; Connect on HTTP/2 is grpc-vs-graphql's).
 * Servers: the GraphQL server (HTTP + ws, TLS h2/h1.1 + wss) and the Connect server behind Toxiproxy.
 * Default profile: 3g (RTT 300 ms), where the study saw ~600 ms saved per operation.
 * Look at: op_duration p50 per lane. Round-trip model (docs/model.md): ws, keep-alive
 * and http2 pay R; http-fresh pays 2R (TCP handshake); https fresh pays 3R (TCP + TLS 1.3).
 * setup_duration{phase:ws_upgrade|ws_init} is the socket's one-off cost (2R + R).
 *
 *   npx k6pack up && k6 run scenarios/ws-vs-http.js
 *   k6 run -e PROFILE=lte -e LOAD=full scenarios/ws-vs-http.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan ws-vs-http --load ci`; dev/plan-headers.js writes it):
 *   ws-vs-http under 3g (R 300 ms, down 1600 / up 768 kbit/s), load ci, closed workload: 20 k6 scenarios, 90.0 s in all
 *     k6 scenario         executor      VUs or rate  start  duration  graceful stop
 *     http_fresh_c1       constant-vus  1 VU         0s     3s        1.5s
 *     http_fresh_c4       constant-vus  4 VUs        4.5s   3s        1.5s
 *     http_keepalive_c1   constant-vus  1 VU         9s     3s        1.5s
 *     http_keepalive_c4   constant-vus  4 VUs        13.5s  3s        1.5s
 *     ws_c1               constant-vus  1 VU         18s    3s        1.5s
 *     ws_c4               constant-vus  4 VUs        22.5s  3s        1.5s
 *     https_fresh_c1      constant-vus  1 VU         27s    3s        1.5s
 *     https_fresh_c4      constant-vus  4 VUs        31.5s  3s        1.5s
 *     https_keepalive_c1  constant-vus  1 VU         36s    3s        1.5s
 *     https_keepalive_c4  constant-vus  4 VUs        40.5s  3s        1.5s
 *     http2_c1            constant-vus  1 VU         45s    3s        1.5s
 *     http2_c4            constant-vus  4 VUs        49.5s  3s        1.5s
 *     wss_c1              constant-vus  1 VU         54s    3s        1.5s
 *     wss_c4              constant-vus  4 VUs        58.5s  3s        1.5s
 *     connect_json_c1     constant-vus  1 VU         63s    3s        1.5s
 *     connect_json_c4     constant-vus  4 VUs        67.5s  3s        1.5s
 *     connect_proto_c1    constant-vus  1 VU         72s    3s        1.5s
 *     connect_proto_c4    constant-vus  4 VUs        76.5s  3s        1.5s
 *     grpc_web_c1         constant-vus  1 VU         81s    3s        1.5s
 *     grpc_web_c4         constant-vus  4 VUs        85.5s  3s        1.5s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (LOAD=ci's steps: 1, 4)
 *     duration: 3 iterations of the model's 1.000 s
 *     graceful stop: 1.5 x the model's 1.000 s iteration
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import declare, { WS_OPEN_OPS } from './specs/ws-vs-http.js';
import { graphqlHttp } from './lib/http.js';
import { bookOfOperation, bookOperation, checkBook } from './lib/queries.js';
import { dropKeptConnection, rpcCall } from './lib/rpc-web.js';
import { defineScenario } from './lib/scenario.js';
import { wsSession } from './lib/sessions.js';
import { SETTINGS } from './lib/config.js';

const s = defineScenario(declare(SETTINGS));
export const { options, setup, teardown, handleSummary } = s;

const operation = (i) => bookOperation(exec.vu.idInTest, i);

function httpOp({ transport, tls }) {
  const op = operation(exec.vu.iterationInScenario);
  graphqlHttp({ transport, tls, ...op });
}

// The browser's RPC: GetBook over Connect (JSON, protobuf) and gRPC-Web.
function rpcOp({ protocol, transport, tls }) {
  const i = exec.vu.iterationInScenario;
  // A step's first operation opens the VU's connection, not the lane before's.
  if (i === 0) dropKeptConnection(tls);
  const id = bookOfOperation(exec.vu.idInTest, i);
  rpcCall({ protocol, transport, tls, method: 'GetBook', request: { id }, validate: (book) => checkBook(book, id) });
}

// One socket per VU for the whole step, operations one after another; under an open
// workload one socket per arrival, for WS_OPEN_OPS operations.
const maxOps = s.plan.workload === 'open' ? WS_OPEN_OPS : undefined;
function wsLane({ tls }) {
  return wsSession({ tls, tags: {}, maxOps, op: (socket, i) => socket.execute(operation(i)) });
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch).
export const runLane = s.dispatch({ http: httpOp, 'rpc-web': rpcOp, ws: wsLane });
