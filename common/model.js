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
// Under +rrc (a phone's radio: common/radio.js, tools/toxiproxy/radio.go), an operation
// that follows an idle gap (op.gapS) pays the radio's wake-up before any of that:
//   promotion      the radio was idle (a gap past its tail) or, in 3G, on FACH with a
//                  request too large for it: the promotion's delay
//   fach           3G's FACH carrying a small request and its answer slowly
//   drx            LTE's DRX in the tail: a downlink packet that comes after the
//                  inactivity timer waits for the next on-period, up to one cycle (half
//                  of it in the median, the rest in the tail)
//
// Plain ES module (k6 and Node both load it); a transport's own facts come from the
// lane catalogue (common/lanes/), the radio's from common/radio.js.
import { quantileRank } from './quantiles.js';
import { drxBoundMs, RADIOS, rhythmWakes, wake } from './radio.js';
import {
  FRESH_TRANSPORTS,
  framingOf as transportFraming,
  messageSegmentsOf,
  requestCpuMsOf,
  setupPhasesOf,
  wholeMsOf,
} from './lanes/catalogue.js';

export const PHASES = {
  tcp: 'TCP handshake',
  tls: 'TLS 1.3 handshake',
  ws_upgrade: 'WebSocket upgrade',
  ws_init: 'graphql-transport-ws init/ack',
  grpc_settings: "server's HTTP/2 SETTINGS",
};

// The connection set-up a transport pays: per operation for the fresh transports,
// once per connection (or socket, or channel) for the others. Each lane family declares
// its transports' phases, framing and freshness (common/lanes/).
export const setupPhases = setupPhasesOf;

// Transports that open a connection for every operation.
export const FRESH = FRESH_TRANSPORTS;

const TLS_RECORD = 30;
// CPU a new TLS 1.3 connection costs k6 and the server together (key exchange,
// certificate): 5-9 ms on the pack's 2-core machine; it is all a fresh HTTPS
// request costs under lan beyond its bytes.
export const TLS_HANDSHAKE_CPU_MS = 5;
// k6's own time per byte it receives (decoding: a 1 MB gRPC message costs it 14-19 ms,
// HTTP/JSON 8-9 ms, TLS records ~15 ms a MB): where a scenario's check reads the body.
export const K6_BYTE_MS = 1.5e-5;
// Bytes [up, down] a set-up phase puts on the wire beyond its round trip, counted by a
// proxy between k6 v1.8.1 and the pack's servers (2026-11-25): k6's (Go's) TLS 1.3
// ClientHello carries an X25519MLKEM768 key share (1494 B) and its Finished (80 B);
// the server's flight with its EC P-256 certificate (771 B) and two session tickets
// (578 B); the WebSocket upgrade request (237 B + a TLS record) and its 101 (171 B).
// They matter where the uplink is slow: the ClientHello alone is 31 ms at dsl's 384 kbit/s.
export const SETUP_BYTES = { tls: [1574, 1349], ws_upgrade: [237, 171] };
const setupBytesOf = (phases, tls) =>
  phases.reduce(
    ([u, d], p) => {
      const [pu, pd] = SETUP_BYTES[p] || [0, 0];
      const rec = tls && p !== 'tls' && SETUP_BYTES[p] ? TLS_RECORD : 0;
      return [u + pu + rec, d + pd + rec];
    },
    [0, 0],
  );
// The set-up phases' bytes on the link: { ms, text } (the model's term).
const setupBytes = (link, phases) => {
  const [u, d] = setupBytesOf(phases, phases.includes('tls'));
  return { ms: transferMs(u, link.upKbps) + transferMs(d, link.downKbps), text: `set-up ${u}/${d} B/B` };
};

// The bytes around a request and a response (the transport's, or the browser's RPC
// protocol's on it: common/lanes/), with a TLS record each over TLS.
function framingOf(transport, tls, protocol, warm) {
  const f = transportFraming(transport, protocol, warm);
  return tls ? { req: f.req + TLS_RECORD, res: f.res + TLS_RECORD } : f;
}

// ms to move `bytes` at `kbps` kbit/s (0 when unlimited).
export const transferMs = (bytes, kbps) => (kbps ? (bytes * 8) / kbps : 0);

// ---- TCP on the pack's link (tools/toxiproxy/tcp.go, docs/model.md "TCP") ----
//
// The link toxic sends like TCP: a new connection starts with TCP.initialWindow
// bytes in flight (10 segments of 1460, RFC 6928), and sends in rounds of one
// round trip; a full window doubles the next round's (slow start, RFC 5681), up
// to the bandwidth-delay product, beyond which the link's rate is the limit.
// After an idle period longer than the retransmission timeout the window starts
// over (RFC 5681 4.1). tcp.go's rounds and windowRounds() below are the same
// arithmetic; tools/toxiproxy/testdata/slowstart.json holds cases both are tested on.
export const TCP = { initialWindow: 14600, mss: 1460, rtoMinMs: 200 };

