// dev/spread.js: the run-to-run spread of gated figures and each budget's margin in
// standard deviations (bench/gate-trust.js reports them over its clean gates).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spreadOf } from '../dev/spread.js';

const fig = (key, stat, limit, observed, run) => ({ scenario: 's', profile: 'lte', key, stat, limit, observed, run });

test('mean, sample sd, CV and the margin in sd per gated figure, smallest margin first', () => {
  const figures = [
    ...[100, 102, 98, 101, 99].map((v, i) => fig('op_duration{scenario:a_c1}', 'p(50)', 110, v, i + 1)),
    ...[70, 72, 71, 70, 72].map((v, i) => fig('op_duration{scenario:b_c1}', 'p(50)', 105, v, i + 1)),
  ];
  const s = spreadOf(figures, 3);
  assert.equal(s.gates, 2);
  const a = s.rows[0];
  assert.equal(a.key, 'op_duration{scenario:a_c1}');
  assert.equal(a.mean, 100);
  assert.equal(a.sd, 1.58); // sqrt(10 / 4)
  assert.equal(a['cv %'], 1.6);
  assert.equal(a['margin sd'], 6.3); // (110 - 100) / 1.58
  assert.equal(s.below.length, 0);
});

test('a budget closer than k sd to its mean is listed; counts, rates and single runs are not', () => {
  const figures = [
    ...[200, 215, 190, 210, 205].map((v, i) => fig('op_duration{scenario:c_c4}', 'p(50)', 215, v, i + 1)),
    ...[0, 0, 0].map((v, i) => fig('dropped_iterations{scenario:c_o50}', 'count', 0, v, i + 1)),
    ...[0.01, 0.0].map((v, i) => fig('op_failed', 'rate', 0.01, v, i + 1)),
    fig('op_duration{scenario:d_c1}', 'p(95)', 50, 40, 1),
  ];
  const s = spreadOf(figures, 3);
  assert.deepEqual(
    s.rows.map((r) => r.key),
    ['op_duration{scenario:c_c4}'],
  );
  assert.equal(s.below.length, 1);
  assert.ok(s.below[0]['margin sd'] < 3);
});

test('a figure that never moved has an unbounded margin when under its limit, none when at it', () => {
  const s = spreadOf([
    ...[57, 57, 57].map((v, i) => fig('op_duration{scenario:g_c4}', 'p(50)', 58, v, i + 1)),
    ...[57, 57, 57].map((v, i) => fig('op_duration{scenario:h_c4}', 'p(50)', 57, v, i + 1)),
  ]);
  assert.equal(s.rows.find((r) => r.key.includes('g_c4'))['margin sd'], Infinity);
  assert.equal(s.below.length, 1);
  assert.equal(s.below[0].key, 'op_duration{scenario:h_c4}');
});
