// Several runs of one scenario under one profile -> one summary document, every
// statistic computed again from the runs' samples: the k6-operator's runners or
// `--execution-segment` instances of one test (kind 'segments': disjoint
// segments covering 0..1), or repeated runs (kind 'runs'). Thresholds are
// evaluated again on the merged data, which k6 itself cannot do across instances.
//
// Two methods (run.merged.method says which produced every percentile):
//   exact  the pooled raw samples (samples.json.gz), every trend value kept;
//   hdr    the runs' histograms (histograms.json.gz, or built from samples.json.gz
//          while reading it, in worker threads): bounded memory, percentiles within
//          the histograms' precision (histograms.js); counters, rates, gauges,
//          counts, min, max and avg stay exact.
// 'auto' pools exactly when every run has its raw samples and they add up to at
// most EXACT_LIMIT_BYTES, and merges histograms otherwise.
import { writeFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  addFailedChecks,
  coversWhole,
  FILES,
  parseKey,
  parseThreshold,
  refreshGates,
  segmentRange,
  thresholdHolds,
  toJunit,
  toMarkdown,
} from '../../common/results.js';
import { HDR_METHOD } from './histograms.js';
import { ResultsError } from './runs.js';
import { CellSet, SamplesError } from './samples.js';
import { SeriesSet } from './series.js';

export const METHODS = ['auto', 'exact', 'hdr'];
// 32 MiB of gzipped samples: about 3 million samples (k6 writes ~10 bytes a sample), at
// most ~100 MB of kept values and well under a minute to read.
export const EXACT_LIMIT_BYTES = 32 * 1024 * 1024;
const WORKER = new URL('./series-worker.js', import.meta.url);

const identity = (doc) => `${doc.run.scenario}/${doc.run.profile}/${doc.run.load}`;
export const groupKey = identity;

// 'segments' when the parts' execution segments are disjoint and cover 0..1, else 'runs'.
export function mergeKind(docs) {
  const ranges = docs.map((d) => d.run.executionSegment);
  if (ranges.some((r) => !r)) return 'runs';
  return coversWhole(ranges.map(segmentRange), { disjoint: true }) ? 'segments' : 'runs';
}

// Rows (or steps) of all parts, by id, in first-seen order.
function union(docs, field, id) {
  const out = new Map();
  for (const doc of docs) for (const item of doc[field]) if (!out.has(id(item))) out.set(id(item), item);
  return [...out.values()];
}

const withStats = (c, cell) => ({ key: c.key, type: c.type, ...(cell.stats() || { empty: true }) });

// Which method, and what to read of each run: [{ run, source: 'samples' | 'histograms' }].
export function planMerge(runs, method = 'auto') {
  if (!METHODS.includes(method)) throw new ResultsError(`--method ${method}: choose one of ${METHODS.join(', ')}`);
  const bytes = runs.reduce((sum, r) => sum + (r.samples ? statSync(r.samples).size : 0), 0);
  const exact = method === 'exact' || (method === 'auto' && runs.every((r) => r.samples) && bytes <= EXACT_LIMIT_BYTES);
  if (exact) {
    const missing = runs.find((r) => !r.samples);
    if (missing)
      throw new ResultsError(
        `${missing.dir} has no ${FILES.samples}: exact pooling needs every run's raw samples (\`npx k6pack run\` keeps them unless --no-samples); --method hdr merges its ${FILES.histograms}`,
      );
    return { method: 'exact', parts: runs.map((run) => ({ run, source: 'samples' })) };
  }
  const none = runs.find((r) => !r.samples && !r.histograms);
  if (none)
    throw new ResultsError(
      `${none.dir} has neither ${FILES.samples} nor ${FILES.histograms}: merging needs one of them from every run`,
    );
  return { method: 'hdr', parts: runs.map((run) => ({ run, source: run.histograms ? 'histograms' : 'samples' })) };
}

// A run's samples.json.gz -> its SeriesSet of the given metrics, built in a worker
// thread (added to `live` while it runs, so a failure elsewhere can stop it).
function seriesInWorker(file, metrics, live) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { file, metrics: [...metrics] } });
    live.add(worker);
    worker.once('exit', () => live.delete(worker));
    let result = null;
    worker.once('message', (doc) => (result = doc));
    worker.once('error', (err) => reject(new ResultsError(err.message)));
    worker.once('exit', (code) =>
      result
        ? resolve(SeriesSet.fromDocument(result, file))
        : reject(new ResultsError(`reading ${file} stopped (worker exit ${code})`)),
    );
  });
}

