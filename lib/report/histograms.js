// A trend's distribution kept as an HdrHistogram (hdr-histogram-js), so runs of
// any size merge in bounded memory: a histogram adds to another bucket by
// bucket, and its percentiles stay within a stated precision of the exact ones.
//
// Precision: values are recorded as integers in millionths of the metric's unit
// (Math.round(value x 1e6): nanoseconds for the pack's millisecond trends), in a
// histogram of 3 significant digits, whose buckets are at most 1/1024 of their
// value wide. A value at a rank is reported as its bucket's middle, clamped to
// the exact min and max (which are kept beside the histogram, as are count and
// sum): within 1/2048 of the true value, plus the recording step of 1e-6. A
// percentile is k6's (metrics/sink.go: linear between the values at ranks
// floor and ceil of p x (n - 1)), taken on those values: within 0.1 % of the
// exact percentile of the same samples. Negative values (a clock skew in
// push_latency) go to a second histogram of their magnitudes.
import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js';

export const SIGNIFICANT_DIGITS = 3;
export const UNITS_PER_VALUE = 1e6;
// What summary.json, summary.md and the report say about a percentile from histograms.
export const HDR_METHOD = `hdr (${SIGNIFICANT_DIGITS} significant digits)`;
// The stated bound, relative to the larger of the two values k6 interpolates between.
export const RELATIVE_PRECISION = 10 ** -SIGNIFICANT_DIGITS;

const newHistogram = () =>
  build({
    bitBucketSize: 64,
    numberOfSignificantValueDigits: SIGNIFICANT_DIGITS,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 2,
    autoResize: true,
    useWebAssembly: false,
  });

const decode = (text) => {
  const h = decodeFromCompressedBase64(text, 64, false);
  h.autoResize = true;
  return h;
};

// The k-th recorded value (0-based, ascending) of one histogram of magnitudes,
// as its bucket's middle, in recorded units; counts walk up from the lowest bucket.
function magnitudeAt(h, k) {
  let seen = 0;
  for (let i = 0; i < h.countsArrayLength; i++) {
    seen += h.getCountAtIndex(i);
    if (seen > k) return h.medianEquivalentValue(h.valueFromIndex(i));
  }
  return h.maxValue;
}

export class TrendHistogram {
  constructor() {
    this.positive = null; // values >= 0
    this.negative = null; // -value for values < 0
  }

  record(value) {
    const units = Math.round(Math.abs(value) * UNITS_PER_VALUE);
    if (value < 0 && units > 0) (this.negative ??= newHistogram()).recordValue(units);
    else (this.positive ??= newHistogram()).recordValue(units);
  }

  add(other) {
    if (other.positive) (this.positive ??= newHistogram()).add(other.positive);
    if (other.negative) (this.negative ??= newHistogram()).add(other.negative);
  }

  get count() {
    return (this.positive?.totalCount || 0) + (this.negative?.totalCount || 0);
  }

  // The value at rank r (0-based, ascending), approximately (see the top).
  valueAtRank(r) {
    const neg = this.negative?.totalCount || 0;
    if (r < neg) return -magnitudeAt(this.negative, neg - 1 - r) / UNITS_PER_VALUE;
    return magnitudeAt(this.positive, r - neg) / UNITS_PER_VALUE;
  }

  // k6's percentile (p in 0..1) over n = count values, clamped to the exact [min, max].
  percentile(p, min, max) {
    const n = this.count;
    if (n === 0) return 0;
    const i = p * (n - 1);
    const lo = Math.floor(i);
    const hi = Math.ceil(i);
    const clamp = (v) => Math.min(max, Math.max(min, v));
    const j = lo === 0 ? min : clamp(this.valueAtRank(lo));
    const k = hi === n - 1 ? max : clamp(this.valueAtRank(hi));
    return j + (k - j) * (i - lo);
  }

  // HdrHistogram's V2 compressed encoding, base64 (readable by any HdrHistogram implementation).
  toJSON() {
    return {
      ...(this.positive ? { hdr: encodeIntoCompressedBase64(this.positive) } : {}),
      ...(this.negative ? { hdrNegative: encodeIntoCompressedBase64(this.negative) } : {}),
    };
  }

  static fromJSON({ hdr, hdrNegative }) {
    const t = new TrendHistogram();
    if (hdr) t.positive = decode(hdr);
    if (hdrNegative) t.negative = decode(hdrNegative);
    return t;
  }
}
