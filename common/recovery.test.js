// The recovery model of issue 26 (common/recovery.js): hand-computed recoveries for lte
// (R 70 ms) and 3g (R 300 ms) per kind of lane and event, the event schedule the
// scenario places them with, and the table docs/model.md shows. Pure: no stack, no k6.
//
// Hand figures use round inputs: lte opMs 80 (R + 10), 3g opMs 400 (R + 100); set-up
// TCP's R (http), 2R (grpc), 3R (ws: TCP, upgrade, init). RTO (model.js rtoMs): warm
// R + 200 ms (lte 270, 3g 500); a new connection's first round R + max(2R, 200 ms)
// (lte 270, 3g 900). The phase φ: how far into its cycle the client is when the event
// starts at 0 (its operation started at -φ); the blackout ends at L = 1500. The median
// is the middle one of 201 evenly spaced phases: φ = half the cycle where recovery falls
// as φ grows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { linkOf, rtoMs } from './model.js';
import { POLICIES } from './policies.js';
import { eventAttributes } from './profiles.js';
import { eventWindows, PHASES, recoveryByLane, recoveryMs } from './recovery.js';

const ROOT = join(import.meta.dirname, '..');
const readJson = (path) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
const EVENTS = Object.fromEntries(
  ['handover', 'move', 'move-reset', 'dip'].map((m) => [m, readJson(`profiles/modifiers/${m}.json`).network.events]),
);
const LTE = { R: 70 };
const G3 = { R: 300 };
const close = (actual, expected, what, eps = 1e-6) =>
  assert.ok(Math.abs(actual - expected) <= eps, `${what}: ${actual}, expected ${expected}`);
const termsOf = (r) => Object.fromEntries(r.terms.map((t) => [t.name, Math.round(t.ms * 1000) / 1000]));
const sum = (r) => r.terms.reduce((s, t) => s + t.ms, 0);

test('the round inputs: lte and 3g as the profiles give them, RTOs as model.js computes them', () => {
  assert.equal(readJson('profiles/network/lte.json').rttMs, LTE.R);
  assert.equal(readJson('profiles/network/3g.json').rttMs, G3.R);
  assert.deepEqual([rtoMs(70), rtoMs(300), rtoMs(70, 0), rtoMs(300, 0)], [270, 500, 270, 900]);
  assert.deepEqual(
    Object.values(EVENTS).map((e) => e.lengthMs),
    [1500, 1500, 1500, 5000],
  );
});

test("eventWindows: the link toxic's schedule in absolute ms, over a range", () => {
  const epoch = 1_700_000_000_000;
  // handover: the first at +8 s, every 20 s, 1.5 s long.
  assert.deepEqual(eventWindows(EVENTS.handover, epoch, epoch, epoch + 50_000), [
    [epoch + 8000, epoch + 9500],
    [epoch + 28000, epoch + 29500],
    [epoch + 48000, epoch + 49500],
  ]);
  // A range that starts inside an event keeps it; one that ends at an event's start does not.
  assert.deepEqual(eventWindows(EVENTS.handover, epoch, epoch + 9000, epoch + 28000), [[epoch + 8000, epoch + 9500]]);
  assert.deepEqual(eventWindows(EVENTS.handover, epoch, epoch + 9500, epoch + 28000), []);
  // Far into a run: only the events in range, not every one since the epoch.
  assert.deepEqual(eventWindows(EVENTS.move, epoch, epoch + 3_600_000, epoch + 3_650_000), [
    [epoch + 3_608_000, epoch + 3_609_500],
    [epoch + 3_638_000, epoch + 3_639_500],
  ]);
  // One event only (periodS 0 or absent), offsetS absent: at the epoch.
  const once = { kind: 'blackout', lengthMs: 2000 };
  assert.deepEqual(eventWindows(once, epoch, epoch - 10, epoch + 100_000), [[epoch, epoch + 2000]]);
  assert.deepEqual(eventWindows({ ...once, periodS: 0 }, epoch, epoch + 2000, epoch + 100_000), []);
  // The same rounding as the toxic's attributes (whole ms).
  const odd = { kind: 'dip', share: 0.5, lengthMs: 700, periodS: 1.2345, offsetS: 0.0004 };
  const a = eventAttributes(odd);
  assert.deepEqual(eventWindows(odd, 0, 0, 3000), [
    [a.event_offset, a.event_offset + 700],
    [a.event_offset + a.event_period, a.event_offset + a.event_period + 700],
    [a.event_offset + 2 * a.event_period, a.event_offset + 2 * a.event_period + 700],
  ]);
  assert.deepEqual(eventWindows(null, epoch, epoch, epoch + 1e6), []);
});

