// The pack's metrics: one vocabulary for every threshold and report.
//
//   op_duration      Trend   one operation as the client sees it (request sent ->
//                            complete answer), set-up included where the transport
//                            pays it per operation (HTTP fresh connection, gRPC new channel)
//   op_failed        Rate    1 per failed operation (wrong status, GraphQL errors,
//                            wrong shape or count, timeout, transport error), else 0
//   setup_duration   Trend   connection set-up, tagged phase: connect | tls |
//                            ws_upgrade | ws_init | grpc_connect (not under METRICS=lean)
//   server_duration  Trend   the server's own time from Server-Timing / the gRPC
//                            trailer / extensions.timing, tagged part: exec | ser | total;
//                            only the parts the scenario reports, from every Nth
//                            operation of each VU (common/recording.js; not under lean)
//   checks           (k6's)  one failed check per failed operation, named after what
//                            failed; checks that pass are not recorded (op_failed is
//                            the outcome)
//   push_latency     Trend   server send time (event sentAt) -> client receive time
//   push_events      Counter events received (throughput)
//   delivery_latency Trend   fanout: an event's publish time (the hub's stamp, set
//                            to k6's clock) -> its receipt, at each subscriber
//   delivery_spread  Trend   fanout: first to last subscriber for one event
//   delivery_missed  Counter fanout: events a subscriber never received, or received
//                            out of order; delivery_duplicates: received twice
//                            (also unstable's subscription lanes: missed = the gaps)
//   delivery_undelivered Counter unstable: events published that a subscription had
//                            not received when it ended (it never came back)
//   recovery_duration Trend  first failure of a streak -> next successful operation
//   event_recovery   Trend   unstable: the link's return after an event (a blackout's
//                            or a dip's end) -> the end of the VU's first success after it
//   event_slow       Rate    unstable: of the operations overlapping an event, those
//                            slower than the lane's budget plus the event's length
//   event_recovered  Counter unstable: returns a success followed (0 at each step's start)
//   reconnects       Counter a socket or channel opened again after a failure
//   op_abandoned     Counter a WebSocket operation (or connect) still in flight when
//                            its step ended: neither completed nor failed (ws.js)
//   silent_vus       Counter VUs of a step whose WebSocket lane recorded nothing:
//                            k6 wedged them (silent-vus.js); vus_completing: VUs that
//                            completed at least one operation in the step
//
// Tags: transport (http-fresh, http-keepalive, http2, ws, grpc, grpc-fresh,
// grpc-stream, grpc-bidi, grpc-client-stream, http-poll), tls ('true'/'false'),
// step and, in fanout, subscribers come from the k6 scenario (see load.js);
// profile is test-wide (options.tags); operations add payload, n, size, doc,
// cache, conn (cold/warm), op where they apply.
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
import { scenarioInfo } from './load.js';
import { stepStarted } from './progress.js';
import { recordingOf } from '../../common/recording.js';
import { FIRST_ERROR_CHECK } from '../../common/results.js';
import { parseServerTiming, serverTotal, serverTotalOf } from '../../common/server-timing.js';
import { ENV } from './config.js';

export const opDuration = new Trend('op_duration', true);
export const opFailed = new Rate('op_failed');
export const setupDuration = new Trend('setup_duration', true);
export const serverDuration = new Trend('server_duration', true);
export const pushLatency = new Trend('push_latency', true);
export const pushEvents = new Counter('push_events');
export const deliveryLatency = new Trend('delivery_latency', true);
export const deliverySpread = new Trend('delivery_spread', true);
export const deliveryMissed = new Counter('delivery_missed');
export const deliveryDuplicates = new Counter('delivery_duplicates');
export const recoveryDuration = new Trend('recovery_duration', true);
export const eventRecovery = new Trend('event_recovery', true);
export const eventSlow = new Rate('event_slow');
export const eventRecovered = new Counter('event_recovered');
export const deliveryUndelivered = new Counter('delivery_undelivered');
export const reconnects = new Counter('reconnects');
export const opAbandoned = new Counter('op_abandoned');
// Soak: server memory, and latency drift against the run's own start.
export const serverRss = new Gauge('server_rss_bytes');
export const serverHeap = new Gauge('server_heap_bytes');
export const serverRssGrowth = new Trend('server_rss_growth');
export const opDrift = new Trend('op_drift');
// A stream (your API's subscription on ws/wss, its server stream on grpc_stream): the
// time from the request to the first event, and events per second from the first to
// the last (scenarios/api.js).
export const firstEvent = new Trend('first_event', true);
export const eventRate = new Trend('event_rate');

