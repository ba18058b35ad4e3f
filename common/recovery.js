// The recovery model of issue 26 ("Unstable links"): how long each lane's client takes
// to get an operation through again after a link event, as the pack's link toxic
// (tools/toxiproxy/events.go, tcp.go) and the lane's client policy (common/policies.js)
// make it. docs/model.md "Recovery from link events" explains it with its sources.
//
//   recovery = from the link's return (a blackout's or a move's end; a dip's end) to
//              the end of the first operation that succeeds after it
//
// for one VU running operations back to back (a closed loop, one at a time), at the
// median over where in its operation the client is when the event starts (the phase,
// uniform): PHASES evenly spaced phases (the midpoints of as many equal parts), an odd
// count so that the median is one phase's value and its terms; no randomness. A lane
// with keepalive under a silent move also spreads its probe's phase (PROBE_PHASES). A kept connection's cycle is one operation
// (opMs); a fresh lane's is its set-up and its operation (setupMs + opMs, setupMs
// starting with TCP's R).
//
// An operation is an exchange: its request reaches the far end R/2 after it starts,
// its answer leaves opMs - R/2 after that and arrives at its end (its bytes' time is
// before the answer's departure: the model of a small operation). Each set-up round
// trip after TCP's handshake is such an exchange too. What the link does to them:
//   blackout  a flight that would arrive in the dark is lost and retransmitted after the
//             connection's RTO (rtoMs: R + 200 ms warm, R + max(2R, 200) on a new
//             connection's first round), doubling (at most 6 times, tcp.go), until a
//             try arrives at or after the return; the rest of the exchange follows it.
//             A connection whose SYN round trip [t, t + R] meets the dark retries it
//             after 1 s, then 2 s more, ... (TCP_TIMEOUT_INIT, events.go openAt).
//   move      a blackout after which every connection opened before its end is dead:
//             silent: nothing of it arrives again, and an operation on it fails at its
//             timeoutMs from its start (or, for a lane with keepalive, when the first
//             probe that meets the death goes unanswered for the probe's timeout:
//             whichever comes first); reset: it fails at the return. The connection
//             is dropped; the next operation opens a new one after the policy's
//             reconnection wait (reconnectWaitMs(reconnect, 0): the random part at its
//             middle).
//   dip       nothing is lost; the operation in flight at the dip's end is taken at
//             the dipped rate throughout (its transfer part / share): the recovery is
//             what remains of it, half a dipped operation at the median.
//
// Plain ES module (k6 and Node both load it); its imports are pure modules of this folder.

import { LANES } from './lanes/catalogue.js';
import { FRESH, operation, rtoMs, setupOnly, setupPhases } from './model.js';
import { POLICIES, reconnectWaitMs } from './policies.js';
import { eventAttributes } from './profiles.js';

// Evenly spaced phases of the operation in flight; of a keepalive probe's cycle (odd:
// the median is one sample).
export const PHASES = 201;
export const PROBE_PHASES = 51;
// The SYN's first retransmission timeout (RFC 6298 2.1 and 5.7, Linux TCP_TIMEOUT_INIT).
export const SYN_RTO_MS = 1000;
// tcp.go: the timeout doubles at most this often; a SYN is tried at most 8 more times.
const MAX_BACKOFF_SHIFT = 6;
const MAX_TRIES = 16;
const MAX_SYN_TRIES = 8;
// A closed loop meets at most this many failed operations before one succeeds (a
// guard: every case here needs one or two).
const MAX_OPERATIONS = 20;

// The transport (common/model.js) a policy's lanes run on (common/lanes/: each lane's
// policy), by policy; a policy no lane uses (ws: a client that pings) is its transport's name.
export const LANE_TRANSPORTS = Object.fromEntries(
  [...LANES].reverse().flatMap((l) => (l.policy ? [[l.policy, l.transport]] : [])),
);

// The unstable scenario's publisher sends its subscription lanes an event this often
// (straight to the server: the events are the subscriber's link's).
export const PUBLISH_MS = 100;

