// The mobile scenario's plan (scenarios/mobile.js runs it): each lane at an interaction
// rate, one operation every T seconds, for a phone whose radio sleeps (+rrc) and whose
// carrier's NAT forgets idle connections (+nat=SECONDS). Issue 41.
//
// A lane at one T is a lane of its own, `<lane>_t<T>` (tagged every:<T>s), one VU (one
// phone: the radio is the device's, shared by every proxy), its steps one after another.
// A step's one iteration runs the operation at once (tagged gap:first: it opens a kept
// lane's connection, after whatever gap the step before left), then MOBILE_OPS more, one
// every T seconds (gap:after: the rows, and what the model prices with the gap).
import { PAYLOAD_OP } from './grpc-vs-graphql.js';
import { BOOK_OP } from './ws-vs-http.js';
import { LIMITS } from '../../common/defaults.js';
import { FRESH_TRANSPORTS, laneEntry } from '../../common/lanes/catalogue.js';
import { setting } from '../../common/settings.js';
import { linkOf } from '../../common/model.js';
import { RADIOS, tailMs } from '../../common/radio.js';
import { cellKey, DEFAULT_COLUMNS, lane, rttOf } from '../../common/scenario.js';

const GRPC_PING_S = LIMITS.GRPC_KEEPALIVE_MS / 1000;

// The lanes, each on its catalogue lane (on) and with its keepalive ping (seconds, 0: none).
// ws_ping10 and ws_ping30: graphql-ws's keepAlive (a client ping every 10 or 30 s after
// the last pong; scenarios/lib/ws.js keepAlive).
export const MOBILE_LANES = [
  { name: 'http_fresh', on: 'http_fresh', pingS: 0 },
  { name: 'http_keepalive', on: 'http_keepalive', pingS: 0 },
  { name: 'http2', on: 'http2', pingS: 0 },
  { name: 'ws', on: 'ws', pingS: 0 },
  { name: 'ws_ping10', on: 'ws', pingS: 10 },
  { name: 'ws_ping30', on: 'ws', pingS: 30 },
  // GetBook on a kept channel, without keepalive pings (grpc-js's server pings every 2 h by
  // default) and with them. k6's gRPC client has no keepalive setting (k6 v1.8.1
  // grpc.Client.connect), so the pings are the server's: the lane calls the gRPC server's
  // keepalive port (GRPC_KEEPALIVE_ADDR), which sends an HTTP/2 PING every
  // LIMITS.GRPC_KEEPALIVE_MS after the last one's ACK. A PING and its ACK cross the link as a
  // client's would, so the radio and the NAT see the same packets either way.
  { name: 'grpc', on: 'grpc', pingS: 0 },
  { name: `grpc_ping${GRPC_PING_S}`, on: 'grpc', pingS: GRPC_PING_S, keepaliveServer: true },
];

// GetBook's bytes each way (scenarios/specs/faults.js's gRPC lane) and the server's time.
const GET_BOOK = { reqBytes: 20, resBytes: 120, serverMs: 1 };

// The pack's GraphQL server pings every WebSocket every 12 s (graphql-ws's useServer, its
// keepAlive default 12e3 ms: node_modules/graphql-ws/dist/use/ws.js; servers/graphql/ws.js
// keeps it), and k6 answers with a pong: a packet each way, whatever the client does.
export const SERVER_PING_S = 12;

// The pings a lane's connection carries between operations: the client's (pingS) and,
// on a WebSocket, the server's; the shorter interval counts (0: none).
export function pingOf(l) {
  const pings = [l.pingS, l.on === 'ws' ? SERVER_PING_S : 0].filter((p) => p > 0);
  return pings.length ? Math.min(...pings) : 0;
}

// Where a row goes on a WebSocket lane at T of at least the server's ping interval: T after
// the one before's slot (targetMs), moved by at most half an interval onto the k-th of `ops`
// evenly spaced phases of the ping's cycle ((k - 1/2)/ops of it after a ping; pingAtMs: a
// ping, or the socket's open, where the server's interval starts). A phone's operation
// comes at any moment of the server's clock, so the model takes the time since the last ping
// as uniform over the interval (common/model.js radioWake, pingS); a step's few rows sample
// it at evenly spaced phases (as common/recovery.js does an event's). Timed by T alone, the
// rows of a T that is a multiple of 12 s all landed at one phase: just after a ping, which
// under LTE finds the radio asleep (its exchange ends ~0.33 s in, the tail 11.58 s later,
// 0.1 s before the next) and promotes it (ws every 60 s under lte+rrc: p50 153 against 71
// ms, 2026-11-30; docs/studies/000). At T = 15 s the phases move 3 s a row: the rows keep T.
export function rowOnPingCycle(targetMs, k, ops, pingAtMs, periodMs) {
  const lastPing = pingAtMs + Math.floor((targetMs - pingAtMs) / periodMs) * periodMs;
  const at = lastPing + ((k - 0.5) / ops) * periodMs;
  if (at - targetMs > periodMs / 2) return at - periodMs;
  return targetMs - at > periodMs / 2 ? at + periodMs : at;
}