// The retransmission timeout after `samples` round trips of acknowledgements
// beyond the handshake's (tcp.go's rto): Linux's srtt + rttvar, rttvar kept at least
// TCP_RTO_MIN (200 ms), starting at max(2R, 200 ms) and closing a quarter of its
// distance to 200 ms per round trip: R + max(2R, 200) on a new connection's first
// round of data, R + 200 ms on a steady connection.
export function rtoMs(R, samples = Infinity) {
  const extra = Math.max(2 * R, TCP.rtoMinMs) - TCP.rtoMinMs;
  return R + TCP.rtoMinMs + (samples === Infinity ? 0 : extra * 0.75 ** samples);
}

// The window where it stops growing: the bandwidth-delay product and one segment
// (a window that large keeps the link busy), never below the window it starts at.
export const windowCap = (R, kbps, window = 0) =>
  kbps ? Math.max(window, Math.floor((R * kbps) / 8) + TCP.mss) : Infinity;

// One message of `bytes` sent on a connection whose window is `window` bytes, on
// a link of round trip R and `kbps`: -> { waitMs (what the window adds beyond
// transferMs), rounds, window (the window after it, for the next message) }.
// Each round carries up to the window; a round that used all of it doubles the
// next one, and the next round starts R after this one did (its acknowledgements
// are back), or when the link has sent this one if that takes longer. Once the
// window covers the bandwidth-delay product the rest flows at the link's rate.
// After the message, the window has grown by what its last round carried, to no
// more than twice that (a window is only grown as far as it was used). Used for
// gRPC's flow-control window on a new channel too (grpc-go starts a stream at a
// 64 KB window and doubles it from its BDP estimate).
export function windowRounds(bytes, window, R, kbps, loss = null) {
  if (loss && bytes && window && R) return lossyRounds(bytes, window, R, kbps, loss);
  if (!bytes || !window || window === Infinity || !R) return { waitMs: 0, rounds: bytes ? 1 : 0, window };
  const line = (b) => transferMs(b, kbps);
  const cap = windowCap(R, kbps, window);
  let t = 0;
  let sent = 0;
  let w = Math.min(window, cap);
  let rounds = 0;
  for (;;) {
    const flight = Math.min(w, bytes - sent);
    rounds++;
    if (sent + flight >= bytes) {
      t += line(flight);
      w = Math.min(cap, Math.max(w, Math.min(w + flight, 2 * flight)));
      break;
    }
    t += Math.max(line(flight), R);
    sent += flight;
    w = Math.min(2 * w, cap);
    if (kbps && line(w) >= R) {
      // The window covers the bandwidth-delay product: the rest flows at the
      // link's rate, in rounds that still grow the window.
      t += line(bytes - sent);
      for (;;) {
        const f = Math.min(w, bytes - sent);
        rounds++;
        sent += f;
        if (sent >= bytes) {
          w = Math.min(cap, Math.max(w, Math.min(w + f, 2 * f)));
          break;
        }
        w = Math.min(2 * w, cap);
      }
      break;
    }
  }
  return { waitMs: Math.max(0, t - line(bytes)), rounds, window: w };
}

// A kept connection's window on a lossy link, in bytes: the sawtooth's mean (Mathis et
// al., below), at least two segments.
export const settledWindow = (loss) => Math.max(2 * TCP.mss, 0.75 * Math.sqrt(8 / (3 * loss.events)) * TCP.mss);

// What one connection carries at most, in kbit/s: the link's down-rate, and under loss
// its settled window once a round trip (Mathis: 4g with 3 % loss, R 170 ms, ~480 kbit/s
// of the link's 12,000). null when neither limits it (lan).
export function connectionKbps(link) {
  const windowKbps = link.loss && link.R > 0 ? (settledWindow(link.loss) * 8) / link.R : null;
  const all = [link.downKbps, windowKbps].filter((x) => x);
  return all.length ? Math.min(...all) : null;
}

