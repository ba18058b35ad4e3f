// Latency gates from the round-trip model (common/gates.js) on small hand-built plans
// under 3g: what a row expects (a kept connection's tail is its cold operation), the
// budgets and thresholds of each row and set-up phase, what overrides, a step's VUs and
// a step with too few operations for a median change, the open steps' dropped-arrivals
// gates, and the lines `k6pack thresholds` prints for each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  deriveGates,
  describeGate,
  describeOpenStep,
  droppedGates,
  droppedLimit,
  expectationsOf,
  gateThresholds,
  MIN_MEDIAN_SAMPLES,
} from './gates.js';
import { linkOf } from './model.js';
import { lane } from './scenario.js';

const R = 300;
const profile = {
  name: '3g',
  network: { name: '3g', rttMs: R, jitterMs: 0, downKbps: 1600, upKbps: 768 },
  faults: [],
  toxics: [],
};
const link = linkOf(profile);
const LATENCY = {
  p50: { factor: 1.15, plusMs: 20 },
  p95: { factor: 1.5, plusMs: 50 },
  cpuFactor: 2,
  stepMs: { p50: 5, p95: 10 },
  reason: 'r',
};
const model = () => ({ reqBytes: 200, resBytes: 500, serverMs: 2 });
const ws = lane('ws', 'ws', false, { model, setups: ['ws_upgrade'] });
const fresh = lane('http_fresh', 'http-fresh', false, { model });
const closed = (exec, transport, step, vus) => ({
  exec,
  executor: 'constant-vus',
  vus,
  duration: '10s',
  tags: { transport, tls: 'false', step },
});
const PLAN = {
  scenarios: {
    ws_c1: closed('ws', 'ws', 'c1', 1),
    ws_c4: closed('ws', 'ws', 'c4', 4),
    http_fresh_c1: closed('httpFresh', 'http-fresh', 'c1', 1),
    // A helper scenario (soak's memory sampler): no lane, no gate.
    sampler: { exec: 'sample', executor: 'constant-vus', vus: 1, tags: {} },
  },
  durations: { ws_c1: 10000, ws_c4: 10000, http_fresh_c1: 10000 },
};
const rowsOf = (plan, dims = [{}]) =>
  Object.keys(plan.scenarios).flatMap((scenario) => dims.map((d) => ({ tags: { scenario, ...d } })));
const derive = (overrides = {}) =>
  deriveGates({
    policy: { latency: LATENCY },
    scenario: 'ws-vs-http',
    profile,
    plan: PLAN,
    lanes: [ws, fresh],
    rows: rowsOf(PLAN),
    latencyMetric: 'op_duration',
    ...overrides,
  });
const byKey = (gates) => Object.fromEntries(gates.map((g) => [g.key, g]));

test('expectationsOf: a kept connection is warm at the median and cold at the tail; a fresh one is cold at both', () => {
  const e = expectationsOf(ws, {}, link);
  assert.match(e.p50.formula, /^R \+ /);
  // The cold operation opens TCP, upgrades and inits the socket: three more round trips.
  assert.equal(e.p95.roundTrips - e.p50.roundTrips, 3);
  assert.ok(e.p95.ms - e.p50.ms >= 3 * R && e.p95.ms - e.p50.ms < 3 * R + 10, `${e.p50.ms} ${e.p95.ms}`);
  assert.equal(e.p50.setupMs, 0);
  const f = expectationsOf(fresh, {}, link);
  assert.equal(f.p50, f.p95);
  assert.match(f.p50.formula, /^2R \+ /);
  // A lane whose model says conn: 'cold' pays the set-up at the median too.
  const coldWs = expectationsOf(lane('ws', 'ws', false, { model: () => ({ ...model(), conn: 'cold' }) }), {}, link);
  assert.equal(coldWs.p50, coldWs.p95);
  assert.equal(coldWs.p50.ms, e.p95.ms);
  // A model that gives its median and tail operations itself.
  const own = expectationsOf(
    lane('ws', 'ws', false, { model: () => ({ p50: { conn: 'warm', rounds: 2 }, p95: { conn: 'warm', rounds: 3 } }) }),
    {},
    link,
  );
  assert.deepEqual([own.p50.roundTrips, own.p95.roundTrips], [2, 3]);
  // The step's concurrency reaches the model.
  let seen;
  expectationsOf(lane('ws', 'ws', false, { model: (d, l, step) => ((seen = step), model()) }), {}, link, { n: 8 });
  assert.deepEqual(seen, { n: 8 });
});

