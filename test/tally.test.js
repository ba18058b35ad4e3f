// Fan-out's bookkeeping of one subscriber's events (scenarios/lib/tally.js):
// what counts as missed, late or a duplicate, and where a subscription began.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Spread, Tally } from '../scenarios/lib/tally.js';

test('in order, nothing missed; a gap never filled and the tail count as missed', () => {
  const t = new Tally();
  for (const seq of [1, 2, 3]) assert.equal(t.take(seq), 'new');
  assert.deepEqual(t.finish(3), { missed: 0, duplicates: 0 });
  const u = new Tally();
  for (const seq of [1, 3]) u.take(seq);
  assert.deepEqual(u.finish(5), { missed: 3, duplicates: 0 }); // 2, 4 and 5
});

test('out of order counts as missed; twice counts as a duplicate', () => {
  const t = new Tally();
  assert.deepEqual([t.take(1), t.take(3), t.take(2), t.take(3)], ['new', 'new', 'late', 'duplicate']);
  assert.deepEqual(t.finish(3), { missed: 1, duplicates: 1 });
});

test('begin(seq): a subscription that began after event seq is owed only the later events', () => {
  const t = new Tally();
  t.begin(9);
  for (const seq of [10, 11, 12]) t.take(seq);
  assert.deepEqual(t.finish(12), { missed: 0, duplicates: 0 });
  const tail = new Tally();
  tail.begin(9);
  tail.take(10);
  assert.deepEqual(tail.finish(12), { missed: 2, duplicates: 0 });
  // only before any event: a marker after events changes nothing
  const late = new Tally();
  late.take(1);
  late.begin(5);
  assert.deepEqual(late.finish(3), { missed: 2, duplicates: 0 });
  // a marker at 0 (nothing published yet) is the plain case
  const zero = new Tally();
  zero.begin(0);
  zero.take(1);
  assert.deepEqual(zero.finish(1), { missed: 0, duplicates: 0 });
});

test('Spread: last minus first receipt of each event, in seq order', () => {
  const s = new Spread();
  s.add(2, 100);
  s.add(1, 10);
  s.add(1, 14);
  s.add(2, 103);
  s.add(1, 12);
  assert.deepEqual(s.spreads(), [4, 3]);
});
