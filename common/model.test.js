// The round-trip model's TCP (common/model.js): slow start's rounds as the link toxic
// sends them (the cases tools/toxiproxy/tcp_test.go checks the toxic's model on), the
// retransmission timeout, the loss models of the modifiers, what losses stall, and the
// budgets that follow. Pure: no stack, no k6.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  connectionKbps,
  budget,
  GRPC_INITIAL_WINDOW,
  linkOf,
  lossCost,
  lossModel,
  operation,
  rtoMs,
  TAIL_QUANTILE,
  TCP,
  windowAfter,
  windowRounds,
  windowWaitMs,
} from './model.js';
import { parsePolicy } from './thresholds.js';
import { framingOf } from './lanes/catalogue.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';

const FIXTURE = join(ROOT, 'tools', 'toxiproxy', 'testdata', 'slowstart.json');
const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json').latency;
const near = (a, b, eps = 1e-3) => Math.abs(a - b) <= eps;

test('windowRounds gives the rounds of tools/toxiproxy/testdata/slowstart.json (which tcp.go is tested on too)', () => {
  const { cases } = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  assert.ok(cases.length >= 50);
  for (const c of cases) {
    const first = windowRounds(c.bytes, c.iw, c.rttMs, c.kbps);
    const second = windowRounds(c.bytes, first.window, c.rttMs, c.kbps);
    const name = `${c.link} iw=${c.iw} ${c.bytes} B`;
    assert.ok(
      near(first.waitMs, c.waitMs) && first.window === c.windowAfter && near(second.waitMs, c.secondWaitMs),
      `${name}: ${JSON.stringify([first, second.waitMs])} vs ${JSON.stringify(c)}`,
    );
  }
});

test('slow start by hand: 100 KB under 3g is three rounds, 2 round trips of waiting less what the first two rounds carry', () => {
  // Rounds of 14600, 29200 and the remaining 56200 bytes; 1600 kbit/s is 200 bytes a ms.
  const wait = 300 - 14600 / 200 + (300 - 29200 / 200);
  assert.ok(
    near(windowWaitMs(100000, TCP.initialWindow, 300, 1600), wait),
    `${windowWaitMs(100000, TCP.initialWindow, 300, 1600)} vs ${wait}`,
  );
  assert.equal(windowWaitMs(10000, TCP.initialWindow, 300, 1600), 0, 'fits the initial window');
  assert.equal(windowWaitMs(100000, Infinity, 300, 1600), 0, 'an open window');
  assert.equal(windowWaitMs(100000, TCP.initialWindow, 0, null), 0, 'no round trip (lan)');
});

test('the retransmission timeout: 3R from 100 ms up on a new connection, R + 200 ms steady', () => {
  assert.equal(rtoMs(300, 0), 900);
  assert.equal(rtoMs(300, 1), 800);
  assert.equal(rtoMs(300), 500);
  assert.equal(rtoMs(70, 0), 270);
  assert.equal(rtoMs(70), 270);
});

test('the loss models of +loss1, +loss3 and +burst', () => {
  const of = (spec) => lossModel(loadProfile(spec).network.loss);
  assert.equal(lossModel(undefined), null);
  assert.equal(of('3g'), null);
  const l1 = of('3g+loss1');
  assert.ok(near(l1.rate, 0.01) && near(l1.again, 0.01) && near(l1.clean(3), 0.99 ** 3));
  assert.ok(near(of('3g+loss3').rate, 0.03));
  const burst = of('3g+burst');
  assert.ok(near(burst.rate, 0.01, 1e-4), `burst loses ${burst.rate}`);
  assert.ok(near(burst.again, burst.rate), 'a retransmission leaves after the burst: it meets the long-run rate');
  assert.ok(
    burst.clean(100) > 0.99 ** 100,
    'bursts spare more runs of segments than independent loss of the same rate',
  );
});

test("what losses stall: nothing at the median of a small operation; a timeout at its budgets' tail (the 99th percentile) when more than 1 % of them meet a loss", () => {
  assert.equal(TAIL_QUANTILE, 0.99);
  const link = (spec) => linkOf(loadProfile(spec));
  const ws = { transport: 'ws', conn: 'warm', reqBytes: 150, resBytes: 170 };
  assert.equal(operation(link('3g'), ws).tailMs, 0);
  const l1 = operation(link('3g+loss1'), ws);
  assert.equal(l1.tailMs, rtoMs(300), "2 segments at 1 %: 2 % of operations wait a steady connection's timeout");
  assert.equal(l1.ms, operation(link('3g'), ws).ms, 'the median is untouched');
  assert.equal(operation(link('3g+loss1'), { ...ws, age: 1 }).tailMs, rtoMs(300, 1), 'a young connection waits longer');
  // A new TLS connection sends more messages, on a young connection's longer timeout.
  const fresh = operation(link('lte+loss1'), { transport: 'http-fresh', tls: true, reqBytes: 150, resBytes: 170 });
  assert.equal(fresh.tailMs, rtoMs(70, 0));
  // Six connections in parallel: the operation waits for the slowest.
  const one = lossCost(link('lte+loss1'), [{ bytes: 100, rto: 270 }]);
  const six = lossCost(link('lte+loss1'), [{ bytes: 100, rto: 270 }], 6);
  assert.deepEqual([one.p95, six.p95], [0, 270], '1 % of one connection, 5.9 % of six');
});

