// The radio's terms and energy (common/radio.js) on cases computed by hand, and its
// timings against the link toxic's (tools/toxiproxy/radio_params.go).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import {
  batteryMj,
  batteryShare,
  drxBoundMs,
  energy,
  fachMs,
  RADIOS,
  rhythm,
  statePowers,
  tailMs,
  wake,
} from './radio.js';

const near = (got, want, what) =>
  assert.ok(Math.abs(got - want) < 1e-6 * Math.max(1, Math.abs(want)), `${what}: ${got}, want ${want}`);
const nearAll = (got, want, what) => {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), what);
  for (const k of Object.keys(want)) near(got[k], want[k], `${what} ${k}`);
};

test('the promotion a request pays after an idle gap: LTE past its 11.576 s tail, 3G from IDLE past 17 s or from FACH past 5 s', () => {
  assert.deepEqual(wake('lte', 20), { state: 'idle', promotionMs: 260, fachMs: 0 });
  assert.deepEqual(wake('lte', 11.576), { state: 'idle', promotionMs: 260, fachMs: 0 });
  assert.deepEqual(wake('lte', 11.5), { state: 'connected', promotionMs: 0, fachMs: 0 });
  assert.deepEqual(wake('3g', 17), { state: 'idle', promotionMs: 2000, fachMs: 0 });
  assert.deepEqual(wake('3g', 4.9), { state: 'dch', promotionMs: 0, fachMs: 0 });
  assert.deepEqual(wake('3g', 10), { state: 'fach', promotionMs: 1500, fachMs: 0 }, 'a large request promotes FACH');
  // A small one stays on FACH: 100 B up, 0.0014 x 100^2 + 1.6 x 100 + 20 = 194 ms; 200 B down, 0.1 x 200 + 10 = 30 ms.
  assert.deepEqual(wake('3g', 10, { upBytes: 100, downBytes: 200 }), { state: 'fach', promotionMs: 0, fachMs: 224 });
  // Over a threshold (540 B up, 475 B down) in either direction: promoted.
  assert.equal(wake('3g', 10, { upBytes: 540, downBytes: 475 }).promotionMs, 0);
  assert.equal(wake('3g', 10, { upBytes: 541, downBytes: 10 }).promotionMs, 1500);
  assert.equal(wake('3g', 10, { upBytes: 10, downBytes: 476 }).promotionMs, 1500);
  // The request within its buffer goes up on FACH first, then the answer promotes: 270 B up,
  // 0.0014 x 270^2 + 1.6 x 270 + 20 = 554.06 ms, then 1500. Past its own buffer, the
  // request waits for the promotion and FACH carries nothing.
  const big = wake('3g', 10, { upBytes: 270, downBytes: 1340 });
  assert.equal(big.promotionMs, 1500);
  assert.ok(Math.abs(big.fachMs - 554.06) < 1e-9, big.fachMs);
  assert.equal(wake('3g', 10, { upBytes: 541, downBytes: 1340 }).fachMs, 0);
  assert.equal(fachMs(true, 540), 0.0014 * 540 * 540 + 1.6 * 540 + 20);
  assert.equal(tailMs('lte'), 11576);
  assert.equal(tailMs('3g'), 17000);
  assert.throws(() => wake('2g', 1), /unknown radio "2g": give lte or 3g/);
});

test('the DRX bound: none within 100 ms of the last packet, a short cycle (20 ms) to 120 ms, a long one (40 ms) to the tail, none after', () => {
  assert.equal(drxBoundMs('lte', 0.05), 0);
  assert.equal(drxBoundMs('lte', 0.1), 0);
  assert.equal(drxBoundMs('lte', 0.11), 20);
  assert.equal(drxBoundMs('lte', 0.12), 20);
  assert.equal(drxBoundMs('lte', 0.121), 40);
  assert.equal(drxBoundMs('lte', 11.5), 40);
  assert.equal(drxBoundMs('lte', 12), 0, 'idle: the promotion, not DRX');
  assert.equal(drxBoundMs('3g', 1), 0);
});

test("each state's power: LTE's DRX cycles average one 1 ms on-duration at 1680.2 mW with the tail's 1060 mW, idle one 43.2 ms on-duration per 1.28 s", () => {
  nearAll(
    statePowers('lte'),
    {
      promotion: 1210.7,
      active: 1288.04,
      'tail-continuous': 1060,
      'tail-short-drx': (1680.2 + 19 * 1060) / 20, // 1091.01
      'tail-long-drx': (1680.2 + 39 * 1060) / 40, // 1075.505
      idle: (43.2 * 594.3) / 1280, // 20.0576
    },
    'lte',
  );
  nearAll(
    statePowers('3g'),
    { promotion: 530, 'fach-promotion': 550, active: 800, 'dch-tail': 800, 'fach-active': 460, fach: 460, idle: 0 },
    '3g',
  );
});

