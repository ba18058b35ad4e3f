// The answer first (common/verdict.js) on summary documents built by hand: the
// ranking at the lowest step with lanes that ran alike named together, what each
// saves against the slowest and how much of it the model calls connection set-up,
// and the highest step (VUs, or arrivals/s for an open workload) each lane held.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heldUpTo, verdictOf } from './verdict.js';

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

function doc(rows, { open = false, profile = '3g', rttMs = 300 } = {}) {
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
    run: { profile, network: rttMs ? { rttMs } : {}, latencyMetric: 'op_duration', failureLimit: 0.01 },
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
  // ws 307 and http2 309 ms ran alike (within 5 %): named together, with their range.
  assert.equal(v.lines[0], '3g (R 300 ms) p50 at c1: ws and http2 307–309 ms; http fresh 612 ms; https fresh 933 ms.');
  assert.equal(
    v.lines[1],
    'Against https fresh: ws and http2 save 624–626 ms (600 ms of it connection set-up by the model: 2 RTT); http fresh saves 321 ms (300 ms of it connection set-up by the model: 1 RTT).',
  );
  assertTrueForEveryLane(v, d);
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

// Every figure a verdict prints for a group is true, at its printed precision, for each
// lane of the group: its p50 (lines[0]) and what it saves against each of the slowest.
const printed = (ms) => Number(ms >= 100 ? Math.round(ms) : ms.toFixed(1));
const lanesIn = (names) => names.split(/, | and /).map((n) => n.replace(/ /g, '_'));
function within(value, lo, hi, what) {
  const v = printed(value);
  assert.ok(v >= Number(lo) && v <= Number(hi ?? lo), `${what}: ${value} ms printed as ${lo}${hi ? `–${hi}` : ''} ms`);
}
function assertTrueForEveryLane(v, d) {
  const p50 = Object.fromEntries(d.rows.filter((r) => r.step === 'c1').map((r) => [r.lane, r.latency.p50]));
  const figure = /^(.+) (\d+(?:\.\d)?)(?:–(\d+(?:\.\d)?))? ms$/;
  const seen = [];
  for (const part of v.lines[0]
    .replace(/^.* p50 at c1: /, '')
    .replace(/\.$/, '')
    .split('; ')) {
    const [, names, lo, hi] = part.match(figure) || assert.fail(`not a figure: ${part}`);
    for (const lane of lanesIn(names)) {
      within(p50[lane], lo, hi, `${lane} p50`);
      seen.push(lane);
    }
  }
  assert.deepEqual(seen.sort(), Object.keys(p50).sort(), 'every lane named once');
  const against = v.lines[1]?.match(/^Against (.+?): (.+)\.$/);
  if (!against) return;
  const slowest = lanesIn(against[1]);
  for (const part of against[2].split('; ')) {
    const [, names, lo, hi] =
      part.match(/^(.+) saves? (\d+(?:\.\d)?)(?:–(\d+(?:\.\d)?))? ms(?: \(.+\))?$/) || assert.fail(part);
    for (const lane of lanesIn(names))
      for (const w of slowest) within(p50[w] - p50[lane], lo, hi, `${lane} saves against ${w}`);
  }
}

test('lan: a lane at 1.2 ms is not named with lanes at 0.6 ms (the reported misstatement)', () => {
  // Before: "lan p50 at c1: http keepalive, http2, ws, wss and http fresh 0.6 ms; https fresh 2.6 ms."
  const d = doc(
    [
      row('http_keepalive', 'c1', 0.58, 0),
      row('http2', 'c1', 0.6, 0),
      row('ws', 'c1', 0.61, 0),
      row('wss', 'c1', 0.62, 0),
      row('http_fresh', 'c1', 1.2, 0),
      row('https_fresh', 'c1', 2.6, 0),
    ],
    { profile: 'lan', rttMs: 0 },
  );
  const v = verdictOf(d);
  assert.equal(
    v.lines[0],
    'lan p50 at c1: http keepalive, http2, ws and wss 0.6 ms; http fresh 1.2 ms; https fresh 2.6 ms.',
  );
  assert.equal(
    v.lines[1],
    'Against https fresh: http keepalive, http2, ws and wss save 2.0 ms; http fresh saves 1.4 ms.',
  );
  assertTrueForEveryLane(v, d);
});

test('lan: lanes between 0.65 and 1.05 ms are not printed as one 0.5 ms figure (the reported misstatement)', () => {
  // Before: "lan p50 at c1: http keepalive, http2, ws, wss and http fresh 0.5 ms; https fresh 2.6 ms."
  const lanes = { http_keepalive: 0.5, http2: 0.65, ws: 0.8, wss: 0.9, http_fresh: 1.05, https_fresh: 2.6 };
  const d = doc(
    Object.entries(lanes).map(([lane, p50]) => row(lane, 'c1', p50, 0)),
    { profile: 'lan', rttMs: 0 },
  );
  const v = verdictOf(d);
  assert.equal(
    v.lines[0],
    'lan p50 at c1: http keepalive 0.5 ms; http2 0.7 ms; ws 0.8 ms; wss 0.9 ms; http fresh 1.1 ms; https fresh 2.6 ms.',
  );
  assertTrueForEveryLane(v, d);
  // The same members without the 0.5 ms lane: still a figure each.
  delete lanes.http_keepalive;
  const d2 = doc(
    Object.entries(lanes).map(([lane, p50]) => row(lane, 'c1', p50, 0)),
    { profile: 'lan', rttMs: 0 },
  );
  assert.equal(verdictOf(d2).lines[0].split('; ').length, 5);
  assertTrueForEveryLane(verdictOf(d2), d2);
});

test('3g: kept connections that print the same are one group with one figure, and so is what they save', () => {
  const d = doc([
    row('http2', 'c1', 304.8, 0),
    row('ws', 'c1', 305.1, 0),
    row('wss', 'c1', 305.3, 0),
    row('http_keepalive', 'c1', 305.4, 0),
    row('http_fresh', 'c1', 607, 300),
    row('https_fresh', 'c1', 929, 600),
  ]);
  const v = verdictOf(d);
  assert.equal(
    v.lines[0],
    '3g (R 300 ms) p50 at c1: http2, ws, wss and http keepalive 305 ms; http fresh 607 ms; https fresh 929 ms.',
  );
  assert.equal(
    v.lines[1],
    'Against https fresh: http2, ws, wss and http keepalive save 624 ms (600 ms of it connection set-up by the model: 2 RTT); http fresh saves 322 ms (300 ms of it connection set-up by the model: 1 RTT).',
  );
  assertTrueForEveryLane(v, d);
});

test('a slowest group of several lanes: what each saves against each of them, as a range', () => {
  const d = doc([
    row('ws', 'c1', 305, 0),
    row('http2', 'c1', 306, 0),
    row('https_fresh', 'c1', 929, 600),
    row('grpc_fresh', 'c1', 934, 600),
  ]);
  const v = verdictOf(d);
  assert.equal(v.lines[0], '3g (R 300 ms) p50 at c1: ws and http2 305–306 ms; https fresh and grpc fresh 929–934 ms.');
  assert.equal(
    v.lines[1],
    'Against https fresh and grpc fresh: ws and http2 save 623–629 ms (600 ms of it connection set-up by the model: 2 RTT).',
  );
  assertTrueForEveryLane(v, d);
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
