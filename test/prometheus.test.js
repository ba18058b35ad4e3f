// Live metrics in a real time-series database: Debian's Prometheus (installed by the
// test when missing; skipped, saying why, only where it cannot be), started on loopback
// with its remote-write receiver; `k6pack run ws-vs-http --out prometheus=URL` on the
// real stack. Each lane's p95 by PromQL (the native histogram k6 wrote) against the
// run's summary.json; the Grafana dashboard's queries checked by promtool and run
// against what the run wrote; a dead endpoint and a malformed --out: one line, exit 2.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import { CellSet } from '../lib/report/samples.js';
import { ROOT } from '../lib/tools.js';
import { cliEnv, runCli } from './helpers/cli-env.js';
import { assertDocPassedButLatency } from './helpers/exits.js';
import { scaled } from './helpers/waits.js';
import { prometheusBinary, PROMTOOL, startPrometheus } from './helpers/prometheus-server.js';
import { WS_VS_HTTP_LANES } from './helpers/lanes.js';

const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'k6pack.json');
// k6 writes trends as native histograms of schema 3 (buckets 2^(1/8) = 1.0905 wide,
// read from what Prometheus stores): a quantile from them lies in the bucket that holds
// the sample of that rank.
const BUCKET = 2 ** (1 / 8) - 1;
const Q = 0.95;

// Where PromQL's p95 may lie, from the run's own samples (sorted, ms): in the bucket of a
// sample at rank Q n, give or take one (older Prometheus counts ranks from the bottom, later
// versions from the top), so within one bucket of those samples. Not summary.json's p95:
// that is k6's, linear between the sorted values at Q (n - 1), and with a 3 s step's
// few operations the tail's neighbours can lie further apart than a bucket: CI on
// b0dc7f9 read PromQL 96.6 against k6's 84.2 ms for https_fresh_c1 on a loaded machine.
function p95Range(sorted) {
  const n = sorted.length;
  const lo = sorted[Math.max(0, Math.floor(Q * n) - 1)];
  const hi = sorted[Math.min(n - 1, Math.ceil(Q * n))];
  return { lo: lo / (1 + BUCKET), hi: hi * (1 + BUCKET) };
}

