// The mobile scenario (issue 41) in one short run under lte+rrc: two lanes, one operation
// every 2 s, three after each step's first. The radio is idle when the run starts (a new
// stack's Toxiproxy), so the first operation pays LTE's promotion, and the link's event
// log shows it (260 ms); every later gap (2 s) is within the 11.576 s tail, so no
// operation after it is promoted, and each costs what the plain network's model says.
// The radio's time per state and energy come from the log and match common/radio.js's
// rhythm. Bad input is one line and exit 2. Timed: it asserts latencies.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { execa } from 'execa';
import { BOOK_OP } from '../scenarios/specs/ws-vs-http.js';
import { linkOf, operation } from '../common/model.js';
import { energy, RADIOS } from '../common/radio.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack } from '../dev/test-stack.js';

let stack;
before(async () => {
  stack = await startTestStack();
});
after(async () => {
  await stack?.stop();
});

// lo-hi x want, with plusMs more allowed above (k6's and the machine's own time per
// operation, a few ms: a busy 2-core machine put a fresh request's p50 at 1.08 x its model).
const within = (got, want, lo, hi, what, plusMs = 0) =>
  assert.ok(
    got >= want * lo && got <= want * hi + plusMs,
    `${what}: ${got}, want ${lo}-${hi} x ${want} (+${plusMs} ms)`,
  );

test('lte+rrc, one operation every 2 s: the first pays the promotion, none within the tail does; the radio per state and its energy from the log', async (t) => {
  const r = await runK6(join(ROOT, 'scenarios', 'mobile.js'), {
    env: {
      ...stack.env,
      PROFILE: 'lte+rrc',
      LANES: 'http_fresh_t2,ws_t2',
      INTERACTION_SECONDS: '2',
      MOBILE_OPS: '3',
    },
    timeoutMs: 90000,
  });
  const output = `${r.stdout}\n${r.stderr.slice(-3000)}`;
  assert.equal(r.code, 0, output);
  for (const line of r.stdout.split('\n')) if (/every 2 s|promotions/.test(line)) t.diagnostic(line);
  const m = r.summary.metrics;
  const sub = (key) => {
    assert.ok(m[key], `${key} missing\n${output}`);
    return m[key];
  };
  const link = linkOf(loadProfile('lte+rrc'));
  const fresh = (gapS) => operation(link, { transport: 'http-fresh', tls: false, ...BOOK_OP, gapS }).ms;
  const ws = operation(link, { transport: 'ws', tls: false, conn: 'warm', ...BOOK_OP, gapS: 2 }).ms;

  // The first operation of the run found the radio idle: one promotion of 260 ms in the log.
  assert.equal(sub('radio_promotions{scenario:http_fresh_t2_c1,gap:first}').count, 1);
  within(sub('radio_promotion{scenario:http_fresh_t2_c1,gap:first}').med, 260, 0.98, 1.02, 'the promotion in the log');
  const first = sub('op_duration{scenario:http_fresh_t2_c1,gap:first}').med;
  t.diagnostic(`the first operation ${first.toFixed(1)} ms (model ${fresh(60).toFixed(1)})`);
  // One sample, the run's first request: 415.8-430.1 ms in the 6 runs alone that printed it
  // (2026-11-30, model 402.9); 2 of 20 such runs failed the old ceiling (1.1 x + 15 ms), one
  // at 464.4. A packet of it that meets the radio after a quiet 100 ms (a
  // pause of k6's first request) waits up to one long DRX cycle (RADIOS.lte.longCycleMs, 40
  // ms): the ceiling allows one. Without the promotion it would be 143 ms, far under the floor.
  within(first, fresh(60), 0.9, 1.1, 'the first operation', 15 + RADIOS.lte.longCycleMs);
  // Within the tail: no promotion, and the plain network's time.
  for (const lane of ['http_fresh_t2_c1', 'ws_t2_c1'])
    assert.equal(sub(`radio_promotions{scenario:${lane},gap:after}`).count, 0, `${lane}: promoted within the tail`);
  assert.equal(fresh(2), operation(link, { transport: 'http-fresh', tls: false, ...BOOK_OP }).ms, 'no radio term');
  within(sub('op_duration{scenario:http_fresh_t2_c1,gap:after}').med, fresh(2), 0.9, 1.1, 'http_fresh after 2 s', 15);
  within(sub('op_duration{scenario:ws_t2_c1,gap:after}').med, ws, 0.9, 1.1, 'ws after 2 s', 15);

  // The radio never left RRC_CONNECTED in the window: on for the whole hour, and its energy
  // is common/radio.js's rhythm for one operation every 2 s (the operation's time on the air
  // is a few percent of the period: the energy barely depends on it).
  for (const lane of ['http_fresh_t2_c1', 'ws_t2_c1']) {
    within(sub(`radio_on_hour{scenario:${lane}}`).med, 3600, 0.999, 1.001, `${lane}: radio on s/h`);
    assert.equal(sub(`radio_state_hour{scenario:${lane},state:idle}`).max, 0, `${lane}: idle in the window`);
    assert.equal(
      sub(`radio_state_hour{scenario:${lane},state:promotion}`).max,
      0,
      `${lane}: a promotion in the window`,
    );
    within(
      sub(`radio_energy_op{scenario:${lane}}`).med,
      energy('lte', { periodS: 2, activeS: 0.07 }).perOpMj,
      0.95,
      1.05,
      `${lane}: mJ/op`,
    );
  }
  // The ranking: a socket's one round trip against a fresh connection's two is not alike
  // (x2); the energy of the two, the radio on for the whole hour, is (within 5 %).
  assert.match(
    r.stdout,
    /every 2 s, ranked by p50: ws \d+ ms; http_fresh \d+ ms; by energy: (ws|http_fresh) and (ws|http_fresh) \d+(–\d+)? mJ\/op\n/,
  );
  assert.match(
    r.stdout,
    /lte\+rrc, one operation every 2 s: fastest ws \(p50 \d+ ms\), cheapest on battery (ws|http_fresh) and (ws|http_fresh) \(\d+(–\d+)? mJ\/op\)/,
  );
  assert.match(
    r.stdout,
    /http_fresh every 2 s: p50 \d+ ms, p95 \d+ ms \(model \d+ ms = promotion 0 \+ set-up 70 \+ operation \d+\)/,
  );
});

