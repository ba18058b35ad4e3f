// A run's results as data (common/results.js), from k6 end-of-test data built by hand
// the way scenarios/lib/summary.js hands it over: summary.json's document (run facts,
// steps, rows with their gates and model, thresholds with what was observed, checks,
// totals, failed checks and first errors, the verdict), the gates re-read after a
// merge, and its Markdown and JUnit renderings; and the small readers and formatters
// every output shares.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addFailedChecks,
  buildSummary,
  cell,
  cellKey,
  clock,
  coversWhole,
  errorLines,
  failedChecksOf,
  FILES,
  FIRST_ERROR_CHECK,
  firstErrorsOf,
  formatMs,
  formatRate,
  formatValue,
  junitDocument,
  junitSuite,
  junitSuiteOf,
  outcomeLine,
  parseKey,
  parseThreshold,
  refreshGates,
  rowLabel,
  SCHEMA_VERSION,
  seconds,
  segmentRange,
  statsOf,
  statValue,
  thresholdHolds,
  toJunit,
  toMarkdown,
} from './results.js';
import { DEFAULT_COLUMNS, setupColumn } from './scenario.js';

// ---- k6's end-of-test data ----

const trend = (med, more = {}, thresholds) => ({
  type: 'trend',
  contains: 'time',
  values: {
    avg: med + 5,
    min: med - 10,
    med,
    max: med + 100,
    'p(90)': med + 40,
    'p(95)': med + 50,
    'p(99)': med + 90,
    count: 40,
    ...more,
  },
  ...(thresholds ? { thresholds } : {}),
});
const rate = (passes, fails, thresholds) => ({
  type: 'rate',
  values: { rate: passes + fails ? passes / (passes + fails) : 0, passes, fails },
  ...(thresholds ? { thresholds } : {}),
});
const counter = (count) => ({ type: 'counter', values: { count, rate: count / 25 } });
const ok = (...exprs) => Object.fromEntries(exprs.map((e) => [e, { ok: true }]));
const failed = (...exprs) => Object.fromEntries(exprs.map((e) => [e, { ok: false }]));

const WS_SETUP = 'setup_duration{scenario:ws_c1,phase:ws_upgrade}';
const DATA = {
  state: { isStdOutTTY: false, testRunDurationMs: 25000 },
  root_group: {
    name: '',
    path: '',
    checks: [
      { name: 'status 200', passes: 0, fails: 2 },
      { name: 'right shape and count', passes: 0, fails: 0 },
      { name: `${FIRST_ERROR_CHECK}query: HTTP 502 Bad Gateway: upstream: down`, passes: 0, fails: 1 },
    ],
    groups: [
      {
        name: 'ws',
        checks: [
          { name: 'status 200', passes: 0, fails: 1 },
          { name: `${FIRST_ERROR_CHECK}query: a later error of the same operation`, passes: 0, fails: 1 },
          { name: `${FIRST_ERROR_CHECK}subscribe`, passes: 0, fails: 1 },
        ],
        groups: [],
      },
    ],
  },
  metrics: {
    'op_duration{scenario:ws_c1}': trend(310, {}, ok('p(50)<381', 'p(95)<1871')),
    'op_failed{scenario:ws_c1}': rate(0, 40),
    'iterations{scenario:ws_c1}': counter(40),
    'data_sent{scenario:ws_c1}': counter(12000),
    'data_received{scenario:ws_c1}': counter(34000),
    [WS_SETUP]: trend(605, { count: 1 }, ok('p(50)<716')),
    'server_duration{scenario:ws_c1,part:total}': trend(2, {}, ok('max>=0')),
    'op_duration{scenario:https_fresh_c1,payload:big}': trend(940, {}, failed('p(95)<975')),
    'op_failed{scenario:https_fresh_c1,payload:big}': rate(3, 37),
    'op_duration{scenario:https_fresh_c1,payload:small}': {
      type: 'trend',
      values: { count: 0 },
      thresholds: ok('p(95)<975'),
    },
    'dropped_iterations{scenario:https_fresh_c1}': counter(2),
    iterations: counter(80),
    dropped_iterations: counter(2),
    data_sent: counter(20000),
    data_received: counter(90000),
    checks: rate(0, 5),
    op_failed: rate(3, 77, failed('rate<0.01')),
    vus: { type: 'gauge', values: { value: 1, min: 1, max: 2 } },
    // A threshold that is no k6 expression this pack knows: kept, without a value.
    delivery_lag: { type: 'trend', values: { count: 0 }, thresholds: { 'p95 < 3': { ok: false } } },
  },
};

