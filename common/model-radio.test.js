// The round-trip model under +rrc (common/model.js radioWake, operation's gapS): what a
// phone's radio adds to an operation after an idle gap, on cases computed by hand from
// common/radio.js's timings (LTE: promotion 260 ms, tail 11.576 s, DRX 100 ms / 20 ms /
// 40 ms; 3G: IDLE -> DCH 2 s, DCH tail 5 s, FACH tail 12 s, FACH -> DCH 1.5 s, buffers
// 540 B up and 475 B down), and the budgets that follow through common/gates.js.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { expectationsOf } from './gates.js';
import { budget, linkOf, operation, radioWake } from './model.js';
import { rhythmWakes, wake } from './radio.js';
import { lane } from './scenario.js';
import { parsePolicy } from './thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';

const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json').latency;
const near = (got, want, what) => assert.ok(Math.abs(got - want) < 1e-9, `${what}: ${got}, want ${want}`);
const link = (spec) => linkOf(loadProfile(spec));
const term = (e, name) => (e.terms.find((t) => t.name === name) || { ms: 0 }).ms;

const kept = { transport: 'http-keepalive', tls: false, conn: 'warm', reqBytes: 100, resBytes: 200 };

test('linkOf: the radio and the NAT timeout of +rrc and +nat', () => {
  assert.equal(link('lte+rrc').radio, 'lte');
  assert.equal(link('3g+rrc').radio, '3g');
  assert.equal(link('lte').radio, null);
  assert.equal(link('lte+nat=60').natIdleS, 60);
  assert.equal(link('lte').natIdleS, 0);
});

test('LTE: a gap past the 11.576 s tail pays the 260 ms promotion; one within it pays nothing; no radio, nothing', () => {
  const lte = link('lte+rrc');
  const plain = operation(lte, kept).ms;
  const after20 = operation(lte, { ...kept, gapS: 20 });
  near(after20.ms - plain, 260, 'after 20 s');
  near(term(after20, 'promotion'), 260, 'the promotion term');
  near(after20.radioMs, 260, 'radioMs');
  near(after20.setupMs, 0, 'a warm connection sets nothing up');
  near(operation(lte, { ...kept, gapS: 11.576 }).ms - plain, 260, 'at the tail');
  near(operation(lte, { ...kept, gapS: 11.5 }).ms, plain, 'within the tail');
  near(operation(link('lte'), { ...kept, gapS: 20 }).ms, operation(link('lte'), kept).ms, 'plain lte: no radio');
  // A fresh connection: promotion, then its TCP handshake (70 ms), then the request.
  const fresh = operation(lte, { transport: 'http-fresh', tls: false, reqBytes: 100, resBytes: 200, gapS: 60 });
  assert.deepEqual(
    fresh.terms.slice(0, 3).map((t) => [t.name, t.ms]),
    [
      ['promotion', 260],
      ['tcp', 70],
      ['request', 70],
    ],
  );
  near(fresh.setupMs, 70, 'set-up');
  near(fresh.radioMs, 260, 'radio');
});

test("LTE's DRX: an answer 35 ms after its request meets none; one 115 ms after (a 80 ms server) a short cycle, a push after 5 s a long one", () => {
  const lte = link('lte+rrc');
  assert.deepEqual(radioWake(lte, { gapS: 5 }, 140, 260), {
    promotionMs: 0,
    fachMs: 0,
    drxMs: 0,
    drxTailMs: 0,
    state: 'connected',
  });
  // R/2 + 80 ms = 115 ms after the request: past the 100 ms inactivity timer, within its 20 ms short timer.
  const slow = radioWake(lte, { gapS: 5, serverMs: 80 });
  near(slow.drxMs, 10, 'median: half the 20 ms short cycle');
  near(slow.drxTailMs, 10, 'the rest in the tail');
  const push = { transport: 'ws', tls: false, oneWay: true, resBytes: 200 };
  const p = operation(lte, { ...push, gapS: 5 });
  near(p.ms - operation(lte, push).ms, 20, 'a push after 5 s: half of a 40 ms long cycle');
  near(p.tailMs - operation(lte, push).tailMs, 20, 'the other half in the tail');
  near(operation(lte, { ...push, gapS: 0.05 }).ms, operation(lte, push).ms, 'within 100 ms: continuous reception');
  near(operation(lte, { ...push, gapS: 30 }).ms - operation(lte, push).ms, 260, 'idle: the promotion, no DRX');
});

