// The sub-metrics a summary names ('op_duration{scenario:ws_c1}'), filled from
// runs' samples so that runs can be merged: percentiles cannot be combined from
// summaries, but they can be computed again from the pooled samples (every
// value kept: exact, metric-sinks.js) or from the runs' histograms (series.js: within
// the histogram's precision, in bounded memory).
import { parseKey } from '../../common/results.js';
import { parsePoint, pointMetric, readLines, SamplesError } from './k6-json.js';
import { Accumulator } from './metric-sinks.js';

export { percentile } from './metric-sinks.js';
export { SamplesError } from './k6-json.js';

const entriesOf = (tags) => Object.entries(tags);
const carries = (tags, want) => want.every(([k, v]) => tags[k] === v);

// The cells to fill, by metric name; each sample goes to every cell whose tags it carries.
export class CellSet {
  // distribution: 'exact' (every trend value kept) or 'hdr' (histograms).
  constructor(distribution = 'exact') {
    this.distribution = distribution;
    this.byKey = new Map();
    this.byMetric = new Map();
  }

  want(key, type) {
    if (this.byKey.has(key)) return this.byKey.get(key);
    const { metric, tags } = parseKey(key);
    const c = new Accumulator(type, this.distribution);
    c.key = key;
    this.byKey.set(key, c);
    if (!this.byMetric.has(metric)) this.byMetric.set(metric, []);
    this.byMetric.get(metric).push({ cell: c, tags: entriesOf(tags) });
    return c;
  }

  get(key) {
    return this.byKey.get(key);
  }

  metrics() {
    return new Set(this.byMetric.keys());
  }

  // Reads one samples file into the cells; resolves the number of samples used.
  async read(file) {
    if (this.distribution !== 'exact') throw new Error('CellSet.read pools exact values: use addSeries for histograms');
    let used = 0;
    // raw tags text -> the cells those tags fall into, per metric
    const memo = new Map();
    await readLines(file, (line) => {
      // Metrics nobody asked for are skipped unparsed.
      const metric = pointMetric(line);
      if (metric === null) return;
      const targets = this.byMetric.get(metric);
      if (!targets) return;
      const p = parsePoint(line);
      if (!p) return;
      const id = `${metric}\u0000${p.tags}`;
      let cells = memo.get(id);
      if (!cells) {
        const tags = JSON.parse(p.tags);
        cells = targets.filter((t) => carries(tags, t.tags)).map((t) => t.cell);
        if (memo.size > 100000) memo.clear();
        memo.set(id, cells);
      }
      for (const c of cells) c.add(p.value, p.time);
      used += cells.length;
    });
    return used;
  }

  // Folds a run's SeriesSet (series.js) into the cells: every series whose tags
  // carry a cell's tags is added to it. Resolves the number of samples used.
  addSeries(set, what) {
    let used = 0;
    for (const [metric, targets] of this.byMetric) {
      const series = set.seriesOf(metric);
      if (!series.length) continue;
      for (const { cell, tags } of targets) {
        const why = set.cannotAnswer(cell.key);
        if (why) throw new SamplesError(`${what} cannot give ${cell.key}: ${why}`);
        for (const s of series) {
          if (!carries(s.tags, tags)) continue;
          cell.merge(s.acc);
          used += s.acc.count;
        }
      }
    }
    return used;
  }
}