// ---- what handleSummary knows about the run ----

const model = (ms, setupMs, roundTrips, formula) => ({ ms, setupMs, roundTrips, formula });
const WS_WARM = model(307.30041, 0, 1, 'R + server');
const WS_SETUP_MODEL = model(603.32375, 603.32375, 2, '2R + set-up 237/171 B/B');
const GATES = [
  {
    key: 'op_duration{scenario:ws_c1}',
    metric: 'op_duration',
    which: 'op',
    expected: { p50: WS_WARM, p95: model(1210.62375, 903.32375, 4, '4R + server') },
    budget: { p50: 381, p95: 1871 },
    overrides: [],
    thresholds: ['p(50)<381', 'p(95)<1871'],
  },
  {
    key: WS_SETUP,
    metric: 'setup_duration',
    which: 'ws_upgrade',
    expected: { p50: WS_SETUP_MODEL, p95: WS_SETUP_MODEL },
    budget: { p50: 716, p95: 956 },
    overrides: [{ reason: 'an upgrade measured slower' }],
    thresholds: ['p(50)<716'],
  },
  {
    key: 'op_duration{scenario:https_fresh_c1,payload:big}',
    metric: 'op_duration',
    which: 'op',
    expected: { p50: model(912.5, 600, 3, '3R + server'), p95: model(912.5, 600, 3, '3R + server') },
    budget: { p50: 1060, p95: 975 },
    overrides: [{ reason: 'big answers' }],
    thresholds: ['p(50)<1060', 'p(95)<975'],
  },
];
const CTX = {
  scenario: 'ws-vs-http',
  profile: {
    name: '3g+flaky',
    network: { name: '3g', description: 'Mobile 3G', rttMs: 300, jitterMs: 0, downKbps: 1600, upKbps: 768 },
    modifiers: [{ name: 'loss1' }],
    faults: [{ name: 'flaky', toxics: [] }],
  },
  level: 'smoke',
  plan: {
    steps: 1,
    stepSeconds: 10,
    scenarios: {
      ws_c1: { executor: 'constant-vus', vus: 1, duration: '10s', tags: { transport: 'ws', tls: 'false', step: 'c1' } },
      https_fresh_c1: {
        executor: 'per-vu-iterations',
        vus: 1,
        iterations: 20,
        maxDuration: '1m30.5s',
        startTime: '12s',
        tags: { transport: 'http-fresh', tls: 'true', step: 'c1', variant: 'typed' },
      },
      sampler: { executor: 'constant-vus', vus: 1, duration: '25s', tags: {} },
    },
  },
  rows: [
    { tags: { scenario: 'ws_c1' } },
    { tags: { scenario: 'https_fresh_c1', payload: 'small' } },
    { tags: { scenario: 'https_fresh_c1', payload: 'big' } },
  ],
  columns: [...DEFAULT_COLUMNS, setupColumn('upgrade p50', 'ws_upgrade')],
  observers: ['server_duration{scenario:ws_c1,part:total}'],
  latencyMetric: 'op_duration',
  gates: GATES,
  verdict: { where: {} },
  recording: { metrics: 'full', setup: true, serverTiming: { every: 8, parts: ['total'] } },
  failureLimit: 0.01,
  thresholdsFile: 'thresholds.json',
  hints: { note: 'x' },
  meta: { k6Version: 'v1.8.1', gitCommit: '0123456789abcdef0123', samples: 'samples.json.gz' },
};
const NOW = Date.parse('2026-11-26T10:00:25.000Z');
const build = () => buildSummary(DATA, CTX, NOW);