// Fills the cells from every part with histograms; resolves the samples used.
async function fillFromHistograms(cells, parts) {
  let used = 0;
  const fromSamples = [];
  for (const part of parts) {
    if (part.source === 'histograms') {
      const set = SeriesSet.read(part.run.histograms);
      const why = [...cells.byKey.keys()].map((k) => set.cannotAnswer(k)).find(Boolean);
      if (!why) {
        used += cells.addSeries(set, part.run.histograms);
        continue;
      }
      if (!part.run.samples)
        throw new ResultsError(`${part.run.histograms} cannot be merged: ${why}; its raw samples are not there either`);
      part.source = 'samples';
    }
    fromSamples.push(part);
  }
  // Samples files are read in parallel, one worker per core, and folded in as they come.
  const queue = [...fromSamples];
  const metrics = cells.metrics();
  const live = new Set();
  const lane = async () => {
    for (let part = queue.shift(); part; part = queue.shift()) {
      const set = await seriesInWorker(part.run.samples, metrics, live);
      used += cells.addSeries(set, part.run.samples);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), queue.length) }, lane));
  } catch (err) {
    // One bad file is the answer: the other readers stop now, not after their files.
    queue.length = 0;
    await Promise.all([...live].map((w) => w.terminate()));
    throw err;
  }
  return used;
}