// windowRounds on a lossy link (tcp.go's rules), along the median path: losses at
// even spacing, 1/events segments apart, the first at ln 2/events (where half of all
// transfers have met one). A loss is detected about a round trip after it left, so
// it halves the window two rounds on (and ends slow start: ssthresh), and losses
// before that reduction count with it (one reduction per window of data); then the
// window grows a segment per round trip (congestion avoidance). A kept connection
// on a lossy link has no open window to start from: it starts where its earlier
// traffic left it, at the sawtooth's mean (Mathis et al., The Macroscopic Behavior
// of the TCP Congestion Avoidance Algorithm, CCR 1997: 0.75 x sqrt(8/(3p)) segments),
// in congestion avoidance. What a loss stalls (the lost bytes' own wait,
// head-of-line) is lossCost's.
function lossyRounds(bytes, window, R, kbps, loss) {
  const line = (b) => transferMs(b, kbps);
  const cap = windowCap(R, kbps, window === Infinity ? 0 : window);
  const spacing = TCP.mss / loss.events; // bytes between losses
  let nextLoss = Math.LN2 * spacing;
  const settled = settledWindow(loss);
  let w = Math.min(window === Infinity ? settled : window, cap);
  let ssthresh = window === Infinity ? w : Infinity;
  let t = 0;
  let sent = 0;
  let rounds = 0;
  let cutIn = 0; // rounds until a detected loss reduces the window
  while (sent < bytes) {
    const flight = Math.min(w, bytes - sent);
    rounds++;
    const last = sent + flight >= bytes;
    t += last ? line(flight) : Math.max(line(flight), R);
    let lost = false;
    while (nextLoss < sent + flight) {
      lost = true;
      nextLoss += spacing;
    }
    sent += flight;
    if (w < ssthresh) w = Math.min(ssthresh, Math.max(w, Math.min(w + flight, 2 * flight)));
    else if (flight >= w - TCP.mss) w += TCP.mss;
    w = Math.min(w, cap);
    if (cutIn && --cutIn === 0) {
      ssthresh = Math.max(w / 2, 2 * TCP.mss);
      w = ssthresh;
    } else if (lost && !cutIn) cutIn = 2;
  }
  return { waitMs: Math.max(0, t - line(bytes)), rounds, window: w };
}

// What a window-limited sender adds to moving `bytes` beyond transferMs, from a
// window of `initialWindow` bytes (windowRounds' waitMs).
export const windowWaitMs = (bytes, initialWindow, R, kbps) => windowRounds(bytes, initialWindow, R, kbps).waitMs;

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
  const R = net.rttMs || 0;
  return {
    R,
    upKbps: net.upKbps ?? null,
    downKbps: net.downKbps ?? null,
    jitterMs: net.jitterMs || 0,
    extraMs,
    extraP95Ms,
    // TCP's window (none without a round trip: lan has no link toxic).
    initialWindow: R > 0 && net.slowStart !== false ? (net.initialWindow ?? TCP.initialWindow) : 0,
    shared: Boolean(net.sharedBandwidth),
    loss: lossModel(net.loss),
    // The phone's radio (+rrc: 'lte' or '3g', null without; "auto" is resolved by
    // common/profiles.js) and its carrier NAT's idle timeout (+nat, seconds, 0: none).
    radio: RADIOS[net.radio] ? net.radio : null,
    natIdleS: net.natIdleS || 0,
  };
}

// What the radio adds to an operation that follows an idle gap of gapS seconds (from the
// radio's last packet): { promotionMs, fachMs, drxMs (the median's DRX wait), drxTailMs
// (the rest of the DRX bound, for the p95), state (what the request finds) }; zeros
// without a radio or a gap. up/down: the bytes each way (3G's FACH decides on them).
// oneWay: a push, whose one packet meets the DRX after the whole gap; an answer comes
// half a round trip and the server's time after its request (the radio's last packet).
// periodS instead of gapS: `ops` operations, one every periodS seconds start to start,
// each activeMs long on the plain link (operation() gives it) and its connection's last
// packet trailRounds round trips after its answer (gRPC's PING and ACK); the quantile is
// k6's (linear between the sorted operations) over their radio costs, one by one
// (common/radio.js rhythmWakes: in 3G an operation FACH carried changes what the next one
// finds, and at gaps of 12-17 s the operations alternate: k6's median of 4 is half-way).
// pingS: pings every pingS seconds on their own clock keep the connection too: the
// gap is the shorter of the rhythm's and the time since the last ping (uniform over the
// interval: its quantile is quantile x pingS).
export function radioWake(link, op, up = 0, down = 0) {
  const { oneWay = false, serverMs = 0, periodS, quantile = 0.5 } = op;
  const none = { promotionMs: 0, fachMs: 0, drxMs: 0, drxTailMs: 0, state: null };
  if (link.radio && periodS && !oneWay) {
    const trailMs = (op.trailRounds || 0) * link.R;
    const activeMs = op.activeMs || 0;
    const at = (w) => radioWake(link, { ...op, periodS: undefined, gapS: w.gapS, from: w.from }, up, down);
    if (op.pingS > 0) {
      const gapS = Math.max(0, periodS * 1000 - activeMs - trailMs) / 1000;
      return at({ gapS: Math.min(gapS, quantile * op.pingS), from: 'up' });
    }
    const seq = rhythmWakes(link.radio, {
      periodS,
      activeMs,
      trailMs,
      count: op.ops || 8,
      upBytes: up,
      downBytes: down,
    })
      .map(at)
      .sort((a, b) => cost(a) - cost(b));
    const rank = quantileRank(seq.length, quantile);
    const [lo, hi, f] = [seq[rank.lo], seq[rank.hi], rank.f];
    const mix = (k) => lo[k] + f * (hi[k] - lo[k]);
    return {
      ...hi,
      promotionMs: mix('promotionMs'),
      fachMs: mix('fachMs'),
      drxMs: mix('drxMs'),
      drxTailMs: mix('drxTailMs'),
    };
  }
  const gapS = op.gapS;
  if (!link.radio || gapS === undefined || gapS === null) return none;
  if (oneWay) {
    // A push: the radio is idle past the tail (the promotion; the paging delay is not
    // modelled: tools/toxiproxy/radio.go), else DRX bounds its wait.
    const w = wake(link.radio, gapS);
    if (w.state === 'idle') return { ...none, promotionMs: w.promotionMs, state: w.state };
    const bound = drxBoundMs(link.radio, gapS);
    return { ...none, drxMs: bound / 2, drxTailMs: bound / 2, state: w.state };
  }
  const w = wake(link.radio, gapS, { upBytes: up, downBytes: down, from: op.from });
  const bound = drxBoundMs(link.radio, (link.R / 2 + serverMs) / 1000);
  return { promotionMs: w.promotionMs, fachMs: w.fachMs, drxMs: bound / 2, drxTailMs: bound / 2, state: w.state };
}
const cost = (w) => w.promotionMs + w.fachMs;

