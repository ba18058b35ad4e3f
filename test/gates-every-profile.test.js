// Latency gates for every profile and every step, from one model (common/model.js)
// and the policy in thresholds.json (common/thresholds.js):
//   - over the plans, without k6: every scenario x every built-in profile x every
//     load level has p50 and p95 gates on every lane and every step, each at or above
//     the model, and a step of more VUs never gets a tighter budget;
//   - the policy file: valid, every override with a reason; a broken one stops k6 in
//     one sentence naming the file; `k6pack thresholds` prints the gates;
//   - real runs: an override set to an impossible value makes k6 exit 99 and says which gate.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { LEVELS } from '../common/schedule.js';
import { describeGate, droppedLimit } from '../common/gates.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { scenarioNames } from '../lib/cli-support.js';
import { buildSpec } from '../lib/specs.js';
import { listProfiles, loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack } from '../dev/test-stack.js';
import { runCli } from './helpers/cli-env.js';

const FILE = join(ROOT, 'thresholds.json');
const policy = parsePolicy(readFileSync(FILE, 'utf8'), FILE);
const SCENARIO = join(ROOT, 'scenarios', 'ws-vs-http.js');
const SCENARIOS = scenarioNames();
const declarations = Object.fromEntries(
  await Promise.all(
    SCENARIOS.map(async (s) => [
      s,
      (await import(pathToFileURL(join(ROOT, 'scenarios', 'specs', `${s}.js`)).href)).default,
    ]),
  ),
);

