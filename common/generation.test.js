// The x-generate header (common/generation.js) the GraphQL server reads and the k6
// clients send: its format, the values it parses to, its bounds (LIMITS), and the one
// sentence each bad header gets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LIMITS } from './defaults.js';
import { formatGenerate, GENERATE_HEADER, NO_GENERATION, parseGenerate, RESOLVE_STRATEGIES } from './generation.js';

const EXAMPLE = '"x-generate: delay=20, hits=15, resolve=serial"';

test('formatGenerate writes the header value, with the defaults for what is not given', () => {
  assert.equal(GENERATE_HEADER, 'x-generate');
  assert.equal(formatGenerate({ delay: 20, hits: 15, resolve: 'serial' }), 'delay=20, hits=15, resolve=serial');
  assert.equal(formatGenerate({ delay: 5 }), 'delay=5, hits=0, resolve=parallel');
  assert.equal(formatGenerate(), 'delay=0, hits=0, resolve=parallel');
});

test('an absent or empty header: no generation time', () => {
  for (const text of [undefined, null, '', '   '])
    assert.deepEqual(parseGenerate(text), { value: { delay: 0, hits: 0, resolve: 'parallel' } }, String(text));
  assert.ok(Object.isFrozen(NO_GENERATION));
});

test('parseGenerate reads back what formatGenerate writes, and any order or spacing', () => {
  for (const resolve of RESOLVE_STRATEGIES) {
    const value = { delay: 20, hits: 15, resolve };
    assert.deepEqual(parseGenerate(formatGenerate(value)), { value });
  }
  assert.deepEqual(parseGenerate('resolve=dataloader,hits=3'), { value: { delay: 0, hits: 3, resolve: 'dataloader' } });
  assert.deepEqual(parseGenerate(' delay = 7 '), { value: { delay: 7, hits: 0, resolve: 'parallel' } });
  // The bounds themselves are allowed.
  assert.deepEqual(parseGenerate(`delay=${LIMITS.MAX_GENERATE_DELAY_MS}, hits=${LIMITS.MAX_PAGE_SIZE}`), {
    value: { delay: LIMITS.MAX_GENERATE_DELAY_MS, hits: LIMITS.MAX_PAGE_SIZE, resolve: 'parallel' },
  });
  // A parse never changes the shared default.
  parseGenerate('delay=9');
  assert.deepEqual({ ...NO_GENERATION }, { delay: 0, hits: 0, resolve: 'parallel' });
});

test('a number out of bounds or not a whole number: which key, its bounds and what was given', () => {
  const max = LIMITS.MAX_GENERATE_DELAY_MS;
  assert.deepEqual(parseGenerate(`delay=${max + 1}`), {
    error: `x-generate: delay must be an integer from 0 to ${max} (got "${max + 1}")`,
  });
  assert.deepEqual(parseGenerate(`hits=${LIMITS.MAX_PAGE_SIZE + 1}`), {
    error: `x-generate: hits must be an integer from 0 to ${LIMITS.MAX_PAGE_SIZE} (got "${LIMITS.MAX_PAGE_SIZE + 1}")`,
  });
  // A semicolon is no separator: what follows the = up to the next comma is the value.
  for (const raw of ['-1', '1.5', 'ten', '', '1e3', '20;hits=1'])
    assert.deepEqual(parseGenerate(`delay=${raw}`), {
      error: `x-generate: delay must be an integer from 0 to ${max} (got "${raw}")`,
    });
});

test('an unknown strategy, an unknown key or a part that is not key=value: one sentence each', () => {
  assert.deepEqual(parseGenerate('resolve=batched'), {
    error: 'x-generate: resolve must be one of serial, parallel, dataloader (got "batched")',
  });
  assert.deepEqual(parseGenerate('delay=1, wait=5'), {
    error: `x-generate: unknown key "wait": use delay, hits and resolve, such as ${EXAMPLE}`,
  });
  // A key that is a property every object inherits is unknown too.
  assert.deepEqual(parseGenerate('constructor=1'), {
    error: `x-generate: unknown key "constructor": use delay, hits and resolve, such as ${EXAMPLE}`,
  });
  for (const text of ['delay 20', 'delay=20,', 'Delay=20', 'delay=2 0', '=5'])
    assert.deepEqual(parseGenerate(text), {
      error: `x-generate must be key=value pairs separated by commas, such as ${EXAMPLE} (got "${text}")`,
    });
});