// ---- loss (tools/toxiproxy/tcp.go; docs/model.md "Loss") ----
//
// A profile's loss ({ rate, burst: { p, r, rate } }, common/profiles.js) as the
// model uses it: per segment, Gilbert-Elliott as netem's gemodel (Bernoulli without
// a burst). -> null without loss, else { rate: the long-run share of segments lost,
// clean(n): the chance n segments in a row all arrive, again: the chance a lost
// segment's retransmission (the next draw) is lost too, events: cwnd reductions
// per segment (losses close together count once) }.
export function lossModel(loss) {
  if (!loss) return null;
  const good = loss.rate || 0;
  const b = loss.burst && loss.burst.p ? loss.burst : null;
  const p = b ? b.p : 0;
  const r = b ? b.r : 1;
  const bad = b ? b.rate : good;
  const piBad = b ? p / (p + r) : 0;
  const rate = (1 - piBad) * good + piBad * bad;
  if (!rate) return null;
  // One segment: lost or not by the state it meets, then the state moves on.
  const step = ([g, x], lostG, lostB) => [g * lostG * (1 - p) + x * lostB * r, g * lostG * p + x * lostB * (1 - r)];
  const clean = (n) => {
    let v = [1 - piBad, piBad];
    for (let i = 0; i < n; i++) v = step(v, 1 - good, 1 - bad);
    return v[0] + v[1];
  };
  // A retransmission leaves a round trip or a timeout later, when the burst its
  // segment met has passed: it meets the long-run rate (tcp.go lostAgain).
  const again = rate;
  // A burst's losses fall in one window and cost one reduction.
  const events = b ? (1 - piBad) * p * (bad > 0 ? 1 : 0) + (1 - piBad) * good : rate;
  return { rate, clean, again, events };
}

// A distribution of stalls: [[ms, probability], ...].
const convolve = (a, b) => {
  const out = new Map();
  for (const [x, px] of a) for (const [y, py] of b) out.set(x + y, (out.get(x + y) || 0) + px * py);
  return [...out].filter(([, pr]) => pr > 1e-6);
};
export const quantile = (dist, q) => {
  let acc = 0;
  for (const [ms, pr] of [...dist].sort((a, b) => a[0] - b[0])) if ((acc += pr) >= q) return ms;
  return Math.max(...dist.map(([ms]) => ms));
};
// The largest of n independent draws from dist.
const maxOf = (dist, n) => {
  const sorted = [...dist].sort((a, b) => a[0] - b[0]);
  let acc = 0;
  return sorted.map(([ms, pr]) => {
    const before = acc ** n;
    acc += pr;
    return [ms, acc ** n - before];
  });
};

// Segments each set-up phase sends [up, down] (each write its own segment; TCP's
// handshake is never lost): TLS 1.3 ClientHello and Finished, the server's flight
// and its session tickets; the WebSocket upgrade and graphql-transport-ws init;
// HTTP/2's preface and SETTINGS each way. (The least an exchange's message is, on
// transports that write headers and data apart: the catalogue's messageSegmentsOf.)
const SETUP_SEGMENTS = { tls: [2, 3], ws_upgrade: [1, 1], ws_init: [1, 1], grpc_settings: [2, 2] };

// Segments a message of `bytes` travels in (each send is cut in MSS pieces).
const segmentsOf = (bytes) => Math.max(1, Math.ceil(bytes / TCP.mss));
// A message up to this long takes a few round trips: a loss in its body stalls it
// about a round trip (the retransmission follows the third duplicate ACK, and the
// bytes after it wait). In a longer one the rest flows meanwhile, and its cost is the
// window's (windowRounds with loss).
const SHORT_SEGMENTS = 100;