test('the run: what ran, under which profile and load, when, with what', () => {
  const doc = build();
  assert.equal(doc.schemaVersion, SCHEMA_VERSION);
  assert.deepEqual(doc.run, {
    scenario: 'ws-vs-http',
    profile: '3g+flaky',
    // The network's figures, not its description.
    network: { name: '3g', rttMs: 300, jitterMs: 0, downKbps: 1600, upKbps: 768 },
    modifiers: ['loss1'],
    faults: ['flaky'],
    load: 'smoke',
    workload: 'closed',
    steps: 1,
    stepSeconds: 10,
    latencyMetric: 'op_duration',
    k6Version: 'v1.8.1',
    // No start handed over: the end less the run's duration.
    startedAt: '2026-11-26T10:00:00.000Z',
    endedAt: '2026-11-26T10:00:25.000Z',
    durationMs: 25000,
    gitCommit: '0123456789abcdef0123',
    thresholdsFile: 'thresholds.json',
    executionSegment: null,
    executionSegmentSequence: null,
    samples: 'samples.json.gz',
    histograms: null,
    hints: { note: 'x' },
    verdict: { where: {} },
    failureLimit: 0.01,
    recording: CTX.recording,
    machine: null,
  });
  const given = buildSummary(DATA, { ...CTX, meta: { startedAt: '2026-11-26T09:59:59.000Z' } }, NOW).run;
  assert.equal(given.startedAt, '2026-11-26T09:59:59.000Z');
  assert.equal(given.k6Version, null);
  assert.equal(buildSummary({ ...DATA, state: undefined }, CTX, NOW).run.startedAt, null);
});

test('steps: one per k6 scenario with a transport, its plan and its figures; set-up gates with their model', () => {
  const [ws, https] = build().steps;
  assert.equal(build().steps.length, 2, 'the sampler has no transport: no step');
  assert.deepEqual(ws, {
    scenario: 'ws_c1',
    lane: 'ws',
    transport: 'ws',
    tls: false,
    step: 'c1',
    executor: 'constant-vus',
    vus: 1,
    startSeconds: 0,
    durationSeconds: 10,
    latency: {
      key: 'op_duration{scenario:ws_c1}',
      type: 'trend',
      count: 40,
      min: 300,
      max: 410,
      avg: 315,
      p50: 310,
      p90: 350,
      p95: 360,
      p99: 400,
    },
    failures: { key: 'op_failed{scenario:ws_c1}', type: 'rate', rate: 0, count: 0, total: 40 },
    iterations: 40,
    droppedIterations: 0,
    bytesSent: 12000,
    bytesReceived: 34000,
    setupGates: [
      {
        phase: 'ws_upgrade',
        key: WS_SETUP,
        model: {
          p50: { ms: 603.324, setupMs: 603.324, roundTrips: 2, formula: '2R + set-up 237/171 B/B' },
          p95: { ms: 603.324, setupMs: 603.324, roundTrips: 2, formula: '2R + set-up 237/171 B/B' },
        },
        budget: { p50: 716, p95: 956 },
        gate: { ok: true, thresholds: ['p(50)<716'], overrides: ['an upgrade measured slower'] },
      },
    ],
    setupGateOk: true,
  });
  // The lane's name is the scenario's without its step; a variant and TLS from the tags;
  // planned iterations, and the max duration when there is no duration.
  assert.equal(https.lane, 'https_fresh');
  assert.equal(https.tls, true);
  assert.equal(https.variant, 'typed');
  assert.equal(https.plannedIterations, 20);
  assert.equal(https.startSeconds, 12);
  assert.equal(https.durationSeconds, 90.5);
  assert.equal(https.droppedIterations, 2);
  // No sub-metric for the lane as a whole: an empty cell, not zeros.
  assert.deepEqual(https.latency, { key: 'op_duration{scenario:https_fresh_c1}', type: 'trend', empty: true });
  assert.deepEqual(https.failures, { key: 'op_failed{scenario:https_fresh_c1}', type: 'rate', empty: true });
  assert.equal(https.setupGates, undefined);
});