test('blackout, kept connection: the flight in the dark arrives with the first retransmission after the return', () => {
  // lte, opMs 80: the request (arriving at -φ + 35) or the answer (at -φ + 80) meets
  // the dark; either is retried after 270, 540, 1080 ms (sent +270, +810, +1890): only
  // the third arrives after 1500, at -φ + 1925 (request; then the rest, 45 ms) or
  // -φ + 1970 (answer): recovery = 470 - φ, median φ = 40: 430.
  for (const lane of ['http-keepalive', 'http2', 'ws', 'ws-nokeepalive', 'grpc']) {
    const r = recoveryMs({ event: EVENTS.handover, policy: lane, link: LTE, opMs: 80, setupMs: 70 });
    close(r.p50, 430, `lte ${lane}`);
    assert.deepEqual(termsOf(r), { retransmission: 430 });
    close(r.max, 470 - 80 / PHASES / 2, `lte ${lane} max`);
  }
  // 3g, opMs 400: RTO 500, tries sent +500, +1500; the request (φ <= 150) arrives at
  // -φ + 1650 and the rest takes 250, the answer is sent at -φ + 250 and arrives at
  // -φ + 1900: recovery = 400 - φ, median 200. A warm connection recovers sooner on 3g
  // than on lte: its second try, 1.5 s after the first send, just meets the return.
  const r = recoveryMs({ event: EVENTS.handover, policy: 'http-keepalive', link: G3, opMs: 400, setupMs: 300 });
  close(r.p50, 200, '3g');
  assert.deepEqual(termsOf(r), { retransmission: 200 });
  assert.ok(r.terms[0].source.includes('RFC 6298') && r.terms[0].source.includes('TCP_RTO_MIN'));
});

test('blackout, fresh connection: a SYN round trip that meets the dark is retried at +1 s, +3 s', () => {
  // lte, set-up 70 + opMs 80: cycle 150. φ <= 70: the SYN round trip [-φ, -φ + 70]
  // meets the dark; tries at -φ + 1000 (dark), -φ + 3000 (lit): recovery 1650 - φ.
  // φ > 70: the connection is up; the request (sent at -φ + 70) or the answer is lost
  // and retried on a new connection's RTO, 270 (+270, +810, +1890): recovery 540 - φ.
  // 107 of the 201 phases are above 70: the median is φ = 75: 465 (the request's
  // retransmission arrives at 1920, 420 after the return, then 45 ms of the operation).
  const lte = recoveryMs({ event: EVENTS.handover, policy: 'http-fresh', link: LTE, opMs: 80, setupMs: 70 });
  close(lte.p50, 465, 'lte');
  assert.deepEqual(termsOf(lte), { retransmission: 420, operation: 45 });
  close(lte.max, 1650 - 150 / PHASES / 2, 'lte: the first phase waits for the third SYN');
  // 3g, set-up 300 + opMs 400: cycle 700. φ <= 300: SYN tries at +1000 (dark), +3000:
  // recovery 2200 - φ. φ > 300: the request or the answer is lost, retried on RTO 900
  // (+900, +2700): recovery 1900 - φ. Median φ = 350: the request, sent at -50, arrives
  // at 2800 (1300 after the return), the operation's 250 ms follow: 1550.
  const g3 = recoveryMs({ event: EVENTS.handover, policy: 'http-fresh', link: G3, opMs: 400, setupMs: 300 });
  close(g3.p50, 1550, '3g');
  assert.deepEqual(termsOf(g3), { retransmission: 1300, operation: 250 });
  close(g3.max, 2200 - 700 / PHASES / 2, '3g max');
});

