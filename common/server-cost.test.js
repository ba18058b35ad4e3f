import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeServerCost } from './results.js';
import { memoryGrowthOf, serverCostOf, stepCosts, WARMUP_SHARE } from './server-cost.js';

const FROM = 1_000_000;
const step = (scenario, lane, stepName, startSeconds, count, p50) => ({
  scenario,
  lane,
  step: stepName,
  startSeconds,
  durationSeconds: 1,
  latency: { count, p50 },
});
const DOC = {
  run: { stepsFrom: FROM, endedAt: new Date(FROM + 4000).toISOString() },
  steps: [
    step('ws_c1', 'ws', 'c1', 0, 100, 1.2),
    step('ws_c4', 'ws', 'c4', 1, 200, 2.5),
    step('grpc_c1', 'grpc', 'c1', 2, 50, 0.9),
    step('grpc_c4', 'grpc', 'c4', 3, 0, null),
  ],
  // The verdict's ranking (common/verdict.js): the fastest for the client comes from it.
  verdict: {
    ranking: [
      { lanes: ['grpc'], p50: 0.9 },
      { lanes: ['ws'], p50: 1.2 },
    ],
  },
};
// The servers' CPU: 100 ms in ws_c1, 300 in ws_c4, 10 in grpc_c1; RSS rising.
const SAMPLES = [
  { t: FROM - 50, cpuMs: 1000, rssBytes: 50e6 },
  { t: FROM + 1000, cpuMs: 1100, rssBytes: 51e6 },
  { t: FROM + 2000, cpuMs: 1400, rssBytes: 52e6 },
  { t: FROM + 3000, cpuMs: 1410, rssBytes: 52e6 },
  { t: FROM + 4000, cpuMs: 1410, rssBytes: 53e6 },
];

test("stepCosts: each step's CPU from its start to the next step's, over its operations", () => {
  assert.deepEqual(stepCosts(DOC, SAMPLES), [
    { scenario: 'ws_c1', lane: 'ws', step: 'c1', ops: 100, cpuMs: 100, cpuUsPerOp: 1000, rssBytes: 51e6 },
    { scenario: 'ws_c4', lane: 'ws', step: 'c4', ops: 200, cpuMs: 300, cpuUsPerOp: 1500, rssBytes: 52e6 },
    { scenario: 'grpc_c1', lane: 'grpc', step: 'c1', ops: 50, cpuMs: 10, cpuUsPerOp: 200, rssBytes: 52e6 },
  ]);
  // No stepsFrom (a summary from before it), or too few samples: nothing to cost.
  assert.deepEqual(stepCosts({ ...DOC, run: {} }, SAMPLES), []);
  assert.deepEqual(stepCosts(DOC, SAMPLES.slice(0, 1)), []);
});

test('serverCostOf: the cheapest lane for the server and the fastest for the client, each at its first step', () => {
  const cost = serverCostOf(DOC, SAMPLES, [42]);
  assert.deepEqual(cost.cheapest, { lane: 'grpc', step: 'c1', cpuUsPerOp: 200 });
  assert.deepEqual(cost.fastest, { lane: 'grpc', step: 'c1', p50: 0.9 });
  const lines = describeServerCost(cost);
  assert.match(lines[0], /^server cost \(pid 42; CPU per operation from \/proc/);
  assert.equal(lines[2], '  ws                c1        100   1000 us    48.6 MB');
  assert.equal(
    lines.at(-1),
    'Cheapest for the server: grpc (200 us of CPU an operation at c1); fastest for the client: grpc (p50 0.9 ms at c1).',
  );
  assert.match(describeServerCost(serverCostOf(DOC, [], [42])).at(-1), /^No step held enough samples/);
});

test("serverCostOf: the fastest for the client is the verdict's first, none without a verdict", () => {
  const ranked = { ...DOC, verdict: { ranking: [{ lanes: ['ws', 'grpc'], p50: 1.1 }] } };
  assert.deepEqual(serverCostOf(ranked, SAMPLES, [42]).fastest, { lane: 'ws', step: 'c1', p50: 1.1 });
  assert.equal(serverCostOf({ ...DOC, verdict: null }, SAMPLES, [42]).fastest, null);
});

test("memoryGrowthOf: each process's growth from its first sample after the warm-up to its most since", () => {
  // A 100 s soak: the warm-up is its first 20 s; pid 7 grows 50 -> 80 MB after it, pid 8 stays.
  const doc = { run: { stepsFrom: FROM, endedAt: new Date(FROM + 100_000).toISOString() } };
  const mb = (n) => n * 1048576;
  const samples = [0, 10, 20, 40, 60, 80, 100, 130].map((s, i) => ({
    t: FROM + s * 1000,
    rssByPid: { 7: mb([40, 45, 50, 60, 80, 70, 75, 999][i]), 8: mb(30) },
  }));
  assert.equal(WARMUP_SHARE, 0.2);
  assert.deepEqual(memoryGrowthOf(doc, samples), [
    { pid: 7, baselineBytes: mb(50), maxBytes: mb(80), lastBytes: mb(75), growth: 0.6, fromSeconds: 20 },
    { pid: 8, baselineBytes: mb(30), maxBytes: mb(30), lastBytes: mb(30), growth: 0, fromSeconds: 20 },
  ]);
  // Too few samples after the warm-up, or no stepsFrom: nothing to judge.
  assert.deepEqual(memoryGrowthOf(doc, samples.slice(0, 3)), []);
  assert.deepEqual(memoryGrowthOf({ run: {} }, samples), []);
  const lines = describeServerCost({
    ...serverCostOf(DOC, SAMPLES, [7, 8]),
    memory: {
      gate: ['max<0.5'],
      rows: memoryGrowthOf(doc, samples).map((r) => ({ ...r, ok: r.growth < 0.5 })),
    },
  });
  assert.equal(
    lines.at(-3),
    'server memory (VmRSS from the first sample after the warm-up, 20 s in; gate server_rss_growth max<0.5):',
  );
  assert.equal(lines.at(-2), '  pid 7: 50.0 MB -> most 80.0 MB, last 75.0 MB: +60.0 % FAILED');
  assert.equal(lines.at(-1), '  pid 8: 30.0 MB -> most 30.0 MB, last 30.0 MB: +0.0 % ok');
});

test('stepCosts: steps that run at once (a soak) make one row of all their operations', () => {
  const doc = {
    run: { stepsFrom: FROM, endedAt: new Date(FROM + 4000).toISOString() },
    steps: [step('ws_mix', 'ws', 'mix', 0, 100, 70), step('grpc_mix', 'grpc', 'mix', 0, 300, 71)],
    verdict: { ranking: [{ lanes: ['ws'], p50: 70 }] },
  };
  const cost = serverCostOf(doc, SAMPLES, [42]);
  assert.deepEqual(cost.rows, [
    {
      scenario: 'ws_mix+grpc_mix',
      lane: 'all lanes at once',
      step: 'mix',
      ops: 400,
      cpuMs: 410,
      cpuUsPerOp: 1025,
      rssBytes: 53e6,
      lanes: ['ws', 'grpc'],
    },
  ]);
  assert.equal(cost.cheapest, null);
  assert.match(describeServerCost(cost).at(-1), /^The lanes ran at once \(a soak\): /);
});
