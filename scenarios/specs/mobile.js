// The mobile scenario's plan (scenarios/mobile.js runs it): each lane at an interaction
// rate, one operation every T seconds, for a phone whose radio sleeps (+rrc) and whose
// carrier's NAT forgets idle connections (+nat=SECONDS). Issue 41.
//
// A lane at one T is a lane of its own, `<lane>_t<T>` (tagged every:<T>s), one VU (one
// phone: the radio is the device's, shared by every proxy), its steps one after another.
// A step's one iteration runs the operation at once (tagged gap:first: it opens a kept
// lane's connection, after whatever gap the step before left), then MOBILE_OPS more, one
// every T seconds (gap:after: the rows, and what the model prices with the gap).
import { BOOK_OP } from './ws-vs-http.js';
import { setting } from '../../common/settings.js';
import { DEFAULT_COLUMNS, lane, rttOf } from '../../common/scenario.js';

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
];

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

// The gap before an operation (seconds since the radio's last packet) at quantile q, for
// one operation every T seconds on a lane that pings every P seconds (0: never). The
// pings run on their own clock (P after each pong, or the server's interval), so an
// operation finds the last ping u seconds ago, u uniform over [0, P): the gap is
// min(T, u), whose q-quantile is min(T, q P). Without pings, T. (The operation before
// took a few round trips of T: left out, a gap a little longer than it is.)
export function gapAt(T, P, q) {
  return P > 0 ? Math.min(T, q * P) : T;
}

// What a lane's operation costs by the model (common/model.js operation): the book
// operation after its gap; a fresh lane opens its connection each time, a kept one has it.
// Without pings the radio settles into the operations' rhythm (periodS: in 3G a small
// operation FACH carried changes what the next one finds); with them, the gap since the
// last ping.
function modelOf(l, T) {
  const base = { ...BOOK_OP, ...(l.on === 'http_fresh' ? {} : { conn: 'warm' }) };
  const P = pingOf(l);
  const at = (q) => (P > 0 ? { gapS: gapAt(T, P, q) } : { periodS: T, quantile: q });
  return () => ({ p50: { ...base, ...at(0.5) }, p95: { ...base, ...at(0.95) } });
}

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = {
  runs: false,
  why: 'one operation every T seconds per lane, minutes each: `run mobile --profile lte+rrc`',
};

export const RADIO_METRICS = ['radio_energy_op', 'radio_energy_hour', 'radio_on_hour'];

export default function declare(env = {}) {
  const EVERY = setting(env, 'INTERACTION_SECONDS');
  const OPS = setting(env, 'MOBILE_OPS');
  const BATTERY_MAH = setting(env, 'BATTERY_MAH');
  const lanes = [];
  for (const l of MOBILE_LANES)
    for (const T of EVERY)
      lanes.push(
        lane(`${l.name}_t${T}`, {
          on: l.on,
          tags: { every: `${T}s` },
          dims: [{ gap: 'after' }],
          model: modelOf(l, T),
          base: l.name,
          everyS: T,
          pingS: l.pingS,
          iterationSeconds: OPS * T + 2,
        }),
      );
  return {
    EVERY,
    OPS,
    BATTERY_MAH,
    name: 'mobile',
    defaultProfile: 'lte+rrc',
    lanes,
    // One phone per lane at every level.
    steps: [1],
    minIterations: 1,
    // A step is its one iteration: the first operation, then OPS more, T apart, and 2 s
    // of slack for the last and for reading the radio's log.
    laneSeconds: (name) => lanes.find((x) => x.name === name).iterationSeconds,
    iterationSeconds: () => 1,
    // Closing: a WebSocket's close handshake, a few round trips.
    closeSeconds: (profile) => (3 * rttOf(profile)) / 1000 + 0.5,
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
      { title: 'radio on s/h', metric: 'radio_on_hour', stat: 'med', unit: '', laneOnly: true },
      { title: 'mJ/op', metric: 'radio_energy_op', stat: 'med', unit: '', laneOnly: true },
      { title: 'mJ/h', metric: 'radio_energy_hour', stat: 'med', unit: '', laneOnly: true },
    ],
    hints: { interactionSeconds: EVERY, mobileOps: OPS, batteryMah: BATTERY_MAH },
  };
}
