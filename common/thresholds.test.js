// The policy file and k6 threshold expressions (common/thresholds.js): expressions
// parsed and evaluated, thresholds.json as shipped accepted, every kind of bad file
// refused with its one sentence naming the file and the field, and the gates and
// overrides a scenario gets under a profile.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import {
  expressionOf,
  overridesFor,
  parsePolicy,
  parseThreshold,
  policyGates,
  stepGatesOf,
  thresholdHolds,
} from './thresholds.js';

const FILE = 'my-thresholds.json';
// The smallest valid policy.
const LATENCY = {
  p50: { factor: 1.15, plusMs: 20 },
  p95: { factor: 1.5, plusMs: 50 },
  cpuFactor: 2,
  stepMs: { p50: 5, p95: 10 },
  reason: 'the model and a margin',
};
const policyText = (doc) => JSON.stringify({ latency: LATENCY, ...doc });
const scenarioText = (s) => policyText({ scenarios: { ws: s } });
// parsePolicy(text) must throw exactly `thresholds file my-thresholds.json: <what>`.
function refuses(text, what) {
  assert.throws(
    () => parsePolicy(text, FILE),
    (err) => {
      assert.equal(err, `thresholds file ${FILE}: ${what}`);
      return true;
    },
  );
}

test('parseThreshold: k6 expressions to stat, operator and limit; anything else null', () => {
  assert.deepEqual(parseThreshold('p(95)<450'), { stat: 'p(95)', op: '<', limit: 450 });
  assert.deepEqual(parseThreshold(' p(99.9) <= 1.5 '), { stat: 'p(99.9)', op: '<=', limit: 1.5 });
  assert.deepEqual(parseThreshold('rate<0.01'), { stat: 'rate', op: '<', limit: 0.01 });
  assert.deepEqual(parseThreshold('count==0'), { stat: 'count', op: '==', limit: 0 });
  assert.deepEqual(parseThreshold('value>=-5'), { stat: 'value', op: '>=', limit: -5 });
  assert.deepEqual(parseThreshold('med!=3'), { stat: 'med', op: '!=', limit: 3 });
  assert.deepEqual(parseThreshold('max===7'), { stat: 'max', op: '===', limit: 7 });
  for (const expr of ['p95<450', 'p(95)<', 'mean<3', 'rate < 1%', 'avg=>3', 'P(95)<4', '', 'rate<0.01 && count>1'])
    assert.equal(parseThreshold(expr), null, expr);
  assert.equal(parseThreshold(undefined), null);
});

test('thresholdHolds: each operator', () => {
  const cases = [
    [
      '<',
      [
        [1, 2, true],
        [2, 2, false],
      ],
    ],
    [
      '<=',
      [
        [2, 2, true],
        [3, 2, false],
      ],
    ],
    [
      '>',
      [
        [3, 2, true],
        [2, 2, false],
      ],
    ],
    [
      '>=',
      [
        [2, 2, true],
        [1, 2, false],
      ],
    ],
    [
      '==',
      [
        [2, 2, true],
        [1, 2, false],
      ],
    ],
    [
      '===',
      [
        [2, 2, true],
        [3, 2, false],
      ],
    ],
    [
      '!=',
      [
        [1, 2, true],
        [2, 2, false],
      ],
    ],
  ];
  for (const [op, list] of cases)
    for (const [value, limit, holds] of list)
      assert.equal(thresholdHolds(op, value, limit), holds, `${value}${op}${limit}`);
});

test('expressionOf: a string as it is, an object its threshold', () => {
  assert.equal(expressionOf('rate<0.01'), 'rate<0.01');
  assert.equal(expressionOf({ threshold: 'rate<0.01', abortOnFail: true }), 'rate<0.01');
  assert.equal(expressionOf({ abortOnFail: true }), undefined);
  assert.equal(expressionOf(null), null);
});

test('the shipped thresholds.json and a minimal policy are accepted, and come back as written', () => {
  const text = readFileSync(join(ROOT, 'thresholds.json'), 'utf8');
  assert.deepEqual(parsePolicy(text, 'thresholds.json'), JSON.parse(text));
  assert.deepEqual(parsePolicy(policyText({}), FILE), { latency: LATENCY });
  // Notes ($ or _) are allowed anywhere a key is.
  const noted = {
    $doc: 'notes',
    _old: { anything: 1 },
    gates: { $why: 'x', op_failed: ['rate<0.01'] },
    scenarios: { _skip: 5, ws: { $n: 1, overrides: [{ where: { tls: 'true' }, p95Ms: 80, reason: 'r', _n: 0 }] } },
  };
  assert.deepEqual(parsePolicy(policyText(noted), FILE).scenarios.ws.overrides[0].p95Ms, 80);
});