test('LTE, one operation of 0.1 s every 60 s: a promotion, the whole tail, idle the rest; 13.86 J an operation', () => {
  const opts = { periodS: 60, activeS: 0.1 };
  // 0.26 promotion + 0.1 active + 11.576 tail (0.1 continuous, 0.02 short DRX, 11.456 long DRX) + 48.064 idle = 60 s.
  nearAll(
    rhythm('lte', opts),
    {
      promotion: 0.26,
      active: 0.1,
      'tail-continuous': 0.1,
      'tail-short-drx': 0.02,
      'tail-long-drx': 11.456,
      idle: 48.064,
    },
    'seconds',
  );
  const e = energy('lte', opts);
  // 0.26 x 1210.7 + 0.1 x 1288.04 + 0.1 x 1060 + 0.02 x 1091.01 + 11.456 x 1075.505 + 48.064 x 20.057625
  const perOp = 314.782 + 128.804 + 106 + 21.8202 + 12320.98528 + 964.049688;
  near(e.perOpMj, perOp, 'mJ per operation');
  near(e.perHourMj, perOp * 60, 'mJ per hour (60 operations)');
  near(e.secondsPerHour.promotion, 15.6, 'promotion, s per hour');
  near(e.secondsPerHour.idle, 48.064 * 60, 'idle, s per hour');
  // A 3000 mAh, 3.85 V battery holds 41,580 J: an hour of this is 2.0 % of it.
  near(batteryMj(3000), 41580000, 'battery mJ');
  near(batteryShare(e.perHourMj, 3000), (perOp * 60) / 41580000, 'battery share');
});

test('LTE, one operation every 5 s: the radio never sleeps, no promotion, the tail cut at the next operation', () => {
  nearAll(
    rhythm('lte', { periodS: 5, activeS: 0.1 }),
    { active: 0.1, 'tail-continuous': 0.1, 'tail-short-drx': 0.02, 'tail-long-drx': 4.78 },
    'seconds',
  );
  near(
    energy('lte', { periodS: 5, activeS: 0.1 }).perOpMj,
    0.1 * 1288.04 + 0.1 * 1060 + 0.02 * 1091.01 + 4.78 * 1075.505,
    'mJ',
  );
});

test('3G: every 60 s a promotion from IDLE, DCH, its 5 s tail, 12 s of FACH, idle; every 10 s FACH -> DCH; small operations every 10 s stay on FACH', () => {
  const slow = { periodS: 60, activeS: 0.5 };
  nearAll(rhythm('3g', slow), { promotion: 2, active: 0.5, 'dch-tail': 5, fach: 12, idle: 40.5 }, '60 s');
  near(energy('3g', slow).perOpMj, 2 * 530 + 0.5 * 800 + 5 * 800 + 12 * 460, '60 s mJ'); // 10,980
  const often = { periodS: 10, activeS: 0.5 };
  nearAll(rhythm('3g', often), { 'fach-promotion': 1.5, active: 0.5, 'dch-tail': 5, fach: 3 }, '10 s');
  near(energy('3g', often).perOpMj, 1.5 * 550 + 0.5 * 800 + 5 * 800 + 3 * 460, '10 s mJ'); // 6,605
  // 100 B up and 200 B down fit FACH's buffers: 0.224 s carrying them, FACH all the period (the radio
  // reaches FACH after the first operation's DCH tail and never leaves it: 9.776 s < 12 s).
  const small = { periodS: 10, activeS: 0.5, upBytes: 100, downBytes: 200 };
  nearAll(rhythm('3g', small), { 'fach-active': 0.224, fach: 9.776 }, 'small');
  near(energy('3g', small).perOpMj, 10 * 460, 'small mJ');
  nearAll(rhythm('3g', { periodS: 3, activeS: 0.5 }), { active: 0.5, 'dch-tail': 2.5 }, '3 s');
  assert.throws(() => rhythm('lte', { periodS: 1, activeS: 1 }), /a rhythm needs 0 <= activeS \(1\) < periodS \(1\)/);
});

// The timings are the link toxic's: radio_params.go holds them with their sources.
test("the radio's timings are tools/toxiproxy/radio_params.go's", () => {
  const go = readFileSync(join(ROOT, 'tools', 'toxiproxy', 'radio_params.go'), 'utf8');
  const block = (name) => {
    const m = new RegExp(`var ${name} = radioParams\\{\\n([\\s\\S]*?)\\n\\}`).exec(go);
    assert.ok(m, `radio_params.go: no var ${name}`);
    const out = {};
    for (const [, field, n, unit] of m[1].matchAll(/^\s*(\w+):\s+(\d+)(?: \* time\.(Millisecond|Second))?,/gm))
      out[field] = unit === 'Second' ? Number(n) * 1000 : Number(n);
    return out;
  };
  const lte = block('lteParams');
  const { lte: L, '3g': U } = RADIOS;
  assert.deepEqual(
    [lte.promotion, lte.tail, lte.drxInactivity, lte.shortTimer, lte.shortCycle, lte.longCycle, lte.onDuration],
    [L.promotionMs, L.tailMs, L.drxInactivityMs, L.shortTimerMs, L.shortCycleMs, L.longCycleMs, L.onDurationMs],
  );
  const umts = block('umtsParams');
  assert.deepEqual(
    [umts.promotion, umts.tail, umts.fachTail, umts.fachPromotion, umts.rlcUp, umts.rlcDown],
    [U.promotionMs, U.tailMs, U.fachTailMs, U.fachPromotionMs, U.rlcUp, U.rlcDown],
  );
  // FACH's carriage: the same coefficients.
  assert.match(go, /msec := 0\.1\*x \+ 10\n/);
  assert.match(go, /msec = 0\.0014\*x\*x \+ 1\.6\*x \+ 20\n/);
});
