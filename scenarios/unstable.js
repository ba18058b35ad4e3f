/*
 * Unstable links: study 000's transports on a link that fails as a phone's does, to
 * re-measure its claim that "WebSocket connections typically have better fault
 * tolerance". The profile's events (docs/profiles.md#unstable-links) happen on the
 * link toxic's own schedule, timed from setup: +handover (a blackout: connections
 * stay open, bytes wait for TCP's backed-off retransmission), +move (a blackout, then
 * every connection is dead, silently) and +move-reset (the same, announced by a
 * reset), +dip (the bandwidth falls to a share), +trace=NAME (a Mahimahi trace).
 * Every lane runs alone for one period of the events, so each meets its event at
 * the same point of its step.
 * Clients follow a client people use (common/policies.js, each with its source):
 *   http_fresh, http_keepalive, http2  OkHttp's 10 s timeout; a failed request's
 *       connection is dropped and the next opens a new one; k6's HTTP/2 has no PING
 *       liveness check (Go's ReadIdleTimeout is 0 and k6 offers no option)
 *   ws, wss  graphql-ws 6's defaults: retryWait before each reconnection (2^n s +
 *       300-3000 ms), keepAlive off (no client ping: a busy socket's operation times
 *       out first); 10 s for an operation's answer, then a new socket
 *   grpc     a 10 s deadline per call; a lost channel reconnects at once (grpc-go)
 *   sub_ws   a graphql-ws subscription held through the step: keepAlive 10 s with the
 *       5 s pong timeout (the library's recipe), retryWait, no resume (a new
 *       subscription gets events from then on: what came meanwhile is missed)
 *   sub_grpc a Subscribe stream: grpc-go's defaults (no keepalive, so a silent death is
 *       never noticed), a broken stream reopened at once with after_seq (resumes:
 *       nothing missed, gated)
 *   The subscription lanes' publisher writes an event every 100 ms straight to the
 *   GraphQL server (GRAPHQL_DIRECT_URL), not through the link; an event received is an
 *   operation (publish -> receipt), those the link's events held up aside.
 * Look at: failed, recovery p50 (the link's return -> the first success after it),
 * slow in event (operations over their budget plus the event's length), missed and
 * duplicated (subscriptions); the notes rank recovery beside the stable-link ranking.
 * UNSTABLE_EVENTS=n: each lane meets n events (bench/recovery.js).
 *
 *   npx k6pack up && k6 run -e PROFILE=lte+handover scenarios/unstable.js
 *   npx k6pack run unstable --profile lte+handover,lte+move
 *
 * Its plan at LOAD=ci (`npx k6pack plan unstable --load ci`; dev/plan-headers.js writes it):
 *   unstable under lte+handover (R 70 ms, down 12000 / up 12000 kbit/s, handover), load ci, closed workload: 8 k6 scenarios, 160.0 s in all
 *     k6 scenario        executor      VUs or rate  start  duration  graceful stop
 *     http_fresh_c1      constant-vus  1 VU         0s     19.3s     0.7s
 *     http_keepalive_c1  constant-vus  1 VU         20s    19.3s     0.7s
 *     http2_c1           constant-vus  1 VU         40s    19.3s     0.7s
 *     ws_c1              constant-vus  1 VU         60s    19.3s     0.7s
 *     wss_c1             constant-vus  1 VU         80s    19.3s     0.7s
 *     grpc_c1            constant-vus  1 VU         100s   19.3s     0.7s
 *     sub_ws_c1          constant-vus  1 VU         120s   19.3s     0.7s
 *     sub_grpc_c1        constant-vus  1 VU         140s   19.3s     0.7s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (the spec's steps: 1)
 *     duration: one period of the link's events (20 s), less the graceful stop
 *     graceful stop: the spec's time to close
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import { sleep } from 'k6';
import exec from 'k6/execution';
import declare, { policyOf, stepRecoveries } from './specs/unstable.js';
import { trackEvents } from './lib/events.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { bookId, bookOperation } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { wsSession } from './lib/sessions.js';
import { expectationsOf } from '../common/gates.js';
import { linkOf } from '../common/model.js';
import { drawReconnectWaitMs } from '../common/policies.js';
import { eventWindows, PUBLISH_MS } from '../common/recovery.js';
import { holdSubscription } from './lib/held-subscription.js';
import { remainingMs } from './lib/load.js';
import { deliveryDuplicates, deliveryMissed, deliveryUndelivered, recordOp } from './lib/metrics.js';
import { SETTINGS } from './lib/config.js';

const decl = declare(SETTINGS);
const s = defineScenario(decl, { notes: recoveryNotes });
export const { options, setup, teardown, handleSummary } = s;

// Each lane's budget for event_slow: the model's p95 for one operation.
const link = linkOf(s.profile);
const budgets = Object.fromEntries(s.lanes.map((l) => [l.name, expectationsOf(l, {}, link).p95.ms]));

const operation = (i) => bookOperation(exec.vu.idInTest, i);

// An operation's outcome against the link's events (scenarios/lib/events.js).
const record = (data, laneName, startMs, r, endMs = Date.now()) =>
  trackEvents(data.network, {
    ok: r.ok,
    startMs,
    endMs,
    budgetMs: budgets[laneName],
    sinceMs: exec.scenario.startTime,
    tags: {},
  });

function timed(data, laneName, fn) {
  const startMs = Date.now();
  const r = fn();
  record(data, laneName, startMs, r);
  return r;
}

function httpOp(data, { name, transport, tls }) {
  const policy = policyOf(name);
  timed(data, name, () =>
    graphqlHttp({ transport, tls, timeout: `${policy.timeoutMs}ms`, ...operation(exec.vu.iterationInScenario) }),
  );
}

function wsLane(data, { name: laneName, tls }) {
  const policy = policyOf(laneName);
  return wsSession({
    tls,
    tags: {},
    recover: true,
    maxReconnects: 1000,
    timeoutMs: policy.timeoutMs,
    reconnectWaitMs: (n) => drawReconnectWaitMs(policy.reconnect, n),
    dropOnFailure: true,
    op: async (socket, i) => {
      const startMs = Date.now();
      const r = await socket.execute({ ...operation(i), timeoutMs: policy.timeoutMs });
      if (!r.abandoned) record(data, laneName, startMs, r);
      return r;
    },
  });
}

const channel = new Channel(newClient());

function grpcLane(data) {
  const policy = policyOf('grpc');
  const id = bookId(1 + ((exec.vu.idInTest * 7919 + exec.vu.iterationInScenario) % 1000));
  timed(data, 'grpc', () =>
    channel.call(
      'GetBook',
      { id },
      {
        validate: (b) => (b && b.id === id ? null : `GetBook answered ${b && b.id}`),
        timeout: `${policy.timeoutMs}ms`,
      },
    ),
  );
}

// The subscription lanes (scenarios/lib/held-subscription.js): one subscription held
// through the step, an event published to it every PUBLISH_MS; each event received is
// an operation (publish -> receipt), each break a failed one.
const subChannel = new Channel(newClient());
const SUB_MIN_MS = 3000; // a step with less left starts no subscription

// transport: held-subscription.js's, the lane's family (ws or grpc).
async function subscriptionLane(data, { name: laneName, family: transport }) {
  const left = remainingMs();
  if (left < SUB_MIN_MS) {
    sleep(Math.max(0, left) / 1000 + 0.05);
    return;
  }
  const until = Date.now() + left - (2 * link.R + 200); // room to close
  const r = await holdSubscription({
    transport,
    policy: policyOf(laneName),
    publishMs: PUBLISH_MS,
    // What is published reaches the subscriber before it stops.
    publishEnd: until - Math.max(1000, 3 * link.R),
    until,
    topic: `unstable.${exec.scenario.name}.${exec.vu.idInTest}.${exec.vu.iterationInScenario}.${Date.now()}`,
    channel: subChannel,
  });
  for (const reason of r.failures) recordOp({ ok: false, reason });
  const met = metByEvents(data.network, r.events);
  for (const e of r.events) {
    // op_duration counts the events the link's events did not hold up: those sent
    // before the subscription had recovered wait for the link, and event_slow and
    // event_recovery say what they cost (a request lane has one or two such
    // operations a period; a subscription every event published meanwhile).
    if (!met(e)) recordOp({ ok: true, ms: e.at - e.sentAt });
    record(data, laneName, e.sentAt, { ok: true }, e.at);
  }
  deliveryMissed.add(r.missed);
  deliveryDuplicates.add(r.duplicates);
  deliveryUndelivered.add(r.undelivered);
}

// Whether an event received was held up by a link event: sent before the first receipt
// after the event's end, and received after its start.
function metByEvents(network, events) {
  if (!network || !network.events || !network.epochMs || !events.length) return () => false;
  const windows = eventWindows(network.events, network.epochMs, events[0].sentAt, events[events.length - 1].at).map(
    ([from, to]) => {
      const back = events.find((e) => e.at >= to);
      return [from, back ? back.at : Infinity];
    },
  );
  return (e) => windows.some(([from, recovered]) => e.sentAt < recovered && e.at > from);
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch); a
// subscription lane holds one subscription.
const held = (client) => (l, data) => (l.subscription ? subscriptionLane(data, l) : client(data, l));
export const runLane = s.dispatch({
  http: (l, data) => httpOp(data, l),
  ws: held(wsLane),
  grpc: held(grpcLane),
});

// Under the table: each lane's recovery beside the model's, fastest first, with what
// the events cost it (failed, slow, and for a subscription what it missed); then the
// lanes ranked by recovery beside their ranking on a stable link (this run's p50, most
// of its operations met no event): the verdict above ranks the latency alone.
function recoveryNotes(data) {
  const events = s.profile.network.events;
  if (!events) return ['', 'no link events in this profile: recovery is not measured (try +handover, +move, +dip)'];
  const steps = stepRecoveries(s.profile, s.plan, s.lanes);
  const ms = (x) => (x === Infinity ? 'never' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
  const stat = (metric, name, key) => {
    const m = data.metrics[`${metric}{scenario:${name}}`];
    return m && m.values[key] !== undefined ? m.values[key] : null;
  };
  const pct = (x) => `${(100 * x).toFixed(1)} %`;
  const rows = Object.keys(s.plan.scenarios).map((name) => {
    const { lane = null, model = null, limitMs = null } = steps[name] || {};
    return {
      name,
      lane: lane ? lane.name : name,
      subscription: Boolean(lane && lane.subscription),
      got: stat('event_recovery', name, 'count') ? stat('event_recovery', name, 'med') : null,
      max: stat('event_recovery', name, 'max'),
      returns: stat('event_recovery', name, 'count'),
      model,
      limit: limitMs,
      failed: stat('op_failed', name, 'rate'),
      slow: stat('event_slow', name, 'rate'),
      missed: stat('delivery_missed', name, 'count'),
      duplicated: stat('delivery_duplicates', name, 'count'),
      undelivered: stat('delivery_undelivered', name, 'count'),
      p50: stat('op_duration', name, 'med'),
    };
  });
  rows.sort((a, b) => (a.got ?? Infinity) - (b.got ?? Infinity));
  const lines = [
    '',
    `recovery from the link's return (${events.kind}${events.death ? `, ${events.death}` : ''}), fastest first:`,
  ];
  for (const r of rows) {
    const model = r.model ? `model p50 ${ms(r.model.p50)}, phases ${ms(r.model.min)}-${ms(r.model.max)}` : 'no model';
    const gate = r.limit ? `, gate < ${ms(r.limit)}` : '';
    const many = r.returns > 1 ? ` (p50 of ${r.returns}, max ${ms(r.max)})` : '';
    const got = r.got === null ? 'no success after a return in its step' : `${ms(r.got)}${many}`;
    const cost = [
      r.failed !== null ? `failed ${pct(r.failed)}` : null,
      r.slow !== null ? `slow in event ${pct(r.slow)}` : null,
      r.subscription && r.missed !== null ? `missed ${r.missed}` : null,
      r.subscription && r.duplicated !== null ? `duplicated ${r.duplicated}` : null,
      r.subscription && r.undelivered ? `never came ${r.undelivered}` : null,
    ].filter(Boolean);
    lines.push(`  ${r.name}: ${got} (${model}${gate})${cost.length ? `; ${cost.join(', ')}` : ''}`);
  }
  const recovered = rows.filter((r) => r.got !== null).map((r) => r.lane);
  const never = rows.filter((r) => r.got === null).map((r) => r.lane);
  lines.push(
    `ranked by recovery: ${recovered.join(', ') || 'none'}${never.length ? `; no recovery: ${never.join(', ')}` : ''}`,
  );
  for (const [what, sub] of [
    ['operations', false],
    ['subscriptions (publish to receipt)', true],
  ]) {
    const stable = rows.filter((r) => r.subscription === sub && r.p50 !== null).sort((a, b) => a.p50 - b.p50);
    if (stable.length)
      lines.push(`ranked on a stable link, ${what}: ${stable.map((r) => `${r.lane} ${ms(r.p50)}`).join(', ')}`);
  }
  return lines;
}