test('silent move: the operation in flight fails at its timeout, then a new connection', () => {
  // lte http-keepalive, opMs 80: fails at -φ + 10000, a new connection at once (Go's
  // transport dials anew): + 70 + 80. Recovery 8650 - φ, median 8610.
  const keep = recoveryMs({ event: EVENTS.move, policy: 'http-keepalive', link: LTE, opMs: 80, setupMs: 70 });
  close(keep.p50, 8610, 'lte http-keepalive');
  assert.deepEqual(termsOf(keep), { timeout: 8460, 'set-up': 70, operation: 80 });
  assert.match(keep.terms[0].source, /10000 ms.*OkHttp/);
  // grpc reconnects at once too (a connection lost after it was up): set-up 2R.
  const grpc = recoveryMs({ event: EVENTS.move, policy: 'grpc', link: LTE, opMs: 80, setupMs: 140 });
  close(grpc.p50, 8680, 'lte grpc');
  // http-fresh: only the operation in flight waits (cycle 150, median φ 75): 8575.
  const fresh = recoveryMs({ event: EVENTS.move, policy: 'http-fresh', link: LTE, opMs: 80, setupMs: 70 });
  close(fresh.p50, 8575, 'lte http-fresh');
  assert.deepEqual(termsOf(fresh), { timeout: 8425, 'set-up': 70, operation: 80 });
  // 3g http-keepalive, opMs 400: 10000 - 200 - 1500 + 300 + 400.
  close(
    recoveryMs({ event: EVENTS.move, policy: 'http-keepalive', link: G3, opMs: 400, setupMs: 300 }).p50,
    9000,
    '3g http-keepalive',
  );
});

test('silent move, ws: graphql-ws waits retryWait(0); the keepalive finds the death first half the time', () => {
  // ws-nokeepalive (graphql-ws's default keepAlive 0): only the operation's 10 s timeout,
  // then retryWait(0) = 1 s + 300..3000 ms (expected 2650), set-up 3R, the operation.
  const none = recoveryMs({ event: EVENTS.move, policy: 'ws-nokeepalive', link: LTE, opMs: 80, setupMs: 210 });
  close(none.p50, 8460 + 2650 + 210 + 80, 'lte ws-nokeepalive');
  assert.deepEqual(termsOf(none), { timeout: 8460, 'reconnect wait': 2650, 'set-up': 210, operation: 80 });
  close(
    recoveryMs({ event: EVENTS.move, policy: 'ws-nokeepalive', link: G3, opMs: 400, setupMs: 900 }).p50,
    8300 + 2650 + 900 + 400,
    '3g ws-nokeepalive',
  );
  // ws: a ping every 10 s after the last pong, dropped 5 s after a ping that meets the
  // death: the first such ping goes at p, uniform over [-R, 10000); the socket is
  // declared dead at min(-φ + 10000, p + 5000). Under a closed loop the operation's own
  // timeout (~10 s after the event) comes first half the time, so the median gains
  // little; the mean gains 1.26 s and the best phase 5 s: E[min] over p uniform on
  // [4930, 15000) against ~9960 = 3718.8 + 4985.0 = 8703.8, + 1440 = 10143.8.
  const ka = recoveryMs({ event: EVENTS.move, policy: 'ws', link: LTE, opMs: 80, setupMs: 210 });
  assert.ok(ka.p50 <= none.p50 && ka.p50 > none.p50 - 100, `ws ${ka.p50} vs ws-nokeepalive ${none.p50}`);
  close(ka.mean, 10143.8, 'ws mean', 3);
  close(ka.min, -70 + (10070 * 0.5) / 51 + 5000 - 1500 + 2940, 'ws: the earliest probe');
  assert.ok(none.mean - ka.mean > 1200);
  assert.ok(none.min - ka.min > 4800);
});

test("silent move: a client that keeps its timed-out connection (Go's HTTP/2) never recovers", () => {
  const r = recoveryMs({ event: EVENTS.move, policy: 'http2', link: LTE, opMs: 80, setupMs: 140 });
  assert.equal(r.p50, Infinity);
  assert.equal(r.min, Infinity);
  // The same client under a reset or a handover recovers: the reset drops the connection.
  assert.ok(recoveryMs({ event: EVENTS['move-reset'], policy: 'http2', link: LTE, opMs: 80, setupMs: 140 }).p50 < 1000);
});

test('move with reset: the operation fails at the return, then the policy reconnects', () => {
  const at = (policy, link, opMs, setupMs) => recoveryMs({ event: EVENTS['move-reset'], policy, link, opMs, setupMs });
  close(at('http-keepalive', LTE, 80, 70).p50, 150, 'lte http-keepalive');
  close(at('http-fresh', LTE, 80, 70).p50, 150, 'lte http-fresh');
  close(at('grpc', LTE, 80, 140).p50, 220, 'lte grpc: no backoff for a connection lost after it was up');
  const ws = at('ws', LTE, 80, 210);
  close(ws.p50, 2940, 'lte ws: retryWait(0)');
  assert.deepEqual(termsOf(ws), { 'reconnect wait': 2650, 'set-up': 210, operation: 80 });
  assert.match(ws.terms[0].source, /graphql-ws/);
  close(at('ws', G3, 400, 900).p50, 3950, '3g ws');
  close(at('http2', G3, 400, 600).p50, 1000, '3g http2');
  // Every phase the same: the reset ends the operation in flight at the return.
  assert.equal(ws.min, ws.max);
});