test('deriveGates: a p50 and a p95 gate per row, a p50 gate per set-up phase and step; helpers have none', () => {
  const gates = derive();
  assert.deepEqual(
    gates.map((g) => [g.key, g.which, g.lane, g.step, g.vus]),
    [
      ['op_duration{scenario:ws_c1}', 'op', 'ws', 'c1', 1],
      ['setup_duration{scenario:ws_c1,phase:ws_upgrade}', 'ws_upgrade', 'ws', 'c1', 1],
      ['op_duration{scenario:ws_c4}', 'op', 'ws', 'c4', 4],
      ['setup_duration{scenario:ws_c4,phase:ws_upgrade}', 'ws_upgrade', 'ws', 'c4', 4],
      ['op_duration{scenario:http_fresh_c1}', 'op', 'http_fresh', 'c1', 1],
    ],
  );
  const g = byKey(gates);
  const ws1 = g['op_duration{scenario:ws_c1}'];
  assert.deepEqual(ws1.thresholds, [`p(50)<${ws1.budget.p50}`, `p(95)<${ws1.budget.p95}`]);
  assert.ok(ws1.budget.p50 > ws1.expected.p50.ms && ws1.budget.p95 > ws1.expected.p95.ms, JSON.stringify(ws1.budget));
  assert.deepEqual(ws1.modelBudget, ws1.budget);
  assert.equal(ws1.fewSamples, 0);
  // k6 times WebSocket operations in whole ms: their budgets sit 1 above a multiple of 5.
  assert.deepEqual([ws1.budget.p50 % 5, ws1.budget.p95 % 5], [1, 1]);
  const http = g['op_duration{scenario:http_fresh_c1}'];
  assert.deepEqual([http.budget.p50 % 5, http.budget.p95 % 5], [0, 0]);
  // 4 VUs add stepMs x log2(4) to each budget.
  const ws4 = g['op_duration{scenario:ws_c4}'];
  assert.equal(ws4.budget.p50 - ws1.budget.p50, 2 * LATENCY.stepMs.p50);
  assert.equal(ws4.budget.p95 - ws1.budget.p95, 2 * LATENCY.stepMs.p95);
  // A set-up phase is gated at its median only: 2 R (TCP, upgrade) and its bytes.
  const setup = g['setup_duration{scenario:ws_c1,phase:ws_upgrade}'];
  assert.deepEqual(setup.thresholds, [`p(50)<${setup.budget.p50}`]);
  assert.equal(setup.expected.p50.roundTrips, 2);
  assert.equal(setup.expected.p50, setup.expected.p95);
  // At c1 the step opens one connection: its median is its tail, gated at the tail's budget.
  assert.equal(setup.fewSamples, 1);
  assert.equal(setup.budget.p50, setup.modelBudget.p95);
  assert.ok(setup.modelBudget.p50 < setup.modelBudget.p95);
  // At c4, four: a median.
  const setup4 = g['setup_duration{scenario:ws_c4,phase:ws_upgrade}'];
  assert.equal(setup4.fewSamples, 0);
  assert.deepEqual(setup4.budget, setup4.modelBudget);
  assert.deepEqual(gateThresholds(gates), Object.fromEntries(gates.map((x) => [x.key, x.thresholds])));
});