test('3G: IDLE past 17 s pays 2 s; DCH within 5 s nothing; FACH carries a small request slowly and promotes a large one (1.5 s)', () => {
  const g3 = link('3g+rrc');
  const ws = { transport: 'ws', tls: false, conn: 'warm', reqBytes: 100, resBytes: 200 };
  const plain = operation(g3, ws).ms;
  near(operation(g3, { ...ws, gapS: 20 }).ms - plain, 2000, 'idle');
  near(operation(g3, { ...ws, gapS: 4 }).ms, plain, 'DCH');
  // ws framing 40 B up, 60 B down: 140 B up, 260 B down, within the buffers. FACH's time:
  // up 0.0014 x 140^2 + 1.6 x 140 + 20 = 271.44 ms, down 0.1 x 260 + 10 = 36 ms.
  const fach = operation(g3, { ...ws, gapS: 10 });
  near(term(fach, 'fach'), 307.44, 'FACH carries it');
  near(fach.ms - plain, 307.44, 'FACH: no promotion');
  // HTTP/1.1 framing 160 B up: 400 + 160 = 560 B passes the uplink's 540 B: the request waits
  // for the promotion, and FACH carries nothing.
  near(
    operation(g3, { ...kept, reqBytes: 400, gapS: 10 }).ms - operation(g3, { ...kept, reqBytes: 400 }).ms,
    1500,
    'FACH -> DCH',
  );
  // 300 + 160 = 460 B up fits; an answer of 200 + 300 B of framing = 500 B passes the downlink's
  // 475 B: FACH carries the request, 0.0014 x 460^2 + 1.6 x 460 + 20 = 1052.24 ms, then the
  // answer promotes, 1500 ms.
  const answerPromotes = operation(g3, { ...kept, reqBytes: 300, resBytes: 200, gapS: 10 });
  near(term(answerPromotes, 'fach'), 1052.24, 'FACH carries the request');
  near(answerPromotes.ms - operation(g3, { ...kept, reqBytes: 300, resBytes: 200 }).ms, 2552.24, 'then the promotion');
});

test('the budgets: a lane whose model says the gap gets the promotion in its budgets (p50 x factor), through expectationsOf', () => {
  const lte = link('lte+rrc');
  const l = { ...lane('http_keepalive'), model: () => ({ conn: 'warm', reqBytes: 100, resBytes: 200, gapS: 20 }) };
  const plainLane = { ...l, model: () => ({ conn: 'warm', reqBytes: 100, resBytes: 200 }) };
  const e = expectationsOf(l, {}, lte);
  const e0 = expectationsOf(plainLane, {}, lte);
  near(e.p50.ms - e0.p50.ms, 260, 'the model');
  const b = budget(policy, lte, e);
  const b0 = budget(policy, lte, e0);
  assert.ok(b.p50 - b0.p50 >= 260 * policy.p50.factor - 5, `p50 budget ${b.p50} against ${b0.p50}`);
  assert.ok(b.p95 - b0.p95 >= 260 * policy.p95.factor - 5, `p95 budget ${b.p95} against ${b0.p95}`);
});

