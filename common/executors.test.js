// The GraphQL server's executors (common/executors.js), chosen per request through
// `extensions.executor`: the default without one, each known name, and the one
// sentence for anything else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_EXECUTOR, EXECUTOR_NAMES, EXECUTORS, executorOf } from './executors.js';

test('the executors, each with a description; plain is the default', () => {
  assert.deepEqual(EXECUTOR_NAMES, ['plain', 'per-item', 'dataloader', 'instrumented', 'jit']);
  assert.equal(DEFAULT_EXECUTOR, 'plain');
  for (const name of EXECUTOR_NAMES) assert.ok(EXECUTORS[name].length > 20, name);
});

test('no extensions or no executor in them: the default', () => {
  for (const ext of [undefined, null, {}, { executor: null }, { other: 1 }, 'jit', 42])
    assert.deepEqual(executorOf(ext), { value: 'plain' }, JSON.stringify(ext));
});

test('each known name is taken as it is', () => {
  for (const name of EXECUTOR_NAMES) assert.deepEqual(executorOf({ executor: name }), { value: name });
});

test('an unknown name, another case or another type: one sentence listing the executors', () => {
  const list = 'plain, per-item, dataloader, instrumented, jit';
  assert.deepEqual(executorOf({ executor: 'fast' }), {
    error: `extensions.executor must be one of ${list} (got "fast")`,
  });
  assert.deepEqual(executorOf({ executor: 'JIT' }), {
    error: `extensions.executor must be one of ${list} (got "JIT")`,
  });
  assert.deepEqual(executorOf({ executor: 3 }), { error: `extensions.executor must be one of ${list} (got 3)` });
  assert.deepEqual(executorOf({ executor: ['jit'] }), {
    error: `extensions.executor must be one of ${list} (got ["jit"])`,
  });
  // Names of Object's own properties are not executors.
  assert.deepEqual(executorOf({ executor: 'toString' }), {
    error: `extensions.executor must be one of ${list} (got "toString")`,
  });
});
