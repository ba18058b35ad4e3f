// The round-trip model: what one operation costs on a link of round-trip time R,
// up-rate Bu and down-rate Bd, in one place for everything that needs it: the k6
// scenarios' thresholds (scenarios/lib/scenario.js), `k6pack thresholds`, the
// report and the verdict (lib/report, common/verdict.js), the benches and the
// tests. docs/model.md explains it with its sources and measured fidelity.
//
//   operation = set-up round trips + request rounds x R + q/Bu + s/Bd + server + client
//
// Round trips of connection set-up (each one RTT through the pack's Toxiproxy build):
//   tcp            the TCP handshake: SYN / SYN-ACK before the client may send
//   tls            a TLS 1.3 handshake (ClientHello / ServerHello..Finished)
//   ws_upgrade     the HTTP Upgrade request and its 101
//   ws_init        graphql-transport-ws connection_init / connection_ack
//   grpc_settings  k6's gRPC connect waits for the server's HTTP/2 SETTINGS, which a
//                  server sends only once the connection is open (1.5 R): one more R
// A pushed event travels one way: R/2 + s/Bd.
//
// Plain ES module with no imports (k6 and Node both load it).

export const PHASES = {
  tcp: 'TCP handshake',
  tls: 'TLS 1.3 handshake',
  ws_upgrade: 'WebSocket upgrade',
  ws_init: 'graphql-transport-ws init/ack',
  grpc_settings: "server's HTTP/2 SETTINGS",
};

// The connection set-up a transport pays: per operation for the fresh transports,
// once per connection (or socket, or channel) for the others.
export function setupPhases(transport, tls) {
  const secure = tls ? ['tcp', 'tls'] : ['tcp'];
  switch (transport) {
    case 'http2':
      return ['tcp', 'tls'];
    case 'ws':
      return [...secure, 'ws_upgrade', 'ws_init'];
    case 'grpc':
    case 'grpc-fresh':
    case 'grpc-stream':
    case 'grpc-bidi':
    case 'grpc-client-stream':
      return [...secure, 'grpc_settings'];
    default:
      return secure; // http-fresh, http-keepalive, http-poll
  }
}

// Transports that open a connection for every operation.
export const FRESH = new Set(['http-fresh', 'grpc-fresh']);

// The bytes a transport adds around a request and a response (headers, frames,
// length prefixes, TLS records): measured on the wire through the proxies with the
// pack's k6 clients (k6's default headers, Apollo's answer headers), rounded up.
// They matter only on slow links (2g: 400 B up is 12 ms).
export const FRAMING = {
  http: { req: 260, res: 330 }, // HTTP/1.1 request line + headers; status line + headers
  http2: { req: 90, res: 140 }, // HPACK-compressed headers after the first request
  ws: { req: 40, res: 60 }, // frame headers, the graphql-transport-ws envelope
  grpc: { req: 70, res: 110 }, // HEADERS + DATA frames, 5-byte prefix, trailers
};
const TLS_RECORD = 30;
// CPU a new TLS 1.3 connection costs k6 and the server together (key exchange,
// certificate): 5-9 ms on the pack's 2-core machine; it is all a fresh HTTPS
// request costs under lan beyond its bytes.
export const TLS_HANDSHAKE_CPU_MS = 5;

function framingOf(transport, tls) {
  const f = transport.startsWith('grpc') ? FRAMING.grpc : transport === 'ws' ? FRAMING.ws : transport === 'http2' ? FRAMING.http2 : FRAMING.http;
  return tls ? { req: f.req + TLS_RECORD, res: f.res + TLS_RECORD } : f;
}

// ms to move `bytes` at `kbps` kbit/s (0 when unlimited).
export const transferMs = (bytes, kbps) => (kbps ? (bytes * 8) / kbps : 0);

