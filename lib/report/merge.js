// Several runs of one scenario under one profile -> one summary document, every
// statistic computed again from the pooled raw samples (samples.js): the
// k6-operator's runners or `--execution-segment` instances of one test (kind
// 'segments': disjoint segments covering 0..1), or repeated runs (kind 'runs').
// Thresholds are evaluated again on the pooled data, which k6 itself cannot do
// across instances.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { coversWhole, FILES, parseKey, parseThreshold, refreshGates, segmentRange, thresholdHolds, toJunit, toMarkdown } from '../../common/results.js';
import { ResultsError } from './runs.js';
import { CellSet } from './samples.js';

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

// runs: [{ dir, doc, samples }] from runs.js loadRun. Resolves the merged document
// (one run gives its own summary again, computed from its samples).
export async function mergeRuns(runs) {
  if (!runs.length) throw new ResultsError('nothing to merge');
  const twice = runs.find((r, i) => runs.findIndex((x) => x.file === r.file) !== i);
  if (twice) throw new ResultsError(`${twice.dir} is given twice: its samples would count twice`);
  const id = identity(runs[0].doc);
  const odd = runs.find((r) => identity(r.doc) !== id);
  if (odd) throw new ResultsError(`cannot merge ${odd.dir} (${identity(odd.doc)}) with ${runs[0].dir} (${id}): merge runs of one scenario, profile and load`);
  const missing = runs.find((r) => !r.samples);
  if (missing) throw new ResultsError(`${missing.dir} has no ${FILES.samples}: merging needs every run's raw samples (\`npx k6pack run\` keeps them unless --no-samples)`);

  const docs = runs.map((r) => r.doc);
  const cells = new CellSet();
  const want = (c) => c && cells.want(c.key, c.type);
  const rows = union(docs, 'rows', (r) => r.id);
  const steps = union(docs, 'steps', (s) => s.scenario);
  for (const row of rows) [row.latency, row.failures, ...Object.values(row.metrics)].forEach(want);
  for (const s of steps) {
    want(s.latency);
    want(s.failures);
    for (const m of ['iterations', 'dropped_iterations', 'data_sent', 'data_received']) cells.want(`${m}{scenario:${s.scenario}}`, 'counter');
  }
  const thresholds = union(docs, 'thresholds', (t) => `${t.key} ${t.threshold}`);
  // A threshold's metric type: as the summaries' cells of that metric have it, else from its stat.
  const known = new Map([...cells.byKey.values()].map((c) => [parseKey(c.key).metric, c.type]));
  const byStat = { rate: 'rate', count: 'counter', value: 'gauge' };
  const typeOf = (t) => known.get(parseKey(t.key).metric) || byStat[parseThreshold(t.threshold)?.stat] || 'trend';
  for (const t of thresholds) cells.want(t.key, typeOf(t));
  for (const m of ['iterations', 'dropped_iterations', 'data_sent', 'data_received']) cells.want(m, 'counter');
  cells.want('checks', 'rate');

  let used = 0;
  for (const r of runs) used += await cells.read(r.samples);
  if (!used) throw new ResultsError(`the samples of ${runs.map((r) => r.dir).join(', ')} hold none of the summary's metrics`);

  const count = (key) => cells.get(key).stat('count');
  const checks = cells.get('checks');
  const first = docs[0].run;
  const times = (field) => docs.map((d) => d.run[field]).filter(Boolean).sort();
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
      merged: {
        kind: mergeKind(docs),
        parts: runs.map((r) => ({ dir: r.dir, executionSegment: r.doc.run.executionSegment, startedAt: r.doc.run.startedAt, endedAt: r.doc.run.endedAt })),
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
      return { key: t.key, threshold: t.threshold, ok: observed !== null && thresholdHolds(parsed.op, observed, parsed.limit), stat: parsed.stat, observed };
    }),
    checks: { passes: checks.nonZero, fails: checks.count - checks.nonZero, rate: checks.count ? checks.stat('rate') : null },
    totals: {
      iterations: count('iterations'),
      droppedIterations: count('dropped_iterations'),
      bytesSent: count('data_sent'),
      bytesReceived: count('data_received'),
    },
  });
}

// Writes a document's three files into an existing folder.
export function writeRunFiles(dir, doc) {
  writeFileSync(join(dir, FILES.summary), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(dir, FILES.junit), toJunit(doc));
  writeFileSync(join(dir, FILES.markdown), toMarkdown(doc));
}