// Where each term of a recovery comes from.
export const SOURCES = {
  retransmission:
    "TCP's retransmission timer after a loss in the dark: the connection's RTO (Linux srtt + rttvar, rttvar at least TCP_RTO_MIN 200 ms: R + 200 ms warm, R + max(2R, 200 ms) on a new connection's first round; model.js rtoMs), doubled after each timeout (RFC 6298 5.5); the first try that arrives at or after the return brings it (tcp.go darkPiece)",
  'SYN retries':
    'a SYN whose round trip meets the dark is retried after 1 s, then 2 s more, 4 s more (RFC 6298 2.1 and 5.7; Linux TCP_TIMEOUT_INIT; events.go openAt)',
  'set-up':
    "the transport's set-up round trips on a new connection (model.js setupPhases: TCP R, TLS R, ws upgrade + init 2R, gRPC's SETTINGS R)",
  operation: "the operation's own time (model.js operation())",
  timeout: 'the operation fails at its timeout counted from its start (the policy: common/policies.js timeoutMs)',
  reset:
    "the proxy resets every connection opened before the move's end at its end (RFC 9293 3.5.3): the operation fails at the return",
  keepalive:
    'the keepalive probe that meets the dead connection goes unanswered for its timeout (graphql-ws keepAlive with the ping/pong timeout recipe: common/policies.js keepalive)',
  'reconnect wait': 'the wait before a new connection (common/policies.js reconnect, reconnectWaitMs(reconnect, 0))',
  dip: "the rest of the operation in flight at the dip's end, its transfer at the dipped rate: bytes / (rate x share) (tcp.go serializeAt)",
  'publish wait': `a subscription waits for the next event the server sends (one every ${PUBLISH_MS} ms: the unstable scenario's publisher)`,
  subscribe:
    "a new subscription's request reaches the server R/2 after the connection is ready; a lane that resumes is sent the events kept since its last one at once, another gets the next event published, R/2 later",
};

// The events' windows [start, end] in absolute ms that overlap [fromMs, toMs): the link
// toxic's schedule (events.go): the first at epochMs + offsetS x 1000, then every
// periodS x 1000 (0: one only), each lengthMs long. events: a network's `events`
// (common/profiles.js); none: [].
export function eventWindows(events, epochMs, fromMs, toMs) {
  if (!events || !events.kind) return [];
  const { event_offset: offset, event_period: period, event_length: length } = eventAttributes(events);
  if (!(length > 0)) return [];
  const first = epochMs + offset;
  const out = [];
  if (!(period > 0)) {
    if (first < toMs && first + length > fromMs) out.push([first, first + length]);
    return out;
  }
  for (let i = Math.max(0, Math.floor((fromMs - length - first) / period)); ; i++) {
    const start = first + i * period;
    if (start >= toMs) break;
    if (start + length > fromMs) out.push([start, start + length]);
  }
  return out;
}

// ---- one phase: the closed loop around one event, the event's start at 0 ----

