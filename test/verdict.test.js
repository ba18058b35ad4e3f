// The answer first (common/verdict.js) on summary documents built by hand: the
// ranking at the lowest step with lanes that ran alike named together, what each
// saves against the slowest and how much of it the model calls connection set-up,
// and the highest step (VUs, or arrivals/s for an open workload) each lane held.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heldUpTo, verdictOf } from '../common/verdict.js';

const row = (lane, step, p50, setupMs, ok = true, failureRate = 0) => ({
  lane,
  scenario: `${lane}_${step}`,
  step,
  dims: {},
  latency: { count: 20, p50 },
  failures: { rate: failureRate, total: 20, count: Math.round(failureRate * 20) },
  model: { p50: { ms: 300 + setupMs, setupMs, roundTrips: 1 + setupMs / 300, formula: '' } },
  gate: { ok, thresholds: [], overrides: [] },
});

function doc(rows, { open = false } = {}) {
  const steps = [
    ...new Map(
      rows.map((r) => [
        r.scenario,
        {
          lane: r.lane,
          step: r.step,
          scenario: r.scenario,
          ...(open ? { rate: Number(r.step.slice(1)) * 6, timeUnit: '1m' } : {}),
        },
      ]),
    ).values(),
  ];
  return {
    run: { profile: '3g', network: { rttMs: 300 }, latencyMetric: 'op_duration', failureLimit: 0.01 },
    steps,
    rows,
  };
}

test('ranks the lanes, names alike ones together, and says what set-up costs by the model', () => {
  const d = doc([
    row('ws', 'c1', 307, 0),
    row('http2', 'c1', 309, 0),
    row('http_fresh', 'c1', 612, 300),
    row('https_fresh', 'c1', 933, 600),
    row('ws', 'c4', 310, 0),
    row('http2', 'c4', 700, 0, false),
    row('http_fresh', 'c4', 620, 300),
    row('https_fresh', 'c4', 950, 600, true, 0.05),
  ]);
  const v = verdictOf(d);
  assert.equal(v.lines[0], '3g (R 300 ms) p50 at c1: ws and http2 307 ms; http fresh 612 ms; https fresh 933 ms.');
  assert.equal(
    v.lines[1],
    'Against https fresh: ws and http2 save 626 ms (600 ms of it connection set-up by the model: 2 RTT); http fresh saves 321 ms (300 ms of it connection set-up by the model: 1 RTT).',
  );
  // http2 failed its budget at c4, https fresh failed too many operations there.
  assert.deepEqual(heldUpTo(d), { ws: 4, http2: 1, http_fresh: 4, https_fresh: 1 });
  assert.equal(v.lines[2], 'Held the budget up to: ws 4 VUs, http2 1 VU, http fresh 4 VUs, https fresh 1 VU.');
});

test('a lane that failed its first step held nothing; an open workload counts arrivals per second', () => {
  const closed = verdictOf(doc([row('ws', 'c1', 307, 0, false), row('grpc', 'c1', 305, 0)]));
  assert.match(closed.lines.at(-1), /ws none \(failed at its first step\), grpc 1 VU\./);
  const open = verdictOf(
    doc([row('ws', 'o50', 307, 0), row('ws', 'o90', 320, 0), row('ws', 'o150', 900, 0, false)], { open: true }),
  );
  assert.equal(open.lines.at(-1), 'Held the budget up to: ws 9.0 arrivals/s.');
});

test("an open step's dropped arrivals end what a lane held only when their gate (the one rule) failed", () => {
  // The dropped-arrivals gates as k6 evaluated them: count<=droppedLimit (common/gates.js).
  const d = doc([row('http2', 'o50', 75, 0), row('http2', 'o90', 73, 0), row('http2', 'o150', 80, 0)], { open: true });
  const dropped = (step, count, limit) => ({
    key: `dropped_iterations{scenario:http2_${step}}`,
    threshold: `count<=${limit}`,
    ok: count <= limit,
    stat: 'count',
  });
  // One drop in a short step is within its floor: the step held.
  d.thresholds = [dropped('o50', 1, 1), dropped('o90', 0, 1), dropped('o150', 40, 1)];
  assert.deepEqual(heldUpTo(d), { http2: 9 });
  assert.equal(verdictOf(d).lines.at(-1), 'Held the budget up to: http2 9.0 arrivals/s.');
  // Two in the first step fail it: the lane held nothing.
  d.thresholds = [dropped('o50', 2, 1), dropped('o90', 0, 1), dropped('o150', 40, 1)];
  assert.match(verdictOf(d).lines.at(-1), /http2 none \(failed at its first step\)/);
  // Another lane's failed gate is not this lane's.
  d.thresholds = [
    dropped('o50', 0, 1),
    { ...dropped('o90', 0, 1), key: 'dropped_iterations{scenario:ws_o90}', ok: false },
  ];
  assert.deepEqual(heldUpTo(d), { http2: 15 });
});
