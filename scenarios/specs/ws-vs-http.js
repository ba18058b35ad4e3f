// Study 000's plan: lanes, steps and what each operation costs under the model
// (scenarios/ws-vs-http.js runs it). Plain ES module: k6 and Node read it.
import { laneEntry } from '../../common/lanes/catalogue.js';
import { RPC_WEB_PROTOCOLS } from '../../common/lanes/rpc-web.js';
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
// GetBook over Connect or gRPC-Web (the browser's RPC lanes, scenarios/lib/rpc-web.js),
// its bytes the protocol's (common/lanes/rpc-web.js). books.v1 has no rating call, so
// these lanes run the book query only where GraphQL alternates it with the mutation.
const rpcLane = (name) => {
  const { protocol } = laneEntry(name);
  return lane(name, { model: () => ({ ...RPC_WEB_PROTOCOLS[protocol].getBook, protocol, serverMs: 1 }) });
};

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare() {
  return {
    name: 'ws-vs-http',
    defaultProfile: '3g',
    lanes: [
      lane('http_fresh', { model: op() }),
      lane('http_keepalive', { model: op() }),
      // An operation on an open socket: its set-up is measured apart (setup_duration).
      lane('ws', { model: op({ conn: 'warm' }), setups: true, session: { ops: WS_OPEN_OPS } }),
      lane('https_fresh', { model: op() }),
      // HTTP/1.1 kept over TLS: a browser's connection to a server that offers no h2.
      lane('https_keepalive', { model: op() }),
      lane('http2', { model: op() }),
      lane('wss', { model: op({ conn: 'warm' }), setups: true, session: { ops: WS_OPEN_OPS } }),
      rpcLane('connect_json'),
      rpcLane('connect_proto'),
      rpcLane('grpc_web'),
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