test("rows: one per row of the plan, its columns' cells, and its gate with the model behind it", () => {
  const [ws, small, big] = build().rows;
  assert.deepEqual(ws, {
    id: 'ws_c1',
    scenario: 'ws_c1',
    lane: 'ws',
    transport: 'ws',
    tls: false,
    step: 'c1',
    vus: 1,
    dims: {},
    latency: build().steps[0].latency,
    failures: build().steps[0].failures,
    metrics: {
      'server_duration{part:total}': {
        key: 'server_duration{scenario:ws_c1,part:total}',
        type: 'trend',
        count: 40,
        min: -8,
        max: 102,
        avg: 7,
        p50: 2,
        p90: 42,
        p95: 52,
        p99: 92,
      },
      // A lane-wide column: the step's set-up, whatever the row's dims.
      'setup_duration{phase:ws_upgrade}': { ...statsOf(DATA.metrics[WS_SETUP]), key: WS_SETUP, type: 'trend' },
    },
    model: {
      p50: { ms: 307.3, setupMs: 0, roundTrips: 1, formula: 'R + server' },
      p95: { ms: 1210.624, setupMs: 903.324, roundTrips: 4, formula: '4R + server' },
    },
    budget: { p50: 381, p95: 1871 },
    gate: { ok: true, thresholds: ['p(50)<381', 'p(95)<1871'], overrides: [] },
  });
  assert.equal(small.id, 'https_fresh_c1 payload:small');
  assert.deepEqual(small.dims, { payload: 'small' });
  // A row without samples: an empty latency cell; no gate given for it: none in the row.
  assert.deepEqual(small.latency, {
    key: 'op_duration{scenario:https_fresh_c1,payload:small}',
    type: 'trend',
    empty: true,
  });
  assert.equal(small.gate, undefined);
  assert.equal(big.failures.rate, 3 / 40);
  assert.deepEqual(big.gate, { ok: false, thresholds: ['p(50)<1060', 'p(95)<975'], overrides: ['big answers'] });
  assert.deepEqual(big.budget, { p50: 1060, p95: 975 });
  // A column k6 reported nothing for: an empty cell (its type unknown: no metric to read it from).
  const none = big.metrics['setup_duration{phase:ws_upgrade}'];
  assert.deepEqual([none.key, none.empty], ['setup_duration{scenario:https_fresh_c1,phase:ws_upgrade}', true]);
});

test('thresholds: every gated sub-metric but the observers, sorted, with the value its stat observed', () => {
  assert.deepEqual(build().thresholds, [
    { key: 'delivery_lag', threshold: 'p95 < 3', ok: false, stat: null, observed: null },
    {
      key: 'op_duration{scenario:https_fresh_c1,payload:big}',
      threshold: 'p(95)<975',
      ok: false,
      stat: 'p(95)',
      observed: 990,
    },
    {
      key: 'op_duration{scenario:https_fresh_c1,payload:small}',
      threshold: 'p(95)<975',
      ok: true,
      stat: 'p(95)',
      observed: null,
    },
    // p(50) is k6's med.
    { key: 'op_duration{scenario:ws_c1}', threshold: 'p(50)<381', ok: true, stat: 'p(50)', observed: 310 },
    { key: 'op_duration{scenario:ws_c1}', threshold: 'p(95)<1871', ok: true, stat: 'p(95)', observed: 360 },
    { key: 'op_failed', threshold: 'rate<0.01', ok: false, stat: 'rate', observed: 3 / 80 },
    { key: WS_SETUP, threshold: 'p(50)<716', ok: true, stat: 'p(50)', observed: 605 },
  ]);
});

test('checks, totals, failed checks and first errors', () => {
  const doc = build();
  assert.deepEqual(doc.checks, { passes: 0, fails: 5, rate: 0 });
  assert.deepEqual(doc.totals, {
    iterations: 80,
    droppedIterations: 2,
    bytesSent: 20000,
    bytesReceived: 90000,
    operations: 80,
    failedOperations: 3,
  });
  // Summed by name over the groups; first errors apart; a check that never failed is not one.
  assert.deepEqual(doc.failedChecks, [{ name: 'status 200', fails: 3 }]);
  assert.deepEqual(doc.errors, [
    { op: 'query', message: 'HTTP 502 Bad Gateway: upstream: down' },
    { op: 'subscribe', message: '' },
  ]);
  const { checks, op_failed, ...metrics } = DATA.metrics;
  const bare = buildSummary({ metrics }, CTX, NOW);
  assert.deepEqual(bare.checks, { passes: 0, fails: 0, rate: null });
  assert.deepEqual([bare.totals.operations, bare.totals.failedOperations], [0, 0]);
  assert.deepEqual(bare.failedChecks, []);
  assert.equal(bare.errors, undefined);
  assert.equal(bare.run.durationMs, null);
});