test('a malformed INTERACTION_SECONDS: one line naming it, exit 2, before anything starts', async () => {
  const r = await execa(process.execPath, [join(ROOT, 'bin', 'k6pack.js'), 'run', 'mobile', '--profile', 'lte+rrc'], {
    reject: false,
    env: { INTERACTION_SECONDS: '5,fifteen' },
    timeout: 30000,
  });
  assert.equal(r.exitCode, 2, r.stderr);
  assert.equal(r.stderr.trim(), 'k6pack: INTERACTION_SECONDS=5,fifteen: item 2 must be a whole number from 1 to 3600');
  assert.equal(r.stdout.trim(), '');
});

test("the spec's gaps and NAT drops: a ping bounds the gap (the server's every 12 s on a WebSocket), a NAT drops a kept connection idle longer than its timeout", async () => {
  const { MOBILE_LANES, natDrops, pingOf, serverClosesS } = await import('../scenarios/specs/mobile.js');
  const by = Object.fromEntries(MOBILE_LANES.map((l) => [l.name, l]));
  assert.deepEqual(
    MOBILE_LANES.map((l) => [l.name, pingOf(l)]),
    [
      ['http_fresh', 0],
      ['http_keepalive', 0],
      ['http2', 0],
      ['ws', 12],
      ['ws_ping10', 10],
      ['ws_ping30', 12],
      ['grpc', 0],
      ['grpc_ping10', 10],
    ],
  );
  assert.equal(natDrops(by.http_fresh, 60, 10), false, 'a fresh connection each time');
  assert.equal(natDrops(by.http_keepalive, 15, 10), true);
  assert.equal(natDrops(by.http_keepalive, 5, 10), false);
  assert.equal(natDrops(by.grpc, 60, 30), true, 'no keepalive pings');
  assert.equal(natDrops(by.grpc_ping10, 60, 30), false, "the keepalive server's 10 s pings keep it");
  assert.equal(natDrops(by.ws, 60, 30), false, "the server's 12 s pings keep it");
  assert.equal(natDrops(by.ws_ping10, 60, 10, 70), true, 'a ping comes a round trip after its interval');
  assert.equal(natDrops(by.ws, 15, 0), false, 'no NAT');
  // The server closes an idle kept HTTP connection at 65 s (LIMITS.KEEP_ALIVE_MS): under a
  // NAT that outlasts it the client hears the FIN and never sends into a dead connection.
  assert.equal(serverClosesS(by.http_keepalive), 65);
  assert.equal(serverClosesS(by.http2), 65);
  assert.equal(serverClosesS(by.ws), Infinity);
  assert.equal(serverClosesS(by.grpc), Infinity);
  assert.equal(natDrops(by.http_keepalive, 120, 60), true, 'the NAT forgets it first');
  assert.equal(natDrops(by.http_keepalive, 120, 90), false, 'the server closes it first');
  assert.equal(natDrops(by.grpc, 120, 90), true);
  // Past that limit each operation opens a new connection; HTTP/2's GOAWAY (data) woke the
  // radio at 65 s, HTTP/1.1's FIN did not (lte+rrc at 70 s: R 70 ms, TLS's set-up 2 R).
  const { default: declare } = await import('../scenarios/specs/mobile.js');
  const { readSettings } = await import('../common/settings.js');
  const { linkOf } = await import('../common/model.js');
  const { expectationsOf } = await import('../common/gates.js');
  const { loadProfile } = await import('../lib/profiles.js');
  const link = linkOf(loadProfile('lte+rrc'));
  const p50 = (name) => {
    const l = declare(readSettings({ INTERACTION_SECONDS: '60,70' })).lanes.find((x) => x.name === name);
    return expectationsOf(l, l.dims[0], link).p50;
  };
  assert.deepEqual([p50('http_keepalive_t60').setupMs, p50('http_keepalive_t60').radioMs], [0, 260]);
  assert.deepEqual([p50('http_keepalive_t70').setupMs, p50('http_keepalive_t70').radioMs], [70, 260]);
  assert.equal(p50('http2_t70').radioMs, 0);
  assert.ok(p50('http2_t70').setupMs > 140, 'TCP and TLS');
});

