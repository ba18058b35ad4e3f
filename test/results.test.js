// What people look at after a run, from real runs: `k6pack run` makes a run
// folder (summary.json valid against docs/results-schema.json, junit.xml,
// summary.md, samples.json.gz, the k6 dashboard with --dashboard), logs a line
// per step, and the raw samples give back k6's own statistics exactly; plain
// `k6 run` without RESULTS_DIR writes nothing and says so; `k6pack compare`
// on real runs and on a synthetic regression.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CellSet } from '../lib/report/samples.js';
import { ROOT } from '../lib/tools.js';
import { K6_VERSION } from '../common/defaults.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { runK6 } from '../dev/k6.js';
import { readSummary, runInto, validSummary } from './helpers/results.js';
import { startTestStack } from '../dev/stack.js';

const R = 70; // lte
const QUICK = { LOAD: 'smoke', STEP_SECONDS: '1' };
let stack;
let tmp;
let cli;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'k6pack-results-'));
  stack = await startTestStack();
  // The CLI on the test's stack (found running, not recorded: used as is).
  const c = await cliEnv();
  cli = { ...c, env: { ...c.env, ...Object.fromEntries(Object.entries(stack.ports).map(([k, v]) => [k, String(v)])) } };
});
after(async () => {
  await cli?.cleanup();
  await stack?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('k6pack run: the run folder', () => {
  let run;
  before(async () => {
    const root = join(tmp, 'results');
    const r = await runCli(['run', 'ws-vs-http', '--profile', 'lte', '--load', 'smoke', '--results', root, '--dashboard', '--', '-e', 'STEP_SECONDS=1', '--quiet'], {
      env: cli.env,
      timeoutMs: 120000,
    });
    const folders = readdirSync(root);
    assert.equal(folders.length, 1, `one run folder in ${root}: ${folders}`);
    run = { ...r, name: folders[0], dir: join(root, folders[0]), output: `${r.stdout}\n${r.stderr}` };
  });

  test('results/<scenario>-<profile>-<UTC time>/ with every file', () => {
    assert.match(run.name, /^ws-vs-http-lte-\d{8}T\d{6}Z$/);
    assert.deepEqual(readdirSync(run.dir).sort(), ['junit.xml', 'k6-dashboard.html', 'samples.json.gz', 'summary.json', 'summary.md']);
    assert.match(run.stdout, new RegExp(`== results in .*${run.name}/: junit.xml, k6-dashboard.html, samples.json.gz, summary.json, summary.md`));
    assert.match(run.stdout, /== dashboard: http:\/\/127\.0\.0\.1:\d+ while k6 runs/);
    // k6's single-file dashboard report, exported at the end of the run.
    const dash = readFileSync(join(run.dir, 'k6-dashboard.html'), 'utf8');
    assert.ok(statSync(join(run.dir, 'k6-dashboard.html')).size > 10000 && /<html/i.test(dash), 'k6-dashboard.html is an HTML report');
  });

  test('summary.json: the schema, the run, every step and row under the profile', () => {
    const doc = validSummary(readSummary(run.dir));
    const failed = doc.thresholds.filter((t) => !t.ok);
    assert.equal(run.exitCode, failed.length ? 99 : 0, `exit ${run.exitCode} with failed thresholds ${JSON.stringify(failed)}\n${run.output.slice(-2000)}`);
    assert.equal(doc.run.scenario, 'ws-vs-http');
    assert.equal(doc.run.profile, 'lte');
    assert.equal(doc.run.load, 'smoke');
    assert.equal(doc.run.network.rttMs, R);
    assert.equal(doc.run.k6Version, K6_VERSION.replace(/^v/, ''));
    assert.match(doc.run.gitCommit, /^[0-9a-f]{40}$/);
    assert.equal(doc.run.samples, 'samples.json.gz');
    assert.equal(doc.run.thresholdsFile, 'thresholds.json');
    assert.ok(Date.parse(doc.run.endedAt) > Date.parse(doc.run.startedAt));
    assert.deepEqual(doc.steps.map((s) => s.scenario), ['http_fresh_c1', 'http_keepalive_c1', 'ws_c1', 'https_fresh_c1', 'http2_c1', 'wss_c1']);
    for (const s of doc.steps) {
      assert.ok(s.latency.count > 0 && s.iterations > 0 && s.bytesSent > 0 && s.bytesReceived > 0, `${s.scenario}: ${JSON.stringify(s)}`);
      assert.equal(s.failures.rate, 0, s.scenario);
    }
    // Every operation paid at least the profile's round trip: the numbers are the shaped run's.
    for (const row of doc.rows) assert.ok(row.latency.p50 >= 0.9 * R, `${row.id} p50 ${row.latency.p50} < 0.9 R`);
    const wss = doc.rows.find((r) => r.id === 'wss_c1');
    assert.ok(wss.metrics['setup_duration{phase:ws_upgrade}'].p50 >= 2.7 * R, 'wss upgrade: TCP + TLS + upgrade = 3R');
    // The totals hold the steps' traffic and setup()'s (Toxiproxy) besides.
    assert.ok(doc.totals.bytesSent > doc.steps.reduce((sum, x) => sum + x.bytesSent, 0));
    assert.ok(doc.thresholds.length > 10 && doc.thresholds.every((t) => typeof t.observed === 'number'), 'every gate has its observed value');
  });

  test("the raw samples give back k6's own percentiles exactly", async () => {
    const doc = readSummary(run.dir);
    const cells = new CellSet();
    for (const row of doc.rows) cells.want(row.latency.key, 'trend');
    await cells.read(join(run.dir, 'samples.json.gz'));
    for (const row of doc.rows) {
      const mine = cells.get(row.latency.key).stats();
      for (const stat of ['count', 'min', 'max', 'p50', 'p90', 'p95', 'p99']) assert.equal(mine[stat], row.latency[stat], `${row.id} ${stat}`);
      assert.ok(Math.abs(mine.avg - row.latency.avg) < 1e-9 * row.latency.avg, `${row.id} avg`);
    }
  });

  test('junit.xml has one test case per threshold; summary.md a row per lane', () => {
    const doc = readSummary(run.dir);
    const junit = readFileSync(join(run.dir, 'junit.xml'), 'utf8');
    assert.equal((junit.match(/<testcase /g) || []).length, doc.thresholds.length);
    assert.match(junit, new RegExp(`failures="${doc.thresholds.filter((t) => !t.ok).length}"`));
    assert.match(junit, /<testcase name="op_duration\{scenario:ws_c1\} p\(50\)&lt;105" classname="k6pack\.ws-vs-http\.lte"/);
    const md = readFileSync(join(run.dir, 'summary.md'), 'utf8');
    assert.match(md, /^### k6pack ws-vs-http: profile lte, load smoke — /);
    for (const row of doc.rows) assert.match(md, new RegExp(`^\\| ${row.transport} tls=${row.tls} \\| c1 \\| ${row.latency.count} \\|`, 'm'));
  });

  test('a progress line as each step starts, once per step', () => {
    for (let i = 1; i <= 6; i++) {
      const lines = run.output.split('\n').filter((l) => new RegExp(`k6pack ws-vs-http \\(lte\\): step ${i}/6 \\w+_c1 \\(1 VU\\) starts at 0m\\d\\ds, ~0m\\d\\ds left`).test(l));
      assert.equal(lines.length, 1, `step ${i}: ${lines.length} lines\n${run.output.slice(0, 3000)}`);
    }
  });
});

test('plain k6 run without RESULTS_DIR writes no files and its last line says how to get them', async () => {
  const r = await runK6(join(ROOT, 'scenarios', 'serialization.js'), { env: { ...stack.env, ...QUICK, PROFILE: 'lan', NS: '100' }, timeoutMs: 90000 });
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  const last = r.stdout.trim().split('\n').at(-1);
  assert.match(last, /^results: not saved: plain `k6 run` writes summary\.json, junit\.xml and summary\.md only with -e RESULTS_DIR=<an existing folder>/);
});

describe('k6pack compare', () => {
  let a;
  let b;
  before(async () => {
    // Two real runs of the same scenario and profile.
    a = await runInto(join(tmp, 'a'), 'ws-vs-http', { ...stack.env, ...QUICK, PROFILE: 'lte' });
    b = await runInto(join(tmp, 'b'), 'ws-vs-http', { ...stack.env, ...QUICK, PROFILE: 'lte' });
  });
  const compare = (...args) => runCli(['compare', ...args], { env: cli.env, timeoutMs: 30000 });

  test('a run against itself: every line the same, exit 0', async () => {
    const r = await compare(a.dir, a.dir);
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /no regression/);
    assert.doesNotMatch(r.stdout, /❌|✅| new$| missing$/m);
  });

  test('two real runs: every row matched; within a wide tolerance, no regression', async () => {
    const r = await compare(a.dir, join(b.dir, 'summary.json'), '--tolerance', '100%', '--failure-tolerance', '5%');
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    for (const row of b.doc.rows) assert.match(r.stdout, new RegExp(`^${row.transport} tls=${row.tls}\\s+c1\\s+p50 `, 'm'));
    assert.doesNotMatch(r.stdout, / new$| missing$/m);
  });

  test('a synthetic regression: exit 3, the row named; improvements, new and missing rows shown', async () => {
    const doc = JSON.parse(JSON.stringify(b.doc));
    const row = (id) => doc.rows.find((x) => x.id === id);
    row('ws_c1').latency.p95 = b.doc.rows.find((x) => x.id === 'ws_c1').latency.p95 * 1.5 + 20;
    row('wss_c1').failures.rate += 0.02;
    row('http2_c1').latency.p50 /= 2;
    doc.rows = doc.rows.filter((x) => x.id !== 'https_fresh_c1');
    doc.rows.push({ ...row('http2_c1'), id: 'http3_c1', transport: 'http3' });
    const file = join(tmp, 'regressed.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = await compare(b.dir, file);
    assert.equal(r.exitCode, 3, r.stdout + r.stderr);
    assert.match(r.stdout, /^ws tls=false\s+c1\s+p95\s.*\+\d+\.\d%\s+❌ regression$/m);
    assert.match(r.stdout, /^ws tls=true\s+c1\s+failed\s.*\+2\.00 pt\s+❌ regression$/m);
    assert.match(r.stdout, /^http2 tls=true\s+c1\s+p50\s.*-50\.0%\s+✅ improvement$/m);
    assert.match(r.stdout, /^http3 tls=true\s+c1\s+p50\s.*new$/m);
    assert.match(r.stdout, /^http-fresh tls=true\s+c1\s+-.*missing$/m);
    assert.match(r.stdout, /^2 regressions$/m);
    const md = await compare(b.dir, file, '--markdown', '--changes-only');
    assert.equal(md.exitCode, 3);
    assert.match(md.stdout, /^### k6pack compare ws-vs-http: .* — 2 regressions$/m);
    assert.match(md.stdout, /^\| ws tls=false \| c1 \| p95 \| .* \| ❌ regression \|$/m);
    assert.doesNotMatch(md.stdout, /\| same \|/);
  });

  test('bad input: one line, exit 2 for a bad option, 1 for a missing run', async () => {
    let r = await compare(a.dir, b.dir, '--tolerance', 'ten');
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr.trim(), /^k6pack: --tolerance ten is not a percentage such as 10%$/);
    r = await compare(a.dir, join(tmp, 'nope'));
    assert.equal(r.exitCode, 1);
    assert.match(r.stderr.trim(), /^k6pack: no run folder or summary file at .*nope$/);
  });
});