test('losses cut the window: a long transfer under loss takes longer at the median; without slow start (+ideal) there is no window to cut', () => {
  const big = { transport: 'http-keepalive', conn: 'warm', resBytes: 1000000 };
  const ms = (spec) => operation(linkOf(loadProfile(spec)), big).ms;
  assert.ok(ms('3g+loss1') > 1.5 * ms('3g'), `${ms('3g+loss1')} vs ${ms('3g')}`);
  assert.ok(ms('3g+loss3') > ms('3g+loss1'));
  assert.equal(ms('3g+ideal+loss1'), ms('3g'));
  // On a new connection, a transfer shorter than the median distance between losses
  // (146 KB at 1 %) is not slowed at the median.
  const fresh = { transport: 'http-fresh', resBytes: 50000 };
  assert.equal(operation(linkOf(loadProfile('3g+loss1')), fresh).ms, operation(linkOf(loadProfile('3g')), fresh).ms);
  // A kept connection on a lossy link has no open window: its earlier traffic left it at the sawtooth's mean.
  const kept = { transport: 'http-keepalive', conn: 'warm', resBytes: 50000 };
  assert.ok(operation(linkOf(loadProfile('3g+loss1')), kept).ms > operation(linkOf(loadProfile('3g')), kept).ms + 300);
});

test('slow start in operations: a new connection pays it, a kept one has an open window unless idle, +ideal never', () => {
  const H1 = framingOf('http-keepalive'); // HTTP/1.1's framing: its answer's headers ride with the body
  const link = linkOf(loadProfile('3g'));
  const big = { reqBytes: 100, resBytes: 100000 };
  const term = (l, op) => operation(l, op).terms.find((t) => t.name === 'window')?.ms || 0;
  const wait = windowWaitMs(100000 + H1.res, TCP.initialWindow, 300, 1600);
  assert.ok(near(term(link, { transport: 'http-fresh', ...big }), wait));
  assert.equal(term(link, { transport: 'http-keepalive', conn: 'warm', ...big }), 0);
  assert.ok(near(term(link, { transport: 'http-keepalive', conn: 'warm', idle: true, ...big }), wait));
  assert.equal(term(linkOf(loadProfile('3g+ideal')), { transport: 'http-fresh', ...big }), 0);
  // A new gRPC channel: TCP's window is smaller than gRPC's, so it is the one that limits.
  assert.ok(
    near(
      term(link, { transport: 'grpc', conn: 'cold', reqBytes: 10, resBytes: 1000000 }),
      windowWaitMs(1000110, TCP.initialWindow, 300, 1600),
    ),
  );
  // Without slow start, gRPC's own window still limits a new channel (under lte: 64 KB takes 44 ms, under R).
  const grpcIdeal = term(linkOf(loadProfile('lte+ideal')), {
    transport: 'grpc',
    conn: 'cold',
    reqBytes: 10,
    resBytes: 1000000,
  });
  assert.ok(grpcIdeal > 0 && near(grpcIdeal, windowWaitMs(1000110, GRPC_INITIAL_WINDOW, 70, 12000)), `${grpcIdeal}`);
  // A chain: the window a 43.8 KB answer leaves lets the next one through at once.
  const w = windowAfter(link, { transport: 'http-keepalive', conn: 'cold', resBytes: 43800 - H1.res });
  assert.equal(w, 58400);
  assert.equal(term(link, { transport: 'http-keepalive', conn: 'warm', resBytes: 43800 - H1.res, window: w }), 0);
});

test('a shared link: parallel connections move their bytes through one bandwidth', () => {
  const op = { transport: 'http-keepalive', conn: 'warm', rounds: 4, connections: 5, resBytes: 4 * 16150 };
  const down = (spec) => operation(linkOf(loadProfile(spec)), op).terms.find((t) => t.name === 'down').ms;
  assert.ok(near(down('3g+shared'), 5 * down('3g')));
});

test('budgets carry the loss tail at p95', () => {
  const ws = { transport: 'ws', conn: 'warm', reqBytes: 150, resBytes: 170 };
  const b = (spec) => {
    const link = linkOf(loadProfile(spec));
    const e = operation(link, ws);
    return budget(policy, link, { p50: e, p95: e });
  };
  assert.equal(b('3g+loss3').p50, b('3g').p50);
  assert.ok(
    b('3g+loss3').p95 >= b('3g').p95 + rtoMs(300) * policy.p95.factor - 5,
    `${b('3g+loss3').p95} vs ${b('3g').p95}`,
  );
});

test("connectionKbps: the link's down-rate, and under loss a connection's settled window a round trip", () => {
  const kbps = (spec) => connectionKbps(linkOf(loadProfile(spec)));
  assert.equal(kbps('lan'), null);
  assert.equal(kbps('lte'), loadProfile('lte').network.downKbps);
  // 4g (R 170 ms) with 3 % loss: Mathis's 0.75 x sqrt(8 / 3p) segments a round trip,
  // far below the link's own rate; more loss, less.
  const lossy = kbps('4g+loss3');
  assert.ok(lossy < 0.1 * loadProfile('4g').network.downKbps, `${lossy}`);
  assert.ok(kbps('4g+loss1') > lossy);
});
