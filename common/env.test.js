// Settings read from an environment object (common/env.js): each reader's fallback
// for an absent or empty value, the values it accepts, its bounds, and the one
// sentence (a string, which k6 prints as it is) for a bad value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configError, envBool, envInt, envIntList, envNames, envNumber, envSeconds } from './env.js';

// The one-line string a reader throws, for assert.throws.
const says = (text) => (err) => {
  assert.equal(err, text);
  return true;
};

test('configError is the message itself, a string of one line', () => {
  assert.equal(configError('X=1 must be 2'), 'X=1 must be 2');
  assert.equal(typeof configError(42), 'string');
});

test('absent or empty: the fallback, whatever it is', () => {
  for (const [read, fallback] of [
    [envInt, 7],
    [envNumber, 0.5],
    [envIntList, [1, 2]],
    [envSeconds, 90],
    [envBool, true],
  ]) {
    assert.equal(read({}, 'N', fallback), fallback, read.name);
    assert.equal(read({ N: '' }, 'N', fallback), fallback, read.name);
  }
  assert.deepEqual(envNames({ N: '' }, 'N', ['a'], ['a', 'b']), ['a']);
  assert.equal(envInt({ OTHER: '5' }, 'N', undefined), undefined);
});

test('envInt: a whole number within its bounds', () => {
  assert.equal(envInt({ N: '42' }, 'N', 1), 42);
  assert.equal(envInt({ N: ' 8 ' }, 'N', 1), 8);
  assert.equal(envInt({ N: 3 }, 'N', 1), 3);
  assert.equal(envInt({ N: '0' }, 'N', 1), 0);
  assert.equal(envInt({ N: '10' }, 'N', 1, { min: 10, max: 10 }), 10);
  assert.throws(
    () => envInt({ N: '1.5' }, 'N', 1),
    says(`N=1.5 must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`),
  );
  assert.throws(
    () => envInt({ N: 'ten' }, 'N', 1),
    says(`N=ten must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`),
  );
  assert.throws(
    () => envInt({ N: '-1' }, 'N', 1),
    says(`N=-1 must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`),
  );
  assert.throws(
    () => envInt({ N: '101' }, 'N', 1, { min: 1, max: 100 }),
    says('N=101 must be a whole number from 1 to 100'),
  );
  assert.throws(
    () => envInt({ N: '0' }, 'N', 1, { min: 1, max: 100 }),
    says('N=0 must be a whole number from 1 to 100'),
  );
});

test('envNumber: decimals allowed, within its bounds; not a number or infinite is refused', () => {
  assert.equal(envNumber({ X: '0.25' }, 'X', 1), 0.25);
  assert.equal(envNumber({ X: '-3' }, 'X', 1), -3);
  assert.equal(envNumber({ X: '1e3' }, 'X', 1), 1000);
  assert.equal(envNumber({ X: '2' }, 'X', 1, { min: 1, max: 2 }), 2);
  assert.throws(() => envNumber({ X: 'fast' }, 'X', 1), says('X=fast must be a number from -Infinity to Infinity'));
  assert.throws(
    () => envNumber({ X: 'Infinity' }, 'X', 1),
    says('X=Infinity must be a number from -Infinity to Infinity'),
  );
  assert.throws(() => envNumber({ X: '2.5' }, 'X', 1, { min: 1, max: 2 }), says('X=2.5 must be a number from 1 to 2'));
  assert.throws(() => envNumber({ X: '0.5' }, 'X', 1, { min: 1, max: 2 }), says('X=0.5 must be a number from 1 to 2'));
});

test('envIntList: comma-separated whole numbers; the sentence names the bad item', () => {
  assert.deepEqual(envIntList({ NS: '100,1000' }, 'NS', [1]), [100, 1000]);
  assert.deepEqual(envIntList({ NS: ' 1 , 2 ,3' }, 'NS', [1]), [1, 2, 3]);
  assert.deepEqual(envIntList({ NS: '5' }, 'NS', [1]), [5]);
  assert.deepEqual(envIntList({ NS: 7 }, 'NS', [1]), [7]);
  assert.throws(
    () => envIntList({ NS: '1,2,x' }, 'NS', [1]),
    says(`NS=1,2,x: item 3 must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`),
  );
  assert.throws(
    () => envIntList({ NS: '10,2000' }, 'NS', [1], { min: 1, max: 1000 }),
    says('NS=10,2000: item 2 must be a whole number from 1 to 1000'),
  );
  // An empty item is 0, below a minimum of 1.
  assert.throws(
    () => envIntList({ NS: '1,,2' }, 'NS', [1], { min: 1 }),
    says(`NS=1,,2: item 2 must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`),
  );
});

test('envNames: comma-separated names, each one of the known ones, at least one', () => {
  const known = ['plain', 'jit', 'dataloader'];
  assert.deepEqual(envNames({ E: 'plain,jit' }, 'E', ['plain'], known), ['plain', 'jit']);
  assert.deepEqual(envNames({ E: ' jit , ,dataloader, ' }, 'E', ['plain'], known), ['jit', 'dataloader']);
  assert.throws(
    () => envNames({ E: 'plain,fast' }, 'E', ['plain'], known),
    says('E=plain,fast: "fast" is not one of plain, jit, dataloader'),
  );
  assert.throws(
    () => envNames({ E: 'JIT' }, 'E', ['plain'], known),
    says('E=JIT: "JIT" is not one of plain, jit, dataloader'),
  );
  assert.throws(
    () => envNames({ E: ' , ' }, 'E', ['plain'], known),
    says('E= names nothing: give one or more of plain, jit, dataloader'),
  );
});

test('envSeconds: seconds by default, or with s, m or h', () => {
  assert.equal(envSeconds({ D: '90' }, 'D', 1), 90);
  assert.equal(envSeconds({ D: '90s' }, 'D', 1), 90);
  assert.equal(envSeconds({ D: '15m' }, 'D', 1), 900);
  assert.equal(envSeconds({ D: '1h' }, 'D', 1), 3600);
  assert.equal(envSeconds({ D: '1.5m' }, 'D', 1), 90);
  assert.equal(envSeconds({ D: ' 2m ' }, 'D', 1), 120);
  for (const raw of ['90ms', '1m30s', '-5s', 'soon', '5 m', '1d'])
    assert.throws(
      () => envSeconds({ D: raw }, 'D', 1),
      says(`D=${raw} must be a duration such as 90s, 15m or 1h`),
      raw,
    );
});

test('envBool: true, false, 1, 0, yes and no in any case; anything else is refused', () => {
  for (const raw of ['1', 'true', 'TRUE', 'yes', 'Yes']) assert.equal(envBool({ B: raw }, 'B', false), true, raw);
  for (const raw of ['0', 'false', 'False', 'no', 'NO']) assert.equal(envBool({ B: raw }, 'B', true), false, raw);
  for (const raw of ['on', 'off', 'y', '2', 'truee'])
    assert.throws(() => envBool({ B: raw }, 'B', true), says(`B=${raw} must be true or false`), raw);
});