// What this run records per operation (common/recording.js): full or lean, and
// which server-timing parts from every how many operations. defineScenario()
// configures it from the scenario's keys; a script that only imports the clients
// (the benches) gets the -e METRICS / SERVER_TIMING_EVERY defaults.
let REC = recordingOf(ENV);
let serverEvery = REC.serverTiming ? REC.serverTiming.every : 0;
let serverParts = REC.serverTiming ? REC.serverTiming.parts : [];
let totalOnly = serverParts.length === 1 && serverParts[0] === 'total';
export function configureRecording(rec) {
  REC = rec;
  serverEvery = rec.serverTiming ? rec.serverTiming.every : 0;
  serverParts = rec.serverTiming ? rec.serverTiming.parts : [];
  totalOnly = serverParts.length === 1 && serverParts[0] === 'total';
}
export const recording = () => REC;

// Records one operation: op_failed always, op_duration when it succeeded.
// The outcome is op_failed alone: checks that pass are not recorded apart (each
// would cost k6 a sample). A failed operation records k6's check named after what
// failed (`failedCheck`, or every false entry of `checks`: { 'name': boolean }), so
// the summary names it; it is logged once per reason and never thrown out of the
// iteration. This runs once per operation: keep it lean (k6's JS runtime is slow
// at building objects and closures; see bench/overhead.js part b).
const logged = {};
const NO_TAGS = {};
// The api scenario keeps each operation's first error for the summary: a failed check
// named FIRST_ERROR_CHECK + '<op>: <reason>', once per VU and operation (common/results.js
// reads them back from the end-of-test data). Off for the studies, whose errors are logged.
let keepErrors = false;
const kept = {};
export function keepFirstErrors() {
  keepErrors = true;
}
export function recordOp({ ok, ms, tags = NO_TAGS, checks, reason, failedCheck }) {
  let passed = ok !== false;
  if (checks && passed) {
    for (const name in checks) {
      if (!checks[name]) {
        passed = false;
        break;
      }
    }
  }
  if (passed || !checks) return recordOutcome(passed, ms, tags, reason, failedCheck);
  stepStarted();
  opFailed.add(1, tags);
  recordFailure(tags, checks, reason, failedCheck);
  return false;
}

// recordOp for the clients' own per-operation path, without an arguments object:
// ok (boolean), ms (null when it did not complete), tags, and for a failure its
// reason and the name of the check that failed. Returns ok.
export function recordOutcome(ok, ms, tags, reason, failedCheck) {
  stepStarted();
  if (ok) {
    opFailed.add(0, tags);
    if (ms !== undefined && ms !== null) opDuration.add(ms, tags);
    return true;
  }
  opFailed.add(1, tags);
  recordFailure(tags, null, reason, failedCheck);
  return false;
}

// A check that failed outside a timed operation (a reply checked once, untimed): it
// counts in op_failed as a failed operation, with its check; one that passes records nothing.
export function recordFailedCheck({ tags = NO_TAGS, reason, failedCheck }) {
  stepStarted();
  opFailed.add(1, tags);
  recordFailure(tags, null, reason, failedCheck);
}

