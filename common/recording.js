// What the pack's k6 clients record per operation (scenarios/lib/metrics.js), decided
// once per run from -e METRICS, -e SERVER_TIMING_EVERY and the scenario, and stated
// where the figures are read: summary.json's run.recording, the terminal summary,
// summary.md and the HTML report. Plain ES module (k6 and Node).
//
//   full (the default)  op_duration and op_failed for every operation; setup_duration
//                       per set-up phase; server_duration{part} for the parts the
//                       scenario reports (its columns and observers: `total` for the
//                       summary's "server p50", exec and ser where a study splits them),
//                       from every Nth operation of each VU in each step (N = serverTimingEvery:
//                       SERVER_TIMING_EVERY, else the scenario's own, else 8; counted
//                       per VU and step, so a step's first operation is always sampled). A failed
//                       operation also records a failed k6 check named after what failed.
//   lean                op_duration and op_failed only, for the most load one k6 process
//                       can drive: no set-up phases, no server time; a failed operation
//                       still records its failed check.
// Every operation's outcome is op_failed: a check that fails fails the operation, so the
// checks that pass are not recorded apart (thresholds.json: gates.$checks).
import { configError } from './env.js';
import { SETTINGS, rawSetting, setting } from './settings.js';

export const METRICS_MODES = SETTINGS.METRICS.values;
// k6's JavaScript runtime pays ~25-40 us per operation to read, parse and record the
// server's timing (bench/overhead.js part b): one operation in 8 keeps a step's server p50
// from hundreds of samples at lan rates and costs ~4 us per operation.
export const SERVER_TIMING_EVERY = 8;
const MAX_EVERY = 1000000;

const given = (env, name) => env[name] !== undefined && env[name] !== '';

export const metricsModeOf = (env) => setting(env, 'METRICS');

// The server_duration parts a run's sub-metric keys name ('server_duration{scenario:x,part:exec}').
export function serverPartsOf(keys) {
  const parts = new Set();
  for (const key of keys) {
    if (!key.startsWith('server_duration{')) continue;
    const m = /[{,]part:([^,}]+)/.exec(key);
    if (m) parts.add(m[1]);
  }
  return [...parts].sort();
}

// The run's recording: { metrics, setup, serverTiming: { every, parts } | null }.
// scenario: { serverTimingEvery (the scenario's own N), serverParts (from its keys) };
// without one (a bench's or user's script calling the clients) the summary's part, total.
export function recordingOf(env, { serverTimingEvery, serverParts = ['total'] } = {}) {
  const metrics = metricsModeOf(env);
  let every = serverTimingEvery ?? SERVER_TIMING_EVERY;
  if (given(env, 'SERVER_TIMING_EVERY')) {
    const raw = rawSetting(env, 'SERVER_TIMING_EVERY');
    every = Number(raw);
    if (!Number.isInteger(every) || every < 1 || every > MAX_EVERY)
      throw configError(`SERVER_TIMING_EVERY=${raw} must be a whole number from 1 (every operation) to ${MAX_EVERY}`);
  }
  if (metrics === 'lean') return { metrics, setup: false, serverTiming: null };
  return { metrics, setup: true, serverTiming: serverParts.length ? { every, parts: [...serverParts] } : null };
}

const nth = (k) => `${k}${k % 100 >= 11 && k % 100 <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][k % 10] || 'th'}`;
const ordinal = (n) =>
  n === 1
    ? 'every operation'
    : `one operation in ${n} of each VU per step (sampled: its ${nth(1)}, ${nth(1 + n)}, ${nth(1 + 2 * n)}, ...)`;

// One line for the summaries and the report.
export function describeRecording(rec) {
  if (!rec) return null;
  if (rec.metrics === 'lean')
    return 'metrics: lean (METRICS=lean): op_duration and op_failed only; no server time, no set-up phases';
  const st = rec.serverTiming;
  const server = st
    ? `server time (${st.parts.join(', ')}) from ${ordinal(st.every)}`
    : 'no server time (the scenario reports none)';
  return `metrics: full: op_duration and op_failed for every operation, set-up phases, ${server}`;
}
