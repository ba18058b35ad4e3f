// Study 000's plan: lanes, steps and what each operation costs under the model
// (scenarios/ws-vs-http.js runs it). Plain ES module: k6 and Node read it.
import { DEFAULT_COLUMNS, lane, rttOf } from '../../common/scenario.js';

// Under an open workload a WebSocket lane's arrival is a client that connects, runs
// this many operations and leaves (a socket lives inside one k6 iteration).
export const WS_OPEN_OPS = 5;

// One book query or rateBook mutation (scenarios/lib/queries.js bookOperation): the
// JSON bodies each way, and the server's time (Server-Timing total, ~0.3-1 ms).
export const BOOK_OP = { reqBytes: 150, resBytes: 170, serverMs: 1 };
const op =
  (more = {}) =>
  () => ({ ...BOOK_OP, ...more });
// GetBook over Connect or gRPC-Web (the browser's RPC lanes, scenarios/lib/rpc-web.js):
// {"id":"book-123"} up and the book's JSON (~122 B) or protobuf (~54 B; names vary) down; gRPC-Web
// adds its two frame prefixes and the trailer frame. books.v1 has no rating call, so
// these lanes run the book query only where GraphQL alternates it with the mutation.
export const GET_BOOK_BYTES = {
  'connect-json': { reqBytes: 20, resBytes: 130 },
  'connect-proto': { reqBytes: 12, resBytes: 65 },
  'grpc-web': { reqBytes: 17, resBytes: 96 },
};
const rpc = (protocol) => () => ({ ...GET_BOOK_BYTES[protocol], protocol, serverMs: 1 });
const rpcLane = (name, transport, tls, protocol) =>
  lane(name, transport, tls, { model: rpc(protocol), tags: { variant: protocol } });

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare() {
  return {
    name: 'ws-vs-http',
    defaultProfile: '3g',
    lanes: [
      lane('http_fresh', 'http-fresh', false, { model: op() }),
      lane('http_keepalive', 'http-keepalive', false, { model: op() }),
      // An operation on an open socket: its set-up is measured apart (setup_duration).
      lane('ws', 'ws', false, {
        model: op({ conn: 'warm' }),
        setups: ['ws_upgrade', 'ws_init'],
        session: { ops: WS_OPEN_OPS },
      }),
      lane('https_fresh', 'http-fresh', true, { model: op() }),
      lane('http2', 'http2', true, { model: op() }),
      lane('wss', 'ws', true, {
        model: op({ conn: 'warm' }),
        setups: ['ws_upgrade', 'ws_init'],
        session: { ops: WS_OPEN_OPS },
      }),
      rpcLane('connect_json', 'http-keepalive', false, 'connect-json'),
      rpcLane('connect_proto', 'http-keepalive', false, 'connect-proto'),
      rpcLane('grpc_web', 'http-keepalive', false, 'grpc-web'),
    ],
    // An HTTP iteration is one request and a lane's first one pays the
    // connection set-up: under slow profiles a short (ci) step must still hold
    // several warm ones, or its p50 is the set-up's (3g: ~1 s an iteration; three
    // such make a 1 s step under lte, 13 warm keep-alive operations after the cold one).
    minIterations: 3,
    columns: [
      ...DEFAULT_COLUMNS,
      { title: 'tls setup p50', metric: 'setup_duration', tags: { phase: 'tls' }, stat: 'med', unit: 'ms' },
      { title: 'ws upgrade p50', metric: 'setup_duration', tags: { phase: 'ws_upgrade' }, stat: 'med', unit: 'ms' },
      { title: 'ws init p50', metric: 'setup_duration', tags: { phase: 'ws_init' }, stat: 'med', unit: 'ms' },
    ],
    // The slowest HTTP iteration: one operation on a fresh TLS connection (3 RTT).
    iterationSeconds: (profile) => (3 * rttOf(profile)) / 1000 + 0.1,
  };
}