// runs: [{ dir, doc, samples, histograms }] from runs.js loadRun; opts.method: 'auto'
// (default), 'exact' or 'hdr'. Resolves the merged document (one run gives its own
// summary again, computed from its samples).
export async function mergeRuns(runs, { method = 'auto' } = {}) {
  if (!runs.length) throw new ResultsError('nothing to merge');
  const twice = runs.find((r, i) => runs.findIndex((x) => x.file === r.file) !== i);
  if (twice) throw new ResultsError(`${twice.dir} is given twice: its samples would count twice`);
  const id = identity(runs[0].doc);
  const odd = runs.find((r) => identity(r.doc) !== id);
  if (odd)
    throw new ResultsError(
      `cannot merge ${odd.dir} (${identity(odd.doc)}) with ${runs[0].dir} (${id}): merge runs of one scenario, profile and load`,
    );
  const plan = planMerge(runs, method);

  const docs = runs.map((r) => r.doc);
  const cells = new CellSet(plan.method);
  const want = (c) => c && cells.want(c.key, c.type);
  const rows = union(docs, 'rows', (r) => r.id);
  const steps = union(docs, 'steps', (s) => s.scenario);
  for (const row of rows) [row.latency, row.failures, ...Object.values(row.metrics)].forEach(want);
  for (const s of steps) {
    want(s.latency);
    want(s.failures);
    for (const m of ['iterations', 'dropped_iterations', 'data_sent', 'data_received'])
      cells.want(`${m}{scenario:${s.scenario}}`, 'counter');
  }
  const thresholds = union(docs, 'thresholds', (t) => `${t.key} ${t.threshold}`);
  // A threshold's metric type: as the summaries' cells of that metric have it, else from its stat.
  const known = new Map([...cells.byKey.values()].map((c) => [parseKey(c.key).metric, c.type]));
  const byStat = { rate: 'rate', count: 'counter', value: 'gauge' };
  const typeOf = (t) => known.get(parseKey(t.key).metric) || byStat[parseThreshold(t.threshold)?.stat] || 'trend';
  for (const t of thresholds) cells.want(t.key, typeOf(t));
  for (const m of ['iterations', 'dropped_iterations', 'data_sent', 'data_received']) cells.want(m, 'counter');
  cells.want('checks', 'rate');
  cells.want('op_failed', 'rate');

  let used = 0;
  try {
    if (plan.method === 'exact') for (const r of runs) used += await cells.read(r.samples);
    else used = await fillFromHistograms(cells, plan.parts);
  } catch (err) {
    if (err instanceof SamplesError) throw new ResultsError(err.message);
    throw err;
  }
  if (!used)
    throw new ResultsError(`the samples of ${runs.map((r) => r.dir).join(', ')} hold none of the summary's metrics`);

  const count = (key) => cells.get(key).stat('count');
  const checks = cells.get('checks');
  const outcomes = cells.get('op_failed');
  const first = docs[0].run;
  const times = (field) =>
    docs
      .map((d) => d.run[field])
      .filter(Boolean)
      .sort();
  const startedAt = times('startedAt')[0] || null;
  const endedAt = times('endedAt').at(-1) || null;
  const same = (field) => (docs.every((d) => d.run[field] === first[field]) ? first[field] : null);
  return refreshGates({
    schemaVersion: docs[0].schemaVersion,
    run: {
      ...first,
      startedAt,
      endedAt,
      durationMs: startedAt && endedAt ? Date.parse(endedAt) - Date.parse(startedAt) : null,
      k6Version: same('k6Version'),
      gitCommit: same('gitCommit'),
      executionSegment: null,
      executionSegmentSequence: null,
      samples: null,
      histograms: null,
      // How the parts recorded (common/recording.js): null when they differ.
      recording: docs.every((d) => JSON.stringify(d.run.recording ?? null) === JSON.stringify(first.recording ?? null))
        ? (first.recording ?? null)
        : null,
      // The CPU the budgets assumed (common/machine.js): null when the parts differ.
      machine: docs.every((d) => JSON.stringify(d.run.machine ?? null) === JSON.stringify(first.machine ?? null))
        ? (first.machine ?? null)
        : null,
      merged: {
        kind: mergeKind(docs),
        method: plan.method === 'exact' ? 'exact' : HDR_METHOD,
        parts: plan.parts.map(({ run: r, source }) => ({
          dir: r.dir,
          executionSegment: r.doc.run.executionSegment,
          startedAt: r.doc.run.startedAt,
          endedAt: r.doc.run.endedAt,
          source: FILES[source],
        })),
        samples: used,
      },
    },
    steps: steps.map((s) => ({
      ...s,
      latency: withStats(s.latency, cells.get(s.latency.key)),
      failures: withStats(s.failures, cells.get(s.failures.key)),
      iterations: count(`iterations{scenario:${s.scenario}}`),
      droppedIterations: count(`dropped_iterations{scenario:${s.scenario}}`),
      bytesSent: count(`data_sent{scenario:${s.scenario}}`),
      bytesReceived: count(`data_received{scenario:${s.scenario}}`),
    })),
    rows: rows.map((row) => ({
      ...row,
      latency: withStats(row.latency, cells.get(row.latency.key)),
      failures: withStats(row.failures, cells.get(row.failures.key)),
      metrics: Object.fromEntries(Object.entries(row.metrics).map(([k, c]) => [k, withStats(c, cells.get(c.key))])),
    })),
    thresholds: thresholds.map((t) => {
      const parsed = parseThreshold(t.threshold);
      const cell = cells.get(t.key);
      if (!parsed || !cell.count) {
        // Nothing to evaluate on: keep the parts' verdict.
        const ok = docs.every((d) => d.thresholds.every((x) => x.key !== t.key || x.threshold !== t.threshold || x.ok));
        return { ...t, ok, observed: null };
      }
      const observed = cell.stat(parsed.stat);
      return {
        key: t.key,
        threshold: t.threshold,
        ok: observed !== null && thresholdHolds(parsed.op, observed, parsed.limit),
        stat: parsed.stat,
        observed,
      };
    }),
    checks: {
      passes: checks.nonZero,
      fails: checks.count - checks.nonZero,
      rate: checks.count ? checks.stat('rate') : null,
    },
    totals: {
      iterations: count('iterations'),
      droppedIterations: count('dropped_iterations'),
      bytesSent: count('data_sent'),
      bytesReceived: count('data_received'),
      operations: outcomes.count,
      failedOperations: outcomes.nonZero,
    },
    failedChecks: addFailedChecks(docs.map((d) => d.failedChecks)),
  });
}

// 'exact (pooled samples)' / 'hdr (3 significant digits) from histograms of 8 runs': what produced a merge's percentiles.
export function describeMethod(merged) {
  if (merged.method === 'exact') return 'exact (pooled raw samples)';
  const read = new Set(merged.parts.map((p) => p.source));
  return `${merged.method} from the runs' ${[...read].join(' and ')}`;
}

// Writes a document's three files into an existing folder.
export function writeRunFiles(dir, doc) {
  writeFileSync(join(dir, FILES.summary), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(dir, FILES.junit), toJunit(doc));
  writeFileSync(join(dir, FILES.markdown), toMarkdown(doc));
}
