// The unstable scenario's plan (scenarios/unstable.js runs it): study 000's transports
// on a link that fails the way a phone's does (handovers, moves, dips, a trace: the
// profile's events, docs/profiles.md#unstable-links). Plain ES module: k6 and Node read it.
import { cellKey } from '../../common/results.js';
import { laneOfStep } from '../../common/schedule.js';
import { setting } from '../../common/settings.js';
import { linkOf } from '../../common/model.js';
import { POLICIES } from '../../common/policies.js';
import { laneEntry } from '../../common/lanes/catalogue.js';
import { PUBLISH_MS, recoveryByLane } from '../../common/recovery.js';
import { DEFAULT_COLUMNS, lane, rttOf } from '../../common/scenario.js';
import { BOOK_OP } from './ws-vs-http.js';

// A stable link (no events) still runs, for the ranking beside: a slot of this long.
const STABLE_SLOT_SECONDS = 10;

const op =
  (more = {}) =>
  () => ({ ...BOOK_OP, ...more });
// A subscription's event: one way, down, on a warm connection (push's model); its
// budget is an event's (publish -> receipt).
const EVENT_BYTES = 160;
const pushed = () => ({ conn: 'warm', oneWay: true, resBytes: EVENT_BYTES });

// The policy a lane's client follows (common/policies.js): its entry's in the lane
// catalogue (common/lanes/ws.js and grpc.js say why for the sockets and subscriptions).
export const policyOf = (laneName) => POLICIES[laneEntry(laneName).policy];

// A lane's recovery gate: the model's slowest phase (common/recovery.js) x FACTOR +
// PLUS_MS, plus half the random part of the policy's reconnect wait (the model takes its
// middle): docs/thresholds.md#unstable.
export const RECOVERY_MARGIN = { factor: 1.25, plusMs: 250 };

const silentMove = (events) => Boolean(events) && events.kind === 'move' && events.death === 'silent';

// The model's recovery for each lane of the plan: { laneName: recoveryMs() }.
export function laneRecoveries(profile, lanes) {
  const event = profile.network.events;
  if (!event) return {};
  const link = linkOf(profile);
  const rows = recoveryByLane({
    event,
    link,
    lanes: lanes
      .filter((l) => l.tags.transport)
      .map((l) => ({
        lane: l.name,
        policy: laneEntry(l.name).policy,
        transport: l.tags.transport,
        op: { ...(l.model ? l.model({}, link) : {}), tls: l.tags.tls === 'true' },
      })),
    publishMs: PUBLISH_MS,
  });
  return Object.fromEntries(rows.map((r) => [r.lane, r]));
}

// Each k6 scenario of the plan with its lane, the lane's model and its recovery gate
// (model and limitMs null: none): { name: { lane, model, limitMs } }, for the gates and
// the summary's notes alike.
export function stepRecoveries(profile, plan, lanes) {
  const models = laneRecoveries(profile, lanes);
  const out = {};
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    const lane = laneOfStep(lanes, name, sc);
    if (!lane) continue;
    const model = models[lane.name] || null;
    out[name] = { lane, model, limitMs: model ? recoveryLimitMs(model, policyOf(lane.name)) : null };
  }
  return out;
}

export function recoveryLimitMs(model, policy) {
  if (!(model.max < Infinity)) return null; // never recovers: nothing to gate (docs/model.md)
  const r = policy.reconnect;
  const random = r ? ((r.randomMs[1] - r.randomMs[0]) / 2 || 0) + (r.jitter || 0) * r.firstMs : 0;
  return Math.ceil(model.max * RECOVERY_MARGIN.factor + RECOVERY_MARGIN.plusMs + random);
}

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = {
  runs: false,
  why: "a period of the link's events per lane, 20-30 s each: `run unstable`, or `--scenarios unstable` with an event profile",
};

export default function declare(settings = {}) {
  // Each lane meets this many events (bench/recovery.js: a p50 over several).
  const EVENTS = setting(settings, 'UNSTABLE_EVENTS');
  return {
    name: 'unstable',
    defaultProfile: 'lte+handover',
    lanes: [
      lane('http_fresh', { model: op() }),
      lane('http_keepalive', { model: op() }),
      lane('http2', { model: op() }),
      lane('ws', { model: op({ conn: 'warm' }) }),
      lane('wss', { model: op({ conn: 'warm' }) }),
      lane('grpc', { model: op({ reqBytes: 20, resBytes: 120 }) }),
      lane('sub_ws', { model: pushed, subscription: true }),
      lane('sub_grpc', { model: pushed, subscription: true }),
    ],
    // One client per lane: what one user meets. STEPS=1,4 adds concurrency.
    steps: [1],
    // k6 v1.8.1 cannot abandon a WebSocket whose connection died silently (its close
    // waits for the server's close frame, with no timeout): the link toxic lets a plain
    // one go when its client starts the close handshake (tools/toxiproxy/link.go
    // webSocketCloses), but cannot see into TLS. wss is left out under a silent
    // move; ws shows the same client (docs/known-limits.md).
    lanesFor(profile) {
      return silentMove(profile.network.events) ? this.lanes.filter((l) => l.name !== 'wss') : this.lanes;
    },
    // Each lane's recovery gated by the model (the link's return to the first success):
    // it recovers from each event (event_recovered counts them; a step that saw none
    // fails), within the model's time; a lane that resumes loses nothing.
    gates(profile, plan, lanes) {
      const out = {};
      for (const [name, { lane: l, limitMs }] of Object.entries(stepRecoveries(profile, plan, lanes))) {
        if (limitMs !== null) {
          out[cellKey('event_recovery', { scenario: name })] = [`max<${limitMs}`];
          out[cellKey('event_recovered', { scenario: name })] = ['count>0'];
        }
        if (l.subscription && policyOf(l.name).resumes)
          out[cellKey('delivery_missed', { scenario: name })] = ['count<1'];
      }
      return out;
    },
    // Every step is one period of the events (UNSTABLE_EVENTS periods), so each meets its
    // events at the same points (they count from setup, as the steps do:
    // docs/profiles.md#unstable-links).
    slotSeconds: (profile) => (profile.network.events ? profile.network.events.periodS * EVENTS : STABLE_SLOT_SECONDS),
    closeSeconds: (profile) => (2 * rttOf(profile)) / 1000 + 0.5,
    iterationSeconds: (profile) => (3 * rttOf(profile)) / 1000 + 0.1,
    columns: [
      ...DEFAULT_COLUMNS.filter((c) => c.title !== 'server p50'),
      { title: 'recovery p50', metric: 'event_recovery', stat: 'med', unit: 'ms' },
      { title: 'recovery max', metric: 'event_recovery', stat: 'max', unit: 'ms' },
      { title: 'slow in event', metric: 'event_slow', stat: 'rate', unit: '%' },
      { title: 'reconnects', metric: 'reconnects', stat: 'count', unit: '' },
      { title: 'missed', metric: 'delivery_missed', stat: 'count', unit: '' },
      { title: 'duplicated', metric: 'delivery_duplicates', stat: 'count', unit: '' },
      { title: 'never came', metric: 'delivery_undelivered', stat: 'count', unit: '' },
    ],
  };
}
