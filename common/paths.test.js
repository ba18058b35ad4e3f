// Paths in k6 (common/paths.js): '..' and '.' folded away, and a path the user gave
// made absolute from k6's working directory unless it already is (or there is none).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalize, resolveFrom } from './paths.js';

test('normalize folds . and .. and repeated slashes into one absolute path', () => {
  assert.equal(normalize('/a/b/../c/./d'), '/a/c/d');
  assert.equal(normalize('/a//b///c/'), '/a/b/c');
  assert.equal(normalize('/a/b/c/../../..'), '/');
  // Above the root stays at the root, as a shell's cd does.
  assert.equal(normalize('/../../etc/passwd'), '/etc/passwd');
  assert.equal(normalize('/'), '/');
  assert.equal(normalize(''), '/');
  // A relative path comes back rooted: resolveFrom gives it its directory first.
  assert.equal(normalize('x/./y'), '/x/y');
});

test('resolveFrom: a relative path from the directory, an absolute one unchanged', () => {
  assert.equal(resolveFrom('/home/me/pack', 'results/run1'), '/home/me/pack/results/run1');
  assert.equal(resolveFrom('/home/me/pack', '../profiles/my.json'), '/home/me/profiles/my.json');
  assert.equal(resolveFrom('/home/me/pack/', './thresholds.json'), '/home/me/pack/thresholds.json');
  assert.equal(resolveFrom('/home/me/pack', '/tmp/plan.json'), '/tmp/plan.json');
  // An absolute path is not normalized: it is what the user wrote.
  assert.equal(resolveFrom('/home/me', '/tmp/../plan.json'), '/tmp/../plan.json');
});

test('resolveFrom: without a working directory the path is left as given', () => {
  assert.equal(resolveFrom(undefined, 'results/run1'), 'results/run1');
  assert.equal(resolveFrom('', '../x.json'), '../x.json');
  assert.equal(resolveFrom(null, 'a/b'), 'a/b');
});