test('a file that is no policy, or a top level that is not this layout', () => {
  assert.throws(() => parsePolicy('{"latency":', FILE), /^thresholds file my-thresholds\.json: not valid JSON \(.+\)$/);
  refuses('[]', 'must be a JSON object with latency, gates and scenarios');
  refuses('"p(95)<5"', 'must be a JSON object with latency, gates and scenarios');
  refuses(
    policyText({ 'ws-vs-http': {} }),
    'unknown top-level field "ws-vs-http" (allowed: latency, open, gates, scenarios; a file of the older layout keyed by scenario must be rewritten: see docs/gating.md)',
  );
});

test('open: a share from 0 to 1, a whole floor, a reason', () => {
  const open = (o) => policyText({ open: o });
  assert.equal(parsePolicy(open({ droppedShare: 0, reason: 'r' }), FILE).open.droppedShare, 0);
  assert.equal(parsePolicy(open({ droppedShare: 1, droppedFloor: 0, reason: 'r' }), FILE).open.droppedFloor, 0);
  const share =
    "open.droppedShare must be a number from 0 to 1 (the share of an open step's arrivals that may be dropped)";
  refuses(open({ droppedShare: 1.5, reason: 'r' }), share);
  refuses(open({ droppedShare: -0.1, reason: 'r' }), share);
  refuses(open({ droppedShare: '1%', reason: 'r' }), share);
  refuses(open([]), share);
  const floor =
    'open.droppedFloor must be a whole number >= 0 (the arrivals any open step may drop, whatever its share says)';
  refuses(open({ droppedShare: 0.01, droppedFloor: 1.5, reason: 'r' }), floor);
  refuses(open({ droppedShare: 0.01, droppedFloor: -1, reason: 'r' }), floor);
  refuses(open({ droppedShare: 0.01 }), 'open needs a "reason": say why, so a reviewer sees it');
  refuses(open({ droppedShare: 0.01, reason: '  ' }), 'open needs a "reason": say why, so a reviewer sees it');
});

test('latency: p50, p95 and stepMs margins >= 0, a cpuFactor >= 1, a reason', () => {
  const lat = (changes) => JSON.stringify({ latency: { ...LATENCY, ...changes } });
  refuses(JSON.stringify({}), 'latency must be an object with p50, p95, stepMs and a reason');
  refuses(JSON.stringify({ latency: [1] }), 'latency must be an object with p50, p95, stepMs and a reason');
  refuses(lat({ p50: 1.15 }), 'latency.p50 must be an object with factor, plusMs');
  refuses(lat({ p50: { factor: 1.15 } }), 'latency.p50.plusMs must be a number >= 0');
  refuses(lat({ p95: { factor: -1, plusMs: 5 } }), 'latency.p95.factor must be a number >= 0');
  refuses(lat({ p95: { factor: '1.5', plusMs: 5 } }), 'latency.p95.factor must be a number >= 0');
  refuses(lat({ stepMs: undefined }), 'latency.stepMs must be an object with p50, p95');
  refuses(lat({ stepMs: { p50: 5 } }), 'latency.stepMs.p95 must be a number >= 0');
  const cpu = "latency.cpuFactor must be a number >= 1 (the margin on the server's and k6's time)";
  refuses(lat({ cpuFactor: 0.5 }), cpu);
  refuses(lat({ cpuFactor: '2' }), cpu);
  refuses(lat({ cpuFactor: undefined }), cpu);
  assert.equal(parsePolicy(lat({ cpuFactor: 1 }), FILE).latency.cpuFactor, 1);
  refuses(lat({ reason: undefined }), 'latency needs a "reason": say why, so a reviewer sees it');
  refuses(lat({ reason: 7 }), 'latency needs a "reason": say why, so a reviewer sees it');
});