describe('--out prometheus=URL: a real Prometheus gets every lane, as native histograms', () => {
  let found;
  let prom;
  let cli;
  let run;
  let doc;
  let runDir;
  before(
    async () => {
      found = await prometheusBinary();
      if (found.skip) return;
      prom = await startPrometheus(found.bin);
      cli = await cliEnv();
      const results = join(cli.runDir, 'results');
      run = await runCli(
        [
          'run',
          'ws-vs-http',
          '--profile',
          'lan',
          '--load',
          'smoke',
          '--results',
          results,
          '--out',
          `prometheus=${prom.write}`,
          '--',
          '-e',
          `LANES=${WS_VS_HTTP_LANES}`,
        ],
        // A push a second: every lane's 3 s step has the two a rate needs (the dashboard's).
        { env: { ...cli.env, K6_PROMETHEUS_RW_PUSH_INTERVAL: '1s' }, timeoutMs: scaled(150000) },
      );
      const dir = readdirSync(results).find((n) => n.startsWith('ws-vs-http-lan-'));
      runDir = dir && join(results, dir);
      doc = dir && JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8'));
    },
    { timeout: 900000 },
  );
  after(async () => {
    await prom?.stop();
    cli?.cleanup();
  });

  test("each lane's count and p95 from PromQL match the run's own samples (samples.json.gz), within the histogram's bucket", async (t) => {
    if (found.skip) return t.skip(found.skip);
    // 0, or 99 when only a latency gate failed (this file runs beside others): what is
    // checked is what Prometheus holds.
    assert.ok(doc, `no run folder: exit ${run.exitCode}\n${run.stdout.slice(-2000)}${run.stderr.slice(-1000)}`);
    assertDocPassedButLatency(run.exitCode, doc, run.stdout.slice(-2000) + run.stderr.slice(-1000));
    assert.match(
      run.stdout,
      /== metrics: also to Prometheus at http:\/\/127\.0\.0\.1:\d+\/api\/v1\/write \(native histograms\)/,
    );
    const rows = doc.rows.filter((r) => r.latency?.count);
    assert.equal(rows.length, WS_VS_HTTP_LANES.split(',').length);
    const cells = new CellSet();
    for (const row of rows) cells.want(row.latency.key, 'trend');
    await cells.read(join(runDir, 'samples.json.gz'));
    for (const row of rows) {
      const sorted = cells.get(row.latency.key).sortedValues();
      assert.equal(sorted.length, row.latency.count, `${row.scenario}: samples.json.gz holds the summary's operations`);
      const lane = `sum by (scenario) (k6_op_duration_seconds{k6pack_scenario="ws-vs-http", profile="lan", scenario="${row.scenario}"})`;
      const one = async (promql) => {
        const [series, ...more] = await prom.query(promql);
        assert.ok(series && !more.length, `${row.scenario}: one series for ${promql}`);
        return Number(series.value[1]);
      };
      // Every operation got there: k6 pushes its histograms whole, the last at the run's end.
      assert.equal(await one(`histogram_count(${lane})`), sorted.length, `${row.scenario}: PromQL's count`);
      const p95 = (await one(`histogram_quantile(${Q}, ${lane})`)) * 1000;
      const { lo, hi } = p95Range(sorted);
      t.diagnostic(
        `${row.scenario}: ${sorted.length} operations, PromQL p95 ${p95.toFixed(3)} ms, in ${lo.toFixed(3)}..${hi.toFixed(3)}; k6's ${row.latency.p95.toFixed(3)} ms`,
      );
      assert.ok(
        p95 >= lo && p95 <= hi,
        `${row.scenario}: PromQL p95 ${p95} ms, outside ${lo}..${hi} (within a bucket of the samples at rank ${Q} n)`,
      );
    }
    // The pack's labels on every series.
    const [one] = await prom.query('k6_op_duration_seconds{scenario="ws_c1"}');
    for (const label of ['k6pack_scenario', 'profile', 'scenario', 'step', 'transport', 'tls'])
      assert.ok(one.metric[label], `label ${label}: ${JSON.stringify(one.metric)}`);
  });

  test('the Grafana dashboard: valid JSON, promtool accepts every query, and each returns every lane from the run', async (t) => {
    if (found.skip) return t.skip(found.skip);
    const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
    assert.equal(dash.uid, 'k6pack-lanes');
    const titles = dash.panels.map((p) => p.title);
    for (const want of [/^p50 /, /^p95 /, /^failed share/, /^operations per second/])
      assert.ok(
        titles.some((x) => want.test(x)),
        `a panel ${want}: ${titles}`,
      );
    const vars = dash.templating.list.map((v) => v.name);
    assert.deepEqual(vars, ['datasource', 'scenario', 'profile']);
    // As Grafana would send them: the variables at "All" (.+) and a rate interval.
    const expand = (expr) =>
      expr
        .replace(/\$scenario/g, '.+')
        .replace(/\$profile/g, '.+')
        .replace(/\$__rate_interval/g, '5m');
    const exprs = dash.panels.flatMap((p) => p.targets.map((x) => ({ panel: p.title, expr: expand(x.expr) })));
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-dashboard-'));
    try {
      const rules = join(dir, 'rules.yml');
      writeFileSync(
        rules,
        `groups:\n  - name: k6pack-dashboard\n    rules:\n${exprs.map((e, i) => `      - record: k6pack:panel_${i}\n        expr: ${JSON.stringify(e.expr)}\n`).join('')}`,
      );
      const check = await execa(PROMTOOL, ['check', 'rules', rules], { reject: false });
      assert.equal(check.exitCode, 0, check.stdout + check.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const lanes = doc.rows
      .filter((r) => r.latency?.count)
      .map((r) => r.scenario)
      .sort();
    for (const { panel, expr } of exprs) {
      const result = await prom.query(expr);
      assert.deepEqual(result.map((s) => s.metric.scenario).sort(), lanes, `${panel}: every lane (${expr})`);
      assert.ok(
        result.every((s) => Number.isFinite(Number(s.value[1]))),
        `${panel}: numbers`,
      );
    }
  });

  test('bad input: a malformed --out and an endpoint where nothing answers: one line, exit 2, nothing started', async (t) => {
    if (found.skip) return t.skip(found.skip);
    const bad = await runCli(['run', 'push', '--out', 'prometheus'], { env: cli.env });
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /^k6pack: --out prometheus: give prometheus=URL, the remote-write endpoint/);
    const dead = await runCli(['gate', '--scenarios', 'push', '--out', 'prometheus=http://127.0.0.1:1/api/v1/write'], {
      env: cli.env,
    });
    assert.equal(dead.exitCode, 2);
    assert.match(
      dead.stderr,
      /^k6pack: --out prometheus=http:\/\/127\.0\.0\.1:1\/api\/v1\/write: nothing answers there \(/,
    );
    assert.doesNotMatch(dead.stdout + dead.stderr, /started (GraphQL|gRPC|toxiproxy)/);
  });
});
