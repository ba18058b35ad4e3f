// Raw samples (k6's `--out json=samples.json.gz`, one JSON object per line) and
// the statistics k6 computes from them, so runs can be merged: percentiles
// cannot be combined from summaries, but they can be computed again from the
// pooled samples.
//
// The statistics are exact, by k6's own definitions (metrics/sink.go in k6
// v1.8.1): a trend keeps every value and p(x) interpolates linearly between the
// sorted values at x/100 * (n - 1); a rate is non-zero samples / samples; a
// counter is the sum. k6's JSON output writes every value as a float64 that
// parses back bit for bit, so a percentile computed here from one run's samples
// equals k6's own; only avg may differ in the last bits (the sum is taken in a
// different order). Memory: 8 bytes per trend sample kept (a million samples: 8 MB).
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parseKey } from '../../common/results.js';

export class SamplesError extends Error {}

// k6's TrendSink.P
export function percentile(sorted, p) {
  const n = sorted.length;
  if (n === 0) return 0;
  if (n === 1) return sorted[0];
  const i = p * (n - 1);
  const j = sorted[Math.floor(i)];
  const k = sorted[Math.ceil(i)];
  return j + (k - j) * (i - Math.floor(i));
}

// An accumulator for one k6 sub-metric key ('op_duration{scenario:ws_c1}').
class Cell {
  constructor(key, type) {
    this.key = key;
    this.type = type;
    this.values = [];
    this.count = 0;
    this.nonZero = 0;
    this.sum = 0;
    this.last = null;
    this.lastTime = -Infinity;
    this.sorted = null;
  }

  add(value, time) {
    this.count++;
    this.sum += value;
    if (value !== 0) this.nonZero++;
    if (this.type === 'trend' || this.type === 'gauge') this.values.push(value);
    if (this.type === 'gauge' && Date.parse(time) >= this.lastTime) {
      this.lastTime = Date.parse(time);
      this.last = value;
    }
  }

  sortedValues() {
    this.sorted ??= Float64Array.from(this.values).sort();
    return this.sorted;
  }

  // A threshold's or summary's stat ('p(95)', 'med', 'avg', 'rate', 'count', 'value'...).
  stat(stat) {
    if (this.type === 'rate') return stat === 'rate' ? (this.count ? this.nonZero / this.count : 0) : null;
    if (this.type === 'counter') return stat === 'count' ? this.sum : null;
    if (this.type === 'gauge') {
      const v = this.sortedValues();
      return { value: this.last, min: v[0], max: v[v.length - 1] }[stat] ?? null;
    }
    const v = this.sortedValues();
    if (!v.length) return 0;
    if (stat === 'count') return this.count;
    if (stat === 'min') return v[0];
    if (stat === 'max') return v[v.length - 1];
    if (stat === 'avg') return this.sum / this.count;
    if (stat === 'med') return percentile(v, 0.5);
    const m = /^p\((\d+(?:\.\d+)?)\)$/.exec(stat);
    return m ? percentile(v, Number(m[1]) / 100) : null;
  }

  // The statistics in summary.json's names (results.js statsOf), null without samples.
  stats() {
    if (!this.count) return null;
    if (this.type === 'rate') return { rate: this.stat('rate'), count: this.nonZero, total: this.count };
    if (this.type === 'counter') return { count: this.sum };
    if (this.type === 'gauge') return { value: this.stat('value'), min: this.stat('min'), max: this.stat('max') };
    return { count: this.count, min: this.stat('min'), max: this.stat('max'), avg: this.stat('avg'), p50: this.stat('med'), p90: this.stat('p(90)'), p95: this.stat('p(95)'), p99: this.stat('p(99)') };
  }
}

// The cells to fill, by metric name; each sample goes to every cell whose tags it carries.
export class CellSet {
  constructor() {
    this.byKey = new Map();
    this.byMetric = new Map();
  }

  want(key, type) {
    if (this.byKey.has(key)) return this.byKey.get(key);
    const { metric, tags } = parseKey(key);
    const c = new Cell(key, type);
    this.byKey.set(key, c);
    if (!this.byMetric.has(metric)) this.byMetric.set(metric, []);
    this.byMetric.get(metric).push({ cell: c, tags: Object.entries(tags) });
    return c;
  }

  get(key) {
    return this.byKey.get(key);
  }

  // Reads one samples file into the cells; resolves the number of samples used.
  async read(file) {
    if (!existsSync(file)) throw new SamplesError(`no samples file ${file}`);
    const input = createReadStream(file);
    const lines = createInterface({ input: file.endsWith('.gz') ? input.pipe(createGunzip()) : input, crlfDelay: Infinity });
    let used = 0;
    let lineNo = 0;
    try {
      for await (const line of lines) {
        lineNo++;
        // {"metric":"op_duration","type":"Point",...}: skip metrics nobody asked for unparsed.
        if (!line.startsWith('{"metric":"')) continue;
        const metric = line.slice(11, line.indexOf('"', 11));
        const targets = this.byMetric.get(metric);
        if (!targets) continue;
        let point;
        try {
          point = JSON.parse(line);
        } catch {
          throw new SamplesError(`${file} line ${lineNo}: not JSON (a truncated file? k6 writes it completely only when it exits normally)`);
        }
        if (point.type !== 'Point') continue;
        const tags = point.data.tags || {};
        for (const { cell, tags: want } of targets) {
          if (want.every(([k, v]) => tags[k] === v)) {
            cell.add(point.data.value, point.data.time);
            used++;
          }
        }
      }
    } catch (err) {
      if (err instanceof SamplesError) throw err;
      throw new SamplesError(`${file}: cannot read it (${err.message})`);
    }
    return used;
  }
}
