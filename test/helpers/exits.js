// A run's exit outside the timed phase (test/run.js): whether a latency budget holds
// depends on the machine and on what runs beside the test, so a test there accepts 0,
// or 99 when every threshold the run failed is a timing one (a trend of durations);
// a failed non-timing gate (op_failed, delivery_missed, ...) or any other exit fails it.
import assert from 'node:assert/strict';

// The pack's trends of durations (scenarios/lib/metrics.js: Trend(name, true)).
export const TIMING_METRICS = [
  'op_duration',
  'setup_duration',
  'server_duration',
  'push_latency',
  'delivery_latency',
  'delivery_spread',
  'recovery_duration',
  'event_recovery',
  'first_event',
];

// 'op_duration{scenario:ws_c1}' -> true.
export const isTiming = (key) => TIMING_METRICS.includes(key.replace(/\{.*$/, ''));

// exitCode: a run's; failed: the keys of the thresholds it failed (summary.json's
// thresholds with ok false, or crossedInStderr's).
export function assertPassedButLatency(exitCode, failed, output = '') {
  if (exitCode === 0) {
    assert.deepEqual(failed, [], `exit 0 with failed thresholds ${failed.join(', ')}\n${output.slice(-2000)}`);
    return;
  }
  assert.equal(exitCode, 99, `exit ${exitCode}: neither 0 nor 99 (a failed threshold)\n${output.slice(-3000)}`);
  assert.ok(failed.length > 0, `exit 99 without a failed threshold\n${output.slice(-2000)}`);
  const other = failed.filter((k) => !isTiming(k));
  assert.deepEqual(other, [], `exit 99 with failed thresholds that are not timings\n${output.slice(-2000)}`);
}

// The same for a summary.json document (one k6 run).
export const assertDocPassedButLatency = (exitCode, doc, output) =>
  assertPassedButLatency(
    exitCode,
    doc.thresholds.filter((t) => !t.ok).map((t) => t.key),
    output,
  );

// The metrics a plain `k6 run` names in its stderr as crossed (exit 99):
// level=error msg="thresholds on metrics 'op_duration{scenario:a,n:1}, op_failed' have been crossed"
export function crossedInStderr(stderr) {
  const m = /thresholds on metrics '([^']*)' (?:have|has) been crossed/.exec(stderr);
  return m ? m[1].split(', ').filter(Boolean) : [];
}

// The thresholds a k6 --summary-export document marks crossed (true), as their keys.
export const crossedInSummary = (summary) =>
  Object.entries(summary?.metrics ?? {})
    .filter(([, m]) => Object.values(m.thresholds ?? {}).some((crossed) => crossed === true))
    .map(([key]) => key);
