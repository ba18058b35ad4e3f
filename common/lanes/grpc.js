// The gRPC family: the books service over k6's grpc (scenarios/lib/grpc.js Channel,
// BidiStream, clientStream), its transports and its lanes. Plain ES module with no
// imports; common/lanes/http.js says what a transport's fields mean.
//
// Every gRPC transport waits for the server's HTTP/2 SETTINGS after TCP (and TLS):
// k6's connect does. framing: HEADERS + DATA frames, the 5-byte prefix, trailers.
// requestCpuMs: bench/scale.js's knees (common/lanes/http.js); a fresh call's includes its
// new channel. k6 times a gRPC call in whole milliseconds (wholeMs).
const GRPC = { req: 70, res: 110 };
// warmFraming: a unary call's on a channel that has carried one before, whose request headers
// HPACK has indexed. Measured through a relay between k6 and the gRPC server (2026-11-30):
// GetBook's request went up in 49 B (its message 10 B: 39 B of HEADERS and frame) against
// the first call's 150; its answer came down in 160-167 B. (A WINDOW_UPDATE and a PING's ACK
// go up after the answer, outside the operation's time.) Rounded up. Under 3g+rrc, where FACH
// carries a call and its uplink time grows with the square of its bytes, the first call's
// figure priced grpc_ping10 73 ms above the link (docs/known-limits.md).
const GRPC_WARM = { req: 40, res: 110 };
const grpc = (more = {}) => ({ phases: ['grpc_settings'], framing: GRPC, messageSegments: 2, wholeMs: true, ...more });
export const GRPC_TRANSPORTS = {
  grpc: grpc({ requestCpuMs: 0.45, warmFraming: GRPC_WARM }),
  'grpc-fresh': grpc({ fresh: true, requestCpuMs: 1.75 }),
  'grpc-stream': grpc(),
  'grpc-bidi': grpc(),
  'grpc-client-stream': grpc(),
};

// setups: the set-up phase the client measures apart on a kept channel (a fresh call's
// is inside its operation). TLS follows the server (TLS=true, or your endpoint).
const client = 'scenarios/lib/grpc.js Channel';
const setups = ['grpc_connect'];
export const GRPC_LANES = [
  { name: 'grpc', transport: 'grpc', tls: false, setups, policy: 'grpc', api: 'grpc', client },
  { name: 'grpc_fresh', transport: 'grpc-fresh', tls: false, api: 'grpc', client },
  { name: 'grpc_stream', transport: 'grpc-stream', tls: false, setups, api: 'grpc', client },
  { name: 'grpc_bidi', transport: 'grpc-bidi', tls: false, setups, client: 'scenarios/lib/grpc.js BidiStream' },
  {
    name: 'grpc_client_stream',
    transport: 'grpc-client-stream',
    tls: false,
    setups,
    client: 'scenarios/lib/grpc.js clientStream',
  },
  // A server stream held through the link's events (unstable), with grpc-go's defaults
  // (no keepalive) and after_seq to resume.
  {
    name: 'sub_grpc',
    transport: 'grpc-stream',
    tls: false,
    variant: 'subscription',
    policy: 'sub-grpc',
    client: 'scenarios/lib/held-subscription.js',
  },
];