test('a lane with dims: one gate per row, its set-up gate once per step', () => {
  const dims = [{ payload: 'small' }, { payload: 'big' }];
  const gates = derive({
    lanes: [{ ...ws, dims }],
    rows: rowsOf({ scenarios: { ws_c1: PLAN.scenarios.ws_c1 } }, dims),
  });
  assert.deepEqual(
    gates.map((g) => [g.key, g.dims]),
    [
      ['op_duration{scenario:ws_c1,payload:small}', { payload: 'small' }],
      ['setup_duration{scenario:ws_c1,phase:ws_upgrade}', {}],
      ['op_duration{scenario:ws_c1,payload:big}', { payload: 'big' }],
    ],
  );
});

test("overrides: plusMs adds to both budgets, p50Ms and p95Ms set them; each gate lists the overrides' reasons", () => {
  const plain = byKey(derive());
  const policy = {
    latency: LATENCY,
    scenarios: {
      'ws-vs-http': {
        overrides: [
          { where: { transport: 'ws', step: 'c1' }, plusMs: { p50: 7, p95: 9 }, reason: 'ws at c1 measured slower' },
          { where: { lane: 'http_fresh', profile: '3g', network: '3g' }, p95Ms: 2000, reason: 'fresh tail' },
          { where: { transport: 'ws', phase: 'ws_upgrade' }, metric: 'setup_duration', p50Ms: 999, reason: 'setup' },
        ],
      },
      // Another scenario's overrides do not apply.
      other: { overrides: [{ where: { transport: 'ws' }, p50Ms: 1, reason: 'another scenario' }] },
    },
  };
  const g = byKey(derive({ policy }));
  const ws1 = g['op_duration{scenario:ws_c1}'];
  assert.deepEqual(ws1.budget, { p50: plain[ws1.key].budget.p50 + 7, p95: plain[ws1.key].budget.p95 + 9 });
  assert.deepEqual(ws1.thresholds, [`p(50)<${ws1.budget.p50}`, `p(95)<${ws1.budget.p95}`]);
  assert.deepEqual(
    ws1.overrides.map((o) => o.reason),
    ['ws at c1 measured slower'],
  );
  assert.deepEqual(g['op_duration{scenario:ws_c4}'].budget, plain['op_duration{scenario:ws_c4}'].budget);
  const http = g['op_duration{scenario:http_fresh_c1}'];
  assert.deepEqual(http.budget, { p50: plain[http.key].budget.p50, p95: 2000 });
  const setup = g['setup_duration{scenario:ws_c1,phase:ws_upgrade}'];
  assert.equal(setup.budget.p50, 999);
  assert.deepEqual(setup.thresholds, ['p(50)<999']);
  assert.deepEqual(
    setup.overrides.map((o) => o.reason),
    ['setup'],
  );
});

test('a step with fewer than MIN_MEDIAN_SAMPLES operations is gated at the tail at its median too', () => {
  assert.equal(MIN_MEDIAN_SAMPLES, 3);
  // Two iterations of 4 s fit in 10 s, one operation of each: 2 a step.
  const slow = { ...ws, dims: [{}], iterationSeconds: 4 };
  const [g] = derive({ lanes: [slow], rows: [{ tags: { scenario: 'ws_c1' } }] });
  assert.equal(g.fewSamples, 2);
  assert.equal(g.budget.p50, g.budget.p95);
  assert.equal(g.budget.p95, g.modelBudget.p95);
  assert.ok(g.modelBudget.p50 < g.modelBudget.p95);
  // Three fit: a median.
  const [three] = derive({ lanes: [{ ...slow, iterationSeconds: 3 }], rows: [{ tags: { scenario: 'ws_c1' } }] });
  assert.equal(three.fewSamples, 0);
  assert.ok(three.budget.p50 < three.budget.p95);
  // An open step with under 2 arrivals a VU: the median is a first, cold operation.
  const open = {
    scenarios: {
      ws_o50: {
        exec: 'ws',
        executor: 'constant-arrival-rate',
        rate: 60,
        timeUnit: '1m',
        preAllocatedVUs: 8,
        tags: { transport: 'ws', tls: 'false', step: 'o50' },
      },
    },
    durations: { ws_o50: 10000 },
  };
  const [o] = derive({ plan: open, rows: [{ tags: { scenario: 'ws_o50' } }] });
  assert.equal(o.fewSamples, 1);
  assert.equal(o.budget.p50, o.budget.p95);
  // Polling lanes: their median is a poll's phase, always at the tail's budget.
  const poll = lane('http_poll', 'http-poll', false, { model });
  const pollPlan = { scenarios: { http_poll_c1: closed('httpPoll', 'http-poll', 'c1', 1) }, durations: {} };
  const [p] = derive({ plan: pollPlan, lanes: [poll], rows: [{ tags: { scenario: 'http_poll_c1' } }] });
  assert.equal(p.fewSamples, Infinity);
  assert.equal(p.budget.p50, p.budget.p95);
});