test('gates: metric -> a non-empty list of k6 thresholds, strings or objects; no gate on checks', () => {
  const gates = (g) => policyText({ gates: g });
  assert.deepEqual(
    parsePolicy(gates({ 'op_duration{scenario:ws_c1,payload:big}': ['p(95)<300', { threshold: 'p(50)<100' }] }), FILE)
      .gates,
    { 'op_duration{scenario:ws_c1,payload:big}': ['p(95)<300', { threshold: 'p(50)<100' }] },
  );
  refuses(gates(['rate<0.01']), 'gates must be an object of metric -> thresholds');
  refuses(
    gates({ 'op-failed': ['rate<0.01'] }),
    'gates."op-failed": not a metric name with optional {tag:value} filters',
  );
  refuses(
    gates({ 'op_failed{}': ['rate<0.01'] }),
    'gates."op_failed{}": not a metric name with optional {tag:value} filters',
  );
  refuses(
    gates({ 'checks{scenario:ws_c1}': ['rate>0.99'] }),
    'gates."checks{scenario:ws_c1}": k6\'s checks are recorded only when they fail, so they cannot be gated: gate op_failed instead (every operation\'s outcome, a failed check included), e.g. "op_failed": ["rate<0.01"]',
  );
  // A metric that only starts with "checks" is another metric.
  assert.ok(parsePolicy(gates({ checks_total: ['count>0'] }), FILE).gates.checks_total);
  refuses(gates({ op_failed: [] }), 'gates."op_failed": must be a non-empty array of thresholds');
  refuses(gates({ op_failed: 'rate<0.01' }), 'gates."op_failed": must be a non-empty array of thresholds');
  refuses(
    gates({ op_failed: ['rate<1%'] }),
    'gates."op_failed": "rate<1%" is not a k6 threshold such as "p(95)<300" or "rate<0.01"',
  );
  refuses(
    gates({ op_failed: [{ abortOnFail: true }] }),
    'gates."op_failed": "{"abortOnFail":true}" is not a k6 threshold such as "p(95)<300" or "rate<0.01"',
  );
  refuses(gates({ op_failed: [5] }), 'gates."op_failed": "5" is not a k6 threshold such as "p(95)<300" or "rate<0.01"');
  refuses(
    gates({ op_failed: [{ threshold: 'rate<0.01', abortOnFail: true, delay: '10s' }] }),
    'gates."op_failed": unknown field "delay" (allowed: threshold, abortOnFail, delayAbortEval)',
  );
});

test('scenarios: objects of gates, stepGates, profiles, overrides and a reason', () => {
  refuses(policyText({ scenarios: [] }), 'scenarios must be an object keyed by scenario name');
  refuses(scenarioText('strict'), 'scenarios."ws" must be an object (gates, profiles, overrides)');
  refuses(
    scenarioText({ thresholds: {} }),
    'scenarios."ws": unknown field "thresholds" (allowed: gates, stepGates, profiles, overrides, reason)',
  );
  refuses(
    scenarioText({ gates: { op_failed: [] } }),
    'scenarios."ws".gates."op_failed": must be a non-empty array of thresholds',
  );
  refuses(
    scenarioText({ stepGates: { 'delivery_missed{scenario:ws_c1}': ['count==0'] } }),
    'scenarios."ws".stepGates."delivery_missed{scenario:ws_c1}": give the metric alone; each step adds {scenario:<lane>_<step>}',
  );
  refuses(
    scenarioText({ stepGates: { delivery_missed: ['none'] } }),
    'scenarios."ws".stepGates."delivery_missed": "none" is not a k6 threshold such as "p(95)<300" or "rate<0.01"',
  );
  refuses(
    scenarioText({ profiles: { '3g': { op_failed: ['rate<0.1'] } } }),
    'scenarios."ws".profiles."3g" must be an object with gates',
  );
  refuses(scenarioText({ profiles: { '3g': null } }), 'scenarios."ws".profiles."3g" must be an object with gates');
  refuses(
    scenarioText({ profiles: { '+flaky': { gates: { op_failed: ['rate<'] } } } }),
    'scenarios."ws".profiles."+flaky".gates."op_failed": "rate<" is not a k6 threshold such as "p(95)<300" or "rate<0.01"',
  );
  refuses(scenarioText({ overrides: {} }), 'scenarios."ws".overrides must be an array');
});