test('dip: the operation in flight at the dip end at the dipped rate, half of it at the median', () => {
  // lte opMs 80 of which 10 ms bytes, share 0.1: 80 + 10 x 9 = 170: median 85.
  const r = recoveryMs({ event: EVENTS.dip, policy: 'http-keepalive', link: LTE, opMs: 80, transferMs: 10 });
  close(r.p50, 85, 'lte');
  assert.deepEqual(termsOf(r), { operation: 40, dip: 45 });
  assert.equal(r.timesOut, false);
  // A fresh lane's cycle includes its set-up.
  close(
    recoveryMs({ event: EVENTS.dip, policy: 'http-fresh', link: G3, opMs: 400, setupMs: 300, transferMs: 100 }).p50,
    (700 + 900) / 2,
    '3g fresh',
  );
  // A dipped operation beyond the timeout is flagged (the model does not follow it).
  assert.equal(
    recoveryMs({ event: EVENTS.dip, policy: 'grpc', link: G3, opMs: 2000, transferMs: 1500 }).timesOut,
    true,
  );
});

test('a blackout longer than the timeout the retransmissions can bridge: the operation times out', () => {
  // 9 s dark, lte, opMs 80: the request's tries arrive at -φ + 35 + 270 x (1, 3, 7, 15,
  // 31, 63): 8405 is in the dark, 17045 past the 10 s timeout; it fails at -φ + 10000 and
  // the next operation opens a connection (lit by then): recovery 1150 - φ, median 1110.
  const r = recoveryMs({
    event: { kind: 'blackout', lengthMs: 9000 },
    policy: 'http-keepalive',
    link: LTE,
    opMs: 80,
    setupMs: 70,
  });
  close(r.p50, 1110, 'long blackout');
  assert.deepEqual(termsOf(r), { timeout: 960, 'set-up': 70, operation: 80 });
});

test('every lane and event: terms sum to the median, each with a source; deterministic', () => {
  const link = linkOf(readJson('profiles/network/3g.json'));
  const op = { reqBytes: 150, resBytes: 170, serverMs: 1 };
  for (const [name, event] of Object.entries(EVENTS)) {
    const rows = recoveryByLane({ event, link, op });
    assert.deepEqual(
      rows.map((r) => r.lane),
      Object.keys(POLICIES),
    );
    for (const r of rows) {
      if (r.p50 === Infinity) {
        const p = POLICIES[r.lane];
        // k6's HTTP/2 keeps the dead connection; a subscription without keepalive waits for ever.
        assert.ok(name === 'move' && (p.keepsConnection || (p.subscription && !p.keepalive)), `${name} ${r.lane}`);
        continue;
      }
      close(sum(r), r.p50, `${name} ${r.lane}: terms`, 1e-6);
      assert.ok(r.min <= r.p50 && r.p50 <= r.p95 && r.p95 <= r.max, `${name} ${r.lane}: spread`);
      for (const t of r.terms) assert.ok(t.source && t.source.length > 20, `${name} ${r.lane} ${t.name}: source`);
    }
    assert.deepEqual(recoveryByLane({ event, link, op }), rows);
  }
  // A lane of another name: the scenario's wss follows ws's policy over TLS (set-up 4R
  // and TLS's bytes and CPU).
  const [ws, wss] = recoveryByLane({
    event: EVENTS['move-reset'],
    link,
    op,
    lanes: ['ws', { lane: 'wss', policy: 'ws', transport: 'ws', op: { tls: true } }],
  });
  assert.deepEqual([wss.lane, wss.transport], ['wss', 'ws']);
  assert.ok(wss.setupMs > ws.setupMs + link.R && wss.p50 > ws.p50 + link.R);
  close(wss.p50, 2650 + wss.setupMs + wss.opMs, 'wss: retryWait(0) + set-up + operation');
  assert.throws(() => recoveryMs({ event: EVENTS.move, policy: 'carrier-pigeon', link: LTE, opMs: 1 }), /no policy/);
  assert.throws(() => recoveryMs({ event: { kind: 'quake' }, policy: 'ws', link: LTE, opMs: 1 }), /no event kind/);
});