test("the client's own idle timeout (CLIENT_IDLE_SECONDS): shorter than the gap and than the server's limit, the next operation opens a new connection", async () => {
  const { clientCloses, MOBILE_LANES, natDrops, default: declare } = await import('../scenarios/specs/mobile.js');
  const { readSettings } = await import('../common/settings.js');
  const { expectationsOf } = await import('../common/gates.js');
  const by = Object.fromEntries(MOBILE_LANES.map((l) => [l.name, l]));
  assert.equal(clientCloses(by.http_keepalive, 15, 10), true);
  assert.equal(clientCloses(by.http2, 15, 10), true);
  assert.equal(clientCloses(by.http_keepalive, 5, 10), false, 'within the timeout');
  assert.equal(clientCloses(by.http_keepalive, 90, 80), false, 'the server closes first (65 s)');
  assert.equal(clientCloses(by.http_fresh, 15, 10), false, 'a new connection each time anyway');
  assert.equal(clientCloses(by.ws, 15, 10), false, 'a WebSocket is held open');
  assert.equal(clientCloses(by.grpc, 15, 10), false);
  assert.equal(clientCloses(by.http_keepalive, 60, Infinity), false, 'no timeout');
  // Under a NAT of 20 s at one operation every 30 s: closed by the client first, never dropped.
  assert.equal(natDrops(by.http_keepalive, 30, 20, 70, 300), true, "the default's 5 minutes");
  assert.equal(natDrops(by.http_keepalive, 30, 20, 70, 10), false, 'the client closed it');
  // A tie: the rows come T apart start to start, so a connection's gap is T less its
  // operation (a round trip at least; on gRPC one more, the PING's ACK): within the timeout.
  assert.equal(natDrops(by.http_keepalive, 60, 60, 300), false, 'T equal to the timeout');
  assert.equal(natDrops(by.http2, 60, 60, 300), false);
  assert.equal(natDrops(by.grpc, 60, 60, 300), false);
  assert.equal(natDrops(by.http_keepalive, 60.5, 60, 300), true, '60.2 s');
  assert.equal(natDrops(by.grpc, 60.5, 60, 300), false, '59.9 s: the PING comes a round trip later');
  assert.equal(natDrops(by.grpc, 61, 60, 300), true);
  assert.equal(natDrops(by.http_keepalive, 59, 60, 300), false);
  // The lanes and their model: lte (R 70 ms) at 15 s, the client's timeout 10 s: a new
  // connection (TCP, R) after the whole gap; 5 minutes by default: kept (no set-up).
  const link = linkOf(loadProfile('lte+rrc'));
  const laneOf = (env, name) => declare(readSettings(env)).lanes.find((x) => x.name === name);
  const shortIdle = laneOf({ INTERACTION_SECONDS: '15', CLIENT_IDLE_SECONDS: '10' }, 'http_keepalive_t15');
  const byDefault = laneOf({ INTERACTION_SECONDS: '15' }, 'http_keepalive_t15');
  assert.equal(shortIdle.clientClose, true);
  assert.equal(byDefault.clientClose, false);
  assert.deepEqual(
    [
      expectationsOf(shortIdle, shortIdle.dims[0], link).p50.setupMs,
      expectationsOf(byDefault, byDefault.dims[0], link).p50.setupMs,
    ],
    [70, 0],
  );
});