// What a lane's operation costs by the model (common/model.js operation): the book
// operation after its gap; a fresh lane opens its connection each time, a kept one has it.
// The rows are `ops` operations one every T seconds start to start, after a warm one
// (scenarios/mobile.js paced): each one's gap is T less the operation before, and on gRPC
// less a round trip more (k6's client pings as data comes: the server's ACK is the
// connection's last packet). Without pings the radio follows the operations' rhythm, one
// by one (in 3G a small operation FACH carried changes what the next one finds); with them
// the gap is the shorter of that and the time since the last ping (common/model.js
// radioWake, pingS).
// Under a NAT that drops the connection between operations (natDrops) the operations
// that succeed are those after a failed one: an HTTP lane's on the new connection it
// opens (cold, after the gap), a WebSocket lane's on the socket it has just opened (no gap).
// A kept HTTP connection idle longer than the server keeps one (serverClosesS) is closed by
// it: each operation opens a new one (cold). HTTP/1.1's close is a FIN, which the link's
// radio does not see (it sees data): the gap is T. HTTP/2's is a GOAWAY frame, data that
// wakes the radio at the close: the gap is T less the limit (under lte+rrc at one operation
// every 70 s, http2 ran at 228 ms, no promotion: a new TLS connection within the tail the
// GOAWAY began; http_keepalive at 411 ms, the promotion and a new connection).
// A kept HTTP connection idle longer than the client's own timeout (clientIdleS,
// CLIENT_IDLE_SECONDS) is closed by the client, before the server's limit if it is the
// shorter: the next operation opens a new one (cold), after the whole gap T (the lane
// closes it right after the operation before: scenarios/mobile.js).
// answerBytes (MOBILE_ANSWER_BYTES): 0, the book operation; else a payload of that many bytes.
export function operationOf(l, answerBytes = 0) {
  const grpc = grpcLane(l);
  if (answerBytes > 0) return PAYLOAD_OP[grpc ? 'grpc' : 'graphql'](answerBytes);
  return grpc ? GET_BOOK : BOOK_OP;
}

function modelOf(l, T, { ops, clientIdleS = Infinity, answerBytes = 0 }) {
  const base = { ...operationOf(l, answerBytes), ...(freshLane(l) ? {} : { conn: 'warm' }) };
  const rhythm = { periodS: T, ops, pingS: pingOf(l), trailRounds: grpcLane(l) ? 1 : 0 };
  const at = (quantile) => ({ ...rhythm, quantile });
  return (_dims, link) => {
    if (natDrops(l, T, link.natIdleS, link.R, clientIdleS))
      return l.on === 'ws' ? { ...base, gapS: 0 } : { ...base, conn: 'cold', gapS: T };
    if (clientCloses(l, T, clientIdleS)) return { ...base, conn: 'cold', gapS: T };
    if (T > serverClosesS(l)) return { ...base, conn: 'cold', gapS: l.on === 'http2' ? T - serverClosesS(l) : T };
    return { p50: { ...base, ...at(0.5) }, p95: { ...base, ...at(0.95) } };
  };
}

// Whether a NAT of natIdleS seconds (+nat) drops a lane's connection between two of its
// operations, one every T seconds: a kept connection idle longer than the timeout (a
// ping's comes a round trip late: it leaves the interval after the last pong). A fresh
// lane opens its connection for each operation: never.
export function natDrops(l, T, natIdleS, rttMs = 0, clientIdleS = Infinity) {
  if (!natIdleS || freshLane(l)) return false;
  const P = pingOf(l);
  // A server that closes the idle connection while the NAT still knows it: its FIN
  // reaches the client, which opens a new connection next time. A client that closes it
  // first opens a new one anyway.
  if (natIdleS >= serverClosesS(l) || clientCloses(l, T, clientIdleS)) return false;
  // The rows come T apart start to start (scenarios/mobile.js paced): a connection's gap
  // is T less its operation, a round trip at least, and on gRPC one more (k6's client pings
  // as data comes: the server's ACK is the connection's last packet). The NAT drops past
  // its timeout (tools/toxiproxy/nat.go), so at T equal to it every lane keeps its
  // connection. (Timed from the first operation's end, the first row's gap had been T, a
  // tie the NAT had passed: under 3g+rrc+nat=60 at one operation every 60 s, 2026-11-30,
  // http_keepalive and http2 lost their first row, grpc none.)
  const gapS = T - (rttMs / 1000) * (grpcLane(l) ? 2 : 1);
  return (P > 0 ? Math.min(gapS, P + rttMs / 1000) : gapS) > natIdleS;
}

