// Merging runs (merge.js): the parts' samples pooled exactly (every value: a percentile of
// the pooled values, as k6 would compute it over one run), or their histograms merged
// (hdr: counts, min, max and sums exact, percentiles within the histograms' precision);
// thresholds evaluated again on the merged figures; which method and kind; and one line
// for every run that cannot be merged. Real run folders (summary.json, samples.json.gz
// as k6's JSON output writes it, histograms.json.gz as a run keeps it) in a temp folder.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { HDR_METHOD, RELATIVE_PRECISION } from './histograms.js';
import {
  describeMethod,
  EXACT_LIMIT_BYTES,
  groupKey,
  mergeKind,
  mergeRuns,
  METHODS,
  planMerge,
  writeRunFiles,
} from './merge.js';
import { loadRun, ResultsError } from './runs.js';
import { SeriesSet } from './series.js';

const tmp = mkdtempSync(join(tmpdir(), 'k6pack-merge-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SC = 'ws_c1';
const LAT = `op_duration{scenario:${SC}}`;
const FAIL = `op_failed{scenario:${SC}}`;
const TYPES = {
  op_duration: ['trend', 'time'],
  op_failed: ['rate', 'default'],
  iterations: ['counter', 'default'],
  data_sent: ['counter', 'data'],
  checks: ['rate', 'default'],
};
const metricLine = (name) =>
  JSON.stringify({ type: 'Metric', data: { name, type: TYPES[name][0], contains: TYPES[name][1] }, metric: name });
const point = (metric, value, tags = { scenario: SC }, time = '2026-11-01T10:00:01Z') =>
  JSON.stringify({ metric, type: 'Point', data: { time, value, tags } });

// k6's JSON output of a run: each latency an operation (failed when listed), one iteration
// and one check each, 100 bytes sent each.
function samplesText(latencies, failed = []) {
  const lines = Object.keys(TYPES).map(metricLine);
  latencies.forEach((v, i) => {
    lines.push(point('op_duration', v, { name: 'GetBook', scenario: SC }));
    lines.push(point('op_failed', failed.includes(i) ? 1 : 0));
    lines.push(point('iterations', 1));
    lines.push(point('data_sent', 100));
    lines.push(point('checks', failed.includes(i) ? 0 : 1, { check: 'ok', scenario: SC }));
  });
  return `${lines.join('\n')}\n`;
}

// A summary document of one row and step, its latency gated by p(95)<100.
const summaryOf = ({ segment = null, startedAt, endedAt, commit, load = 'ci' }) => ({
  schemaVersion: 1,
  run: {
    scenario: 'ws-vs-http',
    profile: 'lan',
    load,
    latencyMetric: 'op_duration',
    k6Version: '1.8.1',
    gitCommit: commit,
    startedAt,
    endedAt,
    executionSegment: segment,
    executionSegmentSequence: segment ? '0,1/2,1' : null,
    samples: 'samples.json.gz',
    histograms: null,
    machine: { cores: 2 },
  },
  steps: [
    {
      scenario: SC,
      lane: 'ws',
      step: 'c1',
      latency: { key: LAT, type: 'trend', count: 0 },
      failures: { key: FAIL, type: 'rate' },
      iterations: 0,
    },
  ],
  rows: [
    {
      id: SC,
      scenario: SC,
      lane: 'ws',
      step: 'c1',
      transport: 'ws',
      tls: false,
      dims: {},
      latency: { key: LAT, type: 'trend', count: 0 },
      failures: { key: FAIL, type: 'rate' },
      metrics: {},
      gate: { thresholds: ['p(95)<100'], ok: true },
    },
  ],
  thresholds: [
    { key: LAT, threshold: 'p(95)<100', ok: true },
    // A metric no sample carries: the parts' verdict is kept.
    { key: 'setup_duration', threshold: 'max<1000', ok: true },
  ],
  checks: { passes: 0, fails: 0, rate: null },
  failedChecks: [{ name: 'ok', fails: 1 }],
});

// A run folder: summary.json, and samples.json.gz and/or histograms.json.gz built from
// the same samples. -> loadRun's run
async function runFolder(name, latencies, { failed = [], samples = true, histograms = false, ...run } = {}) {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const text = samplesText(latencies, failed);
  const doc = summaryOf(run);
  if (samples) writeFileSync(join(dir, 'samples.json.gz'), gzipSync(text));
  if (histograms) {
    writeFileSync(join(dir, 'raw.json'), text);
    (await new SeriesSet().readSamples(join(dir, 'raw.json'))).write(
      join(dir, 'histograms.json.gz'),
      'samples.json.gz',
    );
    doc.run.histograms = 'histograms.json.gz';
  }
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(doc));
  return loadRun(dir);
}

const A = [10, 20, 30, 40];
const B = [50, 60, 70, 80, 200];
const PARTS = {
  a: {
    failed: [2],
    segment: '0:1/2',
    startedAt: '2026-11-01T10:00:00.000Z',
    endedAt: '2026-11-01T10:01:00.000Z',
    commit: 'abc',
  },
  b: {
    failed: [4],
    segment: '1/2:1',
    startedAt: '2026-11-01T10:00:05.000Z',
    endedAt: '2026-11-01T10:01:30.000Z',
    commit: 'def',
  },
};

test('exact: the pooled samples, thresholds and gates evaluated again, the parts named', async () => {
  const a = await runFolder('exact/a', A, PARTS.a);
  const b = await runFolder('exact/b', B, PARTS.b);
  const doc = await mergeRuns([a, b]);
  // Pooled: 10 … 80, 200; p(95) at rank 0.95 x 8 = 7.6: 80 + 0.6 x 120 = 152.
  assert.deepEqual(doc.rows[0].latency, {
    key: LAT,
    type: 'trend',
    count: 9,
    min: 10,
    max: 200,
    avg: 560 / 9,
    p50: 50,
    p90: 80 + 120 * (0.9 * 8 - 7),
    p95: 80 + 120 * (0.95 * 8 - 7),
    p99: 80 + 120 * (0.99 * 8 - 7),
  });
  assert.deepEqual(doc.rows[0].failures, { key: FAIL, type: 'rate', rate: 2 / 9, count: 2, total: 9 });
  assert.deepEqual(doc.steps[0].latency, doc.rows[0].latency);
  assert.equal(doc.steps[0].iterations, 9);
  assert.equal(doc.steps[0].bytesSent, 900);
  assert.equal(doc.steps[0].bytesReceived, 0);
  assert.deepEqual(doc.thresholds, [
    { key: LAT, threshold: 'p(95)<100', ok: false, stat: 'p(95)', observed: 80 + 120 * (0.95 * 8 - 7) },
    { key: 'setup_duration', threshold: 'max<1000', ok: true, observed: null },
  ]);
  assert.equal(doc.rows[0].gate.ok, false);
  // The parts' own documents keep their outcome.
  assert.equal(a.doc.rows[0].gate.ok, true);
  assert.deepEqual(doc.checks, { passes: 7, fails: 2, rate: 7 / 9 });
  assert.deepEqual(doc.totals, {
    iterations: 9,
    droppedIterations: 0,
    bytesSent: 900,
    bytesReceived: 0,
    operations: 9,
    failedOperations: 2,
  });
  assert.deepEqual(doc.failedChecks, [{ name: 'ok', fails: 2 }]);
  const { merged, ...run } = doc.run;
  assert.deepEqual(merged, {
    kind: 'segments',
    method: 'exact',
    parts: [
      {
        dir: a.dir,
        executionSegment: '0:1/2',
        startedAt: PARTS.a.startedAt,
        endedAt: PARTS.a.endedAt,
        source: 'samples.json.gz',
      },
      {
        dir: b.dir,
        executionSegment: '1/2:1',
        startedAt: PARTS.b.startedAt,
        endedAt: PARTS.b.endedAt,
        source: 'samples.json.gz',
      },
    ],
    // Each sample once per cell it falls in: a latency in its row's cell (which its step
    // and threshold share), an outcome, iteration and byte count in its step's and the
    // run's, a check in the run's: 8 per operation.
    samples: 9 * 8,
  });
  assert.equal(run.startedAt, PARTS.a.startedAt);
  assert.equal(run.endedAt, PARTS.b.endedAt);
  assert.equal(run.durationMs, 90000);
  assert.equal(run.k6Version, '1.8.1');
  assert.equal(run.gitCommit, null);
  assert.equal(run.executionSegment, null);
  assert.equal(run.samples, null);
  assert.deepEqual(run.machine, { cores: 2 });
  assert.equal(run.recording, null);
  assert.equal(describeMethod(merged), 'exact (pooled raw samples)');
  // One run merged alone: its own figures again.
  const alone = await mergeRuns([a]);
  assert.equal(alone.rows[0].latency.p95, 30 + 10 * (0.95 * 3 - 2));
  assert.equal(alone.run.merged.kind, 'runs');
});

test('hdr: from the histograms, or from samples read in worker threads; within the stated precision', async () => {
  const a = await runFolder('hdr/a', A, { ...PARTS.a, samples: false, histograms: true });
  const b = await runFolder('hdr/b', B, { ...PARTS.b, histograms: true });
  const c = await runFolder('hdr/c', [90], { ...PARTS.b, segment: null });
  assert.deepEqual(planMerge([a, b, c]), {
    method: 'hdr',
    parts: [
      { run: a, source: 'histograms' },
      { run: b, source: 'histograms' },
      { run: c, source: 'samples' },
    ],
  });
  const doc = await mergeRuns([a, b, c]);
  assert.equal(doc.run.merged.method, HDR_METHOD);
  assert.equal(doc.run.merged.kind, 'runs');
  assert.deepEqual(
    doc.run.merged.parts.map((p) => p.source),
    ['histograms.json.gz', 'histograms.json.gz', 'samples.json.gz'],
  );
  assert.equal(
    describeMethod(doc.run.merged),
    "hdr (3 significant digits) from the runs' histograms.json.gz and samples.json.gz",
  );
  const lat = doc.rows[0].latency;
  assert.deepEqual([lat.count, lat.min, lat.max, lat.avg], [10, 10, 200, 650 / 10]);
  // Exact over the same ten values: p50 at rank 4.5 (55), p95 at 8.55 (90 + 0.55 x 110).
  const near = (got, want) => assert.ok(Math.abs(got - want) <= RELATIVE_PRECISION * want, `${got} vs ${want}`);
  near(lat.p50, 55);
  near(lat.p95, 150.5);
  assert.deepEqual(doc.rows[0].failures, { key: FAIL, type: 'rate', rate: 2 / 10, count: 2, total: 10 });
  assert.equal(doc.totals.iterations, 10);
  assert.equal(doc.thresholds[0].ok, false);
  // Asked for: hdr from samples alone.
  const fromSamples = await mergeRuns([c], { method: 'hdr' });
  assert.equal(fromSamples.run.merged.parts[0].source, 'samples.json.gz');
  assert.equal(fromSamples.rows[0].latency.p50, 90);
});

test('planMerge and mergeKind: which method, which kind', async () => {
  assert.deepEqual(METHODS, ['auto', 'exact', 'hdr']);
  assert.equal(EXACT_LIMIT_BYTES, 32 * 1024 * 1024);
  const a = await runFolder('plan/a', A, { ...PARTS.a, histograms: true });
  const b = await runFolder('plan/b', B, PARTS.b);
  assert.equal(planMerge([a, b]).method, 'exact');
  assert.deepEqual(
    planMerge([a, b], 'hdr').parts.map((p) => p.source),
    ['histograms', 'samples'],
  );
  const docOf = (segment) => summaryOf({ segment });
  assert.equal(mergeKind([docOf('0:1/2'), docOf('1/2:1')]), 'segments');
  assert.equal(mergeKind([docOf('0:1/3'), docOf('1/3:2/3'), docOf('2/3:1')]), 'segments');
  // Overlapping, short of 1, or a part without a segment: repeated runs.
  assert.equal(mergeKind([docOf('0:2/3'), docOf('1/3:1')]), 'runs');
  assert.equal(mergeKind([docOf('0:1/2'), docOf('1/2:3/4')]), 'runs');
  assert.equal(mergeKind([docOf('0:1/2'), docOf(null)]), 'runs');
  assert.equal(groupKey(docOf(null)), 'ws-vs-http/lan/ci');
});

test('runs that cannot be merged: one line each', async () => {
  const a = await runFolder('bad/a', A, PARTS.a);
  const noSamples = await runFolder('bad/none', B, { ...PARTS.b, samples: false });
  const soak = await runFolder('bad/soak', B, { ...PARTS.b, load: 'soak' });
  const fails = async (promise, message) =>
    assert.rejects(promise, (err) => {
      assert.ok(err instanceof ResultsError, err.stack);
      if (message instanceof RegExp) assert.match(err.message, message);
      else assert.equal(err.message, message);
      return true;
    });
  await fails(mergeRuns([]), 'nothing to merge');
  await fails(mergeRuns([a, a]), `${a.dir} is given twice: its samples would count twice`);
  await fails(
    mergeRuns([a, soak]),
    `cannot merge ${soak.dir} (ws-vs-http/lan/soak) with ${a.dir} (ws-vs-http/lan/ci): merge runs of one scenario, profile and load`,
  );
  await fails(mergeRuns([a], { method: 'approx' }), '--method approx: choose one of auto, exact, hdr');
  await fails(
    mergeRuns([a, noSamples], { method: 'exact' }),
    `${noSamples.dir} has no samples.json.gz: exact pooling needs every run's raw samples (\`npx k6pack run\` keeps them unless --no-samples); --method hdr merges its histograms.json.gz`,
  );
  await fails(
    mergeRuns([a, noSamples]),
    `${noSamples.dir} has neither samples.json.gz nor histograms.json.gz: merging needs one of them from every run`,
  );
  // Samples of other metrics only.
  const other = await runFolder('bad/other', A, PARTS.a);
  writeFileSync(other.samples, gzipSync(`${point('vus', 1, {})}\n`));
  await fails(mergeRuns([other]), `the samples of ${other.dir} hold none of the summary's metrics`);
  // A cut file: its line named.
  const cut = await runFolder('bad/cut', A, PARTS.a);
  writeFileSync(cut.samples, gzipSync(`${samplesText(A)}{"metric":"op_duration","type":"Po`));
  await fails(
    mergeRuns([cut]),
    /^\S+samples\.json\.gz line 26: not JSON \(a truncated file\? k6 writes it completely only when it exits normally\)$/,
  );
  await fails(mergeRuns([cut], { method: 'hdr' }), /samples\.json\.gz line 26: not JSON/);
  // Histograms that lost a tag the summary needs, and no samples to fall back on.
  const lost = await runFolder('bad/lost', A, { ...PARTS.a, samples: false, histograms: true });
  const summary = JSON.parse(readFileSync(lost.file, 'utf8'));
  summary.rows[0].metrics = {
    'op_duration{name:GetBook}': { key: `op_duration{name:GetBook,scenario:${SC}}`, type: 'trend' },
  };
  writeFileSync(lost.file, JSON.stringify(summary));
  await fails(
    mergeRuns([loadRun(lost.dir)]),
    `${lost.histograms} cannot be merged: it does not keep the tag name (op_duration{name:GetBook,scenario:${SC}}); its raw samples are not there either`,
  );
});

test("writeRunFiles: the merged document's summary.json, junit.xml and summary.md", async () => {
  const doc = await mergeRuns([await runFolder('write/a', A, PARTS.a), await runFolder('write/b', B, PARTS.b)]);
  const out = join(tmp, 'write/out');
  mkdirSync(out);
  writeRunFiles(out, doc);
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')), JSON.parse(JSON.stringify(doc)));
  const junit = readFileSync(join(out, 'junit.xml'), 'utf8');
  assert.ok(
    junit.includes(
      '  <testcase name="op_duration{scenario:ws_c1} p(95)&lt;100" classname="k6pack.ws-vs-http.lan"><failure message="op_duration{scenario:ws_c1}: p(95)=152.00, threshold p(95)&lt;100" type="threshold">',
    ),
    junit,
  );
  assert.ok(
    junit.includes('<testsuite name="ws-vs-http (lan)" tests="2" failures="1" errors="0" time="90.000">'),
    junit,
  );
  assert.match(readFileSync(join(out, 'summary.md'), 'utf8'), /operations 9, failed 2 \(22\.22%\)/);
  // And loadRun reads it back as a run.
  assert.equal(loadRun(out).doc.rows[0].latency.p95, 80 + 120 * (0.95 * 8 - 7));
});