test("the verdict is computed from the document's rows and gates", () => {
  const doc = build();
  assert.deepEqual(doc.verdict.lines, [
    '3g+flaky (R 300 ms) p50 at c1: ws 310 ms; https fresh 940 ms.',
    'Against https fresh: ws saves 630 ms (600 ms of it connection set-up by the model: 2 RTT).',
    'Held the budget up to: ws 1 VU, https fresh none (failed at its first step).',
  ]);
});

test('refreshGates: the rows and set-up gates follow thresholds evaluated again, in new objects', () => {
  const doc = build();
  const before = { gate: doc.rows[0].gate, setup: doc.steps[0].setupGates };
  const t = (key, threshold) => doc.thresholds.find((x) => x.key === key && x.threshold === threshold);
  t('op_duration{scenario:ws_c1}', 'p(95)<1871').ok = false;
  t(WS_SETUP, 'p(50)<716').ok = false;
  t('op_duration{scenario:https_fresh_c1,payload:big}', 'p(95)<975').ok = true;
  refreshGates(doc);
  assert.equal(doc.rows[0].gate.ok, false);
  assert.equal(doc.rows[2].gate.ok, true);
  assert.equal(doc.steps[0].setupGates[0].gate.ok, false);
  assert.equal(doc.steps[0].setupGateOk, false);
  // https fresh still failed 7.5 % of its operations at c1, whatever its latency gate says.
  assert.equal(
    doc.verdict.lines.at(-1),
    'Held the budget up to: ws none (failed at its first step), https fresh none (failed at its first step).',
  );
  // The parts' objects keep their own outcomes.
  assert.equal(before.gate.ok, true);
  assert.equal(before.setup[0].gate.ok, true);
});

test('toMarkdown: the verdict in the heading, the first errors, the facts, the rows and the thresholds', () => {
  const md = toMarkdown(build());
  const lines = md.split('\n');
  assert.equal(lines[0], '### k6pack ws-vs-http: profile 3g+flaky, load smoke — ❌ 3 of 7 thresholds failed');
  assert.ok(md.endsWith('</details>\n'));
  assert.ok(lines.includes('> 3g+flaky (R 300 ms) p50 at c1: ws 310 ms; https fresh 940 ms.'));
  assert.ok(lines.includes('> First error of query: HTTP 502 Bad Gateway: upstream: down'));
  assert.ok(
    lines.includes(
      'k6 v1.8.1 · commit 0123456789ab · 2026-11-26T10:00:00.000Z → 2026-11-26T10:00:25.000Z · thresholds: thresholds.json',
    ),
  );
  assert.ok(lines.includes('| ws tls=false | c1 | 40 | 310 ms | 360 ms | 400 ms | 0.00% | 307 ms | 381 / 1871 ms |'));
  // A failed gate is marked; the row without samples is left out.
  assert.ok(
    lines.includes(
      '| http-fresh tls=true typed payload:big | c1 | 40 | 940 ms | 990 ms | 1030 ms | 7.50% | 913 ms | ❌ 1060 / 975 ms |',
    ),
  );
  assert.ok(!lines.some((l) => l.startsWith('| http-fresh tls=true typed payload:small')));
  assert.ok(
    lines.includes(
      'latency: op_duration; operations 80, failed 3 (3.75%); failed checks: status 200 x3; dropped iterations 2',
    ),
  );
  assert.ok(
    lines.includes(
      'metrics: full: op_duration and op_failed for every operation, set-up phases, server time (total) from one operation in 8 of each VU per step (sampled: its 1st, 9th, 17th, ...)',
    ),
  );
  const failedAt = lines.indexOf('**Failed thresholds**');
  assert.deepEqual(lines.slice(failedAt + 2, failedAt + 7), [
    '| | metric | threshold | observed |',
    '|---|---|---|--:|',
    '| ❌ | `delivery_lag` | `p95 < 3` | - |',
    '| ❌ | `op_duration{scenario:https_fresh_c1,payload:big}` | `p(95)<975` | 990 |',
    '| ❌ | `op_failed` | `rate<0.01` | 0.04 |',
  ]);
  assert.ok(lines.includes('<details><summary>4 passed thresholds</summary>'));
  assert.ok(lines.includes('| ✅ | `op_duration{scenario:ws_c1}` | `p(50)<381` | 310 |'));
});

