import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DISCOVERY_VU, fill, hasTemplates, SAMPLE, setsOf, uuid4, variableSource } from './variables.js';

test('setsOf: one set or an array of them', () => {
  assert.deepEqual(setsOf({ a: 1 }), [{ a: 1 }]);
  assert.deepEqual(setsOf([{ a: 1 }, { a: 2 }]), [{ a: 1 }, { a: 2 }]);
  assert.deepEqual(setsOf(undefined), [{}]);
});

test('hasTemplates and fill: {{vu}} and {{iter}} alone are numbers, within text they are text', () => {
  assert.equal(hasTemplates({ a: [{ b: 'x-{{ uuid }}' }] }), true);
  assert.equal(hasTemplates({ a: '{{nope}}', b: 3 }), false);
  const ctx = { vu: 3, iter: 12, uuid: () => 'U' };
  assert.deepEqual(fill({ n: '{{vu}}', i: '{{ iter }}', s: 'r-{{vu}}-{{iter}}-{{uuid}}', k: [true, null, 2] }, ctx), {
    n: 3,
    i: 12,
    s: 'r-3-12-U',
    k: [true, null, 2],
  });
  assert.deepEqual(fill({ id: '{{vu}}' }, SAMPLE), { id: 1 });
  assert.equal(DISCOVERY_VU, 0);
});

test('uuid4: the version-4 form, and 10000 of them never repeat', () => {
  const seen = new Set();
  for (let i = 0; i < 10000; i++) {
    const u = uuid4();
    assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(u);
  }
  assert.equal(seen.size, 10000);
});

test("variableSource: sets cycled per call from the VU's own offset; templates filled per call; a plain set is the same object", () => {
  const sets = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
  const vu1 = variableSource(sets);
  const vu2 = variableSource(sets);
  assert.deepEqual(
    [1, 1, 1, 1].map((v) => vu1(v).id),
    ['b', 'c', 'a', 'b'],
  );
  assert.deepEqual(
    [2, 2, 2].map((v) => vu2(v).id),
    ['c', 'a', 'b'],
  );
  const plain = { id: '7' };
  const one = variableSource(plain);
  assert.equal(one(1), plain);
  assert.equal(one(5), plain);
  // {{vu}}-{{iter}} never repeats within a run: each VU counts its own calls.
  const ids = new Set();
  for (const vu of [0, 1, 2, 3]) {
    const next = variableSource({ id: 'r-{{vu}}-{{iter}}' });
    for (let i = 0; i < 50; i++) ids.add(next(vu).id);
  }
  assert.equal(ids.size, 200);
  const u = variableSource({ id: '{{uuid}}' });
  assert.notEqual(u(1).id, u(1).id);
});