// k6 logs the error's text with its quotes escaped.
const unquote = (text) => text.replace(/\\"/g, '"');

const dir = mkdtempSync(join(tmpdir(), 'k6pack-thresholds-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function file(name, text) {
  const p = join(dir, name);
  writeFileSync(p, typeof text === 'string' ? text : JSON.stringify(text));
  return p;
}
const bound = (list = [], stat) =>
  Number((list.find((t) => t.startsWith(`${stat}<`)) || '').slice(stat.length + 1)) || null;

// Settings that add lanes a scenario's defaults leave out: study 001's document
// (and its serial and Vulcain lanes), every executor of study 002.
const EXTRA_ENVS = {
  'compound-vs-parallel': [{ DOC_SIZES: 'small,medium,large,study' }],
  serialization: [{ EXECUTORS: 'all' }],
};

describe('every scenario, profile, load level, lane and step has latency rows, gated where they hold enough operations', () => {
  const { network, modifiers, faults } = listProfiles();
  // Every network profile, each fault on a shaped one, and each modifier on a fast and a slow one.
  const specs = [...network, ...faults.map((f) => `lte+${f}`), ...modifiers.flatMap((m) => [`lte+${m}`, `3g+${m}`])];
  for (const scenario of SCENARIOS) {
    test(scenario, () => {
      let count = 0;
      for (const level of Object.keys(LEVELS)) {
        for (const [spec, extra] of specs.flatMap((sp) => [{}, ...(EXTRA_ENVS[scenario] || [])].map((x) => [sp, x]))) {
          const profile = loadProfile(spec);
          const env = { LOAD: level, ...extra };
          const built = buildScenario(declarations[scenario](env), profile, env, policy);
          const where = `${scenario} ${spec} ${level}${Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : ''}`;
          for (const [name, sc] of Object.entries(built.plan.scenarios)) {
            if (!sc.tags.transport) continue;
            const own = built.gates.filter(
              (g) => g.metric === built.latencyMetric && g.key.startsWith(`${built.latencyMetric}{scenario:${name}`),
            );
            // Every row is listed; a row is gated where its step holds enough operations
            // (common/gates.js SAMPLE_FLOORS), and at smoke, the tests' plumbing level, always.
            assert.ok(own.length > 0, `${where}: no latency row on ${name}`);
            for (const g of own) {
              const p50 = bound(built.thresholds[g.key], 'p(50)');
              const p95 = bound(built.thresholds[g.key], 'p(95)');
              if (level === 'smoke') assert.ok(p50 && p95, `${where}: ${g.key} has ${built.thresholds[g.key]}`);
              assert.equal(Boolean(p50), g.verdicts.p50.gated, `${where}: ${g.key}`);
              assert.equal(Boolean(p95), g.verdicts.p95.gated, `${where}: ${g.key}`);
              if (p50)
                assert.ok(
                  p50 >= g.expected.p50.ms,
                  `${where}: ${g.key} p(50)<${p50} is below the model's ${g.expected.p50.ms} ms`,
                );
              if (p95)
                assert.ok(
                  p95 >= g.expected.p95.ms && p95 >= (p50 || 0),
                  `${where}: ${g.key} p(95)<${p95} vs model ${g.expected.p95.ms} ms`,
                );
              if (p50 || p95) count++;
            }
          }
          // More VUs never get a tighter budget than fewer on the same lane and dims.
          const byLane = {};
          for (const g of built.gates.filter((x) => x.which === 'op'))
            (byLane[`${g.lane} ${JSON.stringify(g.dims)}`] ||= []).push(g);
          for (const list of Object.values(byLane)) {
            const sorted = [...list].sort((a, b) => a.vus - b.vus);
            for (let i = 1; i < sorted.length; i++)
              assert.ok(
                // (the model's budgets: a step with fewer operations may get a wider p50, its tail's)
                sorted[i].modelBudget.p50 >= sorted[i - 1].modelBudget.p50,
                `${where}: ${sorted[i].key} gets a tighter p50 than ${sorted[i - 1].key}`,
              );
          }
        }
      }
      assert.ok(count > 0);
    });
  }

  test('the budgets follow the model: more round trips, a slower link or a bigger message cost more', () => {
    const gate = (spec, key, env = { LOAD: 'ci' }) =>
      buildScenario(declarations['ws-vs-http'](env), loadProfile(spec), env, policy).gates.find((g) => g.key === key);
    const fresh = gate('3g', 'op_duration{scenario:http_fresh_c1}');
    const tls = gate('3g', 'op_duration{scenario:https_fresh_c1}');
    const ws = gate('3g', 'op_duration{scenario:ws_c1}');
    assert.equal(ws.expected.p50.roundTrips, 1);
    assert.equal(fresh.expected.p50.roundTrips, 2);
    assert.equal(tls.expected.p50.roundTrips, 3);
    assert.ok(ws.modelBudget.p50 < fresh.modelBudget.p50 && fresh.modelBudget.p50 < tls.modelBudget.p50);
    assert.ok(gate('2g', 'op_duration{scenario:ws_c1}').modelBudget.p50 > ws.modelBudget.p50);
    // The jitter fault widens the tail more than the median.
    const jitter = gate('lte+jitter', 'op_duration{scenario:ws_c1}');
    const plain = gate('lte', 'op_duration{scenario:ws_c1}');
    assert.ok(jitter.modelBudget.p95 - plain.modelBudget.p95 > jitter.modelBudget.p50 - plain.modelBudget.p50);
    const big = (spec) =>
      buildScenario(declarations['grpc-vs-graphql']({}), loadProfile(spec), {}, policy).gates.find(
        (g) => g.key === 'op_duration{scenario:grpc_c1,payload:big,conn:warm}',
      );
    assert.ok(big('3g').expected.p50.ms > 5000, 'a 1 MB message takes seconds at 1.6 Mbit/s');
    // k6 decoding the 1 MB answer is a model term (CPU: model.js K6_BYTE_MS), not an override.
    const lan = big('lan');
    assert.deepEqual(lan.overrides, []);
    assert.ok(
      lan.expected.p50.terms.some((t) => t.name === 'client' && t.ms >= 14),
      lan.expected.p50.formula,
    );
  });

  test('a row whose step holds too few operations is not gated at ci, and says why; smoke gates it at its tail', () => {
    const env = { LOAD: 'ci' };
    const gates = buildScenario(declarations['compound-vs-parallel'](env), loadProfile('lte'), env, policy).gates;
    const etag = gates.find((g) => g.key === 'op_duration{scenario:compound_h1_c1,size:large,cache:etag,conn:warm}');
    assert.ok(etag.samples < 20, `${etag.samples}`);
    assert.deepEqual(etag.thresholds, []);
    assert.match(
      describeGate(etag),
      / not gated {2}\(.*p50 not gated: \d+ operations? a step, under the p50 floor of 20/,
    );
    // Under lan the same row's step holds more (its operations take milliseconds, not round trips).
    const lan = buildScenario(declarations['compound-vs-parallel'](env), loadProfile('lan'), env, policy).gates;
    const lanEtag = lan.find((g) => g.key === etag.key);
    assert.ok(lanEtag.samples > etag.samples, `${lanEtag.samples} vs ${etag.samples}`);
    // At smoke (the tests' plumbing runs) the thin row is gated, its p50 at its tail's budget.
    const smoke = { LOAD: 'smoke' };
    const s = buildScenario(declarations['compound-vs-parallel'](smoke), loadProfile('lte'), smoke, policy).gates;
    const sEtag = s.find((g) => g.key === etag.key);
    assert.equal(sEtag.budget.p50, sEtag.budget.p95);
    assert.match(describeGate(sEtag), /under the floor of 20: p50 at the tail's budget/);
  });

  test('CPU budgets follow the machine: a CPU scale, and n operations sharing the cores', () => {
    const key = 'op_duration{scenario:grpc_c4,payload:big,conn:warm}';
    const at = (env) =>
      buildScenario(declarations['grpc-vs-graphql'](env), loadProfile('lan'), env, policy).gates.find(
        (g) => g.key === key,
      );
    const ref = at({});
    const c1 = buildScenario(declarations['grpc-vs-graphql']({}), loadProfile('lan'), {}, policy).gates.find(
      (g) => g.key === 'op_duration{scenario:grpc_c1,payload:big,conn:warm}',
    );
    // 4 operations of ~17 ms CPU on 2 cores cycle in ~34 ms: c4's budget holds twice c1's CPU.
    assert.ok(ref.contentionMs > 10, `contention ${ref.contentionMs}`);
    assert.ok(
      ref.modelBudget.p50 - c1.modelBudget.p50 >= 2 * ref.contentionMs,
      `${ref.modelBudget.p50} vs ${c1.modelBudget.p50}`,
    );
    const busy = at({ CPU_SCALE: '2' });
    assert.ok(busy.modelBudget.p50 > ref.modelBudget.p50 * 1.5, `${busy.modelBudget.p50} vs ${ref.modelBudget.p50}`);
    const fourCores = at({ CPU_CORES: '4' });
    assert.equal(fourCores.contentionMs, 0);
    // Whole-ms lanes sit 1 ms above the multiple of 5.
    assert.equal(ref.modelBudget.p50 % 5, 1);
    assert.throws(() => at({ CPU_SCALE: '0.5' }), /CPU_SCALE=0.5 must be a number from 1 to 20/);
  });

  test("fan-out: a pushed event's copies are one piece of work, not n operations sharing the cores", () => {
    const env = { LOAD: 'full' };
    const gates = buildScenario(declarations.fanout(env), loadProfile('lan'), env, policy).gates;
    const ws = (n) => gates.find((g) => g.key === `delivery_latency{scenario:ws_c${n}}`);
    for (const n of [10, 100, 1000]) {
      const g = ws(n);
      assert.equal(g.atOnce, 1);
      assert.equal(g.contentionMs, 0);
      // The model's own fan-out cost grows with n; the budget follows it, not n x its CPU.
      // (Before: p(50)<1006 at 100 for a model of 9.5 ms, <77071 at 1000 for 77.)
      assert.ok(
        g.modelBudget.p50 < 3 * g.expected.p50.ms + 100,
        `c${n}: p(50)<${g.modelBudget.p50}, model ${g.expected.p50.ms}`,
      );
      assert.doesNotMatch(describeGate(g), /share the cores/);
    }
    assert.ok(ws(1000).modelBudget.p50 > ws(100).modelBudget.p50 && ws(100).modelBudget.p50 > ws(10).modelBudget.p50);
  });

  test("study 001's lanes: the server term carries the generation time, the Vulcain flow one round trip more", () => {
    const env = { DOC_SIZES: 'study' };
    const gate = (lane, spec = '4g') =>
      buildScenario(declarations['compound-vs-parallel'](env), loadProfile(spec), env, policy).gates.find(
        (g) => g.key === `op_duration{scenario:${lane}_c1,size:study,cache:off,conn:warm}`,
      ).expected.p50;
    const server = (e) => e.terms.find((t) => t.name === 'server').ms;
    // (nb - hits) x delay = 35 x 20 ms one after another; one delay at once.
    assert.ok(
      server(gate('compound_serial_h2')) - server(gate('compound_h2')) >= 680,
      `${server(gate('compound_serial_h2'))} vs ${server(gate('compound_h2'))}`,
    );
    assert.ok(server(gate('compound_h2')) >= 20 && server(gate('atomic_h2')) >= 20);
    // 50 documents on 6 HTTP/1.1 connections: 9 rounds, 7 of them with a miss.
    assert.equal(gate('atomic_h1').roundTrips, 9);
    assert.ok(server(gate('atomic_h1')) >= 7 * 20);
    // One request round more (R = 170 ms under 4g); with TCP on the link, the list's
    // exchange also grows the window the documents then use, so the whole extra is
    // less than R (what slow start saves) but never free.
    const term = (e, name) => (e.terms.find((t) => t.name === name) || { ms: 0 }).ms;
    const extra = gate('vulcain_h2').ms - gate('atomic_h2').ms;
    assert.equal(gate('vulcain_h2').roundTrips - gate('atomic_h2').roundTrips, 1);
    assert.equal(term(gate('vulcain_h2'), 'request') - term(gate('atomic_h2'), 'request'), 170);
    assert.ok(extra > 85 && extra < 170 + 60, `Vulcain's extra under 4g: ${extra} ms`);
    // Without slow start (+ideal) the extra is the round trip and the links' bytes.
    const ideal = gate('vulcain_h2', '4g+ideal').ms - gate('atomic_h2', '4g+ideal').ms;
    assert.ok(ideal > 170 && ideal < 170 + 60, `Vulcain's extra under 4g+ideal: ${ideal} ms`);
    // Under lan the gates see k6 read the 5 MB document.
    assert.ok(gate('compound_h2', 'lan').terms.some((t) => t.name === 'client' && t.ms > 50));
  });

  test('a network file of your own gets gates like a built-in profile', () => {
    const mine = file('my-network.json', {
      rttMs: 120,
      jitterMs: 0,
      downKbps: 4000,
      upKbps: 1000,
      source: 'measured from our office to the API, 2026-11',
    });
    const built = buildScenario(declarations['ws-vs-http']({}), loadProfile(`${mine}+flaky`), {}, policy);
    assert.equal(built.profile.name, 'my-network+flaky');
    const ws = built.gates.find((g) => g.key === 'op_duration{scenario:ws_c1}');
    assert.ok(ws.expected.p50.ms > 120 && ws.expected.p50.ms < 125, ws.expected.p50.formula);
  });
});

describe('the policy file', () => {
  test('thresholds.json is valid and every override says why', () => {
    for (const [name, s] of Object.entries(policy.scenarios)) {
      assert.ok(SCENARIOS.includes(name), `thresholds.json names scenario "${name}", which does not exist`);
      // "+flaky" is that fault on any network.
      for (const p of Object.keys(s.profiles || {}))
        assert.doesNotThrow(
          () => loadProfile(p.startsWith('+') ? `lan${p}` : p),
          `"${name}".profiles."${p}" is not a profile`,
        );
      for (const o of s.overrides || [])
        assert.ok(o.reason.length > 20, `${name}: override ${JSON.stringify(o.where)} needs a reason`);
    }
    for (const list of [policy.gates.op_failed, policy.scenarios.faults.gates.op_failed]) {
      assert.equal(list[0].abortOnFail, true);
      assert.match(list[0].delayAbortEval, /^\d+s$/);
    }
  });

  const cases = [
    ['not JSON', '{oops', /thresholds file .*not JSON\.json: not valid JSON/],
    [
      'the old layout',
      { 'ws-vs-http': { default: { op_failed: ['rate<0.1'] } } },
      /unknown top-level field "ws-vs-http" .*must be rewritten/,
    ],
    [
      'not a threshold',
      { ...policy, gates: { op_failed: ['rate<abc'] } },
      /gates\."op_failed": "rate<abc" is not a k6 threshold/,
    ],
    [
      'no reason',
      { ...policy, scenarios: { 'ws-vs-http': { overrides: [{ where: { transport: 'ws' }, p50Ms: 10 }] } } },
      /scenarios\."ws-vs-http"\.overrides\[0\] needs a "reason"/,
    ],
    [
      'a dropped-arrivals floor that is not a whole number',
      { ...policy, open: { ...policy.open, droppedFloor: 0.5 } },
      /open\.droppedFloor must be a whole number >= 0/,
    ],
    [
      'a negative margin',
      { ...policy, latency: { ...policy.latency, p50: { factor: -1, plusMs: 20 } } },
      /latency\.p50\.factor must be a number >= 0/,
    ],
  ];
  for (const [what, text, message] of cases) {
    test(`${what}: k6 stops before the test, in one sentence naming the file`, async () => {
      const path = file(`${what}.json`, text);
      const r = await runK6(SCENARIO, { env: { THRESHOLDS: path, LOAD: 'smoke' }, timeoutMs: 30000 });
      assert.equal(r.code, 107, r.stderr);
      assert.match(unquote(r.stderr), message);
      // and `k6pack thresholds` refuses it the same way (exit 2)
      const cli = await runCli(['thresholds', 'ws-vs-http', '--file', path]);
      assert.equal(cli.exitCode, 2, cli.stderr);
      assert.match(cli.stderr, message);
    });
  }

  test("an open step's dropped arrivals: at most a share of its planned ones, never fewer than the floor", () => {
    const { droppedShare: share, droppedFloor: floor } = policy.open;
    assert.ok(floor >= 1, 'thresholds.json gives a floor: one drop cannot fail a short step');
    // A short step (lte's ci o50: 36 arrivals): 1 % is 0, the floor holds.
    assert.equal(droppedLimit(policy.open, 36), floor);
    // A long one: the share (full's o90 of 50 connections under lte: ~627/s for 30 s).
    assert.equal(droppedLimit(policy.open, 18800), Math.floor(18800 * share));
    // A file without a floor keeps the share alone.
    assert.equal(droppedLimit({ droppedShare: 0.01 }, 36), 0);
    // Every open step's gate is that rule, and only open steps have one.
    const env = { LOAD: 'ci', WORKLOAD: 'open' };
    const built = buildScenario(declarations['ws-vs-http'](env), loadProfile('lte'), env, policy);
    for (const [name, sc] of Object.entries(built.plan.scenarios)) {
      const planned = (sc.rate / 60) * (built.plan.durations[name] / 1000);
      assert.deepEqual(built.thresholds[`dropped_iterations{scenario:${name}}`], [
        `count<=${droppedLimit(policy.open, planned)}`,
      ]);
    }
    const closed = buildScenario(
      declarations['ws-vs-http']({ LOAD: 'ci' }),
      loadProfile('lte'),
      { LOAD: 'ci' },
      policy,
    );
    assert.ok(!Object.keys(closed.thresholds).some((k) => k.startsWith('dropped_iterations')));
  });

  test('a missing file, given relative to the working directory', async () => {
    const rel = relative(process.cwd(), join(dir, 'missing.json'));
    const r = await runK6(SCENARIO, { env: { THRESHOLDS: rel, LOAD: 'smoke', PWD: process.cwd() }, timeoutMs: 30000 });
    assert.equal(r.code, 107, r.stderr);
    assert.ok(unquote(r.stderr).includes(`thresholds file ${join(dir, 'missing.json')}: cannot read it`), r.stderr);
    assert.doesNotMatch(r.stderr, /panic|goroutine/);
  });

  test('`k6pack thresholds` prints every gate with the model term behind it', async () => {
    const r = await runCli(['thresholds', 'ws-vs-http', '--profile', '5g']);
    assert.equal(r.exitCode, 0, r.stderr);
    // Its rows: every lane's steps' percentiles, as many as the spec's plan has (a lane
    // added to the spec adds its rows here).
    const { built } = await buildSpec('ws-vs-http', { profile: '5g' }, { out: () => {} });
    assert.match(
      r.stdout,
      new RegExp(
        `^ws-vs-http under 5g \\(R 31 ms, down 111070 / up 11120 kbit/s\\), load ci: \\d+ of ${built.gates.length} rows gated \\(`,
      ),
    );
    assert.match(
      r.stdout,
      /op_duration\{scenario:https_fresh_c1\} (p\(50\)<\d+ p\(95\)<\d+|p\(50\)<\d+|not gated) {2}\(model 3R \+ set-up \d+\/\d+ B\/B \+ \d+ B\/Bu \+ \d+ B\/Bd \+ server \+ k6 = 10\d\.\d ms[;)]/,
    );
    assert.match(r.stdout, /op_duration\{scenario:ws_c4\} .*4 VUs[;)]/);
    assert.match(r.stdout, /op_failed rate<0\.01 \(aborts the run\)/);
    // --workload open: each open step's arrivals, its VU pool and its dropped-arrivals gate.
    const open = await runCli(['thresholds', 'ws-vs-http', '--profile', 'lte', '--workload', 'open']);
    assert.equal(open.exitCode, 0, open.stderr);
    assert.match(
      open.stdout,
      /^ {2}http_keepalive_o50: \d+ arrivals\/s for [\d.]+ s \(\d+\); VU pool \d+ pre-allocated \(every iteration at its worst, \d+ ms; [\d.]+ in flight at the median\), \d+ at most; dropped_iterations count<=1 \(1 % of \d+ is [\d.]+, floor 1\)$/m,
    );
    assert.match(open.stdout, /^ {2}dropped_iterations\{scenario:http2_o50\} count<=1$/m);
    assert.doesNotMatch(r.stdout, /open steps:|dropped_iterations/);
    const bad = await runCli(['thresholds', 'ws-vs-http', '--profile', '6g']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /unknown network profile "6g"/);
  });
});

describe('gates on a real run', () => {
  let stack;
  before(async () => {
    stack = await startTestStack();
  });
  after(async () => {
    await stack?.stop();
  });

  test('an override set to an impossible value makes k6 exit 99, and says which gate failed', async () => {
    const path = file('impossible.json', {
      ...policy,
      scenarios: {
        'ws-vs-http': {
          overrides: [{ where: { lane: 'ws' }, p50Ms: 0.001, reason: 'a test: nothing answers in a microsecond' }],
        },
      },
    });
    const results = join(dir, 'results');
    mkdirSync(results);
    const r = await runK6(SCENARIO, {
      env: { ...stack.env, THRESHOLDS: path, LOAD: 'smoke', PROFILE: 'lan', STEP_SECONDS: '1', RESULTS_DIR: results },
      timeoutMs: 90000,
    });
    assert.equal(r.code, 99, r.stderr);
    assert.match(r.stdout, /FAIL op_duration\{scenario:ws_c1\} p\(50\)<0\.001/);
    const junit = readFileSync(join(results, 'junit.xml'), 'utf8');
    // At least the impossible gate failed (a lan gate beside another test file may too:
    // this file runs in the suite's second phase, beside others): junit counts them all.
    assert.match(junit, /failures="[1-9]\d*"/);
    assert.match(
      junit,
      /<failure message="op_duration\{scenario:ws_c1\}: p\(50\)=[\d.]+, threshold p\(50\)&lt;0\.001"/,
    );
    const json = JSON.parse(readFileSync(join(results, 'summary.json'), 'utf8'));
    const row = json.rows.find((x) => x.scenario === 'ws_c1');
    assert.equal(row.gate.ok, false);
    assert.deepEqual(row.gate.overrides, ['a test: nothing answers in a microsecond']);
    assert.match(json.verdict.lines.at(-1), /ws none \(failed at its first step\)/);
  });
});