// A lane that keeps an HTTP connection between its operations (HTTP/1.1 keep-alive, HTTP/2):
// the one an idle timeout, the server's or the client's, closes.
// From the catalogue: an HTTP-family lane whose transport is not fresh.
const keptHttp = (l) => laneEntry(l.on).family === 'http' && !freshLane(l);
const freshLane = (l) => FRESH_TRANSPORTS.has(laneEntry(l.on).transport);
const grpcLane = (l) => laneEntry(l.on).family === 'grpc';

// After how many idle seconds the reference server closes a lane's kept connection: HTTP/1.1
// and HTTP/2 at LIMITS.KEEP_ALIVE_MS (servers/graphql/server.js); a WebSocket and a gRPC
// channel never (the pings, or no idle limit: grpc-js sets no max_connection_idle_ms).
export function serverClosesS(l) {
  return keptHttp(l) ? LIMITS.KEEP_ALIVE_MS / 1000 : Infinity;
}

// Whether the client closes a lane's kept HTTP connection in a gap of T seconds: its own
// idle timeout (clientIdleS) is shorter than T, and no longer than the server's limit (a
// server that closes first decides: serverClosesS). OkHttp's pool, for one, keeps an idle
// connection 5 minutes (CLIENT_IDLE_SECONDS' default; square.github.io/okhttp ConnectionPool:
// "http.keepAliveDuration ... Default is 5 minutes"); k6's own HTTP client never closes one
// (no IdleConnTimeout), so the lane closes it (scenarios/mobile.js: Connection: close).
export function clientCloses(l, T, clientIdleS = Infinity) {
  return keptHttp(l) && T > clientIdleS && clientIdleS <= serverClosesS(l);
}

// How long a step waits before its first operation, so that it starts with the phone's radio
// idle, whatever the step before left it in (seconds; 0 without +rrc): the radio's whole tail
// and half a second. Without it the steps were not independent: under 3g+rrc ws_ping10 at one
// operation every 2 s found the radio in FACH, where the ws step before (20 s) had left it, and
// stayed there (small operations never promote FACH to DCH): 718 ms an operation against the
// 304 it took from DCH (bench/mobile.js, 2026-11-29).
export function settleSeconds(profile) {
  const { radio } = linkOf(profile);
  return radio ? tailMs(radio) / 1000 + 0.5 : 0;
}

// A bound on a step's first operation and the warm one after it, from whose start the rows
// are timed (scenarios/mobile.js paced): the radio's promotion from idle and five round trips
// each (the most set-up a lane pays: TCP, TLS or the WebSocket's upgrade and init, HTTP/2's
// or gRPC's settings, then the operation; a fresh lane pays it again on the warm one).
export function firstOpSeconds(profile) {
  const { radio } = linkOf(profile);
  return ((radio ? RADIOS[radio].promotionMs : 0) + 2 * 5 * rttOf(profile)) / 1000;
}

// An operation's timeout at one every T seconds: T less a second (at least 5 s, at most
// 30 s), so an operation on a connection a NAT dropped fails within its slot, or little
// more, and the next one starts on time.
export const opTimeoutMs = (T) => Math.min(30000, Math.max(5000, T * 1000 - 1000));

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = {
  runs: false,
  why: 'one operation every T seconds per lane, minutes each: `run mobile --profile lte+rrc`',
};

export const RADIO_METRICS = ['radio_energy_op', 'radio_energy_hour', 'radio_on_hour'];

