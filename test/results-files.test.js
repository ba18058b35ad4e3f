// What people look at after a run, from real runs: `k6pack run` makes a run
// folder (summary.json valid against docs/results-schema.json, junit.xml,
// summary.md, samples.json.gz, the k6 dashboard with --dashboard), logs a line
// per step, and the raw samples give back k6's own statistics exactly; plain
// `k6 run` without RESULTS_DIR writes nothing and says so; `k6pack compare`
// on real runs and on a synthetic regression.
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { CellSet } from '../lib/report/samples.js';
import { SeriesSet } from '../lib/report/series.js';
import { RELATIVE_PRECISION } from '../lib/report/histograms.js';
import { streamSamples } from '../lib/report/sample-stream.js';
import { compareDocs } from '../lib/report/compare.js';
import { ROOT } from '../lib/tools.js';
import { K6_VERSION } from '../common/defaults.js';
import { cliEnv, runCli } from './helpers/cli-env.js';
import { runK6 } from '../dev/run-k6.js';
import { readSummary, runInto, validSummary } from './helpers/run-folders.js';
import { assertPassedButLatency, crossedInStderr } from './helpers/exits.js';
import { scaled } from './helpers/waits.js';
import { startTestStack } from '../dev/test-stack.js';
import { WS_VS_HTTP_LANES } from './helpers/lanes.js';

