// Studies 003 and 004's plan (scenarios/grpc-vs-graphql.js runs it).
import { LIMITS } from '../../common/defaults.js';
import { envBool, envInt } from '../../common/env.js';
import { DEFAULT_COLUMNS, lane, laneModelSeconds } from '../../common/scenario.js';

export const SMALL = 100;

// -> { TLS, BIG, PAYLOADS, ...declaration }
export default function declare(env) {
  const TLS = envBool(env, 'TLS', false);
  const BIG = envInt(env, 'BIG_SIZE', 1000000, { min: 1, max: LIMITS.MAX_PAYLOAD_BYTES });
  const PAYLOADS = [
    ['small', SMALL],
    ['big', BIG],
  ];
  const bytes = Object.fromEntries(PAYLOADS);
  // payload(size) answers { size, data } with `size` characters of data in JSON
  // (~40 B around it); Payload answers the bytes with a 5-byte field header.
  const graphql = (dims) => ({ conn: dims.conn, reqBytes: 110, resBytes: bytes[dims.payload] + 40, serverMs: 1 });
  const grpc = (dims) => ({ conn: dims.conn, reqBytes: 10, resBytes: bytes[dims.payload] + 10, serverMs: 1 });
  // A kept connection's first call opens it (conn:cold), the rest are warm; a fresh
  // lane's every call is cold.
  const kept = PAYLOADS.flatMap(([payload]) => [
    { payload, conn: 'warm' },
    { payload, conn: 'cold' },
  ]);
  const fresh = PAYLOADS.map(([payload]) => ({ payload, conn: 'cold' }));
  const lanes = [
    lane('grpc', 'grpc', TLS, { exec: 'grpcWarm', dims: kept, model: grpc, setups: ['grpc_connect'] }),
    lane('grpc_fresh', 'grpc-fresh', TLS, { dims: fresh, model: grpc }),
    lane('http_keepalive', TLS ? 'http2' : 'http-keepalive', TLS, { dims: kept, model: graphql }),
    lane('http_fresh', 'http-fresh', TLS, { dims: fresh, model: graphql }),
  ];
  return {
    TLS,
    BIG,
    PAYLOADS,
    name: 'grpc-vs-graphql',
    defaultProfile: 'lan',
    lanes,
    columns: [...DEFAULT_COLUMNS, { title: 'grpc connect p50', metric: 'setup_duration', tags: { phase: 'grpc_connect' }, stat: 'med', unit: 'ms', laneOnly: true }],
    // The slowest lane's small and big call by the model (set-up, slow start, loss and
    // the server's time included), and k6's decoding of the big message.
    iterationSeconds: (profile) => Math.max(...lanes.map((l) => laneModelSeconds(l, profile, { by: 'payload' }))) + 0.05,
    verdict: { where: { payload: 'small', conn: 'warm' } },
    // k6pack report: latency vs payload size, warm calls.
    hints: { sizes: { dim: 'payload', label: 'payload size', unit: 'payload bytes', bytes, where: { conn: 'warm' } } },
  };
}