test("a step's concurrency from the plan's own count; a lane's atOnce for what shares the cores", () => {
  const plan = { ...PLAN, concurrency: { ws_c4: 100 } };
  const g = byKey(derive({ plan, unit: 'subscribers' }));
  const ws100 = g['op_duration{scenario:ws_c4}'];
  assert.equal(ws100.vus, 100);
  assert.equal(ws100.unit, 'subscribers');
  assert.equal(ws100.atOnce, 100);
  const one = byKey(derive({ plan, lanes: [{ ...ws, atOnce: 1 }, fresh] }))['op_duration{scenario:ws_c4}'];
  assert.equal(one.atOnce, 1);
  assert.equal(one.contentionMs, 0);
});

test('droppedLimit: a share of the planned arrivals, never below the floor', () => {
  assert.equal(droppedLimit({ droppedShare: 0.01, droppedFloor: 1 }, 36), 1);
  assert.equal(droppedLimit({ droppedShare: 0.01, droppedFloor: 1 }, 18800), 188);
  assert.equal(droppedLimit({ droppedShare: 0.01 }, 36), 0);
  // 1 % of 300 is 3, however the product rounds.
  assert.equal(droppedLimit({ droppedShare: 0.01 }, 300), 3);
  assert.equal(droppedLimit({ droppedShare: 0.1, droppedFloor: 50 }, 100), 50);
  // No open policy: 1 %, no floor.
  assert.equal(droppedLimit(undefined, 1000), 10);
});

const OPEN_PLAN = {
  workload: 'open',
  scenarios: {
    ws_o90: {
      exec: 'ws',
      executor: 'constant-arrival-rate',
      rate: 540,
      timeUnit: '1m',
      preAllocatedVUs: 4,
      maxVUs: 12,
      tags: { transport: 'ws', tls: 'false', step: 'o90' },
    },
    http_fresh_o90: {
      exec: 'httpFresh',
      executor: 'constant-arrival-rate',
      rate: 30,
      timeUnit: '1m',
      preAllocatedVUs: 2,
      maxVUs: 6,
      tags: { transport: 'http-fresh', tls: 'false', step: 'o90' },
    },
    sampler: { exec: 'sample', executor: 'constant-arrival-rate', rate: 60, tags: {} },
  },
  durations: { ws_o90: 20000, http_fresh_o90: 20000, sampler: 20000 },
  pools: { ws_o90: { worstSeconds: 1.2345, inFlight: 2.25 } },
};

test("droppedGates: each open step's dropped_iterations at most its limit; none for a closed workload", () => {
  const policy = { open: { droppedShare: 0.01, droppedFloor: 1 } };
  // 9 arrivals/s for 20 s: 180 planned, 1 % is 1.8 -> 1; 0.5/s: 10 planned -> the floor, 1.
  assert.deepEqual(droppedGates(policy, OPEN_PLAN), {
    'dropped_iterations{scenario:ws_o90}': ['count<=1'],
    'dropped_iterations{scenario:http_fresh_o90}': ['count<=1'],
  });
  assert.deepEqual(droppedGates({ open: { droppedShare: 0.05 } }, OPEN_PLAN), {
    'dropped_iterations{scenario:ws_o90}': ['count<=9'],
    'dropped_iterations{scenario:http_fresh_o90}': ['count<=0'],
  });
  assert.deepEqual(droppedGates(policy, { ...OPEN_PLAN, workload: 'closed' }), {});
  assert.deepEqual(droppedGates(policy, PLAN), {});
});

