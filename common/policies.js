// How each lane's client behaves when the link fails (the `unstable` scenario, issue
// 26): its request timeout, how it reconnects, and its keepalive, each from a client
// people use, with the source. The scenario's lanes follow these (scenarios/unstable.js)
// and the recovery model predicts from them (common/recovery.js): one place for both.
//
// Plain ES module with no imports (k6 and Node both load it).
//
//   timeoutMs     an operation not answered within this fails; the connection it used
//                 is dropped and the next operation opens a new one
//   fresh         every operation opens its own connection (nothing to detect)
//   reconnect     after a connection is lost: { immediate, firstMs, multiplier, jitter,
//                 maxMs, randomMs: [lo, hi] added to each wait }: attempt n (from 0)
//                 waits firstMs x multiplier^n before it, or, when `immediate`, attempt
//                 0 goes at once and attempt n >= 1 waits firstMs x multiplier^(n-1)
//   keepalive     { intervalMs, timeoutMs }: an idle connection is probed every
//                 intervalMs and dropped when no answer comes within timeoutMs; null: none
//   keepsConnection  a timed-out request leaves its connection in the pool and the next
//                 request takes it again (Go's HTTP/2: it resets the stream, not the
//                 connection), so a silently dead connection is never left
//   subscription  the lane holds one subscription open instead of running operations:
//                 it has no operation timeout; only a reset or its keepalive tells it
//                 the connection died
//   resumes       a subscription resumes where it stopped after a reconnection (no lost
//                 events): the gRPC lane's Subscribe takes after_seq and the server
//                 sends what it kept since; graphql-transport-ws has no such thing

// OkHttp's defaults (OkHttpClient.Builder: connect, read and write timeouts 10 s), the
// HTTP client of most Android apps; browsers' fetch has no timeout of its own.
export const HTTP_TIMEOUT_MS = 10000;

// graphql-ws 6 (client.ts createClient): retryAttempts 5, retryWait
// randomisedExponentialBackoff: 2^retries s plus a random 300-3000 ms (retries from 0);
// keepAlive is off by default (0): the pack's ws lanes set 10 s with a pong timeout of
// 5 s, the library's documented recipe ("ping/pong timeout": terminate when no pong),
// and `ws-nokeepalive` keeps the default to show what it costs.
export const GRAPHQL_WS = {
  retryAttempts: 5,
  reconnect: { immediate: false, firstMs: 1000, multiplier: 2, jitter: 0, maxMs: Infinity, randomMs: [300, 3000] },
  keepalive: { intervalMs: 10000, timeoutMs: 5000 },
};

// grpc-go (and @grpc/grpc-js, backoff-timeout.ts): connection backoff from 1 s, x1.6,
// jitter +-20 %, at most 120 s (gRPC's connection-backoff.md); a connection lost after
// it was up reconnects at once, the backoff applies to attempts that fail. Client
// keepalive is off by default (grpc-go keepalive.ClientParameters Time: infinity).
export const GRPC = {
  reconnect: { immediate: true, firstMs: 1000, multiplier: 1.6, jitter: 0.2, maxMs: 120000, randomMs: [0, 0] },
  keepalive: null,
};

// Per lane of the unstable scenario.
export const POLICIES = {
  'http-fresh': {
    timeoutMs: HTTP_TIMEOUT_MS,
    fresh: true,
    reconnect: null,
    keepalive: null,
    resumes: false,
    source: 'OkHttp: 10 s timeouts; a new connection per request',
  },
  'http-keepalive': {
    timeoutMs: HTTP_TIMEOUT_MS,
    fresh: false,
    reconnect: null,
    keepalive: null,
    resumes: false,
    source: "OkHttp's 10 s timeouts; Go's transport (k6) drops a connection whose request failed and dials anew",
  },
  http2: {
    timeoutMs: HTTP_TIMEOUT_MS,
    fresh: false,
    reconnect: null,
    // Go's http2.Transport can PING an idle connection (ReadIdleTimeout) but k6 leaves it
    // at 0 (off) and offers no option: the platform has no liveness check here.
    keepalive: null,
    // A timed-out request resets its stream; the connection stays in the pool, so every
    // later request goes to it (measured: under a silent move no request succeeded
    // again in the step; Go's fix is the PING check above).
    keepsConnection: true,
    resumes: false,
    source:
      "OkHttp's 10 s timeouts; k6's HTTP/2 (Go's http2.Transport) has ReadIdleTimeout 0: no PING liveness check, and a timed-out request keeps its connection",
  },
  ws: {
    timeoutMs: HTTP_TIMEOUT_MS,
    fresh: false,
    reconnect: GRAPHQL_WS.reconnect,
    keepalive: GRAPHQL_WS.keepalive,
    resumes: false,
    source:
      "graphql-ws 6's retryWait (2^n s + 300-3000 ms) and keepAlive 10 s with a 5 s pong timeout; OkHttp's 10 s for an operation's answer",
  },
  'ws-nokeepalive': {
    timeoutMs: HTTP_TIMEOUT_MS,
    fresh: false,
    reconnect: GRAPHQL_WS.reconnect,
    keepalive: null,
    resumes: false,
    source: "graphql-ws 6's defaults: retryWait as ws, keepAlive 0 (off)",
  },
  grpc: {
    timeoutMs: HTTP_TIMEOUT_MS,
    fresh: false,
    reconnect: GRPC.reconnect,
    keepalive: null,
    resumes: false,
    source: "grpc-go's connection backoff (1 s x1.6, +-20 %, 120 s) and no client keepalive; a 10 s deadline per call",
  },
  // The subscription lanes: one subscription held open through the events.
  'sub-ws': {
    subscription: true,
    timeoutMs: Infinity,
    fresh: false,
    reconnect: GRAPHQL_WS.reconnect,
    keepalive: GRAPHQL_WS.keepalive,
    resumes: false,
    source:
      "graphql-ws 6: keepAlive 10 s with a 5 s pong timeout (the library's recipe), retryWait before each reconnection; graphql-transport-ws has no resume: a new subscription gets events from then on",
  },
  'sub-grpc': {
    subscription: true,
    timeoutMs: Infinity,
    fresh: false,
    reconnect: GRPC.reconnect,
    keepalive: null,
    resumes: true,
    source:
      "grpc-go's defaults: no keepalive (a silent death is never noticed) and a broken stream's channel reconnects at once; the stream resumes after its last seq (Subscribe after_seq: the server sends the events it kept since)",
  },
};

// The backoff before reconnection attempt n (0: the first after the loss), without
// its random parts; null: at once.
function backoffMs(reconnect, n) {
  if (!reconnect) return null;
  const k = reconnect.immediate ? n - 1 : n;
  if (k < 0) return null;
  return Math.min(reconnect.firstMs * reconnect.multiplier ** k, reconnect.maxMs);
}

// The wait before reconnection attempt n at its expected value (the random part at
// its middle, no jitter).
export function reconnectWaitMs(reconnect, n) {
  const base = backoffMs(reconnect, n);
  if (base === null) return 0;
  const [lo, hi] = reconnect.randomMs || [0, 0];
  return base + (lo + hi) / 2;
}

// A drawn wait (k6's lanes): the same with its jitter and random part.
export function drawReconnectWaitMs(reconnect, n, random = Math.random) {
  const base = backoffMs(reconnect, n);
  if (base === null) return 0;
  const jittered = base * (1 + (reconnect.jitter || 0) * (2 * random() - 1));
  const [lo, hi] = reconnect.randomMs || [0, 0];
  return jittered + lo + (hi - lo) * random();
}
