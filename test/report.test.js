// `k6pack report` on real runs of five scenarios (ws-vs-http and grpc-vs-graphql
// under lte, serialization on lan, push under lte, study 001's document of
// compound-vs-parallel on lan), opened in headless
// Chromium as a person would: every chart drew every expected series inside
// its plot area, the page makes no request beyond its own file (no CDN) and
// logs no error. The screenshot is left in the test's temp folder (diagnostic).
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, launch, openPage } from './helpers/browser.js';
import { runCli } from './helpers/cli-env.js';
import { writeReport } from '../lib/report/html.js';
import { runInto } from './helpers/run-folders.js';
import { startTestStack } from '../dev/test-stack.js';
import { GRPC_VS_GRAPHQL_LANES, WS_VS_HTTP_LANES } from './helpers/lanes.js';
import { scaled } from './helpers/waits.js';

const QUICK = { LOAD: 'smoke', STEP_SECONDS: '1' };
// The five runs, each against a stack of its own (a run's profile is its stack's
// toxics: lte and lan runs cannot share one), all at once.
const RUNS = {
  ws: ['ws-vs-http', { PROFILE: 'lte', STEPS: '1,2', LANES: WS_VS_HTTP_LANES }],
  // Its iteration (a 100 KB message each way under lte, on a new channel for grpc_fresh) is
  // the longest of these: one a lane in a step long enough for it, as study 001's below.
  grpc: [
    'grpc-vs-graphql',
    {
      PROFILE: 'lte',
      BIG_SIZE: '100000',
      LANES: GRPC_VS_GRAPHQL_LANES,
      STEP_ITERATIONS: '1',
      STEP_SECONDS: String(Math.round(scaled(3000) / 1000)),
    },
  ],
  serialization: ['serialization', { PROFILE: 'lan', NS: '100,1000', EXECUTORS: 'plain,per-item' }],
  push: ['push', { PROFILE: 'lte', PUSH_INTERVAL_MS: '50', POLL_INTERVAL_MS: '100', STEP_SECONDS: '3' }],
  // One iteration a lane, whatever the machine's speed (shared-iterations in a step long
  // enough for it): in 1 s steps a busy machine (load 9 on 2 cores, 2026-11-30) finished no
  // vulcain_h2 iteration of study 001's document, and its chart lost the lane.
  study001: [
    'compound-vs-parallel',
    {
      PROFILE: 'lan',
      DOC_SIZES: 'study',
      LANES: 'compound_serial_h2,compound_h2,atomic_h2,vulcain_h2',
      STEP_ITERATIONS: '1',
      STEP_SECONDS: String(Math.round(scaled(3000) / 1000)),
    },
  ],
};
const stacks = [];
let tmp;
let browser;
const runs = {};
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'k6pack-report-'));
  const executable = await chromium();
  const launched = launch(executable).then((b) => (browser = b));
  const done = await Promise.allSettled([
    launched,
    ...Object.entries(RUNS).map(async ([key, [scenario, env]]) => {
      const stack = await startTestStack();
      stacks.push(stack);
      runs[key] = await runInto(join(tmp, scenario), scenario, { ...stack.env, ...QUICK, ...env });
    }),
  ]);
  const failed = done.find((d) => d.status === 'rejected');
  if (failed) throw failed.reason;
});
after(async () => {
  await browser?.close();
  await Promise.all(stacks.map((stack) => stack.stop()));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// The charts each run must have, with their series.
function expectedCharts() {
  const lanes = (run) => [...new Set(run.doc.steps.map((s) => s.lane))];
  const both = (run) => lanes(run).flatMap((l) => [`${l} p50`, `${l} p95`]);
  return {
    'ws-vs-http-lte-concurrency': both(runs.ws),
    'ws-vs-http-lte-model': ['measured p50', 'measured mean', 'model'],
    // Warm calls only: the lanes with warm rows (a new gRPC channel per call has none), of
    // those the hint names (the client stream's payload means other bytes: its plan leaves it out).
    'grpc-vs-graphql-lte-size': lanes(runs.grpc)
      .filter((l) => runs.grpc.doc.run.hints.sizes.lanes.includes(l))
      .filter((l) => runs.grpc.doc.rows.some((r) => r.lane === l && r.dims.conn === 'warm' && r.latency.count))
      .map((l) => `${l} p50`),
    'grpc-vs-graphql-lte-model': ['measured p50', 'measured mean', 'model'],
    'serialization-lan-size': ['typed p50', 'typed_per_item p50', 'json p50', 'grpc_list p50', 'grpc_stream p50'],
    // one series per executor, beside the study's curve
    'serialization-lan-ratio': ['plain', 'per-item', 'study 002 (graphql-java)'],
    'push-lte-push': ['p50', 'p95', 'p99', 'model'],
    'push-lte-model': ['measured p50', 'measured mean', 'model'],
    'compound-vs-parallel-lan-size': ['compound_h2 p50', 'compound_serial_h2 p50', 'atomic_h2 p50', 'vulcain_h2 p50'],
    // study 001's document: each lane split into its generation time and the rest, beside the published numbers
    'compound-vs-parallel-lan-split': [
      runs.study001.doc.run.hints.split.knownLabel,
      runs.study001.doc.run.hints.split.restLabel,
    ],
  };
}

test('the report of five runs draws every chart and series offline, without errors', { timeout: 120000 }, async (t) => {
  const order = [runs.ws, runs.grpc, runs.serialization, runs.push, runs.study001];
  const r = await runCli(['report', ...order.map((x) => x.dir)], { timeoutMs: 60000 });
  assert.equal(r.exitCode, 0, r.stdout + r.stderr);
  const file = join(runs.ws.dir, 'report.html');
  assert.ok(existsSync(file), `no ${file}: ${r.stdout}`);
  assert.match(r.stdout, /report: .*report\.html \(5 runs; opens offline\)/);

  const { page, errors, requests } = await openPage(browser, file);

  const shot = join(tmp, 'report.png');
  await page.screenshot({ path: shot, fullPage: true });
  t.diagnostic(`screenshot: ${shot}`);

  // Per chart: the legend's series, the points each series drew inside the plot
  // area, and, with that series shown alone (series overlap), the pixels of its
  // colour there.
  const charts = await page.evaluate(() =>
    [...document.querySelectorAll('canvas[data-chart]')].map((canvas) => {
      const chart = window.Chart.getChart(canvas);
      const { left, top, right, bottom } = chart.chartArea;
      const inside = (el) =>
        !el.skip &&
        Number.isFinite(el.x) &&
        Number.isFinite(el.y) &&
        el.x >= left - 1 &&
        el.x <= right + 1 &&
        el.y >= top - 1 &&
        el.y <= bottom + 1;
      const colourPixels = (hex) => {
        const pixels = canvas.getContext('2d').getImageData(left, top, right - left, bottom - top).data;
        const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
        let n = 0;
        for (let i = 0; i < pixels.length; i += 4)
          if (pixels[i] === r && pixels[i + 1] === g && pixels[i + 2] === b && pixels[i + 3] === 255) n++;
        return n;
      };
      const series = chart.data.datasets.map((d, i) => ({
        label: d.label,
        drawn: chart.getDatasetMeta(i).data.filter(inside).length,
      }));
      chart.data.datasets.forEach((d, i) => {
        chart.data.datasets.forEach((_, j) => chart.setDatasetVisibility(j, j === i));
        chart.update('none');
        series[i].colourPixels = colourPixels(d.borderColor);
      });
      chart.data.datasets.forEach((_, j) => chart.setDatasetVisibility(j, true));
      chart.update('none');
      return { id: canvas.dataset.chart, listed: JSON.parse(canvas.dataset.series), series };
    }),
  );

  const expected = expectedCharts();
  const byId = Object.fromEntries(charts.map((c) => [c.id.replace(/^r\d+-/, ''), c]));
  assert.deepEqual(Object.keys(byId).sort(), Object.keys(expected).sort());
  for (const [id, labels] of Object.entries(expected)) {
    const c = byId[id];
    assert.deepEqual(
      c.series.map((s) => s.label),
      labels,
      `${id}: series`,
    );
    assert.deepEqual(c.listed, labels, `${id}: data-series`);
    for (const s of c.series) {
      assert.ok(s.drawn >= 1, `${id}: "${s.label}" drew no point in the plot area`);
      assert.ok(
        s.colourPixels >= 10,
        `${id}: "${s.label}" has ${s.colourPixels} pixels of its colour in the plot area`,
      );
    }
  }
  // The answer first: the verdict of every run opens the page, above every chart and table.
  const answer = await page.evaluate(() => {
    const box = document.getElementById('answer');
    const first = document.querySelector('#report > *');
    return {
      first: first && first.id,
      lines: [...(box ? box.querySelectorAll('p.verdict') : [])].map((p) => p.textContent),
    };
  });
  assert.equal(answer.first, 'answer', 'the report opens with the answer');
  assert.ok(answer.lines.length >= 4, `verdict lines: ${answer.lines.join(' / ')}`);
  assert.ok(
    answer.lines.some((l) => /p50 at c\d+: .+ ms/.test(l)),
    answer.lines.join('\n'),
  );
  assert.ok(
    answer.lines.some((l) => /^Held the budget up to: /.test(l)),
    answer.lines.join('\n'),
  );
  assert.deepEqual(errors, [], 'console errors');
  assert.deepEqual(
    requests.filter((u) => !u.startsWith('file:')),
    [],
    'requests beyond the file',
  );
  await page.close();
});

test('report: --out, and one clear line for a folder that is not a run', async () => {
  const out = join(tmp, 'one.html');
  let r = await runCli(['report', runs.push.dir, '--out', out], { timeoutMs: 30000 });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.ok(existsSync(out));
  r = await runCli(['report', tmp], { timeoutMs: 30000 });
  assert.equal(r.exitCode, 1);
  assert.match(r.stderr.trim(), /^k6pack: .* has no summary\.json: give a run folder/);
});

// A gate's report.html opens with the gate's own verdict and every failed threshold (as its
// comment.md does), above the studies' answers. A copy of the ws run with one threshold
// marked failed stands for a red gate (beside any the run crossed itself); the same run drawn by `k6pack report` has no gate box.
test("a gate's report opens with the gate's verdict and each failed threshold", { timeout: 60000 }, async () => {
  const dir = join(tmp, 'red-gate', 'ws-vs-http-lte');
  cpSync(runs.ws.dir, dir, { recursive: true });
  const file = join(dir, 'summary.json');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const bad = doc.thresholds[0];
  bad.ok = false;
  writeFileSync(file, JSON.stringify(doc));
  const out = join(tmp, 'red-gate', 'report.html');
  const verdict = 'thresholds failed in ws-vs-http (lte)';
  await writeReport([dir], { out, gate: { verdict, code: 99 } });
  const { page, errors } = await openPage(browser, out);
  const seen = await page.evaluate(() => {
    const root = document.getElementById('report');
    const gate = document.getElementById('gate');
    return {
      first: root.firstElementChild?.id,
      heading: gate?.querySelector('h2')?.textContent,
      rows: [...(gate ? gate.querySelectorAll('tbody tr') : [])].map((tr) =>
        [...tr.querySelectorAll('td')].map((td) => td.textContent),
      ),
      gateBeforeAnswer:
        Boolean(gate && document.getElementById('answer')) &&
        Boolean(gate.compareDocumentPosition(document.getElementById('answer')) & Node.DOCUMENT_POSITION_FOLLOWING),
    };
  });
  await page.close();
  assert.deepEqual(errors, []);
  assert.equal(seen.first, 'gate', 'the page opens with the gate');
  assert.equal(seen.heading, `Gate: ${verdict}`);
  // Every failed threshold of the run: the one marked here, and any latency gate the run
  // itself crossed (phase 2 runs beside other files: a lan or lte budget can fail there).
  const failed = doc.thresholds.filter((t) => !t.ok).map((t) => ['ws-vs-http — lte', t.key, t.threshold]);
  assert.ok(failed.some(([, key, threshold]) => key === bad.key && threshold === bad.threshold));
  const sorted = (rows) => rows.map((r) => r.join(' | ')).sort();
  assert.deepEqual(sorted(seen.rows.map((r) => r.slice(0, 3))), sorted(failed));
  assert.ok(
    seen.rows.every((r) => r[3] !== ''),
    'each with its observed value',
  );
  assert.ok(seen.gateBeforeAnswer, "the gate's verdict comes before the studies' answers");

  // A passed gate says so, and `k6pack report` (no gate) opens with the answers as before.
  // A copy of the ws run with every threshold held stands for it: the run itself may have
  // crossed a latency budget beside other files (http_fresh's p95 at 380.88 ms against 270,
  // 2026-11-29), and a gate that passed has none failed.
  const green = join(tmp, 'green-gate', 'ws-vs-http-lte');
  cpSync(runs.ws.dir, green, { recursive: true });
  writeFileSync(
    join(green, 'summary.json'),
    JSON.stringify({ ...doc, thresholds: doc.thresholds.map((t) => ({ ...t, ok: true })) }),
  );
  await writeReport([green], { out, gate: { verdict: 'the run passed', code: 0 } });
  const passed = await openPage(browser, out);
  const text = await passed.page.evaluate(() => document.getElementById('gate')?.textContent);
  await passed.page.close();
  assert.match(text, /^Gate: the run passed.*Every threshold held\.$/);
  await writeReport([runs.ws.dir], { out });
  const plain = await openPage(browser, out);
  const first = await plain.page.evaluate(() => document.getElementById('report').firstElementChild?.id);
  await plain.page.close();
  assert.equal(first, 'answer');
});