test('toMarkdown: a run that passed, a merged one, and pipes in labels escaped', () => {
  const doc = build();
  doc.thresholds = doc.thresholds.filter((t) => t.ok);
  doc.run.merged = { parts: [{}, {}, {}], kind: 'segments', method: 'hdr' };
  doc.run.executionSegment = '0:1/2';
  doc.run.recording = null;
  delete doc.errors;
  doc.verdict = null;
  doc.rows[0].dims = { query: 'a|b' };
  const md = toMarkdown(doc);
  const lines = md.split('\n');
  assert.equal(lines[0], '### k6pack ws-vs-http: profile 3g+flaky, load smoke — ✅ 4 thresholds passed');
  assert.match(md, / · segment 0:1\/2 · merged from 3 runs \(segments; percentiles hdr\) · /);
  assert.ok(md.includes('| ws tls=false query:a\\|b | c1 |'), md);
  assert.ok(!md.includes('**Failed thresholds**'));
  assert.ok(!md.includes('> '));
  assert.ok(!md.includes('metrics: full'));
  doc.run.merged.method = undefined;
  assert.match(toMarkdown(doc), /merged from 3 runs \(segments; percentiles exact\)/);
});

test('toJunit: one test case per threshold, a failure saying what was observed, XML escaped', () => {
  const xml = toJunit(build());
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n<testsuite '));
  assert.ok(xml.endsWith('</testsuite>\n</testsuites>\n'));
  assert.match(xml, /<testsuite name="ws-vs-http \(3g\+flaky\)" tests="7" failures="3" errors="0" time="25\.000">/);
  assert.ok(
    xml.includes('<testcase name="op_duration{scenario:ws_c1} p(50)&lt;381" classname="k6pack.ws-vs-http.3g+flaky"/>'),
  );
  assert.ok(
    xml.includes(
      '<testcase name="op_failed rate&lt;0.01" classname="k6pack.ws-vs-http.3g+flaky"><failure message="op_failed: rate=0.04, threshold rate&lt;0.01" type="threshold">op_failed: rate=0.04, threshold rate&lt;0.01</failure></testcase>',
    ),
  );
  assert.ok(xml.includes('<failure message="delivery_lag: no value, threshold p95 &lt; 3" type="threshold">'));
  assert.equal(junitDocument([junitSuiteOf(build())]), xml);
});

test('junitSuite and junitDocument: passed, failed and errored cases; no time when none is known', () => {
  const suite = junitSuite({
    name: 'gate <lan & 3g>',
    classname: "k6pack.gate.it's",
    cases: [
      { name: 'a "quoted" case' },
      { name: 'b', failure: 'p(95)=400 > 300' },
      { name: 'c', error: 'k6 exited 107' },
    ],
    seconds: 0,
  });
  assert.equal(
    suite,
    [
      '<testsuite name="gate &lt;lan &amp; 3g&gt;" tests="3" failures="1" errors="1">',
      '  <testcase name="a &quot;quoted&quot; case" classname="k6pack.gate.it&apos;s"/>',
      '  <testcase name="b" classname="k6pack.gate.it&apos;s"><failure message="p(95)=400 &gt; 300" type="threshold">p(95)=400 &gt; 300</failure></testcase>',
      '  <testcase name="c" classname="k6pack.gate.it&apos;s"><error message="k6 exited 107" type="run">k6 exited 107</error></testcase>',
      '</testsuite>',
    ].join('\n'),
  );
  assert.match(
    junitSuite({ name: 'x', classname: 'y', cases: [], seconds: 1.23456 }),
    /^<testsuite name="x" tests="0" failures="0" errors="0" time="1\.235">\n\n<\/testsuite>$/,
  );
  assert.equal(
    junitDocument(['<a/>', '<b/>']),
    '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n<a/>\n<b/>\n</testsuites>\n',
  );
});