// The stalls losses add to one message (a flight of segments one way) whose
// retransmission timeout is rto: a loss among its last three segments waits for the
// timeout (doubled for each retransmission lost again), another one a round trip
// (fast retransmit) in a short message.
function messageStalls(loss, n, R, rto) {
  const tail = Math.min(3, n);
  const pTail = 1 - loss.clean(tail);
  const pBody = n > tail ? loss.clean(tail) * (1 - loss.clean(n - tail)) : 0;
  const body = n <= SHORT_SEGMENTS ? R : 0;
  const again = Math.min(loss.again, 1);
  return [
    [0, 1 - pTail - pBody],
    [body, pBody],
    [rto, pTail * (1 - again)],
    [3 * rto, pTail * again * (1 - again)],
    [7 * rto, pTail * again * again],
  ].filter(([, pr]) => pr > 0);
}

// The stall quantile a p95 budget carries: a run's p95 stands on a handful of
// operations per row (5 under loss at LOAD=ci: buildScenario), and k6's p95 of 5
// is 80 % of the way to their largest, which meets a loss once in 1/(5q) runs: a
// budget at the stalls' 95th percentile would fail on rows whose stall is rarer
// than 1 in 20 operations but not than 1 in 100. So the 99th.
export const TAIL_QUANTILE = 0.99;