test("MOBILE_ANSWER_BYTES: a payload past FACH's 475 B buffer, in FACH (3g+rrc, one operation every 8 s): FACH carries the request, the answer promotes to DCH", async () => {
  const { default: declare } = await import('../scenarios/specs/mobile.js');
  const { readSettings } = await import('../common/settings.js');
  const { expectationsOf } = await import('../common/gates.js');
  const link = linkOf(loadProfile('3g+rrc'));
  const p50 = (env, name) => {
    const l = declare(readSettings(env)).lanes.find((x) => x.name === name);
    return expectationsOf(l, l.dims[0], link).p50;
  };
  const env = { INTERACTION_SECONDS: '8' };
  // The book operation fits FACH: FACH carries it both ways, no promotion.
  const book = p50(env, 'http_keepalive_t8');
  assert.deepEqual(
    book.terms.filter((t) => t.name === 'promotion' || t.name === 'fach').map((t) => t.name),
    ['fach'],
  );
  // 1000 B of payload: { size, data } in JSON (+40 B) and HTTP/1.1's 300 B of framing down
  // (1340 B > 475), the payload query (110 B) and 160 B of framing up (270 B <= 540): FACH
  // carries the request up in 0.0014 x 270^2 + 1.6 x 270 + 20 = 554.06 ms, then the answer
  // waits for the promotion, 1500 ms (common/radio.js).
  const big = p50({ ...env, MOBILE_ANSWER_BYTES: '1000' }, 'http_keepalive_t8');
  const term = (name) => big.terms.find((t) => t.name === name)?.ms;
  assert.equal(term('promotion'), 1500);
  assert.ok(Math.abs(term('fach') - 554.06) < 1e-6, `FACH ${term('fach')}`);
  assert.ok(Math.abs(big.radioMs - 2054.06) < 1e-6, `radio ${big.radioMs}`);
  // gRPC's Payload: 10 B asked (+ 40 of framing on a kept channel), 1010 B answered.
  const grpc = p50({ ...env, MOBILE_ANSWER_BYTES: '1000' }, 'grpc_t8');
  assert.equal(grpc.terms.find((t) => t.name === 'promotion').ms, 1500);
});

test("a WebSocket lane's rows at T of at least the server's ping interval: each on its own phase of the ping's cycle, moved by at most half of it", async () => {
  const { rowOnPingCycle } = await import('../scenarios/specs/mobile.js');
  // Pings at 0, 12, 24 ... s; 4 rows: phases 1.5, 4.5, 7.5 and 10.5 s after a ping.
  const at = (targetS, k) => rowOnPingCycle(targetS * 1000, k, 4, 0, 12000) / 1000;
  // T = 60 s from a warm operation 0.2 s after the socket opened: each row would land 0.2 s
  // after a ping; moved to its phase, the third and fourth go before their slot (7.3 and
  // 10.3 s after it is more than half an interval): the rows are 63, 51 and 63 s apart.
  assert.deepEqual(
    [1, 2, 3, 4].map((k) => at(0.2 + 60 * k, k)),
    [61.5, 124.5, 175.5, 238.5],
  );
  // T = 15 s: the phases already move 3 s a row, so every row moves alike and the rows keep T.
  assert.deepEqual(
    [1, 2, 3, 4].map((k) => at(0.2 + 15 * k, k)),
    [13.5, 28.5, 43.5, 58.5],
  );
  // Never more than half an interval: 11 s after a ping, the first phase is the next cycle's.
  assert.equal(at(11, 1), 13.5);
  assert.equal(at(13, 4), 10.5);
  // A clock from another moment (the last ping seen, not the open) gives the same phases.
  assert.equal(rowOnPingCycle(61000, 1, 4, 48000, 12000), 61500);
});