test('first errors and failed checks from nested groups; failed checks added up over documents', () => {
  assert.deepEqual(firstErrorsOf(DATA.root_group), build().errors);
  assert.deepEqual(firstErrorsOf(undefined), []);
  assert.deepEqual(failedChecksOf({ checks: [], groups: [{ checks: [{ name: 'x', fails: 2 }] }] }), [
    { name: 'x', fails: 2 },
  ]);
  assert.deepEqual(failedChecksOf(null), []);
  assert.deepEqual(
    addFailedChecks([
      [
        { name: 'status 200', fails: 3 },
        { name: 'shape', fails: 1 },
      ],
      undefined,
      [{ name: 'status 200', fails: 2 }],
    ]),
    [
      { name: 'status 200', fails: 5 },
      { name: 'shape', fails: 1 },
    ],
  );
});

test('outcomeLine: operations and failures, or the checks of a document without operations', () => {
  assert.equal(
    outcomeLine({
      totals: { operations: 2890, failedOperations: 3 },
      failedChecks: [
        { name: 'status 200', fails: 2 },
        { name: 'right shape and count', fails: 1 },
      ],
    }),
    'operations 2890, failed 3 (0.10%); failed checks: status 200 x2, right shape and count x1',
  );
  assert.equal(outcomeLine({ totals: { operations: 0 } }), 'operations 0, failed 0');
  assert.equal(outcomeLine({ totals: {}, checks: { rate: 0.995, passes: 199, fails: 1 } }), 'checks 99.50% of 200');
});

test("cellKey and parseKey: k6's sub-metric keys both ways", () => {
  assert.equal(cellKey('op_duration'), 'op_duration');
  assert.equal(cellKey('op_duration', {}), 'op_duration');
  const key = cellKey('op_duration', { scenario: 'ws_c1', payload: 'big' });
  assert.equal(key, 'op_duration{scenario:ws_c1,payload:big}');
  assert.deepEqual(parseKey(key), { metric: 'op_duration', tags: { scenario: 'ws_c1', payload: 'big' } });
  assert.deepEqual(parseKey('op_duration{ scenario: "ws_c1" , url:http://x:1/a}'), {
    metric: 'op_duration',
    tags: { scenario: 'ws_c1', url: 'http://x:1/a' },
  });
  assert.deepEqual(parseKey('iterations'), { metric: 'iterations', tags: {} });
  assert.deepEqual(parseKey('{bad}'), { metric: '{bad}', tags: {} });
});

test("statValue and statsOf: k6's values in the schema's names; nothing for no samples", () => {
  assert.equal(statValue({ med: 5 }, 'p(50)'), 5);
  assert.equal(statValue({ 'p(50)': 6 }, 'med'), 6);
  assert.equal(statValue({ 'p(95)': 7 }, 'p(95)'), 7);
  assert.equal(statValue({ 'p(95)': NaN }, 'p(95)'), null);
  assert.equal(statValue({ 'p(95)': '7' }, 'p(95)'), null);
  assert.equal(statValue({}, 'max'), null);
  assert.equal(statValue(undefined, 'max'), null);
  assert.equal(statsOf(undefined), null);
  assert.equal(statsOf({ type: 'trend', values: { count: 0 } }), null);
  assert.deepEqual(statsOf(rate(1, 3)), { rate: 0.25, count: 1, total: 4 });
  assert.equal(statsOf(rate(0, 0)), null);
  assert.deepEqual(statsOf(counter(12)), { count: 12 });
  assert.deepEqual(statsOf(DATA.metrics.vus), { value: 1, min: 1, max: 2 });
  assert.equal(statsOf({ type: 'histogram', values: {} }), null);
  assert.deepEqual(cell('k', 'counter', { count: 1 }), { key: 'k', type: 'counter', count: 1 });
  assert.deepEqual(cell('k', 'rate', null), { key: 'k', type: 'rate', empty: true });
  // Re-exported from thresholds.js, the one parser.
  assert.deepEqual(parseThreshold('p(95)<1'), { stat: 'p(95)', op: '<', limit: 1 });
  assert.equal(thresholdHolds('<', 1, 2), true);
});

