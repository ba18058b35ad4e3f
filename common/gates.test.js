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
  rowSamples,
  SAMPLE_FLOORS,
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
const ws = lane('ws', { model, setups: ['ws_upgrade'] });
const fresh = lane('http_fresh', { model });
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
  const coldWs = expectationsOf(lane('ws', { model: () => ({ ...model(), conn: 'cold' }) }), {}, link);
  assert.equal(coldWs.p50, coldWs.p95);
  assert.equal(coldWs.p50.ms, e.p95.ms);
  // A model that gives its median and tail operations itself.
  const own = expectationsOf(
    lane('ws', { model: () => ({ p50: { conn: 'warm', rounds: 2 }, p95: { conn: 'warm', rounds: 3 } }) }),
    {},
    link,
  );
  assert.deepEqual([own.p50.roundTrips, own.p95.roundTrips], [2, 3]);
  // The step's concurrency reaches the model.
  let seen;
  expectationsOf(lane('ws', { model: (d, l, step) => ((seen = step), model()) }), {}, link, { n: 8 });
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
  // 10 s of operations at their p50 budget under 3g (~380 ms) after the socket's set-up:
  // 23 a VU, a p50 at c1 (over the floor of 20) but no p95 (under 100); at c4 (wider budgets), 88, the same.
  const ws1 = g['op_duration{scenario:ws_c1}'];
  assert.ok(ws1.samples >= SAMPLE_FLOORS.p50 && ws1.samples < SAMPLE_FLOORS.p95, `${ws1.samples}`);
  assert.deepEqual(ws1.thresholds, [`p(50)<${ws1.budget.p50}`]);
  assert.equal(ws1.budget.p95, null);
  assert.match(ws1.verdicts.p95.why, /operations a step, under the p95 floor of 100/);
  const m1 = ws1.modelBudget;
  assert.ok(m1.p50 > ws1.expected.p50.ms && m1.p95 > ws1.expected.p95.ms, JSON.stringify(m1));
  // k6 times WebSocket operations in whole ms: their budgets sit 1 above a multiple of 5.
  assert.deepEqual([m1.p50 % 5, m1.p95 % 5], [1, 1]);
  const http = g['op_duration{scenario:http_fresh_c1}'];
  assert.deepEqual([http.modelBudget.p50 % 5, http.modelBudget.p95 % 5], [0, 0]);
  // 4 VUs add stepMs x log2(4) to each budget.
  const ws4 = g['op_duration{scenario:ws_c4}'];
  assert.deepEqual([ws1.samples, ws4.samples], [23, 88]);
  assert.deepEqual(ws4.thresholds, [`p(50)<${ws4.budget.p50}`]);
  assert.equal(ws4.modelBudget.p50 - m1.p50, 2 * LATENCY.stepMs.p50);
  assert.equal(ws4.modelBudget.p95 - m1.p95, 2 * LATENCY.stepMs.p95);
  // 20 s hold both at c4: 188.
  const long = byKey(derive({ plan: { ...PLAN, durations: { ...PLAN.durations, ws_c4: 20000 } } }));
  const ws4long = long['op_duration{scenario:ws_c4}'];
  assert.ok(ws4long.samples >= SAMPLE_FLOORS.p95, `${ws4long.samples}`);
  assert.deepEqual(ws4long.thresholds, [`p(50)<${ws4long.budget.p50}`, `p(95)<${ws4long.budget.p95}`]);
  // A set-up phase: 2 R (TCP, upgrade) and its bytes, measured once a connection: a kept
  // lane's step opens one a VU, too few for a median (1 at c1, 4 at c4): not gated.
  const setup = g['setup_duration{scenario:ws_c1,phase:ws_upgrade}'];
  assert.equal(setup.expected.p50.roundTrips, 2);
  assert.equal(setup.expected.p50, setup.expected.p95);
  assert.deepEqual([setup.samples, setup.thresholds, setup.budget.p50], [1, [], null]);
  const setup4 = g['setup_duration{scenario:ws_c4,phase:ws_upgrade}'];
  assert.deepEqual([setup4.samples, setup4.thresholds], [4, []]);
  // Only gated rows reach k6.
  assert.deepEqual(
    gateThresholds(gates),
    Object.fromEntries(gates.filter((x) => x.thresholds.length).map((x) => [x.key, x.thresholds])),
  );
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
  const planBudget = (k) => plain[k].modelBudget;
  assert.deepEqual(ws1.modelBudget, { p50: planBudget(ws1.key).p50 + 7, p95: planBudget(ws1.key).p95 + 9 });
  assert.deepEqual(ws1.thresholds, [`p(50)<${ws1.modelBudget.p50}`]);
  assert.deepEqual(
    ws1.overrides.map((o) => o.reason),
    ['ws at c1 measured slower'],
  );
  assert.deepEqual(g['op_duration{scenario:ws_c4}'].budget, plain['op_duration{scenario:ws_c4}'].budget);
  const http = g['op_duration{scenario:http_fresh_c1}'];
  assert.deepEqual(http.modelBudget, { p50: planBudget(http.key).p50, p95: 2000 });
  const setup = g['setup_duration{scenario:ws_c1,phase:ws_upgrade}'];
  assert.equal(setup.modelBudget.p50, 999);
  assert.deepEqual(
    setup.overrides.map((o) => o.reason),
    ['setup'],
  );
});

