// Push's plan (scenarios/push.js runs it).
import { setting } from '../../common/settings.js';
import { lane, rttOf } from '../../common/scenario.js';

// An event's JSON around its data: { id, seq, sentAt, data } and the envelope.
const EVENT_BYTES = 100;

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare(settings) {
  const INTERVAL_MS = setting(settings, 'PUSH_INTERVAL_MS');
  const SIZE = setting(settings, 'PUSH_SIZE');
  const POLL_MS = setting(settings, 'POLL_INTERVAL_MS');
  // A pushed event travels one way: R/2 + event/Bd.
  const pushed = () => ({ conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES });
  // A poll runs every POLL + R (sleep, then a request): an event waits for the next
  // poll to reach the server, (POLL + R)/2 on average and 0.95 (POLL + R) at p95,
  // then its answer travels R/2.
  const polled = (d, link) => ({
    p50: { ...pushed(), waitMs: (POLL_MS + link.R) / 2 },
    p95: { ...pushed(), waitMs: 0.95 * (POLL_MS + link.R) },
  });
  // What a row's percentiles rest on (common/gates.js rowSamples): the events a step's
  // subscriptions receive, one every INTERVAL_MS each between their set-up and their
  // close (a few round trips and 300 ms of slack each; lte's c1: 11 by this, 14 recorded).
  const samples = (_dims, { durationMs, vus, profile }) =>
    vus * Math.max(0, Math.floor((durationMs - 7 * rttOf(profile) - 600) / INTERVAL_MS));
  return {
    INTERVAL_MS,
    SIZE,
    POLL_MS,
    name: 'push',
    defaultProfile: '4g',
    // A subscription stays open for its step: arrival rates do not apply (events
    // arrive at the server's rate, an open workload already).
    open: false,
    lanes: [
      lane('ws', { model: pushed, samples }),
      lane('grpc_stream', { model: pushed, samples }),
      lane('http_poll', { model: polled, samples }),
    ],
    // A subscription fills its step; this only keeps the step long enough for set-up and a few events.
    iterationSeconds: (profile) => (4 * rttOf(profile) + 4 * Math.max(INTERVAL_MS, POLL_MS)) / 1000,
    // Subscriptions and poll loops stop themselves before their step ends: closing takes a few round trips.
    closeSeconds: (profile) => (3 * rttOf(profile)) / 1000 + 0.3,
    columns: [
      { title: 'subscriptions', metric: 'op_failed', stat: 'total', unit: '' },
      { title: 'failed', metric: 'op_failed', stat: 'rate', unit: '%' },
      { title: 'events', metric: 'push_events', stat: 'count', unit: '' },
      { title: 'latency p50', metric: 'push_latency', stat: 'med', unit: 'ms' },
      { title: 'latency p95', metric: 'push_latency', stat: 'p(95)', unit: 'ms' },
      { title: 'poll p50', metric: 'op_duration', stat: 'med', unit: 'ms' },
    ],
    hints: { pushSize: SIZE, pushIntervalMs: INTERVAL_MS, pollIntervalMs: POLL_MS },
  };
}