// The loop from the operation in flight at the event's start (started at -phase) to the
// first operation that succeeds after the return. -> { ms, terms: [{ name, ms }] }
function closedLoop(c, phase, probePhase) {
  const { L, R, h, kind, death, policy } = c;
  const dark = kind === 'blackout' || kind === 'move';
  const darkAt = (t) => dark && t >= 0 && t < L;
  const darkBetween = (a, b) => darkAt(a) || (dark && a < 0 && b >= 0);
  const spans = [];
  let cursor = -phase;
  const span = (name, to) => {
    spans.push({ name, from: cursor, to });
    cursor = to;
  };

  // A flight sent at t on conn in direction dir: when it arrives (Infinity: never).
  const flight = (conn, t, dir) => {
    const rto = conn.warm ? rtoMs(R) : rtoMs(R, conn.samples[dir]++);
    const arrival = t + h;
    if (conn.dead && arrival >= 0) return { arrival: Infinity, lost: true };
    if (!darkAt(arrival)) return { arrival, lost: false };
    let at = t;
    let wait = rto;
    for (let i = 0; i < MAX_TRIES; i++) {
      at += wait;
      if (i < MAX_BACKOFF_SHIFT) wait *= 2;
      if (!darkAt(at + h)) break;
    }
    return { arrival: at + h, lost: true };
  };
  // An exchange of d ms from t: -> its end (Infinity: never).
  const exchange = (conn, t, d, name) => {
    const q = flight(conn, t, 'up');
    if (q.arrival === Infinity) return Infinity;
    span(q.lost ? 'retransmission' : name, q.arrival);
    const back = q.arrival + Math.max(0, d - 2 * h);
    span(name, back);
    const a = flight(conn, back, 'down');
    if (a.arrival === Infinity) return Infinity;
    span(a.lost ? 'retransmission' : name, a.arrival);
    return a.arrival;
  };
  // A new connection opened at t (dead when a move ends after it opened): its SYN,
  // then the rest of the set-up as round trips. -> the connection, ready when it may
  // send its operation (Infinity: never)
  const open = (t) => {
    const conn = { opened: t, warm: false, samples: { up: 0, down: 0 }, dead: kind === 'move' && t < L };
    let syn = t;
    let wait = SYN_RTO_MS;
    for (let i = 0; i < MAX_SYN_TRIES && darkBetween(syn, syn + R); i++) {
      syn += wait;
      wait *= 2;
    }
    if (syn > t) span('SYN retries', syn);
    span('set-up', syn + R);
    let ready = syn + R;
    const rest = c.setupMs - R;
    const rounds = rest <= 0 ? 0 : R > 0 ? Math.max(1, Math.round(rest / R)) : 1;
    for (let i = 0; i < rounds && ready < Infinity; i++) ready = exchange(conn, ready, rest / rounds, 'set-up');
    conn.ready = ready;
    return conn;
  };
  // When a keepalive declares a dead conn dead: the first probe (a ping intervalMs
  // after the last pong, one round trip each) whose answer would arrive after the death,
  // plus the probe's timeout. A connection older than the event probes at probePhase of
  // its cycle, a newer one intervalMs after it is ready.
  const probeFailsAt = (conn) => {
    const ka = policy.keepalive;
    if (!ka || !conn.dead || death !== 'silent') return Infinity;
    const cycle = ka.intervalMs + R;
    let ping = conn.opened < 0 ? -R + probePhase * cycle : conn.ready + ka.intervalMs;
    while (ping + R < 0) ping += cycle;
    return ping + ka.timeoutMs;
  };
  if (policy.subscription) return subscription(c, phase, { span, flight, open, probeFailsAt, spans });
  // The operation in flight at the event's start: on its own new connection (fresh),
  // else on a warm one opened long before.
  let start = -phase;
  let first = 0; // the operation's first span
  let conn = policy.fresh
    ? open(start)
    : { opened: -Infinity, warm: true, dead: kind === 'move', ready: start, samples: null };
  for (let n = 0; n < MAX_OPERATIONS; n++) {
    const end = conn.ready === Infinity ? Infinity : exchange(conn, conn.ready, c.opMs, 'operation');
    if (end - start <= policy.timeoutMs) return { ms: end - L, terms: clip(spans, L) };
    // It failed: at the reset, or at its timeout, or when the keepalive finds the
    // death out; the connection is dropped and the next operation opens a new one.
    let failAt;
    let why;
    if (conn.dead && death === 'reset') {
      failAt = Math.max(L, start);
      why = 'reset';
    } else {
      const probe = Math.max(start, probeFailsAt(conn));
      failAt = Math.min(start + policy.timeoutMs, probe);
      why = probe < start + policy.timeoutMs ? 'keepalive' : 'timeout';
    }
    // A client that keeps a connection its request timed out on (Go's HTTP/2) sends the
    // next one to the same dead connection: it never recovers.
    if (why === 'timeout' && conn.dead && policy.keepsConnection) return { ms: Infinity, terms: [] };
    // Its time, all of it, is what the failure costs.
    spans.length = first;
    cursor = start;
    span(why, failAt);
    const wait = policy.fresh ? 0 : reconnectWaitMs(policy.reconnect, 0);
    if (wait > 0) span('reconnect wait', failAt + wait);
    start = failAt + wait;
    first = spans.length;
    conn = open(start);
  }
  throw new Error(`recovery: no operation succeeded in ${MAX_OPERATIONS}`);
}

