// One k6 sub-metric's statistics, by k6's own definitions (metrics/sink.go in
// k6 v1.8.1), accumulated sample by sample and mergeable: a counter is the sum;
// a rate, non-zero samples over samples; a gauge, the last value (by sample
// time), min and max; a trend, count, min, max, avg and percentiles, where p(x)
// interpolates linearly between the sorted values at x/100 x (n - 1).
//
// Everything but a trend's percentiles merges exactly (sums, min, max). The
// percentiles come from a distribution that is either 'exact' (every value
// kept: 8 bytes a sample; k6's JSON output writes each value as a float64 that
// reads back bit for bit, so a percentile equals k6's own, and a merged one the
// pooled samples' exactly) or 'hdr' (histograms.js: bounded memory, within its
// stated precision). Only avg may differ from k6's in the last bits (the sum
// is taken in another order).
import { quantileSorted } from '../../common/quantiles.js';
import { TrendHistogram } from './histograms.js';

// k6's TrendSink.P over sorted values (p in 0..1): common/quantiles.js, and 0 for none, as k6 reports.
export const percentile = (sorted, p) => quantileSorted(sorted, p) ?? 0;

const PERCENTILE = /^p\((\d+(?:\.\d+)?)\)$/;

export class Accumulator {
  // type: k6's metric type; distribution: 'exact' | 'hdr' (trends only).
  constructor(type, distribution = 'exact') {
    this.type = type;
    this.distribution = type === 'trend' ? distribution : null;
    this.count = 0;
    this.sum = 0;
    this.nonZero = 0;
    this.min = Infinity;
    this.max = -Infinity;
    this.last = null;
    this.lastTime = -Infinity; // epoch ms of the last value
    this.values = this.distribution === 'exact' ? [] : null;
    this.histogram = this.distribution === 'hdr' ? new TrendHistogram() : null;
    this.sorted = null;
  }

  // time: the sample's time as k6 writes it (read for gauges only).
  add(value, time) {
    this.count++;
    this.sum += value;
    if (value !== 0) this.nonZero++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    if (this.values) this.values.push(value);
    else if (this.histogram) this.histogram.record(value);
    if (this.type === 'gauge') {
      const t = Date.parse(time);
      if (!(t < this.lastTime)) {
        this.lastTime = t;
        this.last = value;
      }
    }
    this.sorted = null;
  }

  // Adds another accumulator of the same metric (an exact one into an exact one,
  // a histogram into a histogram).
  merge(other) {
    this.count += other.count;
    this.sum += other.sum;
    this.nonZero += other.nonZero;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    if (other.last !== null && !(other.lastTime < this.lastTime)) {
      this.last = other.last;
      this.lastTime = other.lastTime;
    }
    if (this.values && other.values) for (const v of other.values) this.values.push(v);
    else if (this.histogram && other.histogram) this.histogram.add(other.histogram);
    else if (this.distribution && other.count)
      throw new Error(
        `cannot merge a ${other.distribution || 'distribution-less'} accumulator into a ${this.distribution} one`,
      );
    this.sorted = null;
    return this;
  }

  percentile(p) {
    if (this.histogram) return this.histogram.percentile(p, this.min, this.max);
    return percentile(this.sortedValues(), p);
  }

  // An exact cell's values in ascending order (kept until the next add or merge).
  sortedValues() {
    if (this.histogram) throw new Error('sortedValues: a histogram cell keeps no values');
    this.sorted ??= Float64Array.from(this.values).sort();
    return this.sorted;
  }

  // A threshold's or summary's stat ('p(95)', 'med', 'avg', 'rate', 'count', 'value'...).
  stat(stat) {
    if (this.type === 'rate') return stat === 'rate' ? (this.count ? this.nonZero / this.count : 0) : null;
    if (this.type === 'counter') return stat === 'count' ? this.sum : null;
    if (this.type === 'gauge')
      return this.count ? ({ value: this.last, min: this.min, max: this.max }[stat] ?? null) : null;
    if (!this.count) return 0;
    if (stat === 'count') return this.count;
    if (stat === 'min') return this.min;
    if (stat === 'max') return this.max;
    if (stat === 'avg') return this.sum / this.count;
    if (stat === 'med') return this.percentile(0.5);
    const m = PERCENTILE.exec(stat);
    return m ? this.percentile(Number(m[1]) / 100) : null;
  }

  // The statistics in summary.json's names (common/results.js statsOf), null without samples.
  stats() {
    if (!this.count) return null;
    if (this.type === 'rate') return { rate: this.stat('rate'), count: this.nonZero, total: this.count };
    if (this.type === 'counter') return { count: this.sum };
    if (this.type === 'gauge') return { value: this.last, min: this.min, max: this.max };
    return {
      count: this.count,
      min: this.min,
      max: this.max,
      avg: this.stat('avg'),
      p50: this.stat('med'),
      p90: this.stat('p(90)'),
      p95: this.stat('p(95)'),
      p99: this.stat('p(99)'),
    };
  }

  // The exact part as stored in histograms.json.gz (the histogram is added by the caller).
  toJSON() {
    const o = { count: this.count, sum: this.sum, nonZero: this.nonZero };
    if (this.count) Object.assign(o, { min: this.min, max: this.max });
    if (this.type === 'gauge' && this.last !== null) Object.assign(o, { last: this.last, lastTime: this.lastTime });
    if (this.histogram) Object.assign(o, this.histogram.toJSON());
    return o;
  }

  static fromJSON(type, o) {
    const a = new Accumulator(type, 'hdr');
    a.count = o.count;
    a.sum = o.sum;
    a.nonZero = o.nonZero;
    if (o.count) {
      a.min = o.min;
      a.max = o.max;
    }
    if (o.last !== undefined) {
      a.last = o.last;
      a.lastTime = o.lastTime;
    }
    if (a.distribution === 'hdr') a.histogram = TrendHistogram.fromJSON(o);
    return a;
  }
}