// The time a window-limited sender adds to moving `bytes` beyond transferMs: it may
// have `initialWindow` bytes in flight, and the window doubles every round trip (as
// the receiver's acknowledgements come back) until it covers the bandwidth-delay
// product, after which the bytes flow at the link's rate. A full window that takes
// less than R to send then waits the rest of R for the next one. This is TCP's slow
// start (RFC 5681; initial window RFC 6928) and gRPC's flow control on a new channel
// (grpc-go starts a stream at a 64 KB window and doubles it from its BDP estimate).
export function windowWaitMs(bytes, initialWindow, R, kbps) {
  if (!bytes || !initialWindow || !R) return 0;
  const line = (b) => transferMs(b, kbps);
  let t = 0;
  let sent = 0;
  let w = initialWindow;
  while (sent < bytes) {
    const flight = Math.min(w, bytes - sent);
    if (sent + flight >= bytes) {
      t += line(flight);
      break;
    }
    t += Math.max(line(flight), R);
    sent += flight;
    w *= 2;
    if (kbps && line(w) >= R) {
      t += line(bytes - sent); // the window covers the bandwidth-delay product
      break;
    }
  }
  return Math.max(0, t - line(bytes));
}

// gRPC's flow-control window on a new channel (grpc-go's initial stream window).
export const GRPC_INITIAL_WINDOW = 65535;

// The link a profile gives (profile: common/profiles.js resolveProfile's result, or
// its run.network + run.faults as summary.json keeps them):
// { R, upKbps, downKbps, jitterMs, extraMs (mean delay fault toxics add per round
// trip), extraP95Ms (their 95th percentile) }.
export function linkOf(profile) {
  const net = profile.network || profile;
  let extraMs = 0;
  let extraP95Ms = 0;
  // A latency toxic of latency L and jitter J delays each chunk uniformly in
  // [L - J, L + J) (Toxiproxy's latency toxic): mean L, 95th percentile L + 0.9 J.
  for (const t of profile.toxics || []) {
    if (t.type !== 'latency' || /^latency_(up|down)stream$/.test(t.name)) continue;
    const { latency = 0, jitter = 0 } = t.attributes || {};
    extraMs += latency;
    extraP95Ms += latency + 0.9 * jitter;
  }
  return { R: net.rttMs || 0, upKbps: net.upKbps ?? null, downKbps: net.downKbps ?? null, jitterMs: net.jitterMs || 0, extraMs, extraP95Ms };
}

const round1 = (x) => Math.round(x * 10) / 10;

// One operation. op: {
//   transport, tls,
//   conn: 'warm' (its connection is open) | 'cold' (it opens it) — fresh transports are always cold,
//   rounds: request round trips (default 1: one request, one answer; an HTTP/1.1 batch
//           of N documents on 6 connections takes ceil(N/6)),
//   oneWay: true for a pushed event (half a round trip),
//   phases: the set-up phases paid, when not the transport's own (a WebSocket op pays none:
//           its socket's set-up is measured apart, as setup_duration),
//   reqBytes, resBytes: the bodies (the transport's framing is added),
//   serverMs: the server's own time, clientMs: k6's own (e.g. decoding a 1 MB message),
//   messages: messages each way (default: rounds; N HTTP/2 streams in one round is N),
//   upWindow: true for a client stream (its request bytes wait for the server's window),
//   waitMs: a wait the protocol adds (a poll interval) }
// -> { ms, setupMs, roundTrips, terms: [{ name, ms, text }], formula }
export function operation(link, op) {
  const cold = FRESH.has(op.transport) || op.conn === 'cold';
  const phases = op.phases || (cold ? setupPhases(op.transport, op.tls) : []);
  const framing = framingOf(op.transport, op.tls);
  const rounds = op.oneWay ? 0.5 : op.rounds ?? 1;
  const messages = op.messages ?? (op.oneWay ? 1 : op.rounds ?? 1);
  const up = op.oneWay ? 0 : (op.reqBytes || 0) + framing.req * messages;
  const down = (op.resBytes || 0) + framing.res * messages;
  const terms = [];
  const add = (name, ms, text) => {
    if (ms > 0 || name === 'request') terms.push({ name, ms, text });
  };
  for (const p of phases) add(p, link.R + link.extraMs, `${PHASES[p]}: R`);
  add('request', rounds * (link.R + link.extraMs), `${rounds === 1 ? '' : rounds === 0.5 ? '½' : rounds}R${link.extraMs ? ' + fault delay' : ''}`);
  add('up', transferMs(up, link.upKbps), `${Math.round(up)} B/Bu`);
  add('down', transferMs(down, link.downKbps), `${Math.round(down)} B/Bd`);
  // The first message on a new gRPC channel waits for flow-control window updates.
  if (cold && op.transport.startsWith('grpc')) add('window', windowWaitMs(down, GRPC_INITIAL_WINDOW, link.R, link.downKbps), 'gRPC window');
  // A client stream sends under the server's window for a new stream (64 KB, Node's
  // default) on every call: an upload beyond it waits for the server's WINDOW_UPDATEs.
  if (op.upWindow) add('upWindow', windowWaitMs(up, GRPC_INITIAL_WINDOW, link.R, link.upKbps), 'HTTP/2 window (up)');
  add('server', op.serverMs || 0, 'server');
  add('client', (op.clientMs || 0) + (phases.includes('tls') ? TLS_HANDSHAKE_CPU_MS : 0), 'k6');
  add('wait', op.waitMs || 0, 'protocol wait');
  const ms = terms.reduce((s, t) => s + t.ms, 0);
  const setupMs = phases.length * (link.R + link.extraMs);
  const roundsTotal = phases.length + rounds;
  const formula = [
    `${roundsTotal === 1 ? '' : roundsTotal === 0.5 ? '½' : round1(roundsTotal)}R`,
    ...terms.filter((t) => !PHASES[t.name] && t.name !== 'request').map((t) => t.text),
  ].join(' + ');
  return { ms, setupMs, roundTrips: roundsTotal, terms, formula };
}