// A subscription held open on a warm connection through the event (the loop's helpers
// passed in): the server sends an event every publishMs, at -phase + k x publishMs; the
// recovery is from the return to the first event that arrives after it.
//   blackout  the first event that would arrive in the dark is lost and retried as any
//             flight; TCP delivers in order, so the events behind it wait for it
//   move      the connection dies: a reset is heard at the return, a silent death only
//             by the keepalive (none: never); after the reconnection wait and a new
//             connection's set-up the subscribe reaches the server R/2 later; a lane
//             that resumes is sent the kept events at once, another waits for the next
//             event published
function subscription(c, phase, { span, flight, open, probeFailsAt, spans }) {
  const { L, h, kind, death, policy, publishMs: P } = c;
  const conn = { opened: -Infinity, warm: true, dead: kind === 'move', ready: -Infinity, samples: null };
  let sent = -phase;
  while (sent + h < 0) sent += P; // the first event that arrives at or after the dark's start
  if (kind === 'blackout') {
    const f = flight(conn, sent, 'down');
    span(f.lost ? 'retransmission' : 'publish wait', f.arrival);
    return { ms: f.arrival - L, terms: clip(spans, L) };
  }
  const reset = death === 'reset';
  const failAt = reset ? L : probeFailsAt(conn);
  if (failAt === Infinity) return { ms: Infinity, terms: [] };
  span(reset ? 'reset' : 'keepalive', failAt);
  const wait = reconnectWaitMs(policy.reconnect, 0);
  if (wait > 0) span('reconnect wait', failAt + wait);
  const next = open(failAt + wait);
  const at = next.ready + h; // the subscribe at the server
  let first = at + h;
  if (!policy.resumes) first = -phase + Math.ceil((at + phase) / P) * P + h;
  span('subscribe', first);
  return { ms: first - L, terms: clip(spans, L) };
}

// The spans' parts after the return, by name in order of first appearance.
function clip(spans, L) {
  const out = [];
  for (const s of spans) {
    const ms = s.to - Math.max(s.from, L);
    if (!(ms > 0)) continue;
    const t = out.find((x) => x.name === s.name);
    if (t) t.ms += ms;
    else out.push({ name: s.name, ms });
  }
  return out;
}

// The median of an odd count of samples (one of them, with its terms), and the spread.
function median(samples) {
  const sorted = [...samples].sort((a, b) => a.ms - b.ms);
  const n = sorted.length;
  const mid = sorted[(n - 1) >> 1];
  return {
    p50: mid.ms,
    p95: sorted[Math.ceil(0.95 * n) - 1].ms,
    mean: sorted.reduce((sum, s) => sum + s.ms, 0) / n,
    min: sorted[0].ms,
    max: sorted[n - 1].ms,
    terms: mid.terms,
    // Every phase's recovery, in order (bench/recovery.js: how far a p50 of a few events
    // can fall from the median when they land on phases at random).
    phases: sorted.map((x) => x.ms),
  };
}

const policyOf = (policy) => {
  const p = typeof policy === 'string' ? POLICIES[policy] : policy;
  if (!p) throw new Error(`recovery: no policy ${JSON.stringify(policy)} (lanes: ${Object.keys(POLICIES).join(', ')})`);
  return p;
};

