// compare (and gate --baseline): what counts as a regression against a base run's
// noise (lib/report/compare.js). No k6: two summaries written here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareDocs, P95_MIN_MS } from '../lib/report/compare.js';

const doc = (p50, p95) => ({
  run: { scenario: 'api', profile: 'lan' },
  rows: [
    {
      id: 'grpc_fresh_c1 op:GetFeature',
      step: 'c1',
      lane: 'grpc_fresh',
      dims: {},
      latency: { count: 300, p50, p95 },
      failures: { rate: 0, total: 0 },
    },
  ],
});
const verdict = (base, cur, measure) => compareDocs(base, cur).lines.find((l) => l.measure === measure).verdict;

test('a p95 that moves by no more than the base tail or P95_MIN_MS is noise (two back-to-back gates: 3 -> 6 ms)', () => {
  assert.equal(P95_MIN_MS, 5);
  assert.equal(verdict(doc(2, 3), doc(2, 6), 'p95'), 'same');
  // Beyond both: a regression, as before.
  assert.equal(verdict(doc(2, 3), doc(2, 9), 'p95'), 'regression');
  // A wide base tail (a cold connection at the p95) takes more.
  assert.equal(verdict(doc(70, 140), doc(70, 200), 'p95'), 'same');
  assert.equal(verdict(doc(70, 140), doc(70, 230), 'p95'), 'regression');
});

test('the p50 keeps its rule: 10 % and 1 ms', () => {
  assert.equal(verdict(doc(70, 140), doc(84, 140), 'p50'), 'regression');
  assert.equal(verdict(doc(2, 3), doc(2.9, 3), 'p50'), 'same');
});