// A failed operation: its failed checks, the log line (once per reason), the first error (api).
function recordFailure(tags, checks, reason, failedCheck) {
  const failedNames = [];
  if (failedCheck) failedNames.push(failedCheck);
  if (checks) for (const name of Object.keys(checks)) if (!checks[name] && name !== failedCheck) failedNames.push(name);
  if (failedNames.length) check(null, Object.fromEntries(failedNames.map((n) => [n, false])), tags);
  const why = reason || failedNames.join(', ') || 'failed';
  // Ports and counts vary between otherwise identical failures.
  const key = `${tags.transport || ''}:${why}`.replace(/\d+/g, '#').slice(0, 200);
  if (!logged[key]) {
    logged[key] = true;
    console.warn(`operation failed in ${exec.scenario.name} ${JSON.stringify(tags)}: ${why} [logged once per reason]`);
  }
  const op = tags.op || tags.transport || 'operation';
  if (keepErrors && !kept[op]) {
    kept[op] = true;
    check(null, { [`${FIRST_ERROR_CHECK}${op}: ${String(why).replace(/::/g, ': ').slice(0, 300)}`]: false }, tags);
  }
}

// An operation its step's end cut short (ws.js): not an outcome of the transport.
export function recordAbandoned(tags = NO_TAGS) {
  stepStarted();
  opAbandoned.add(1, tags);
}

// setup_duration{phase}; not recorded under METRICS=lean.
export function recordSetup(phase, ms, tags = NO_TAGS) {
  if (REC.setup && ms !== undefined && ms !== null && ms >= 0) setupDuration.add(ms, withTag(tags, 'phase', phase));
}

// A tags object extended by one tag, made once per (tags object, key, value):
// the per-operation paths hand the same tags objects back to k6 instead of
// spreading new ones on every sample. Tags objects are never mutated after use.
const derived = new WeakMap();
export function withTag(tags, key, value) {
  let byKey = derived.get(tags);
  if (!byKey) {
    byKey = {};
    derived.set(tags, byKey);
  }
  const byValue = byKey[key] || (byKey[key] = {});
  return byValue[value] || (byValue[value] = { ...tags, [key]: value });
}

// Server time is read from every Nth operation of each VU in each step (common/recording.js):
// true when this operation's is due. Each call counts one operation. The count starts
// again when the VU runs another k6 scenario (a step of a lane: k6 reuses VUs across
// them), so every step's first operation is sampled, however few operations it holds.
let serverCount = 0;
let serverScenario = null;
export function serverTimingDue() {
  if (serverEvery === 0) return false;
  if (serverEvery === 1) return true;
  const name = scenarioInfo().name;
  if (name !== serverScenario) {
    serverScenario = name;
    serverCount = 0;
  }
  if (serverCount === 0) {
    serverCount = serverEvery - 1;
    return true;
  }
  serverCount--;
  return false;
}

// Server time parts as server_duration{part:...}, for an operation whose turn it is
// (the caller asked serverTimingDue()). Only the parts the run reports are recorded.
export function recordServerTimingNow(timing, tags = NO_TAGS) {
  if (!timing) return;
  for (const part of serverParts) {
    const v = part === 'total' ? serverTotal(timing) : timing[part];
    if (typeof v === 'number' && v >= 0) serverDuration.add(v, withTag(tags, 'part', part));
  }
}

// One operation's parsed server timing ({ exec, ser, total }, common/server-timing.js),
// recorded when its turn has come (every Nth operation of the VU; never under lean).
export function recordServerTiming(timing, tags = NO_TAGS) {
  if (serverTimingDue()) recordServerTimingNow(timing, tags);
}

// The same from a Server-Timing header's text, for an operation whose turn it is
// (the caller asked serverTimingDue(), so the header is read only then). When the
// run reports `total` alone, only that entry is read.
export function recordServerTimingText(header, tags = NO_TAGS) {
  // A gRPC trailer is a list of values.
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return;
  if (totalOnly) {
    const total = serverTotalOf(text);
    if (total !== null) serverDuration.add(total, withTag(tags, 'part', 'total'));
    return;
  }
  const timing = parseServerTiming(text);
  recordServerTimingNow(timing, tags);
}

// Per-VU failure streaks -> recovery_duration: the time from the first failed
// operation of a streak to the next success on the same transport.
const streaks = {};
export function trackRecovery(key, ok, tags = {}) {
  const now = Date.now();
  if (!ok) {
    if (streaks[key] === undefined) streaks[key] = now;
    return;
  }
  if (streaks[key] !== undefined) {
    recoveryDuration.add(now - streaks[key], tags);
    delete streaks[key];
  }
}
