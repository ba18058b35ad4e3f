// The pack's metrics: one vocabulary for every threshold and report.
//
//   op_duration      Trend   one operation as the client sees it (request sent ->
//                            complete answer), set-up included where the transport
//                            pays it per operation (HTTP fresh connection, gRPC new channel)
//   op_failed        Rate    1 per failed operation (wrong status, GraphQL errors,
//                            wrong shape or count, timeout, transport error), else 0
//   setup_duration   Trend   connection set-up, tagged phase: connect | tls |
//                            ws_upgrade | ws_init | grpc_connect
//   server_duration  Trend   the server's own time from Server-Timing / the gRPC
//                            trailer / extensions.timing, tagged part: exec | ser | total
//   push_latency     Trend   server send time (event sentAt) -> client receive time
//   push_events      Counter events received (throughput)
//   delivery_latency Trend   fanout: an event's publish time (the hub's stamp, set
//                            to k6's clock) -> its receipt, at each subscriber
//   delivery_spread  Trend   fanout: first to last subscriber for one event
//   delivery_missed  Counter fanout: events a subscriber never received, or received
//                            out of order; delivery_duplicates: received twice
//   recovery_duration Trend  first failure of a streak -> next successful operation
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
import { stepStarted } from './progress.js';
import { FIRST_ERROR_CHECK } from '../../common/results.js';
import { serverTotal } from '../../common/server-timing.js';

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
export const reconnects = new Counter('reconnects');
export const opAbandoned = new Counter('op_abandoned');
// Soak: server memory, and latency drift against the run's own start.
export const serverRss = new Gauge('server_rss_bytes');
export const serverHeap = new Gauge('server_heap_bytes');
export const serverRssGrowth = new Trend('server_rss_growth');
export const opDrift = new Trend('op_drift');

// Records one operation: its duration (when it completed) and success.
// `checks` is { 'name': boolean } and shows in k6's checks; a failure is
// counted, logged once per reason and never thrown out of the iteration.
// This runs once per operation: keep it lean (k6's JS runtime is slow at
// building objects and closures; see bench/overhead.js part b).
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
export function recordOp({ ok, ms, tags = NO_TAGS, checks, reason }) {
  stepStarted();
  // k6's check() takes plain values as well as functions: { name: boolean } as it is.
  const passed = (checks ? check(null, checks, tags) : true) && ok !== false;
  opFailed.add(passed ? 0 : 1, tags);
  if (passed && ms !== undefined && ms !== null) opDuration.add(ms, tags);
  if (!passed) {
    const why = reason || (checks ? Object.keys(checks).filter((k) => !checks[k]).join(', ') : 'failed');
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
  return passed;
}

// An operation its step's end cut short (ws.js): not an outcome of the transport.
export function recordAbandoned(tags = NO_TAGS) {
  stepStarted();
  opAbandoned.add(1, tags);
}

export function recordSetup(phase, ms, tags = {}) {
  if (ms !== undefined && ms !== null && ms >= 0) setupDuration.add(ms, { ...tags, phase });
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
  const id = `${key}\u0000${value}`;
  let out = byKey[id];
  if (!out) {
    out = { ...tags, [key]: value };
    byKey[id] = out;
  }
  return out;
}

// Server time parts as server_duration{part:...}.
export function recordServerTiming(timing, tags = NO_TAGS) {
  if (!timing) return;
  if (typeof timing.exec === 'number') serverDuration.add(timing.exec, withTag(tags, 'part', 'exec'));
  if (typeof timing.ser === 'number') serverDuration.add(timing.ser, withTag(tags, 'part', 'ser'));
  // A server of the team's own may name its parts otherwise: its longest entry stands for the total.
  const total = serverTotal(timing);
  if (total !== null) serverDuration.add(total, withTag(tags, 'part', 'total'));
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
