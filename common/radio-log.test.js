// The radio's event log (common/radio-log.js) on logs written by hand: time in each state
// over a window, LTE's tail split by its DRX timers, energy by common/radio.js's powers;
// and the event kinds against the link toxic's (tools/toxiproxy/radio.go).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import { energyOfStates, perHour, radioLogOf, timeInStates, timerParams, timersOf } from './radio-log.js';

const near = (got, want, what) => assert.ok(Math.abs(got - want) < 1e-9, `${what}: ${got}, want ${want}`);
const nearAll = (got, want, what) => {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${what}: ${JSON.stringify(got)}`);
  for (const k of Object.keys(want)) near(got[k], want[k], `${what} ${k}`);
};

// LTE: promoted at 1 s (260 ms), busy to 1.3 s, quiet; busy again 5.0-5.05 s; idle 11.576 s later.
const LTE_LOG = {
  radio: 'lte',
  device: 1,
  now: 20000,
  dropped: 0,
  events: [
    [1000, 'promotion-start', 'idle', 'connected'],
    [1260, 'promotion-end', 'idle', 'connected'],
    [1300, 'tail-start', 'connected', 'connected'],
    [5000, 'resume', 'connected', 'connected'],
    [5050, 'tail-start', 'connected', 'connected'],
    [16626, 'demotion', 'connected', 'idle'],
  ],
};

test('LTE: idle, the promotion, busy, and each tail as 100 ms continuous, 20 ms short DRX, the rest long DRX', () => {
  const r = timeInStates(LTE_LOG, { fromMs: 0, toMs: 20000 });
  // idle 0-1 s and 16.626-20 s; tails 1.3-5.0 s (3.7 s) and 5.05-16.626 s (11.576 s).
  nearAll(
    r.seconds,
    {
      idle: 1 + 3.374,
      promotion: 0.26,
      active: 0.04 + 0.05,
      'tail-continuous': 0.2,
      'tail-short-drx': 0.04,
      'tail-long-drx': 3.7 - 0.12 + (11.576 - 0.12),
    },
    'lte',
  );
  near(r.windowS, 20, 'window');
  assert.deepEqual(r.promotions, [{ atMs: 1000, ms: 260, from: 'idle' }]);
  assert.equal(r.partial, false);
  // A window inside: 1.1 s to 5.02 s.
  nearAll(
    timeInStates(LTE_LOG, { fromMs: 1100, toMs: 5020 }).seconds,
    { promotion: 0.16, active: 0.06, 'tail-continuous': 0.1, 'tail-short-drx': 0.02, 'tail-long-drx': 3.58 },
    'lte window',
  );
  assert.deepEqual(timeInStates(LTE_LOG, { fromMs: 1100, toMs: 5020 }).promotions, [], 'the promotion began before');
  // Past the log's now: counted to now, and said.
  const past = timeInStates(LTE_LOG, { fromMs: 19000, toMs: 30000 });
  nearAll(past.seconds, { idle: 1 }, 'past now');
  assert.equal(past.partial, true);
});

test('3G: IDLE -> DCH (2 s), the DCH tail (5 s), FACH, a small packet carried on FACH, the FACH tail (12 s), idle', () => {
  const log = {
    radio: '3g',
    now: 23000,
    dropped: 0,
    events: [
      [0, 'promotion-start', 'idle', 'dch'],
      [2000, 'promotion-end', 'idle', 'dch'],
      [2100, 'tail-start', 'dch', 'dch'],
      [7100, 'demotion', 'dch', 'fach'],
      [9000, 'resume', 'fach', 'fach'],
      [9300, 'tail-start', 'fach', 'fach'],
      [21300, 'demotion', 'fach', 'idle'],
    ],
  };
  const r = timeInStates(log, { fromMs: 0, toMs: 23000 });
  nearAll(r.seconds, { promotion: 2, active: 0.1, 'dch-tail': 5, fach: 1.9 + 12, 'fach-active': 0.3, idle: 1.7 }, '3g');
  // FACH -> DCH is the other promotion.
  const fromFach = {
    radio: '3g',
    now: 10000,
    events: [
      [5000, 'promotion-start', 'fach', 'dch'],
      [6500, 'promotion-end', 'fach', 'dch'],
    ],
  };
  nearAll(
    timeInStates(fromFach, { fromMs: 4000 }).seconds,
    { fach: 1, 'fach-promotion': 1.5, active: 3.5 },
    'fach promotion',
  );
  assert.deepEqual(timeInStates(fromFach).promotions, [{ atMs: 5000, ms: 1500, from: 'fach' }]);
});

test("the timers a log shows: promotions, and each tail that ran out (a resume cuts one short); the papers' values", () => {
  // LTE_LOG: the first tail (1.3 s) is cut by the resume at 5 s; the second runs 11.576 s.
  assert.deepEqual(timersOf(LTE_LOG), [
    { timer: 'promotion', ms: 260, atMs: 1000 },
    { timer: 'tail', ms: 11576, atMs: 5050 },
  ]);
  assert.deepEqual(timersOf(LTE_LOG, { fromMs: 1100 }), [{ timer: 'tail', ms: 11576, atMs: 5050 }], 'from 1.1 s');
  const log3g = {
    radio: '3g',
    now: 40000,
    events: [
      [0, 'promotion-start', 'idle', 'dch'],
      [2000, 'promotion-end', 'idle', 'dch'],
      [2100, 'tail-start', 'dch', 'dch'],
      [7100, 'demotion', 'dch', 'fach'], // DCH's tail: 5 s
      [19100, 'demotion', 'fach', 'idle'], // FACH's, from the demotion into it: 12 s
      [20000, 'promotion-start', 'idle', 'dch'],
      [22000, 'promotion-end', 'idle', 'dch'],
      [22050, 'tail-start', 'dch', 'dch'],
      [27050, 'demotion', 'dch', 'fach'],
      [30000, 'promotion-start', 'fach', 'dch'], // a big packet in FACH: its tail cut short
      [31500, 'promotion-end', 'fach', 'dch'],
    ],
  };
  assert.deepEqual(
    timersOf(log3g).map((x) => [x.timer, x.ms]),
    [
      ['promotion', 2000],
      ['dch-tail', 5000],
      ['fach-tail', 12000],
      ['promotion', 2000],
      ['dch-tail', 5000],
      ['fach-promotion', 1500],
    ],
  );
  assert.deepEqual(timerParams('lte'), { promotion: 260, tail: 11576 });
  assert.deepEqual(timerParams('3g'), {
    promotion: 2000,
    'fach-promotion': 1500,
    'dch-tail': 5000,
    'fach-tail': 12000,
  });
  assert.throws(() => timerParams('5g'), /unknown radio "5g"/);
});

test('a log that dropped its oldest events starts in the state its first kept event ends; an empty one is idle', () => {
  const log = { radio: 'lte', now: 3000, dropped: 10, events: [[2000, 'demotion', 'connected', 'idle']] };
  const r = timeInStates(log, { fromMs: 1000 });
  nearAll(r.seconds, { 'tail-long-drx': 1, idle: 1 }, 'dropped: a demotion ends a tail');
  assert.equal(r.partial, true, 'the window starts before the kept events');
  nearAll(timeInStates({ radio: 'lte', now: 5000, events: [] }, { fromMs: 2000 }).seconds, { idle: 3 }, 'empty');
  assert.throws(() => timeInStates({ radio: '2g', events: [] }), /radio log: give the radio_log/);
  assert.throws(
    () => timeInStates({ radio: 'lte', now: 1, events: [[0, 'nap', 'idle', 'idle']] }),
    /unknown event kind "nap"/,
  );
});

test("energy: each state's seconds at common/radio.js's power (promotion 1210.7 mW, active 1288.04 mW); per hour", () => {
  const e = energyOfStates('lte', { promotion: 0.26, active: 1, idle: 0 });
  near(e.mj, 0.26 * 1210.7 + 1288.04, 'mJ');
  near(e.mjByState.promotion, 314.782, 'promotion mJ');
  // 3G's FACH at 460 mW, DCH's tail at 800 mW.
  near(energyOfStates('3g', { fach: 2, 'dch-tail': 1 }).mj, 2 * 460 + 800, '3g mJ');
  assert.throws(() => energyOfStates('lte', { fach: 1 }), /no power for state "fach" of lte/);
  assert.deepEqual(perHour({ idle: 10, active: 2 }, 20), { idle: 1800, active: 360 });
});

test('radioLogOf: the first radio_log of a toxic list, or of a GET /proxies answer; null without', () => {
  const log = { radio: 'lte', now: 1, events: [] };
  const toxics = [
    { name: 'link_down', attributes: { radio: 1 } },
    { name: 'link_up', attributes: { radio: 1, radio_log: log } },
  ];
  assert.equal(radioLogOf(toxics), log);
  assert.equal(radioLogOf({ graphql: { toxics: [] }, grpc: { toxics } }), log);
  assert.equal(radioLogOf([{ attributes: {} }]), null);
  assert.equal(radioLogOf({}), null);
});

test("the event kinds are the link toxic's (tools/toxiproxy/radio.go)", () => {
  const go = readFileSync(join(ROOT, 'tools/toxiproxy/radio.go'), 'utf8');
  const kinds = [...go.matchAll(/^\s*event\w+\s*=\s*"([a-z-]+)"/gm)].map((m) => m[1]).sort();
  assert.deepEqual(kinds, ['demotion', 'promotion-end', 'promotion-start', 'resume', 'tail-start']);
  const states = [...go.matchAll(/^\s*state\w+\s*=\s*"([a-z]+)"/gm)].map((m) => m[1]).sort();
  assert.deepEqual(states, ['connected', 'dch', 'fach', 'idle']);
});