test('seconds and clock: k6 durations to seconds, seconds to m:ss', () => {
  assert.equal(seconds('90s'), 90);
  assert.equal(seconds('1m30.5s'), 90.5);
  assert.equal(seconds('1h'), 3600);
  assert.equal(seconds('1h2m3s'), 3723);
  assert.equal(seconds('250ms'), 0.25);
  assert.equal(seconds('2m500ms'), 120.5);
  assert.equal(seconds(0), 0);
  assert.equal(seconds(undefined), null);
  assert.equal(seconds(null), null);
  assert.equal(clock(95), '1m35s');
  assert.equal(clock(0), '0m00s');
  assert.equal(clock(3600), '60m00s');
  assert.equal(clock(5.4), '0m05s');
  // Rounded before it is split: never "60s".
  assert.equal(clock(59.6), '1m00s');
  assert.equal(clock(119.5), '2m00s');
});

test('segmentRange and coversWhole: execution segments and whether parts cover a run', () => {
  assert.deepEqual(segmentRange('1/2:1'), [0.5, 1]);
  assert.deepEqual(segmentRange('0:1/3'), [0, 1 / 3]);
  assert.deepEqual(segmentRange('0.5:1'), [0.5, 1]);
  assert.deepEqual(segmentRange('50%:100%'), [0.5, 1]);
  assert.equal(coversWhole([segmentRange('1/2:1'), segmentRange('0:1/2')]), true);
  assert.equal(coversWhole(['0:1/3', '1/3:2/3', '2/3:1'].map(segmentRange)), true);
  assert.equal(coversWhole([[0, 0.5]]), false);
  assert.equal(
    coversWhole([
      [0, 0.4],
      [0.5, 1],
    ]),
    false,
  );
  assert.equal(coversWhole([[0.1, 1]]), false);
  assert.equal(coversWhole([]), false);
  // Overlap covers, unless the parts must be disjoint.
  assert.equal(
    coversWhole([
      [0, 0.6],
      [0.5, 1],
    ]),
    true,
  );
  assert.equal(
    coversWhole(
      [
        [0, 0.6],
        [0.5, 1],
      ],
      { disjoint: true },
    ),
    false,
  );
  assert.equal(
    coversWhole(
      [
        [0, 0.5],
        [0.5, 1],
      ],
      { disjoint: true },
    ),
    true,
  );
});

test('rowLabel, errorLines and the formatters', () => {
  assert.equal(rowLabel({ transport: 'http-fresh', tls: true }), 'http-fresh tls=true');
  assert.equal(
    rowLabel({ transport: 'http-keepalive', tls: false, variant: 'typed', dims: { n: 100, payload: 'big' } }),
    'http-keepalive tls=false typed n:100,payload:big',
  );
  assert.deepEqual(errorLines({ errors: [{ op: 'query', message: 'HTTP 502' }] }), ['First error of query: HTTP 502']);
  assert.deepEqual(errorLines({}), []);
  assert.equal(formatMs(150.4), '150 ms');
  assert.equal(formatMs(100), '100 ms');
  assert.equal(formatMs(12.345), '12.3 ms');
  assert.equal(formatMs(0), '0.0 ms');
  for (const v of [null, undefined, NaN]) assert.equal(formatMs(v), '-');
  assert.equal(formatRate(0.0123), '1.23%');
  assert.equal(formatRate(0), '0.00%');
  assert.equal(formatRate(null), '-');
  assert.equal(formatValue(3), '3');
  assert.equal(formatValue(2.5), '2.50');
  assert.equal(formatValue(undefined), '-');
  assert.equal(FILES.summary, 'summary.json');
  assert.equal(FILES.junit, 'junit.xml');
  assert.equal(FILES.markdown, 'summary.md');
});