test('the sample floors: a percentile is gated only where its step holds enough operations', () => {
  assert.deepEqual(SAMPLE_FLOORS, { p50: 20, p95: 100 });
  const sc = closed('ws', 'ws', 'c1', 1);
  // By hand: 10 s steps of 400 ms iterations: 25 a VU; a lane running each dim twice: 50.
  assert.equal(rowSamples(ws, sc, 10000, 1, {}, { iterationMs: 400 }), 25);
  assert.equal(rowSamples({ ...ws, opsPerIteration: 2 }, sc, 10000, 1, {}, { iterationMs: 400 }), 50);
  assert.equal(rowSamples(ws, closed('ws', 'ws', 'c4', 4), 10000, 4, {}, { iterationMs: 400 }), 100);
  // The VU's first iteration always runs, however long.
  assert.equal(rowSamples(ws, sc, 1000, 1, {}, { iterationMs: 4000 }), 1);
  // A kept connection's cold row: its first operation, one a VU; a lane opening its
  // connections every iteration: one an iteration.
  assert.equal(rowSamples(ws, closed('ws', 'ws', 'c4', 4), 10000, 4, { conn: 'cold' }, { iterationMs: 400 }), 4);
  assert.equal(
    rowSamples({ ...ws, coldEachIteration: true }, sc, 10000, 1, { conn: 'cold' }, { iterationMs: 400 }),
    25,
  );
  // A fixed amount of work: its iterations.
  const shared = { ...sc, executor: 'shared-iterations', iterations: 30 };
  assert.equal(rowSamples(ws, shared, 10000, 1, {}, { iterationMs: 400 }), 30);
  // The spec counts itself (fan-out's events), or the plan says nothing (a test's lane).
  assert.equal(rowSamples({ ...ws, samples: (d, c) => c.vus * 7 }, sc, 10000, 3), 21);
  assert.equal(rowSamples(ws, { ...sc, executor: 'per-vu-iterations' }, 10000, 1, {}, { iterationMs: 400 }), Infinity);

  // Derived: a slow lane's thin step has no gate at all, and says why.
  const slow = lane('ws', { model: () => ({ ...model(), serverMs: 2000 }) });
  const [g] = derive({ lanes: [slow], rows: [{ tags: { scenario: 'ws_c1' } }] });
  assert.ok(g.samples < SAMPLE_FLOORS.p50, `${g.samples}`);
  assert.deepEqual([g.thresholds, g.budget], [[], { p50: null, p95: null }]);
  assert.match(
    describeGate(g),
    /^op_duration\{scenario:ws_c1\} not gated {2}\(model .*; p50 not gated: \d operations a step, under the p50 floor of 20; p95 not gated: .*\)$/,
  );
  assert.deepEqual(gateThresholds([g]), {});
  // The smoke level checks plumbing, not speed: every row is gated, a thin median at its tail's budget.
  const [s] = derive({ plan: { ...PLAN, level: 'smoke' }, lanes: [slow], rows: [{ tags: { scenario: 'ws_c1' } }] });
  assert.deepEqual(s.thresholds, [`p(50)<${s.modelBudget.p95}`, `p(95)<${s.modelBudget.p95}`]);
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
  assert.deepEqual([o.samples, o.thresholds], [1, []]);
  // Polling lanes: their median is a poll's phase: never gated (at smoke: at the tail's budget).
  const poll = lane('http_poll', { model });
  const pollPlan = { scenarios: { http_poll_c1: closed('httpPoll', 'http-poll', 'c1', 1) }, durations: {} };
  const [p] = derive({ plan: pollPlan, lanes: [poll], rows: [{ tags: { scenario: 'http_poll_c1' } }] });
  assert.equal(p.verdicts.p50.gated, false);
  assert.match(p.verdicts.p50.why, /a poll's phase/);
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
  ...more,
});

test('describeGate: the thresholds and the model behind them, and only what applies', () => {
  assert.equal(describeGate(gate()), 'op_duration{scenario:ws_c1} p(50)<381 p(95)<1871  (model R + server = 307.3 ms)');
  const tail = { p50: warm, p95: e(1210.62, '4R + server') };
  assert.equal(
    describeGate(gate({ expected: tail, vus: 4, contentionMs: 12.34, atOnce: 4 })),
    'op_duration{scenario:ws_c1} p(50)<381 p(95)<1871  (model R + server = 307.3 ms; p95 of 4R + server = 1210.6 ms; 4 VUs; 4 at once share the cores: +12.3 ms)',
  );
  assert.equal(
    describeGate(
      gate({
        thresholds: ['p(50)<381'],
        vus: 2.5,
        unit: 'subscribers',
        contentionMs: 0.04,
        verdicts: {
          p50: { gated: true, why: null },
          p95: { gated: false, why: '40 operations a step, under the p95 floor of 100' },
        },
      }),
    ),
    'op_duration{scenario:ws_c1} p(50)<381  (model R + server = 307.3 ms; 2.5 subscribers; p95 not gated: 40 operations a step, under the p95 floor of 100)',
  );
  assert.equal(
    describeGate(
      gate({
        thresholds: [],
        verdicts: { p50: { gated: false, why: "a poll's phase" }, p95: { gated: false, why: 'few' } },
        overrides: [{ reason: 'polls' }, { reason: 'measured' }],
      }),
    ),
    "op_duration{scenario:ws_c1} not gated  (model R + server = 307.3 ms; p50 not gated: a poll's phase; p95 not gated: few; override: polls; measured)",
  );
});

test('describeGate on derived gates: every gate named with its thresholds; set-up gates too', () => {
  const lines = derive().map(describeGate);
  assert.equal(lines.length, 5);
  for (const [line, g] of lines.map((l, i) => [l, derive()[i]]))
    assert.ok(
      line.startsWith(`${g.key} ${g.thresholds.join(' ') || 'not gated'}  (model ${g.expected.p50.formula} = `),
      line,
    );
  assert.match(
    lines[2],
    /; p95 of 4R \+ .*; 4 VUs; p95 not gated: 88 operations a step, under the p95 floor of 100\)$/,
  );
  assert.match(
    lines[1],
    /^setup_duration\{scenario:ws_c1,phase:ws_upgrade\} not gated {2}\(model 2R \+ [^;]*; p50 not gated: 1 operation a step, under the p50 floor of 20\)$/,
  );
});