// The model's recovery of one lane from one event.
//   event      a network's events ({ kind: blackout|move|dip, death, lengthMs, share }:
//              common/profiles.js; periodS and offsetS place it and do not matter here)
//   policy     a lane of common/policies.js POLICIES, or a policy object of that shape
//   link       { R } (model.js linkOf)
//   opMs       the operation's normal time on an open connection
//   setupMs    the set-up a new connection pays, TCP's R first (model.js setupOnly)
//   transferMs the part of opMs that is bytes on the link (a dip stretches it)
// -> { p50, p95, mean, min, max (over the phases), cycleMs (the loop's normal cycle),
//      terms: [{ name, ms, source }] (the median's, summing to p50), timesOut (a dip:
//      the dipped operation outlasts the timeout, which the model does not follow) }
export function recoveryMs({ event, policy, link, opMs, setupMs = 0, transferMs = 0, publishMs = PUBLISH_MS }) {
  const p = policyOf(policy);
  const R = link.R || 0;
  // A subscription's cycle is the publisher's: its events are what it waits for.
  const cycleMs = p.subscription ? publishMs : (p.fresh ? setupMs : 0) + opMs;
  const sourced = (r) => ({
    ...r,
    cycleMs,
    terms: r.terms.map((t) => ({ ...t, source: sourceOf(t.name, p) })),
  });
  if (event.kind === 'dip') {
    const dipped = cycleMs + transferMs * (1 / event.share - 1);
    const samples = [];
    for (let i = 0; i < PHASES; i++) {
      const rest = dipped * (1 - (i + 0.5) / PHASES);
      samples.push({
        ms: rest,
        terms: [
          { name: p.subscription ? 'publish wait' : 'operation', ms: (rest * cycleMs) / dipped },
          { name: 'dip', ms: (rest * (dipped - cycleMs)) / dipped },
        ],
      });
    }
    return { ...sourced(median(samples)), timesOut: dipped > p.timeoutMs };
  }
  if (event.kind !== 'blackout' && event.kind !== 'move') throw new Error(`recovery: no event kind ${event.kind}`);
  const c = {
    L: event.lengthMs,
    R,
    h: R / 2,
    kind: event.kind,
    death: event.death,
    policy: p,
    opMs,
    setupMs,
    publishMs,
  };
  const probes = p.keepalive && event.kind === 'move' && event.death === 'silent' ? PROBE_PHASES : 1;
  const samples = [];
  for (let i = 0; i < PHASES; i++)
    for (let j = 0; j < probes; j++) samples.push(closedLoop(c, ((i + 0.5) / PHASES) * cycleMs, (j + 0.5) / probes));
  return { ...sourced(median(samples)), timesOut: false };
}

function sourceOf(name, p) {
  if (name === 'timeout') return `${SOURCES.timeout}: ${p.timeoutMs} ms; ${p.source}`;
  if (name === 'reconnect wait' || name === 'keepalive' || name === 'subscribe') return `${SOURCES[name]}; ${p.source}`;
  return SOURCES[name] || name;
}

// What a lane's operation costs by the round-trip model: { transport, opMs, setupMs,
// transferMs }. lane: a lane of POLICIES or a model.js transport; op: a model.js
// operation ({ reqBytes, resBytes, serverMs, tls, ... }).
export function laneCosts(link, lane, op) {
  const transport = LANE_TRANSPORTS[lane] || lane;
  const transfer = (e) => e.terms.filter((t) => t.name === 'up' || t.name === 'down').reduce((s, t) => s + t.ms, 0);
  if (FRESH.has(transport)) {
    const e = operation(link, { ...op, transport });
    return { transport, opMs: e.ms - e.setupMs, setupMs: e.setupMs, transferMs: transfer(e) };
  }
  const e = operation(link, { ...op, transport, conn: 'warm' });
  return {
    transport,
    opMs: e.ms,
    setupMs: setupOnly(link, setupPhases(transport, op.tls)).ms,
    transferMs: transfer(e),
  };
}

// The model's recovery for each lane of a list (default: every lane of POLICIES) from
// one event on one link, for one operation (model.js's shape) on every lane. A lane is a
// name of POLICIES, or { lane (or name), policy (a name of POLICIES or a policy; default:
// the lane's), transport (default: the lane's, LANE_TRANSPORTS), op (merged over op) }:
// e.g. { lane: 'wss', policy: 'ws', transport: 'ws', op: { tls: true } }.
// -> [{ lane, transport, opMs, setupMs, transferMs, ...recoveryMs() }]
export function recoveryByLane({ event, link, op = {}, lanes = Object.keys(POLICIES), publishMs = PUBLISH_MS }) {
  return lanes.map((l) => {
    const entry = typeof l === 'string' ? { lane: l } : l;
    const lane = entry.lane ?? entry.name;
    const costs = laneCosts(link, entry.transport ?? lane, { ...op, ...entry.op });
    return { lane, ...costs, ...recoveryMs({ event, policy: entry.policy ?? lane, link, publishMs, ...costs }) };
  });
}
