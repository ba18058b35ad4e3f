// The pack's one quantile: k6's definition (linear between the closest ranks).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { median, quantile, quantileRank, quantileSorted } from './quantiles.js';

test("quantiles as k6 computes them: linear between the closest ranks; the median of an even count is the middle two's mean", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(quantile([1, 2, 3, 4, 5], 0.95), 4.8);
  assert.equal(quantile([10], 0.95), 10);
  assert.equal(quantileSorted([1, 2, 3, 4], 0), 1);
  assert.equal(quantileSorted([1, 2, 3, 4], 1), 4);
  // Non-finite values are left out; none at all is null, not 0 or NaN.
  assert.equal(median([NaN, 5, Infinity, 1, null]), 3);
  assert.equal(median([]), null);
  assert.equal(quantileSorted([], 0.5), null);
  // The input is not reordered.
  const values = [3, 1, 2];
  median(values);
  assert.deepEqual(values, [3, 1, 2]);
});

test('quantileRank: the two closest ranks and the fraction between them, the rule quantileSorted applies', () => {
  assert.deepEqual(quantileRank(4, 0.5), { lo: 1, hi: 2, f: 0.5 }); // k6's median of 4: half-way
  assert.deepEqual(quantileRank(3, 0.5), { lo: 1, hi: 1, f: 0 });
  assert.deepEqual(quantileRank(1, 0.95), { lo: 0, hi: 0, f: 0 });
  const { lo, hi, f } = quantileRank(5, 0.95);
  assert.deepEqual([lo, hi], [3, 4]);
  assert.ok(Math.abs(f - 0.8) < 1e-12);
});
