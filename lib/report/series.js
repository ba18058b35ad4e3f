// A run's samples folded per metric and tag set, as they stream in: the run
// folder's histograms.json.gz (docs/results-schema.md, "histograms.json.gz"),
// from which any sub-metric (a metric and some of its tags) is the sum of the
// series that carry those tags. Counters, rates and gauges are kept exactly;
// a trend keeps count, sum, min and max exactly and its distribution as an
// HdrHistogram (histograms.js).
//
// Bounded: k6's per-request tags whose values are unbounded (url, name, error)
// are dropped, and a metric keeps at most MAX_SERIES_PER_METRIC tag sets
// (further ones are counted in `overflow`, and that metric cannot be answered
// from the file).
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseKey } from '../../common/results.js';
import { HDR_METHOD, SIGNIFICANT_DIGITS, UNITS_PER_VALUE } from './histograms.js';
import { parseMetric, parsePoint, pointMetric, readLines, SamplesError } from './k6-json.js';
import { Accumulator } from './metric-sinks.js';

export const FORMAT = 'k6pack-histograms';
export const FORMAT_VERSION = 1;
export const DROPPED_TAGS = ['url', 'name', 'error'];
export const MAX_SERIES_PER_METRIC = 5000;
// Distinct raw tag texts remembered per metric (a url tag makes many; past this the cache starts over).
const MEMO_LIMIT = 20000;

const HDR_LIBRARY = 'hdr-histogram-js 3.0.1';

export class SeriesSet {
  // metrics: a Set of metric names to keep (null: all).
  constructor({ metrics = null } = {}) {
    this.only = metrics;
    this.types = new Map(); // metric -> { type, contains }
    this.byMetric = new Map(); // metric -> Map(tag-set key -> { tags, acc })
    this.memo = new Map(); // metric -> Map(raw tags text -> acc)
    this.overflow = {}; // metric -> samples not kept (too many tag sets)
    this.samples = 0;
  }

  // One line of k6's JSON output. Lines that are not Points or Metrics are ignored.
  addLine(line) {
    const metric = pointMetric(line);
    if (metric === null) {
      const m = parseMetric(line);
      if (m && !this.types.has(m.name)) this.types.set(m.name, { type: m.type, contains: m.contains });
      return;
    }
    if (this.only && !this.only.has(metric)) return;
    const p = parsePoint(line);
    if (!p) return;
    this.samples++;
    let memo = this.memo.get(metric);
    if (!memo) this.memo.set(metric, (memo = new Map()));
    let acc = memo.get(p.tags);
    if (acc === undefined) {
      acc = this.seriesFor(metric, JSON.parse(p.tags));
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(p.tags, acc);
    }
    if (acc) acc.add(p.value, p.time);
    else this.overflow[metric] = (this.overflow[metric] || 0) + 1;
  }

  // The accumulator of a metric's tag set (less the dropped tags), or null past the limit.
  seriesFor(metric, tags) {
    for (const t of DROPPED_TAGS) delete tags[t];
    const key = JSON.stringify(
      Object.keys(tags)
        .sort()
        .map((k) => [k, tags[k]]),
    );
    let series = this.byMetric.get(metric);
    if (!series) this.byMetric.set(metric, (series = new Map()));
    let s = series.get(key);
    if (!s) {
      if (series.size >= MAX_SERIES_PER_METRIC) return null;
      // A Point before its Metric line (never seen from k6): kept as a trend, the most general.
      s = { tags, acc: new Accumulator(this.types.get(metric)?.type || 'trend', 'hdr') };
      series.set(key, s);
    }
    return s.acc;
  }

  // Reads a samples file (k6 --out json, gzipped or not) into the set.
  async readSamples(file) {
    await readLines(file, (line) => this.addLine(line));
    return this;
  }

  // The series of one metric: [{ tags, acc }].
  seriesOf(metric) {
    return [...(this.byMetric.get(metric)?.values() || [])];
  }

  typeOf(metric) {
    return this.types.get(metric)?.type || null;
  }

  // Why a sub-metric key cannot be answered from this set, or null when it can.
  cannotAnswer(key) {
    const { metric, tags } = parseKey(key);
    const dropped = Object.keys(tags).filter((t) => DROPPED_TAGS.includes(t));
    if (dropped.length) return `it does not keep the tag ${dropped.join(', ')} (${key})`;
    if (this.overflow[metric]) return `${metric} had more than ${MAX_SERIES_PER_METRIC} tag sets (${key})`;
    return null;
  }

  toDocument(source) {
    const metrics = {};
    for (const [name, series] of this.byMetric) {
      const { type = 'trend', contains = null } = this.types.get(name) || {};
      metrics[name] = {
        type,
        contains,
        series: [...series.values()].map(({ tags, acc }) => ({ tags, ...acc.toJSON() })),
      };
    }
    return {
      format: FORMAT,
      version: FORMAT_VERSION,
      source,
      precision: {
        method: HDR_METHOD,
        library: HDR_LIBRARY,
        significantDigits: SIGNIFICANT_DIGITS,
        unitsPerValue: UNITS_PER_VALUE,
        encoding: 'HdrHistogram V2 compressed, base64',
      },
      samples: this.samples,
      droppedTags: DROPPED_TAGS,
      overflow: this.overflow,
      metrics,
    };
  }

  static fromDocument(doc, what = 'histograms') {
    if (!doc || doc.format !== FORMAT || doc.version !== FORMAT_VERSION || typeof doc.metrics !== 'object') {
      throw new SamplesError(
        `${what} is not a ${FORMAT} document of version ${FORMAT_VERSION} (found ${doc && doc.format} ${doc && doc.version})`,
      );
    }
    const set = new SeriesSet();
    set.samples = doc.samples;
    set.overflow = doc.overflow || {};
    for (const [name, m] of Object.entries(doc.metrics)) {
      set.types.set(name, { type: m.type, contains: m.contains });
      const series = new Map();
      for (const { tags, ...rest } of m.series)
        series.set(
          JSON.stringify(
            Object.keys(tags)
              .sort()
              .map((k) => [k, tags[k]]),
          ),
          { tags, acc: Accumulator.fromJSON(m.type, rest) },
        );
      set.byMetric.set(name, series);
    }
    return set;
  }

  write(file, source) {
    writeFileSync(file, gzipSync(JSON.stringify(this.toDocument(source))));
  }

  static read(file) {
    let doc;
    try {
      doc = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8'));
    } catch (err) {
      throw new SamplesError(`${file} cannot be read (${err.message.split('\n')[0]})`);
    }
    return SeriesSet.fromDocument(doc, file);
  }
}