// A set-up phase list on its own (setup_duration{phase:...}): ws_upgrade measures
// TCP (+ TLS) + the upgrade, ws_init the init/ack, grpc_connect the whole channel.
export function setupOnly(link, phases) {
  const ms = phases.length * (link.R + link.extraMs);
  return { ms, setupMs: ms, roundTrips: phases.length, terms: phases.map((p) => ({ name: p, ms: link.R + link.extraMs, text: `${PHASES[p]}: R` })), formula: `${phases.length === 1 ? "" : phases.length}R` };
}

// What a measured setup_duration phase covers.
export function measuredPhases(phase, tls) {
  switch (phase) {
    case 'ws_upgrade':
      return tls ? ['tcp', 'tls', 'ws_upgrade'] : ['tcp', 'ws_upgrade'];
    case 'ws_init':
      return ['ws_init'];
    case 'grpc_connect':
      return tls ? ['tcp', 'tls', 'grpc_settings'] : ['tcp', 'grpc_settings'];
    case 'tls':
      return ['tls'];
    case 'connect':
      return ['tcp'];
    default:
      return null;
  }
}

// ---- budgets ----
//
// policy (thresholds.json, common/thresholds.js): {
//   p50: { factor, plusMs }, p95: { factor, plusMs }: on the network's terms,
//   cpuFactor: on the server's and k6's (a CPU's time varies more than a link's),
//   stepMs: { p50, p95 }: the queueing allowance per doubling of concurrency }
// A step of n VUs may add stepMs x log2(n): queueing on the load generator and the
// servers grows slowly while they keep up; a transport past this machine's capacity
// queues linearly (n VUs each waiting for the others) and fails there.

export const stepAllowance = (policy, which, vus) => (vus > 1 ? policy.stepMs[which] * Math.log2(vus) : 0);

const ceil5 = (x) => Math.ceil(x / 5 - 1e-9) * 5;

// The tail a link's jitter adds to an operation of `roundTrips` round trips.
export const jitterTailMs = (link, roundTrips) => (link.extraP95Ms - link.extraMs) * roundTrips + link.jitterMs * Math.sqrt(roundTrips);

// expected: { p50, p95 }: operation()'s results, the p95 one the tail when it is
// another operation (a lane whose first operation opens its connection: p95 covers
// that cold one). extra: { p50, p95 } ms an override adds. -> { p50, p95 } in whole ms.
export function budget(policy, link, { p50: e50, p95: e95 = e50 }, vus = 1, extra = {}) {
  const cpu = (e) => e.terms.filter((t) => CPU_TERMS.has(t.name)).reduce((s, t) => s + t.ms, 0);
  const scaled = (e, factor) => (e.ms - cpu(e)) * factor + cpu(e) * policy.cpuFactor;
  return {
    p50: ceil5(scaled(e50, policy.p50.factor) + policy.p50.plusMs + stepAllowance(policy, 'p50', vus) + (extra.p50 || 0)),
    p95: ceil5((scaled(e95, policy.p95.factor) + jitterTailMs(link, e95.roundTrips) * policy.p95.factor) + policy.p95.plusMs + stepAllowance(policy, 'p95', vus) + (extra.p95 || 0)),
  };
}
const CPU_TERMS = new Set(['server', 'client']);