test('3G, one operation every T s: a small one FACH carried leaves the radio in FACH, whose 12 s tail counts from it', () => {
  // ws framing: 140 B up, 260 B down, FACH carries them in 307.44 ms (above).
  const small = { upBytes: 140, downBytes: 260 };
  assert.deepEqual(wake('3g', 10, { ...small, from: 'fach' }), { state: 'fach', promotionMs: 0, fachMs: 307.44 });
  assert.deepEqual(wake('3g', 3, { ...small, from: 'fach' }).state, 'fach', 'no DCH tail after FACH');
  assert.deepEqual(wake('3g', 12, { ...small, from: 'fach' }), { state: 'idle', promotionMs: 2000, fachMs: 0 });
  // One every T s start to start, after a warm operation (the radio up), each gap T less
  // the operation before and what the radio added to it. T = 8 s: every operation on FACH;
  // T = 15 s: FACH (15 s after a DCH one), then IDLE (14.69 s after a FACH one, past its
  // 12 s tail), then FACH again (13 s after the 2 s promotion); T = 18 s: IDLE first, then
  // 16 s after the promotion, within the 17 s tail: FACH; T = 20 s: IDLE each time.
  const states = (T, bytes, more = {}) =>
    rhythmWakes('3g', { periodS: T, count: 4, ...bytes, ...more }).map((w) => `${w.from}>${w.state}+${w.promotionMs}`);
  assert.deepEqual(states(8, small), ['up>fach+0', 'fach>fach+0', 'fach>fach+0', 'fach>fach+0']);
  assert.deepEqual(states(15, small), ['up>fach+0', 'fach>idle+2000', 'up>fach+0', 'fach>idle+2000']);
  assert.deepEqual(states(18, small), ['up>idle+2000', 'up>fach+0', 'fach>idle+2000', 'up>fach+0']);
  assert.deepEqual(states(20, small), Array(4).fill('up>idle+2000'));
  assert.deepEqual(
    states(15, {}),
    Array(4).fill('up>fach+1500'),
    'a large one promotes FACH: the radio is up after it',
  );
  // T = 5 s, DCH's tail: the gap is 5 s less the operation (300 ms): DCH every time; and on
  // gRPC less its PING's round trip too (trailMs).
  assert.deepEqual(states(5, small, { activeMs: 300 }), Array(4).fill('up>dch+0'));
  assert.deepEqual(
    rhythmWakes('3g', { periodS: 5.2, activeMs: 100, trailMs: 300, count: 1 }).map((w) => [w.state, w.gapS]),
    [['dch', 4.8]],
  );
  assert.deepEqual(
    rhythmWakes('lte', { periodS: 15, count: 3 }).map((w) => [w.promotionMs, w.gapS]),
    [
      [260, 15],
      [260, 14.74],
      [260, 14.74],
    ],
  );
  // In the model: the quantile is k6's over the `ops` operations (linear between the sorted
  // ones): at 15 s FACH and IDLE alternate, so the median of 4 is half-way between FACH's
  // 307.44 ms and the 2 s promotion; the p95 is the promotion.
  const g3 = link('3g+rrc');
  const ws = { transport: 'ws', tls: false, conn: 'warm', reqBytes: 100, resBytes: 200 };
  const plain = operation(g3, ws).ms;
  near(
    operation(g3, { ...ws, periodS: 15, ops: 4, quantile: 0.5 }).ms - plain,
    (307.44 + 2000) / 2,
    'p50 of 4: half-way',
  );
  near(operation(g3, { ...ws, periodS: 15, ops: 3, quantile: 0.5 }).ms - plain, 307.44, 'p50 of 3: FACH (2 of 3)');
  near(operation(g3, { ...ws, periodS: 15, ops: 4, quantile: 0.95 }).ms - plain, 2000, 'p95: from IDLE');
  near(operation(g3, { ...ws, periodS: 8, ops: 4, quantile: 0.95 }).ms - plain, 307.44, 'T 8 s: FACH every time');
  near(
    operation(g3, { ...ws, periodS: 5, ops: 4, quantile: 0.95 }).ms - plain,
    0,
    'T 5 s: DCH, the gap 5 s less the operation',
  );
  // With pings on their own clock: the gap is the shorter of the rhythm's and the time since
  // the last ping, uniform over the interval (its quantile: q x pingS). 3G, T = 15 s, a ping
  // every 10 s: the median's 5 s is DCH's tail, FACH; T = 4 s: 4 s less the operation, DCH.
  near(operation(g3, { ...ws, periodS: 15, pingS: 10, quantile: 0.5 }).ms - plain, 307.44, 'ping 10 s: FACH');
  near(operation(g3, { ...ws, periodS: 4, pingS: 10, quantile: 0.95 }).ms - plain, 0, 'T 4 s: DCH');
  near(
    operation(link('lte+rrc'), { ...ws, periodS: 15, pingS: 12, quantile: 0.95 }).radioMs,
    0,
    'LTE: 11.4 s since the ping',
  );
  near(operation(link('lte+rrc'), { ...ws, periodS: 15 }).radioMs, 260, 'LTE: past the tail every time');
});
