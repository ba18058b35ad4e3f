// The Server-Timing format both servers send and the k6 clients parse
// (common/server-timing.js): written rounded to the microsecond, read back entry by
// entry (other parameters, spacing, an array of header values, entries without dur=
// skipped), and the server's whole time from it, by the fast path and the parsed one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatServerTiming, parseServerTiming, roundMs, serverTotal, serverTotalOf } from './server-timing.js';

test('formatServerTiming: the three parts, rounded to the microsecond', () => {
  assert.equal(roundMs(1.23456), 1.235);
  assert.equal(roundMs(0.0004), 0);
  assert.equal(
    formatServerTiming({ exec: 1.23456, ser: 0.4, total: 1.6349999 }),
    'exec;dur=1.235, ser;dur=0.4, total;dur=1.635',
  );
  assert.equal(formatServerTiming({ exec: 0, ser: 0, total: 0 }), 'exec;dur=0, ser;dur=0, total;dur=0');
  // The GraphQL server's HTTP answers add the process's CPU time, last.
  assert.equal(
    formatServerTiming({ exec: 1, ser: 0.5, total: 2, cpu: 1.80049 }),
    'exec;dur=1, ser;dur=0.5, total;dur=2, cpu;dur=1.8',
  );
});

test('parseServerTiming reads back what formatServerTiming writes', () => {
  const header = formatServerTiming({ exec: 12.5, ser: 0.25, total: 13 });
  assert.deepEqual(parseServerTiming(header), { exec: 12.5, ser: 0.25, total: 13 });
  const withCpu = formatServerTiming({ exec: 12.5, ser: 0.25, total: 13, cpu: 11.75 });
  assert.deepEqual(parseServerTiming(withCpu), { exec: 12.5, ser: 0.25, total: 13, cpu: 11.75 });
  assert.equal(serverTotalOf(withCpu), 13);
});

test('parseServerTiming: other parameters, spacing, arrays; entries without a usable dur= are skipped', () => {
  assert.deepEqual(parseServerTiming('db;desc="query";dur=3.5, app ; dur=1,cache;desc=hit'), { db: 3.5, app: 1 });
  // The last dur= of an entry counts; a parameter ending in "dur" is not it.
  assert.deepEqual(parseServerTiming('a;dur=1;dur=2, b;xdur=9, c;maxdur=4;dur=5'), { a: 2, c: 5 });
  // gRPC's trailer may come as several values.
  assert.deepEqual(parseServerTiming(['exec;dur=1', 'total;dur=2']), { exec: 1, total: 2 });
  // Negative, empty or non-numeric durations, and names that are no token: skipped.
  assert.deepEqual(parseServerTiming('a;dur=-1, b;dur=, c;dur=soon, d e;dur=3, ok;dur=0'), { ok: 0 });
  assert.equal(parseServerTiming('total'), null);
  assert.equal(parseServerTiming('no timing here'), null);
  assert.equal(parseServerTiming(''), null);
  assert.equal(parseServerTiming(undefined), null);
  assert.equal(parseServerTiming(null), null);
});

test('serverTotal: the total, else the longest entry (entries may nest), else null', () => {
  assert.equal(serverTotal({ exec: 1, ser: 0.5, total: 1.7 }), 1.7);
  assert.equal(serverTotal({ total: 0, db: 5 }), 0);
  assert.equal(serverTotal({ db: 3.5, app: 7, cache: 0.1 }), 7);
  assert.equal(serverTotal({}), null);
  assert.equal(serverTotal(null), null);
});

test("serverTotalOf: a total entry's value straight from the text, else the parsed header's", () => {
  assert.equal(serverTotalOf('exec;dur=1.2, ser;dur=0.4, total;dur=1.7'), 1.7);
  assert.equal(serverTotalOf('total;dur=9'), 9);
  assert.equal(serverTotalOf('exec;dur=1,\ttotal;dur=2.5'), 2.5);
  // "subtotal" is another entry: not the total; the longest entry then.
  assert.equal(serverTotalOf('subtotal;dur=50, app;dur=60'), 60);
  assert.equal(serverTotalOf('subtotal;dur=50, total;dur=55'), 55);
  // A total whose dur= is not the first parameter: found by the parse.
  assert.equal(serverTotalOf('total;desc="all";dur=4, db;dur=9'), 4);
  // A total with no usable value: the other entries decide.
  assert.equal(serverTotalOf('total;dur=bad, db;dur=3'), 3);
  assert.equal(serverTotalOf(['db;dur=3', 'total;dur=8']), 8);
  assert.equal(serverTotalOf('nothing'), null);
  assert.equal(serverTotalOf(undefined), null);
});