// What losses stall in an operation: { p50, p95 } ms over its messages, and over the
// connections it runs in parallel (the operation waits for the slowest).
// flights: [{ bytes, rto }] in the order they go; connections: parallel copies.
export function lossCost(link, flights, connections = 1) {
  const loss = link.loss;
  if (!loss || !link.R) return { p50: 0, p95: 0, bound: 0 };
  let dist = [[0, 1]];
  for (const f of flights)
    dist = convolve(dist, messageStalls(loss, Math.max(f.segments || 1, segmentsOf(f.bytes)), link.R, f.rto));
  if (connections > 1) dist = maxOf(dist, Math.round(connections));
  return { p50: quantile(dist, 0.5), p95: quantile(dist, TAIL_QUANTILE), bound: quantile(dist, MEDIAN_BOUND) };
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
//   window: TCP's window in bytes when the operation starts (default: the initial
//           window on a connection it opens or after `idle`, else open: a kept
//           connection's window has grown with what it carried before),
//   idle: true when the connection sat idle longer than the retransmission
//         timeout before it (TCP starts its window over),
//   age: round trips a kept connection has seen (default: many; a young one's
//         retransmission timeout is longer: rtoMs),
//   connections: parallel connections the bytes are spread over (an HTTP/1.1
//         batch: 6); on a shared link they share its bandwidth,
//   upWindow: true for a client stream (its request bytes wait for the server's window),
//   waitMs: a wait the protocol adds (a poll interval),
//   gapS: seconds since the radio's last packet, under +rrc (radioWake: the promotion,
//         FACH or the DRX wait the operation pays first; none without it), or periodS,
//         quantile, ops (and pingS, trailRounds): one operation every periodS seconds
//         start to start, its quantile over `ops` of them (radioWake); from: 'fach'
//         when the radio's last packet went on 3G's FACH (common/radio.js wake) }
// -> { ms, setupMs, roundTrips, terms: [{ name, ms, text }], formula, tailMs (what
//      losses add at the 95th percentile beyond the median: stalls, and a long
//      transfer's window meeting more losses), spreadMs (that last part alone),
//      stallSpreadMs (the stalls' MEDIAN_BOUND percentile beyond their median) }
export function operation(link, op) {
  const cold = FRESH.has(op.transport) || op.conn === 'cold';
  const phases = op.phases || (cold ? setupPhases(op.transport, op.tls) : []);
  const framing = framingOf(op.transport, op.tls, op.protocol, !cold);
  const rounds = op.oneWay ? 0.5 : (op.rounds ?? 1);
  const messages = op.messages ?? (op.oneWay ? 1 : (op.rounds ?? 1));
  const up = op.oneWay ? 0 : (op.reqBytes || 0) + framing.req * messages;
  const down = (op.resBytes || 0) + framing.res * messages;
  const terms = [];
  const add = (name, ms, text) => {
    if (ms > 0 || name === 'request') terms.push({ name, ms, text });
  };
  const handshake = setupBytes(link, phases);
  const [setupUp, setupDown] = setupBytesOf(phases, phases.includes('tls'));
  // A rhythm's gap is the period less the operation: its time on the plain link.
  const rhythmOp =
    link.radio && op.periodS
      ? { ...op, activeMs: operation({ ...link, radio: null }, { ...op, periodS: undefined }).ms }
      : op;
  const radio = radioWake(link, rhythmOp, up + setupUp, down + setupDown);
  add(
    'promotion',
    radio.promotionMs,
    `radio promotion (${link.radio}, ${radio.state} after ${op.gapS ?? op.periodS} s)`,
  );
  // With a promotion too, FACH carried the request and its answer promoted (common/radio.js wake).
  add('fach', radio.fachMs, radio.promotionMs > 0 ? 'FACH carries the request (3g)' : 'FACH carries it (3g)');
  for (const p of phases) add(p, link.R + link.extraMs, `${PHASES[p]}: R`);
  add('handshake bytes', handshake.ms, handshake.text);
  add(
    'request',
    rounds * (link.R + link.extraMs),
    `${rounds === 1 ? '' : rounds === 0.5 ? '½' : rounds}R${link.extraMs ? ' + fault delay' : ''}`,
  );
  // On a shared link, parallel connections' bytes queue for the same bandwidth.
  const share = link.shared ? op.connections || 1 : 1;
  add('up', transferMs(up * share, link.upKbps), `${Math.round(up * share)} B/Bu`);
  add('down', transferMs(down * share, link.downKbps), `${Math.round(down * share)} B/Bd`);
  const exchanges = Math.max(1, Math.round(rounds));
  const { wait, tail, grpcCold, tcp, windowLoss } = tcpWindows(link, op, cold, up, down, exchanges);
  add('window', wait, windowLoss ? 'window under loss' : grpcCold && tcp === Infinity ? 'gRPC window' : 'slow start');
  // Loss: each set-up phase's messages (one segment each way; TCP's own handshake is
  // never lost) and each exchange's request and answer, with the retransmission
  // timeout of a connection that age. The median's stall goes in the model, the
  // 95th percentile's beyond it in tailMs (budget() adds it to the p95 budget).
  const flights = [];
  // A connection's age in round trips sets its timeout: from 0 on one the operation
  // opens, op.age on a young kept one (a plan that opens its connections per
  // iteration), else steady.
  const age = { up: cold ? 0 : (op.age ?? Infinity), down: cold ? 0 : (op.age ?? Infinity) };
  const flight = (dir, bytes, segments = 1) => flights.push({ bytes, segments, rto: rtoMs(link.R, age[dir]++) });
  for (const ph of phases) {
    const [u, d] = SETUP_SEGMENTS[ph] || [0, 0];
    if (u) flight('up', 0, u);
    if (d) flight('down', 0, d);
  }
  // Each message is a write of its own (HTTP/2's 20 atomic requests are 20 segments at least).
  const least = Math.max(messageSegmentsOf(op.transport), Math.round(messages / exchanges));
  for (let i = 0; i < exchanges; i++) {
    if (up > 0) flight('up', up / exchanges, least);
    if (down > 0) flight('down', down / exchanges, least);
  }
  const lost = lossCost(link, flights, op.connections || 1);
  add('loss', lost.p50, 'loss stalls');
  // A client stream sends under the server's window for a new stream (64 KB, Node's
  // default) on every call: an upload beyond it waits for the server's WINDOW_UPDATEs.
  if (op.upWindow) add('upWindow', windowWaitMs(up, GRPC_INITIAL_WINDOW, link.R, link.upKbps), 'HTTP/2 window (up)');
  add('server', op.serverMs || 0, 'server');
  add(
    'client',
    (op.clientMs || 0) + (phases.includes('tls') ? TLS_HANDSHAKE_CPU_MS : 0) + requestCpuMsOf(op.transport),
    'k6',
  );
  add('wait', op.waitMs || 0, 'protocol wait');
  add('drx', radio.drxMs, 'DRX wait (lte)');
  const ms = terms.reduce((s, t) => s + t.ms, 0);
  const setupMs = phases.length * (link.R + link.extraMs) + handshake.ms;
  const roundsTotal = phases.length + rounds;
  const formula = [
    `${roundsTotal === 1 ? '' : roundsTotal === 0.5 ? '½' : round1(roundsTotal)}R`,
    ...terms.filter((t) => !PHASES[t.name] && t.name !== 'request').map((t) => t.text),
  ].join(' + ');
  return {
    ms,
    setupMs,
    roundTrips: roundsTotal,
    terms,
    formula,
    tailMs: lost.p95 - lost.p50 + tail + radio.drxTailMs,
    spreadMs: tail,
    // The radio's part: promotion, FACH and the median's DRX wait (ms), the rest apart.
    radioMs: radio.promotionMs + radio.fachMs + radio.drxMs,
    stallSpreadMs: lost.bound - lost.p50,
  };
}

// TCP's window over an operation: each exchange (rounds one after another on a
// connection) starts on the window the one before left, from op.window, else the
// initial window on a connection it opens or after `idle`, else an open one. The
// first message on a new gRPC channel also waits for gRPC's flow-control window:
// whichever is smaller limits. Losses cut the window (none to cut without slow
// start: +ideal). -> { wait (ms beyond the bytes' time), after (the down
// direction's window after the operation), grpcCold, tcp, windowLoss }
function tcpWindows(link, op, cold, up, down, exchanges) {
  const windowLoss = link.initialWindow ? link.loss : null;
  // On a lossy link a kept connection's window is where losses keep it (windowRounds
  // starts an open window there), whatever it carried before.
  const kept = !cold && !op.idle;
  const tcp =
    windowLoss && kept
      ? Infinity
      : (op.window ?? (link.initialWindow && (cold || op.idle) ? link.initialWindow : Infinity));
  const grpcCold = cold && op.transport.startsWith('grpc');
  let wait = 0;
  let tail = 0;
  let after = tcp;
  for (const [bytes, kbps, first, dir] of [
    [up, link.upKbps, tcp, 'up'],
    [down, link.downKbps, grpcCold ? Math.min(tcp, GRPC_INITIAL_WINDOW) : tcp, 'down'],
  ]) {
    let w = first;
    for (let i = 0; i < exchanges && bytes > 0; i++) {
      const b = bytes / exchanges;
      const r = windowRounds(b, w, link.R, kbps, windowLoss);
      wait += r.waitMs;
      // The 95th percentile meets more losses than the median path: as many as a
      // Poisson count of the expected ones reaches 95 % of the time.
      if (windowLoss) {
        const expected = segmentsOf(b) * windowLoss.events;
        const more = (expected + 1.645 * Math.sqrt(expected) + 1) / expected;
        tail += windowRounds(b, w, link.R, kbps, { ...windowLoss, events: windowLoss.events * more }).waitMs - r.waitMs;
      }
      w = r.window;
    }
    if (dir === 'down') after = w;
  }
  return { wait, tail, after, grpcCold, tcp, windowLoss };
}

// The window an operation leaves its connection with (downstream: the answers'),
// for the next operation on it (op.window): a plan whose kept connections carry
// bigger and bigger answers chains them (scenarios/specs/compound-vs-parallel.js).
export function windowAfter(link, op) {
  const cold = FRESH.has(op.transport) || op.conn === 'cold';
  const framing = framingOf(op.transport, op.tls, op.protocol, !cold);
  const rounds = op.rounds ?? 1;
  const messages = op.messages ?? rounds;
  const up = (op.reqBytes || 0) + framing.req * messages;
  const down = (op.resBytes || 0) + framing.res * messages;
  return tcpWindows(link, op, cold, up, down, Math.max(1, Math.round(rounds))).after;
}

// A set-up phase list on its own (setup_duration{phase:...}): ws_upgrade measures
// TCP (+ TLS) + the upgrade, ws_init the init/ack, grpc_connect the whole channel.
// Beyond the round trips: the phases' bytes on the link and TLS's CPU.
export function setupOnly(link, phases) {
  const terms = phases.map((p) => ({ name: p, ms: link.R + link.extraMs, text: `${PHASES[p]}: R` }));
  const tls = phases.includes('tls');
  const handshake = setupBytes(link, phases);
  if (handshake.ms > 0) terms.push({ name: 'handshake bytes', ms: handshake.ms, text: handshake.text });
  if (tls) terms.push({ name: 'client', ms: TLS_HANDSHAKE_CPU_MS, text: 'k6' });
  const ms = terms.reduce((sum, t) => sum + t.ms, 0);
  const extras = terms.slice(phases.length).map((t) => t.text);
  return {
    ms,
    setupMs: ms,
    roundTrips: phases.length,
    terms,
    formula: [`${phases.length === 1 ? '' : phases.length}R`, ...extras].join(' + '),
  };
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
//
// machine ({ cores, cpuScale }: machineOf(env), common/machine.js): the CPU the
// budgets assume. The model's CPU terms (the server's, k6's) were measured on the
// pack's reference machine; cpuScale (>= 1) is how much slower a CPU second is on
// this one right now (k6pack measures it before each run: lib/calibrate.js), so a
// loaded runner's budgets follow from a measurement, not a wider number. cores: n
// operations at once, each needing c ms of CPU, cannot cycle faster than n x c /
// cores (the utilization law): a CPU-bound lane at c4 on 2 cores takes twice its c1
// time. contentionMs is that excess over the model's time; it is CPU, so it gets
// cpuFactor too. The policy's plusMs and stepMs stand for what the model leaves out
// on the reference machine (k6's and the proxy's CPU per operation, scheduling,
// queueing on the load generator): CPU too, so they follow cpuScale.
// k6 times gRPC and WebSocket operations in whole milliseconds (Date.now() on both
// ends): such a figure lands up to 1 ms above the true one, so its budget sits
// WHOLE_MS_QUANTUM above the multiple of 5 the rest rounds up to (p(50)<21, not
// <20: a whole-ms p50 of 20 is a true time under 20 read late).

// Under loss an operation's time varies with the losses it meets, and so does a
// run's median of the n operations a row has (n: the iterations a step holds under
// loss, 5, common/scenario.js). That median stays below the q-th percentile of the
// operation's time 95 % of the time, q such that fewer than half of n draws land
// above it with probability 0.95 (binomial): 0.81 for n = 5. medianSpreadMs is what
// the loss stalls (their q-th percentile beyond their median) and a long transfer's
// window (its spread, normal) add there; the p50 budget carries it.
export const LOSS_SAMPLES = 5;
const binomialAtLeast = (n, k, p) => {
  let sum = 0;
  for (let i = k; i <= n; i++) {
    let c = 1;
    for (let j = 0; j < i; j++) c = (c * (n - j)) / (j + 1);
    sum += c * p ** i * (1 - p) ** (n - i);
  }
  return sum;
};
const bisect = (f, lo, hi) => {
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid)) hi = mid;
    else lo = mid;
  }
  return (lo + hi) / 2;
};
// The standard normal's quantile (Abramowitz and Stegun 7.1.26 for erf, inverted by bisection).
const normalCdf = (z) => {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf =
    1 -
    t *
      (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
      Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
};
export const MEDIAN_BOUND =
  1 - bisect((p) => binomialAtLeast(LOSS_SAMPLES, Math.ceil(LOSS_SAMPLES / 2), p) >= 0.05, 0, 1);
const MEDIAN_BOUND_Z = bisect((z) => normalCdf(z) >= MEDIAN_BOUND, -10, 10);
export const medianSpreadMs = (e) => (e.stallSpreadMs || 0) + ((e.spreadMs || 0) * MEDIAN_BOUND_Z) / 1.645;

export const stepAllowance = (policy, which, vus) => (vus > 1 ? policy.stepMs[which] * Math.log2(vus) : 0);

// The pack's reference machine (the one the CPU terms were measured on): what a
// plain `k6 run` assumes when CPU_CORES and CPU_SCALE are not given.
export const REFERENCE_MACHINE = { cores: 2, cpuScale: 1 };
export const WHOLE_MS_QUANTUM = 1;
export const cpuMsOf = (e) => e.terms.filter((t) => CPU_TERMS.has(t.name)).reduce((s, t) => s + t.ms, 0);
// What n operations at once add to one's time by sharing the machine's cores (ms of CPU wait).
export const contentionMs = (e, vus, machine = REFERENCE_MACHINE) =>
  Math.max(0, (vus * cpuMsOf(e) * machine.cpuScale) / machine.cores - e.ms - cpuMsOf(e) * (machine.cpuScale - 1));

const ceil5 = (x) => Math.ceil(x / 5 - 1e-9) * 5;

// The tail a link's jitter adds to an operation of `roundTrips` round trips.
export const jitterTailMs = (link, roundTrips) =>
  (link.extraP95Ms - link.extraMs) * roundTrips + link.jitterMs * Math.sqrt(roundTrips);

// expected: { p50, p95 }: operation()'s results, the p95 one the tail when it is
// another operation (a lane whose first operation opens its connection: p95 covers
// that cold one). extra: { p50, p95 } ms an override adds. -> { p50, p95 } in whole ms.
// opts: { extra: { p50, p95 } ms an override adds, machine, transport (for WHOLE_MS_QUANTUM),
// atOnce: the operations that share the cores (contentionMs), vus unless a lane says
// otherwise (fan-out: one event's copies are one piece of work its model prices whole) }.
export function budget(policy, link, { p50: e50, p95: e95 = e50 }, vus = 1, opts = {}) {
  const { extra = {}, machine = REFERENCE_MACHINE, transport, atOnce = vus } = opts;
  const cpu = (e) => cpuMsOf(e) * machine.cpuScale + contentionMs(e, atOnce, machine);
  const scaled = (e, factor) => (e.ms - cpuMsOf(e)) * factor + cpu(e) * policy.cpuFactor;
  const quantum = wholeMsOf(transport) ? WHOLE_MS_QUANTUM : 0;
  const p50 =
    ceil5(
      scaled(e50, policy.p50.factor) +
        medianSpreadMs(e50) +
        (policy.p50.plusMs + stepAllowance(policy, 'p50', vus)) * machine.cpuScale +
        (extra.p50 || 0),
    ) + quantum;
  const p95 =
    ceil5(
      scaled(e95, policy.p95.factor) +
        (jitterTailMs(link, e95.roundTrips) + (e95.tailMs || 0)) * policy.p95.factor +
        (policy.p95.plusMs + stepAllowance(policy, 'p95', vus)) * machine.cpuScale +
        (extra.p95 || 0),
    ) + quantum;
  // The cores' cycle (contention) holds up every operation of a step alike, the median's
  // and the tail's: a p95 budget is never below its p50 one.
  return { p50, p95: Math.max(p95, p50) };
}
const CPU_TERMS = new Set(['server', 'client']);