test('overrides: where, a change (plusMs, p50Ms or p95Ms) and a reason', () => {
  const good = { where: { transport: 'grpc', profile: 'lan' }, plusMs: { p50: 5, p95: 10 }, reason: 'measured' };
  const at = 'scenarios."ws".overrides[1]';
  const second = (o) => scenarioText({ overrides: [good, o] });
  assert.deepEqual(
    parsePolicy(second({ ...good, metric: 'setup_duration', plusMs: undefined, p50Ms: 40 }), FILE).scenarios.ws
      .overrides[1],
    {
      where: good.where,
      metric: 'setup_duration',
      p50Ms: 40,
      reason: 'measured',
    },
  );
  refuses(second('p95Ms=80'), `${at} must be an object with where, a change and a reason`);
  refuses(
    second({ ...good, p99Ms: 9 }),
    `${at}: unknown field "p99Ms" (allowed: where, metric, plusMs, p50Ms, p95Ms, reason)`,
  );
  refuses(
    second({ ...good, where: 'grpc' }),
    `${at}.where must be an object of tag -> value (transport, tls, lane, step, profile, or a row's tags such as payload)`,
  );
  refuses(second({ ...good, where: { tls: true } }), `${at}.where.tls must be a string`);
  refuses(second({ ...good, plusMs: 5 }), `${at}.plusMs must be an object with p50, p95`);
  refuses(second({ ...good, plusMs: { p50: 5 } }), `${at}.plusMs.p95 must be a number >= 0`);
  refuses(second({ ...good, p50Ms: 0 }), `${at}.p50Ms must be a number of ms > 0`);
  refuses(second({ ...good, p95Ms: '80' }), `${at}.p95Ms must be a number of ms > 0`);
  refuses(second({ where: good.where, reason: 'r' }), `${at} changes nothing: give plusMs, p50Ms or p95Ms`);
  refuses(second({ ...good, reason: '' }), `${at} needs a "reason": say why, so a reviewer sees it`);
});

const POLICY = {
  latency: LATENCY,
  gates: { op_failed: ['rate<0.01'], $note: 'x' },
  scenarios: {
    faults: {
      gates: { op_failed: ['rate<0.25'], recovery_duration: ['p(95)<10000'] },
      stepGates: { silent_vus: ['count==0'], _n: 'x' },
      profiles: {
        '3g+flaky': { gates: { op_failed: ['rate<0.4'] } },
        '+flaky': { gates: { op_failed: ['rate<0.3'], $why: 'y' } },
      },
      overrides: [
        { where: { transport: 'grpc' }, plusMs: { p50: 0, p95: 1200 }, reason: 'a' },
        { where: { transport: 'grpc', profile: 'lan' }, p50Ms: 40, reason: 'b' },
        { where: { tls: 'true' }, p95Ms: 90, reason: 'c' },
        { where: { phase: 'ws_upgrade' }, metric: 'setup_duration', p50Ms: 50, reason: 'd' },
      ],
    },
  },
};

test("policyGates: the file's gates, then the scenario's, then the profile's (its spec, else its faults on any network)", () => {
  assert.deepEqual(policyGates(POLICY, 'ws-vs-http', 'lte'), { op_failed: ['rate<0.01'] });
  assert.deepEqual(policyGates(POLICY, 'faults', 'lte'), {
    op_failed: ['rate<0.25'],
    recovery_duration: ['p(95)<10000'],
  });
  assert.deepEqual(policyGates(POLICY, 'faults', '3g+flaky').op_failed, ['rate<0.4']);
  assert.deepEqual(policyGates(POLICY, 'faults', 'lte+flaky'), {
    op_failed: ['rate<0.3'],
    recovery_duration: ['p(95)<10000'],
  });
  assert.deepEqual(policyGates(POLICY, 'faults', 'lte+stall').op_failed, ['rate<0.25']);
  assert.deepEqual(policyGates({ latency: LATENCY }, 'faults', 'lte'), {});
});

test('stepGatesOf: the scenario stepGates without notes, {} without any', () => {
  assert.deepEqual(stepGatesOf(POLICY, 'faults'), { silent_vus: ['count==0'] });
  assert.deepEqual(stepGatesOf(POLICY, 'ws-vs-http'), {});
  assert.deepEqual(stepGatesOf({}, 'faults'), {});
});

test("overridesFor: the scenario's overrides whose every where tag the row has, for the metric asked", () => {
  const reasons = (tags, metric) => overridesFor(POLICY, 'faults', tags, metric).map((o) => o.reason);
  assert.deepEqual(reasons({ transport: 'grpc', tls: 'false', profile: 'lan' }), ['a', 'b']);
  assert.deepEqual(reasons({ transport: 'grpc', tls: false, profile: '3g' }), ['a']);
  // Tags compare as text: a boolean tls true matches "true".
  assert.deepEqual(reasons({ transport: 'ws', tls: true, profile: 'lan' }), ['c']);
  assert.deepEqual(reasons({ transport: 'ws', tls: 'false' }), []);
  assert.deepEqual(reasons({ transport: 'ws', phase: 'ws_upgrade' }, 'setup_duration'), ['d']);
  assert.deepEqual(overridesFor(POLICY, 'ws-vs-http', { transport: 'grpc' }), []);
});