export default function declare(settings = {}) {
  const EVERY = setting(settings, 'INTERACTION_SECONDS');
  const OPS = setting(settings, 'MOBILE_OPS');
  const BATTERY_MAH = setting(settings, 'BATTERY_MAH');
  const CLIENT_IDLE_S = setting(settings, 'CLIENT_IDLE_SECONDS');
  const ANSWER_BYTES = setting(settings, 'MOBILE_ANSWER_BYTES');
  const lanes = [];
  for (const l of MOBILE_LANES)
    for (const T of EVERY)
      lanes.push(
        lane(`${l.name}_t${T}`, {
          on: l.on,
          // variant: what tells the lane and T apart in the summary's table (ws_ping10
          // at 15 s: `ws tls=false ping10 every 15s`).
          tags: {
            every: `${T}s`,
            variant: [l.name === l.on ? null : l.name.replace(`${l.on}_`, ''), `every ${T}s`].filter(Boolean).join(' '),
          },
          dims: [{ gap: 'after' }],
          model: modelOf(l, T, { ops: OPS, clientIdleS: CLIENT_IDLE_S, answerBytes: ANSWER_BYTES }),
          base: l.name,
          everyS: T,
          // The client's idle timeout is shorter than the gap: the lane closes its connection
          // after each operation (Connection: close), as the client would before the next.
          clientClose: clientCloses(l, T, CLIENT_IDLE_S),
          pingS: l.pingS,
          keepaliveServer: Boolean(l.keepaliveServer),
          iterationSeconds: OPS * T + 2,
          // A step's rows rest on its OPS operations after a gap, whatever its length
          // (common/gates.js rowSamples would count back-to-back ones): under the sample
          // floors, so they are measured, not gated, but at LOAD=smoke.
          samples: () => OPS,
        }),
      );
  return {
    EVERY,
    OPS,
    BATTERY_MAH,
    CLIENT_IDLE_S,
    ANSWER_BYTES,
    name: 'mobile',
    defaultProfile: 'lte+rrc',
    lanes,
    // One phone per lane at every level.
    steps: [1],
    minIterations: 1,
    // A step is its one iteration: the radio's settling (settleSeconds), the first and warm
    // operations (firstOpSeconds), then OPS more, T apart from the warm one's start, and 2 s of slack for the last and
    // for reading the radio's log; under a NAT that forgets a connection between two
    // operations, the last one's timeout too.
    laneSeconds: (name, profile) => {
      const l = lanes.find((x) => x.name === name);
      const nat = profile.network.natIdleS;
      const natS = nat && nat < l.everyS ? opTimeoutMs(l.everyS) / 1000 : 0;
      return l.iterationSeconds + settleSeconds(profile) + firstOpSeconds(profile) + natS;
    },
    iterationSeconds: () => 1,
    // Closing: a WebSocket's close handshake, a few round trips.
    closeSeconds: (profile) => (3 * rttOf(profile)) / 1000 + 0.5,
    // Under +nat the run's op_failed gate (thresholds.json) would stop it at the failures
    // it studies: each lane and T is gated instead, where the model says its connection
    // survives the gaps (no failure, rate<0.01); where it says the NAT drops it, the
    // failures are reported, not gated.
    gates(profile, plan) {
      const nat = profile.network.natIdleS;
      if (!nat) return {};
      // rate<=1: reported, never crossed (and a run's failure limit, common/verdict.js, of 1).
      const out = { op_failed: ['rate<=1'] };
      for (const [name, sc] of Object.entries(plan.scenarios)) {
        const l = lanes.find((x) => name === `${x.name}_${sc.tags.step}`);
        const own = l && MOBILE_LANES.find((x) => x.name === l.base);
        if (own && !natDrops(own, l.everyS, nat, rttOf(profile), CLIENT_IDLE_S))
          out[cellKey('op_failed', { scenario: name, gap: 'after' })] = ['rate<0.01'];
      }
      return out;
    },
    verdict: { where: { gap: 'after' } },
    columns: [
      ...DEFAULT_COLUMNS.filter((c) => c.title !== 'server p50'),
      { title: 'first p50', metric: 'op_duration', tags: { gap: 'first' }, stat: 'med', unit: 'ms', laneOnly: true },
      {
        title: 'promotions',
        metric: 'radio_promotions',
        tags: { gap: 'after' },
        stat: 'count',
        unit: '',
        laneOnly: true,
      },
      { title: 'recovery p50', metric: 'recovery_duration', stat: 'med', unit: 'ms', laneOnly: true },
      { title: 'radio on s/h', metric: 'radio_on_hour', stat: 'med', unit: '', laneOnly: true },
      { title: 'mJ/op', metric: 'radio_energy_op', stat: 'med', unit: '', laneOnly: true },
      { title: 'mJ/h', metric: 'radio_energy_hour', stat: 'med', unit: '', laneOnly: true },
    ],
    hints: { interactionSeconds: EVERY, mobileOps: OPS, batteryMah: BATTERY_MAH },
  };
}