const R = 70; // lte
const QUICK = { LOAD: 'smoke', STEP_SECONDS: '1' };
const tmp = mkdtempSync(join(tmpdir(), 'k6pack-results-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

// A stack of the suite's own for the describe() it is called in (a run's profile is its
// stack's toxics: runs under lte and lan cannot share one, and the parts of this file
// run at once), and with cli: true the CLI on it (found running, not recorded: used as is).
function useStack({ cli = false } = {}) {
  const it = {};
  before(async () => {
    it.stack = await startTestStack();
    if (!cli) return;
    const c = await cliEnv();
    it.cli = {
      ...c,
      env: { ...c.env, ...Object.fromEntries(Object.entries(it.stack.ports).map(([k, v]) => [k, String(v)])) },
    };
  });
  after(async () => {
    await it.cli?.cleanup();
    await it.stack?.stop();
  });
  return it;
}

// The parts below (each with its own stack and folders) run at once: their runs mostly
// wait (shaped links, k6's steps, process starts).
describe('results', { concurrency: true }, () => {
  describe('k6pack run: the run folder', { concurrency: 1 }, () => {
    const own = useStack({ cli: true });
    let run;
    before(async () => {
      const root = join(tmp, 'results');
      // Its own temp dir, where the samples' named pipe goes (and must not stay).
      mkdirSync(join(tmp, 'cli-tmp'));
      const r = await runCli(
        [
          'run',
          'ws-vs-http',
          '--profile',
          'lte',
          '--load',
          'smoke',
          '--results',
          root,
          '--dashboard',
          '--',
          '-e',
          'STEP_SECONDS=1',
          '-e',
          `LANES=${WS_VS_HTTP_LANES}`,
          '--quiet',
        ],
        {
          env: { ...own.cli.env, TMPDIR: join(tmp, 'cli-tmp') },
          timeoutMs: scaled(120000),
        },
      );
      const folders = readdirSync(root);
      assert.equal(folders.length, 1, `one run folder in ${root}: ${folders}`);
      run = { ...r, name: folders[0], dir: join(root, folders[0]), output: `${r.stdout}\n${r.stderr}` };
    });

    test('results/<scenario>-<profile>-<UTC time>/ with every file', () => {
      assert.match(run.name, /^ws-vs-http-lte-\d{8}T\d{6}Z$/);
      assert.deepEqual(readdirSync(run.dir).sort(), [
        'histograms.json.gz',
        'junit.xml',
        'k6-dashboard.html',
        'samples.json.gz',
        'summary.json',
        'summary.md',
      ]);
      assert.match(
        run.stdout,
        new RegExp(
          `== results in .*${run.name}/: histograms.json.gz, junit.xml, k6-dashboard.html, samples.json.gz, summary.json, summary.md`,
        ),
      );
      // No named pipe left behind: k6 wrote its samples into one under the temp dir.
      assert.deepEqual(readdirSync(join(tmp, 'cli-tmp')), [], "nothing left in the CLI's temp dir");
      assert.match(run.stdout, /== dashboard: http:\/\/127\.0\.0\.1:\d+ while k6 runs/);
      // k6's single-file dashboard report, exported at the end of the run.
      const dash = readFileSync(join(run.dir, 'k6-dashboard.html'), 'utf8');
      assert.ok(
        statSync(join(run.dir, 'k6-dashboard.html')).size > 10000 && /<html/i.test(dash),
        'k6-dashboard.html is an HTML report',
      );
    });

    test('summary.json: the schema, the run, every step and row under the profile', () => {
      const doc = validSummary(readSummary(run.dir));
      const failed = doc.thresholds.filter((t) => !t.ok);
      assert.equal(
        run.exitCode,
        failed.length ? 99 : 0,
        `exit ${run.exitCode} with failed thresholds ${JSON.stringify(failed)}\n${run.output.slice(-2000)}`,
      );
      assert.equal(doc.run.scenario, 'ws-vs-http');
      assert.equal(doc.run.profile, 'lte');
      assert.equal(doc.run.load, 'smoke');
      assert.equal(doc.run.network.rttMs, R);
      assert.equal(doc.run.k6Version, K6_VERSION.replace(/^v/, ''));
      assert.match(doc.run.gitCommit, /^[0-9a-f]{40}$/);
      assert.equal(doc.run.samples, 'samples.json.gz');
      assert.equal(doc.run.histograms, 'histograms.json.gz');
      assert.equal(doc.run.thresholdsFile, 'thresholds.json');
      // k6pack measured the machine before the run and k6 built the budgets for it.
      assert.equal(doc.run.machine.cores, cpus().length);
      assert.ok(doc.run.machine.cpuScale >= 1, JSON.stringify(doc.run.machine));
      assert.match(run.output, /== machine: \d+ cores, CPU x\d+\.\d\d/);
      assert.ok(Date.parse(doc.run.endedAt) > Date.parse(doc.run.startedAt));
      assert.deepEqual(
        doc.steps.map((s) => s.scenario),
        WS_VS_HTTP_LANES.split(',').map((lane) => `${lane}_c1`),
      );
      for (const s of doc.steps) {
        assert.ok(
          s.latency.count > 0 && s.iterations > 0 && s.bytesSent > 0 && s.bytesReceived > 0,
          `${s.scenario}: ${JSON.stringify(s)}`,
        );
        assert.equal(s.failures.rate, 0, s.scenario);
      }
      // Every operation paid at least the profile's round trip: the numbers are the shaped run's.
      for (const row of doc.rows) assert.ok(row.latency.p50 >= 0.9 * R, `${row.id} p50 ${row.latency.p50} < 0.9 R`);
      const wss = doc.rows.find((r) => r.id === 'wss_c1');
      assert.ok(
        wss.metrics['setup_duration{phase:ws_upgrade}'].p50 >= 2.7 * R,
        'wss upgrade: TCP + TLS + upgrade = 3R',
      );
      // The totals hold the steps' traffic and setup()'s (Toxiproxy) besides.
      assert.ok(doc.totals.bytesSent > doc.steps.reduce((sum, x) => sum + x.bytesSent, 0));
      assert.ok(
        doc.thresholds.length > 10 && doc.thresholds.every((t) => typeof t.observed === 'number'),
        'every gate has its observed value',
      );
    });

    test("the raw samples give back k6's own percentiles exactly", async () => {
      const doc = readSummary(run.dir);
      const cells = new CellSet();
      for (const row of doc.rows) cells.want(row.latency.key, 'trend');
      await cells.read(join(run.dir, 'samples.json.gz'));
      for (const row of doc.rows) {
        const mine = cells.get(row.latency.key).stats();
        for (const stat of ['count', 'min', 'max', 'p50', 'p90', 'p95', 'p99'])
          assert.equal(mine[stat], row.latency[stat], `${row.id} ${stat}`);
        assert.ok(Math.abs(mine.avg - row.latency.avg) < 1e-9 * row.latency.avg, `${row.id} avg`);
      }
    });

    test("histograms.json.gz, built while the samples streamed in: k6's counts, min, max and rates exactly, percentiles within 0.1 %", () => {
      const doc = readSummary(run.dir);
      const set = SeriesSet.read(join(run.dir, 'histograms.json.gz'));
      const cells = new CellSet('hdr');
      for (const row of doc.rows)
        [row.latency, row.failures, ...Object.values(row.metrics)].forEach((c) => cells.want(c.key, c.type));
      for (const t of doc.thresholds)
        cells.want(
          t.key,
          doc.rows.find((r) => r.latency.key === t.key)?.latency.type || (t.stat === 'rate' ? 'rate' : 'trend'),
        );
      assert.ok(cells.addSeries(set, 'histograms.json.gz') > 0);
      // The raw samples and the histograms saw the same lines.
      assert.equal(
        set.samples,
        gunzipSync(readFileSync(join(run.dir, 'samples.json.gz')))
          .toString('utf8')
          .split('\n')
          .filter((l) => l.startsWith('{"metric"')).length,
      );
      for (const row of doc.rows) {
        for (const c of [row.latency, ...Object.values(row.metrics).filter((m) => m.type === 'trend' && !m.empty)]) {
          const mine = cells.get(c.key).stats();
          for (const stat of ['count', 'min', 'max']) assert.equal(mine[stat], c[stat], `${c.key} ${stat}`);
          assert.ok(Math.abs(mine.avg - c.avg) < 1e-9 * c.avg, `${c.key} avg`);
          for (const stat of ['p50', 'p90', 'p95', 'p99'])
            assert.ok(
              Math.abs(mine[stat] - c[stat]) <= RELATIVE_PRECISION * c.max,
              `${c.key} ${stat}: ${mine[stat]} from the histograms, k6 ${c[stat]}`,
            );
        }
        assert.deepEqual(
          cells.get(row.failures.key).stats(),
          { rate: row.failures.rate, count: row.failures.count, total: row.failures.total },
          row.failures.key,
        );
      }
      for (const t of doc.thresholds) {
        const mine = cells.get(t.key).stat(t.stat);
        if (t.stat === 'rate') assert.equal(mine, t.observed, `${t.key} ${t.threshold}`);
        else
          assert.ok(
            Math.abs(mine - t.observed) <= RELATIVE_PRECISION * cells.get(t.key).max,
            `${t.key} ${t.threshold}: ${mine} vs k6 ${t.observed}`,
          );
      }
    });

    test('junit.xml has one test case per threshold; summary.md a row per lane', () => {
      const doc = readSummary(run.dir);
      const junit = readFileSync(join(run.dir, 'junit.xml'), 'utf8');
      assert.equal((junit.match(/<testcase /g) || []).length, doc.thresholds.length);
      assert.match(junit, new RegExp(`failures="${doc.thresholds.filter((t) => !t.ok).length}"`));
      // The budget follows the machine k6pack measured before the run (run.machine): the
      // same threshold text summary.json holds.
      const ws = doc.thresholds.find((t) => t.key === 'op_duration{scenario:ws_c1}' && t.stat === 'p(50)');
      assert.match(ws.threshold, /^p\(50\)<\d+$/);
      assert.ok(
        junit.includes(
          `<testcase name="op_duration{scenario:ws_c1} ${ws.threshold.replace('<', '&lt;')}" classname="k6pack.ws-vs-http.lte"`,
        ),
        junit,
      );
      const md = readFileSync(join(run.dir, 'summary.md'), 'utf8');
      assert.match(md, /^### k6pack ws-vs-http: profile lte, load smoke — /);
      for (const row of doc.rows)
        assert.match(md, new RegExp(`^\\| ${row.transport} tls=${row.tls} \\| c1 \\| ${row.latency.count} \\|`, 'm'));
    });

    test('a progress line as each step starts, once per step', () => {
      const steps = WS_VS_HTTP_LANES.split(',').length;
      for (let i = 1; i <= steps; i++) {
        const lines = run.output
          .split('\n')
          .filter((l) =>
            new RegExp(
              `k6pack ws-vs-http \\(lte\\): step ${i}/${steps} \\w+_c1 \\(1 VU\\) starts at 0m\\d\\ds, ~0m\\d\\ds left`,
            ).test(l),
          );
        assert.equal(lines.length, 1, `step ${i}: ${lines.length} lines\n${run.output.slice(0, 3000)}`);
      }
    });
  });

  test('plain k6 run without RESULTS_DIR writes no files and its last line says how to get them', async (t) => {
    const stack = await startTestStack();
    t.after(() => stack.stop());
    // The files a run folder holds, none of them where k6 runs (the test's working directory).
    const RUN_FILES = ['summary.json', 'junit.xml', 'summary.md', 'samples.json.gz', 'histograms.json.gz'];
    const present = () => RUN_FILES.filter((f) => existsSync(join(process.cwd(), f)));
    const before = present();
    const r = await runK6(join(ROOT, 'scenarios', 'serialization.js'), {
      env: { ...stack.env, ...QUICK, PROFILE: 'lan', NS: '100' },
      timeoutMs: scaled(90000),
    });
    // What this test is about is the files and the last line, not the budgets: 0, or 99 when
    // only latency thresholds crossed (on a slower machine a grpc_stream p50 did, 2026-11-28).
    assertPassedButLatency(r.code, crossedInStderr(r.stderr), `${r.stdout}\n${r.stderr}`);
    assert.deepEqual(present(), before, `files written in ${process.cwd()}`);
    const last = r.stdout.trim().split('\n').at(-1);
    assert.match(
      last,
      /^results: not saved: plain `k6 run` writes summary\.json, junit\.xml and summary\.md only with -e RESULTS_DIR=<an existing folder>/,
    );
  });

  describe('k6pack compare', { concurrency: 1 }, () => {
    // Two real runs of the same scenario and profile, at once, each on a stack of its own.
    const ownA = useStack({ cli: true });
    const ownB = useStack();
    let a;
    let b;
    before(async () => {
      const opts = { timeoutMs: scaled(120000) };
      [a, b] = await Promise.all(
        [
          ['a', ownA],
          ['b', ownB],
        ].map(([name, own]) =>
          runInto(join(tmp, name), 'ws-vs-http', { ...own.stack.env, ...QUICK, PROFILE: 'lte' }, opts),
        ),
      );
    });
    const compare = (...args) => runCli(['compare', ...args], { env: ownA.cli.env, timeoutMs: scaled(30000) });

    test('a run against itself: every line the same, exit 0', async () => {
      const r = await compare(a.dir, a.dir);
      assert.equal(r.exitCode, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /no regression/);
      assert.doesNotMatch(r.stdout, /❌|✅| new$| missing$/m);
    });

    test('two real runs: every row matched, the verdict the rules give on their figures', async () => {
      const r = await compare(a.dir, join(b.dir, 'summary.json'), '--tolerance', '100%', '--failure-tolerance', '5%');
      // Whether two real runs differ is the machine's (beside other files a 1 s step's p95 can
      // double): the verdict is checked against the rules on the two documents, not assumed.
      const { regressions } = compareDocs(a.doc, b.doc, { tolerance: 1, failurePoints: 0.05 });
      assert.equal(r.exitCode, regressions ? 3 : 0, r.stdout + r.stderr);
      assert.match(r.stdout, regressions ? new RegExp(`^${regressions} regressions?$`, 'm') : /no regression/);
      for (const row of b.doc.rows)
        assert.match(r.stdout, new RegExp(`^${row.transport} tls=${row.tls}\\s+c1\\s+p50 `, 'm'));
      assert.doesNotMatch(r.stdout, / new$| missing$/m);
    });

    test('a synthetic regression: exit 3, the row named; improvements, new and missing rows shown; a percentile of too few operations not judged', async () => {
      // The real run's rows hold a few operations each (QUICK): as they are, a p95 that moved
      // is too few to judge (under the gate's floor of 100, common/gates.js SAMPLE_FLOORS).
      const few = JSON.parse(JSON.stringify(b.doc));
      const fewWs = few.rows.find((x) => x.id === 'ws_c1');
      assert.ok(fewWs.latency.count < 100, `ws_c1 holds ${fewWs.latency.count} operations`);
      fewWs.latency.p95 = fewWs.latency.p95 * 1.5 + 20;
      writeFileSync(join(tmp, 'few.json'), JSON.stringify(few));
      const thin = await compare(b.dir, join(tmp, 'few.json'));
      assert.equal(thin.exitCode, 0, thin.stdout + thin.stderr);
      assert.match(thin.stdout, /^ws tls=false\s+c1\s+p95\s.*\+\d+\.\d%\s+too few to judge\s+floor: 100 operations$/m);
      // The same documents with every row at the floors: the rules judge every figure.
      const atFloors = (d) => {
        const out = JSON.parse(JSON.stringify(d));
        for (const x of out.rows) if (x.latency?.count) x.latency.count = Math.max(x.latency.count, 100);
        return out;
      };
      const base = join(tmp, 'base.json');
      writeFileSync(base, JSON.stringify(atFloors(b.doc)));
      const doc = atFloors(b.doc);
      const row = (id) => doc.rows.find((x) => x.id === id);
      row('ws_c1').latency.p95 = b.doc.rows.find((x) => x.id === 'ws_c1').latency.p95 * 1.5 + 20;
      row('wss_c1').failures.rate += 0.02;
      row('http2_c1').latency.p50 /= 2;
      doc.rows = doc.rows.filter((x) => x.id !== 'https_fresh_c1');
      doc.rows.push({ ...row('http2_c1'), id: 'http3_c1', transport: 'http3' });
      const file = join(tmp, 'regressed.json');
      writeFileSync(file, JSON.stringify(doc));
      const r = await compare(base, file);
      assert.equal(r.exitCode, 3, r.stdout + r.stderr);
      assert.match(r.stdout, /^ws tls=false\s+c1\s+p95\s.*\+\d+\.\d%\s+❌ regression\s+fixed$/m);
      assert.match(r.stdout, /^ws tls=true\s+c1\s+failed\s.*\+2\.00 pt\s+❌ regression\s+fixed$/m);
      assert.match(r.stdout, /^http2 tls=true\s+c1\s+p50\s.*-50\.0%\s+✅ improvement\s+fixed$/m);
      assert.match(r.stdout, /^http3 tls=true\s+c1\s+p50\s.*new$/m);
      assert.match(r.stdout, /^http-fresh tls=true\s+c1\s+-.*missing$/m);
      assert.match(r.stdout, /^2 regressions$/m);
      const md = await compare(base, file, '--markdown', '--changes-only');
      assert.equal(md.exitCode, 3);
      assert.match(md.stdout, /^### k6pack compare ws-vs-http: .* — 2 regressions$/m);
      assert.match(md.stdout, /^\| ws tls=false \| c1 \| p95 \| .* \| ❌ regression \| fixed \|$/m);
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

  describe('runs kept as histograms only (--no-samples): merged and reported from them', { concurrency: 1 }, () => {
    // The two runs at once, each on a stack of its own and into a results folder of its own.
    const owns = [useStack({ cli: true }), useStack({ cli: true })];
    const runs = [];
    before(async () => {
      const roots = owns.map((_, i) => join(tmp, `no-samples-${i + 1}`));
      await Promise.all(
        owns.map(async (own, i) => {
          const r = await runCli(
            [
              'run',
              'serialization',
              '--profile',
              'lan',
              '--load',
              'smoke',
              '--results',
              roots[i],
              '--no-samples',
              '--',
              '-e',
              'STEP_SECONDS=1',
              '-e',
              'NS=100',
              '--quiet',
            ],
            { env: own.cli.env, timeoutMs: scaled(90000) },
          );
          assert.ok([0, 99].includes(r.exitCode), r.stdout.slice(-2000) + r.stderr.slice(-2000));
        }),
      );
      for (const root of roots) for (const name of readdirSync(root).sort()) runs.push(join(root, name));
    });

    test('each run folder has histograms.json.gz and no samples.json.gz', () => {
      assert.equal(runs.length, 2);
      for (const dir of runs) {
        assert.deepEqual(readdirSync(dir).sort(), ['histograms.json.gz', 'junit.xml', 'summary.json', 'summary.md']);
        const doc = validSummary(readSummary(dir));
        assert.equal(doc.run.samples, null);
        assert.equal(doc.run.histograms, 'histograms.json.gz');
      }
    });

    test('merge: method hdr from the histograms, counts and iterations the sum of the runs', async () => {
      const out = join(tmp, 'merged-hist');
      const r = await runCli(['merge', ...runs, '--out', out], { timeoutMs: scaled(30000) });
      const doc = validSummary(readSummary(out), 'merged summary.json');
      assert.equal(r.exitCode, doc.thresholds.some((t) => !t.ok) ? 99 : 0, r.stdout + r.stderr);
      assert.match(r.stdout, /percentiles hdr \(3 significant digits\) from the runs' histograms\.json\.gz/);
      assert.equal(doc.run.merged.method, 'hdr (3 significant digits)');
      assert.deepEqual(
        doc.run.merged.parts.map((p) => p.source),
        ['histograms.json.gz', 'histograms.json.gz'],
      );
      const parts = runs.map(readSummary);
      for (const row of doc.rows) {
        const mine = parts.map((p) => p.rows.find((x) => x.id === row.id).latency);
        assert.equal(row.latency.count, mine[0].count + mine[1].count, row.id);
        assert.equal(row.latency.min, Math.min(mine[0].min, mine[1].min), row.id);
        assert.equal(row.latency.max, Math.max(mine[0].max, mine[1].max), row.id);
        assert.ok(
          row.latency.p50 >= Math.min(mine[0].p50, mine[1].p50) * (1 - RELATIVE_PRECISION) &&
            row.latency.p50 <= Math.max(mine[0].p50, mine[1].p50) * (1 + RELATIVE_PRECISION),
          row.id,
        );
      }
      for (const s of doc.steps)
        assert.equal(
          s.iterations,
          parts[0].steps.find((x) => x.scenario === s.scenario).iterations +
            parts[1].steps.find((x) => x.scenario === s.scenario).iterations,
          s.scenario,
        );
      assert.equal(doc.totals.iterations, parts[0].totals.iterations + parts[1].totals.iterations);
      assert.match(
        readFileSync(join(out, 'summary.md'), 'utf8'),
        /merged from 2 runs \(runs; percentiles hdr \(3 significant digits\)\)/,
      );
      // Exact pooling needs the raw samples: one line, exit 1.
      const exact = await runCli(['merge', ...runs, '--out', join(tmp, 'merged-exact'), '--method', 'exact'], {
        timeoutMs: scaled(30000),
      });
      assert.equal(exact.exitCode, 1);
      assert.match(
        exact.stderr.trim(),
        /^k6pack: .* has no samples\.json\.gz: exact pooling needs every run's raw samples .*--method hdr merges its histograms\.json\.gz$/,
      );
    });

    test('report: the merged section names its method', async () => {
      const out = join(tmp, 'hist-report.html');
      const r = await runCli(['report', ...runs, '--out', out], { timeoutMs: scaled(30000) });
      assert.equal(r.exitCode, 0, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /merged 2 runs of serialization \(lan\): runs, percentiles hdr \(3 significant digits\) from the runs' histograms\.json\.gz/,
      );
      assert.match(
        readFileSync(out, 'utf8'),
        /percentiles hdr \(3 significant digits\) from the runs' histograms\.json\.gz/,
      );
    });

    test('bad input: a broken histograms file, a cut samples file, an unknown method: one line each', async () => {
      const broken = join(tmp, 'broken');
      cpSync(runs[0], broken, { recursive: true });
      writeFileSync(join(broken, 'histograms.json.gz'), gzipSync('{"format":"something else"}'));
      let r = await runCli(['merge', runs[1], broken, '--out', join(tmp, 'm-broken')], { timeoutMs: scaled(30000) });
      assert.equal(r.exitCode, 1);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        /^k6pack: .*broken\/histograms\.json\.gz is not a k6pack-histograms document of version 1/,
      );
      writeFileSync(join(broken, 'histograms.json.gz'), 'not gzip');
      r = await runCli(['merge', runs[1], broken, '--out', join(tmp, 'm-broken2')], { timeoutMs: scaled(30000) });
      assert.equal(r.exitCode, 1);
      assert.match(r.stderr.trim(), /^k6pack: .*broken\/histograms\.json\.gz cannot be read \(/);
      // A samples file cut in the middle of a line (k6 killed), read for histograms in a worker.
      const cut = join(tmp, 'cut');
      cpSync(runs[0], cut, { recursive: true });
      rmSync(join(cut, 'histograms.json.gz'));
      const lines =
        '{"metric":"op_duration","type":"Point","data":{"time":"2026-01-01T00:00:00Z","value":1,"tags":{"scenario":"typed_c1"}}}\n{"metric":"op_duration","type":"Point","data":{"time":"2026-01-01T00:0';
      writeFileSync(join(cut, 'samples.json.gz'), gzipSync(lines));
      r = await runCli(['merge', runs[1], cut, '--out', join(tmp, 'm-cut'), '--method', 'hdr'], {
        timeoutMs: scaled(30000),
      });
      assert.equal(r.exitCode, 1, r.stdout + r.stderr);
      assert.match(r.stderr.trim(), /^k6pack: .*cut\/samples\.json\.gz line 2: not JSON \(a truncated file\?/);
      r = await runCli(['merge', ...runs, '--out', join(tmp, 'm-x'), '--method', 'approx'], {
        timeoutMs: scaled(30000),
      });
      assert.equal(r.exitCode, 2);
      assert.match(r.stderr.trim(), /^k6pack: --method approx: choose one of auto, exact, hdr$/);
    });
  });

  test('the sample stream of a k6 that never started: finish() returns at once and leaves no file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-stream-'));
    try {
      const stream = streamSamples(dir, { keepSamples: true });
      assert.match(stream.args[1], /^json=.*k6pack-samples-.*\/samples\.json$/);
      const started = Date.now();
      await stream.finish();
      // A writer is waited for up to a minute (lib/report/sample-stream.js DRAIN_MS).
      assert.ok(Date.now() - started < scaled(5000), 'finish() did not wait for a writer');
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