test('describeOpenStep: arrivals, the VU pool and what sized it, and the dropped-arrivals gate with its rule', () => {
  const policy = { open: { droppedShare: 0.01, droppedFloor: 1 } };
  assert.equal(
    describeOpenStep(policy, OPEN_PLAN, 'ws_o90'),
    'ws_o90: 9.0 arrivals/s for 20 s (180); VU pool 4 pre-allocated (every iteration at its worst, 1235 ms; 2.3 in flight at the median), 12 at most; dropped_iterations count<=1 (1 % of 180 is 1.8, floor 1)',
  );
  assert.equal(
    describeOpenStep({}, OPEN_PLAN, 'http_fresh_o90'),
    'http_fresh_o90: 0.5 arrivals/s for 20 s (10); VU pool 2 pre-allocated, 6 at most; dropped_iterations count<=0 (1 % of 10 is 0.1, floor 0)',
  );
});

// A gate as deriveGates makes it, with the parts describeGate reads.
const e = (ms, formula) => ({ ms, formula, setupMs: 0, roundTrips: 1 });
// The tail is the median's own operation (the same object) unless a test gives another.
const warm = e(307.3, 'R + server');
const gate = (more) => ({
  key: 'op_duration{scenario:ws_c1}',
  thresholds: ['p(50)<381', 'p(95)<1871'],
  expected: { p50: warm, p95: warm },
  vus: 1,
  overrides: [],
  contentionMs: 0,
  fewSamples: 0,
  ...more,
});

test('describeGate: the thresholds and the model behind them, and only what applies', () => {
  assert.equal(describeGate(gate()), 'op_duration{scenario:ws_c1} p(50)<381 p(95)<1871  (model R + server = 307.3 ms)');
  const tail = { p50: warm, p95: e(1210.62, '4R + server') };
  assert.equal(
    describeGate(gate({ expected: tail, vus: 4, contentionMs: 12.34, atOnce: 4, fewSamples: 2 })),
    "op_duration{scenario:ws_c1} p(50)<381 p(95)<1871  (model R + server = 307.3 ms; p95 of 4R + server = 1210.6 ms; 4 VUs; 4 at once share the cores: +12.3 ms; 2 operations a step at least: p50 at the tail's budget)",
  );
  assert.equal(
    describeGate(gate({ vus: 2.5, unit: 'subscribers', fewSamples: 1, contentionMs: 0.04 })),
    "op_duration{scenario:ws_c1} p(50)<381 p(95)<1871  (model R + server = 307.3 ms; 2.5 subscribers; 1 operation a step at least: p50 at the tail's budget)",
  );
  assert.equal(
    describeGate(gate({ fewSamples: Infinity, overrides: [{ reason: 'polls' }, { reason: 'measured' }] })),
    "op_duration{scenario:ws_c1} p(50)<381 p(95)<1871  (model R + server = 307.3 ms; a poll's phase: p50 at the tail's budget; override: polls; measured)",
  );
});

test('describeGate on derived gates: every gate named with its thresholds; set-up gates too', () => {
  const lines = derive().map(describeGate);
  assert.equal(lines.length, 5);
  for (const [line, g] of lines.map((l, i) => [l, derive()[i]]))
    assert.ok(line.startsWith(`${g.key} ${g.thresholds.join(' ')}  (model ${g.expected.p50.formula} = `), line);
  assert.match(lines[2], /; p95 of 4R \+ .*; 4 VUs\)$/);
  assert.match(
    lines[1],
    /^setup_duration\{scenario:ws_c1,phase:ws_upgrade\} p\(50\)<\d+ {2}\(model 2R \+ [^;]*; 1 connection a step at least: p50 at the tail's budget\)$/,
  );
  assert.match(
    lines[3],
    /^setup_duration\{scenario:ws_c4,phase:ws_upgrade\} p\(50\)<\d+ {2}\(model 2R \+ [^;]*; 4 VUs\)$/,
  );
});
