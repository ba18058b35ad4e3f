// Quantiles, one definition for the whole pack: k6's own (TrendSink.P, metrics/sink.go in
// k6 v1.8.1), linear between the two closest ranks, so that a percentile the pack computes
// from samples equals the one k6 prints. The median is the 0.5 quantile: for an even count,
// the mean of the middle two. Plain ES module with no imports (k6 and Node both load it).
//
// (common/recovery.js picks its median sample, with the terms that made it, rather than a
// value between two samples; common/model.js's quantile is of a distribution, not of samples.)

// Where quantile p (0..1) falls among n sorted values: the two closest ranks and the
// fraction between them. For values that are not numbers (common/model.js radioWake mixes
// each field of the two operations around its quantile).
export function quantileRank(n, p) {
  const i = p * (n - 1);
  return { lo: Math.floor(i), hi: Math.ceil(i), f: i - Math.floor(i) };
}

// p in 0..1 over values already sorted ascending; null when there are none.
export function quantileSorted(sorted, p) {
  if (!sorted.length) return null;
  const { lo, hi, f } = quantileRank(sorted.length, p);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * f;
}

// p in 0..1 over any values (the finite ones, sorted in a copy); null when there are none.
export const quantile = (values, p) =>
  quantileSorted(
    values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b),
    p,
  );

export const median = (values) => quantile(values, 0.5);