// A subscription (sub-ws, sub-grpc): the server sends an event every 100 ms (PUBLISH_MS),
// the first to arrive in the dark sent at t in [-35, 65) (h = R/2 = 35).
test('a subscription: the handover retransmits its events, a reset costs its policy, a silent death its keepalive', () => {
  const sub = (event, policy) =>
    recoveryMs({ event, policy, link: LTE, opMs: 36, setupMs: policy === 'sub-ws' ? 210 : 140, publishMs: 100 });
  // That event is lost and tried at t + 270 x (1, 3, 7): the third arrives at t + 1925,
  // 425 + t after the return; in order, every later event waits for it. Median t = 15.
  const handover = sub(EVENTS.handover, 'sub-grpc');
  close(handover.p50, 440, 'handover', 0.5); // the middle phase's t is 15.2
  close(handover.min, 390, 'handover, earliest phase', 0.5);
  assert.deepEqual(Object.keys(termsOf(handover)), ['retransmission']);
  // A reset at the return: gRPC reopens at once, set-up 2R, its Subscribe reaches the
  // server R/2 later and, resuming with after_seq, the kept events come back R/2 after:
  // the same in every phase.
  const grpc = sub(EVENTS['move-reset'], 'sub-grpc');
  assert.deepEqual([grpc.min, grpc.p50, grpc.max], [210, 210, 210]);
  assert.deepEqual(termsOf(grpc), { 'set-up': 140, subscribe: 70 });
  // graphql-ws waits retryWait(0) (2650 ms expected), set-up 3R, and without resume its
  // first event is the next one published after the subscribe reaches the server
  // (50 ms at the median) and R/2 on the way.
  const ws = sub(EVENTS['move-reset'], 'sub-ws');
  close(ws.p50, 2650 + 210 + 35 + 50 + 35, 'ws reset', 0.5);
  // A silent death: gRPC has no keepalive and the stream no deadline: never. ws's ping
  // (10 s after the last pong, its phase uniform over the 10.07 s cycle) goes unanswered
  // for 5 s: the death is found 4.93 to 15 s after it started, at the median 9.965 s.
  assert.equal(sub(EVENTS.move, 'sub-grpc').p50, Infinity);
  const silent = sub(EVENTS.move, 'sub-ws');
  assert.ok(Math.abs(silent.p50 - (9965 - 1500 + 2650 + 210 + 35 + 50 + 35)) <= 50, `silent ws: ${silent.p50}`);
  assert.ok(silent.min >= 4930 - 1500 + 2930 && silent.max <= 15000 - 1500 + 2930 + 100, 'silent ws: spread');
  assert.deepEqual(Object.keys(termsOf(silent)), ['keepalive', 'reconnect wait', 'set-up', 'subscribe']);
  // A dip loses nothing: the next event comes as it would (half an interval at the median).
  close(sub(EVENTS.dip, 'sub-ws').p50, 50, 'dip', 2);
});

// docs/model.md "Recovery from link events": its table is what recoveryByLane gives for
// ws-vs-http's book operation (150 B up, 170 B down, 1 ms server), rounded to 10 ms.
test("docs/model.md's recovery table is the model's", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'model.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Recovery from link events'));
  const op = { reqBytes: 150, resBytes: 170, serverMs: 1 };
  const columns = [];
  for (const net of ['lte', '3g'])
    for (const m of Object.keys(EVENTS))
      columns.push({ net, m, link: linkOf(readJson(`profiles/network/${net}.json`)) });
  const header = `| lane | ${columns.map((c) => `${c.net}+${c.m}`).join(' | ')} |`;
  assert.ok(section.includes(header), `the table's header: ${header}`);
  const byColumn = columns.map((c) => recoveryByLane({ event: EVENTS[c.m], link: c.link, op }));
  const fmt = (ms) =>
    ms === Infinity ? 'never' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms / 10) * 10} ms`;
  for (const lane of Object.keys(POLICIES)) {
    const row = `| ${lane} | ${byColumn.map((rows) => fmt(rows.find((r) => r.lane === lane).p50)).join(' | ')} |`;
    assert.ok(section.includes(row), `docs/model.md should have the row\n${row}`);
  }
});
