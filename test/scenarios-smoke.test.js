// Every scenario at LOAD=smoke through Toxiproxy: k6 exits 0, checks pass, every
// lane has its metrics in the summary JSON. The shaped runs also assert the studies'
// effects, with margins in round trips (R >= 70 ms here), never sub-millisecond
// comparisons; a lan run is kept where it checks what the shaped one cannot (the
// serialization factors, compound's small documents, the study document).
// Until 2026-11-28 ws-vs-http, grpc-vs-graphql, push and soak each ran under lan as well
// (lanes present, exit 0), and serialization under lte: 76 s of the timed phase that
// the shaped runs here, test/soak.test.js and the benches already cover (issue 38, the
// suite in 20 minutes): `npx k6pack gate` runs every scenario under lan with its gates
// (bench/gate-trust.js), bench/profile-sweep.js every scenario under lte, 3g and
// 4g+shared+loss3.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import declareCompound, { STUDY } from '../scenarios/specs/compound-vs-parallel.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack } from '../dev/test-stack.js';
import { assertPassedButLatency, crossedInStderr } from './helpers/exits.js';
import { GRPC_VS_GRAPHQL_LANES, WS_VS_HTTP_LANES } from './helpers/lanes.js';

const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');

let stack;
before(async () => {
  stack = await startTestStack();
});
after(async () => {
  await stack?.stop();
});

// Runs scenarios/<name>.js at smoke; returns the summary metrics.
async function run(t, name, profile, env = {}, { allowFailedChecks = false } = {}) {
  const r = await runK6(join(ROOT, 'scenarios', `${name}.js`), {
    env: { ...stack.env, LOAD: 'smoke', PROFILE: profile, ...env },
    timeoutMs: 150000,
  });
  const output = `${r.stdout}\n${r.stderr.slice(-4000)}`;
  // What this file asserts are the studies' effects, below, in round trips. At LOAD=smoke
  // every row is gated whatever it rests on (plumbing: a p95 of 4 operations is their
  // slowest), so a latency gate alone may fail (test/helpers/exits.js): pinned to one core
  // (taskset -c 0, 2026-11-29) grpc_client_stream's big upload under 4g crossed its p95 of
  // 586 ms at 608.7 ms, the slowest of 4. Every other gate (failures, events) must hold.
  assertPassedButLatency(r.code, crossedInStderr(r.stderr), output);
  const m = r.summary.metrics;
  // The clients record a check only when it fails (common/recording.js): op_failed holds
  // every operation's outcome.
  if (!allowFailedChecks) assert.equal(m.checks ? m.checks.fails : 0, 0, `failed checks\n${output}`);
  assert.ok(m.op_failed && m.op_failed.passes + m.op_failed.fails > 0, 'no operation recorded');
  for (const line of r.stdout.trim().split('\n')) {
    if (/^\S.*\s(c1|mix)\s/.test(line) || /factor|\/ atomic|events\/s|^\s+\w+_c1:|rss/.test(line)) t.diagnostic(line);
  }
  return m;
}

const sub = (m, key) => {
  const v = m[key];
  assert.ok(v && (v.count > 0 || v.passes + v.fails > 0 || v.value > 0), `${key} has no samples`);
  return v;
};
const p50 = (m, key) => sub(m, key).med;

// Each lane (k6 scenario <lane>_<step>) has operations recorded.
function assertLanes(m, lanes, step = 'c1', metric = 'op_failed') {
  for (const lane of lanes) sub(m, `${metric}{scenario:${lane}_${step}}`);
}

const within = (a, b, fraction) => Math.abs(a - b) <= fraction * b;

describe('ws-vs-http (study 000)', () => {
  const lanes = ['http_fresh', 'http_keepalive', 'ws', 'https_fresh', 'http2', 'wss'];
  test('3g: one socket beats a connection per request by round trips; keep-alive closes the gap', async (t) => {
    const R = 300;
    const m = await run(t, 'ws-vs-http', '3g', { LANES: WS_VS_HTTP_LANES });
    assertLanes(m, lanes, 'c1', 'op_duration');
    const key = (lane) => `op_duration{scenario:${lane}_c1}`;
    const ws = p50(m, key('ws'));
    const fresh = p50(m, key('http_fresh'));
    const keepalive = p50(m, key('http_keepalive'));
    const wss = p50(m, key('wss'));
    const httpsFresh = p50(m, key('https_fresh'));
    const h2 = p50(m, key('http2'));
    t.diagnostic(
      `p50 ms: ws ${ws}, http-fresh ${fresh}, keep-alive ${keepalive}; wss ${wss}, https fresh ${httpsFresh}, http2 ${h2}`,
    );
    // Model: fresh = 2R vs ws = R (cleartext); https fresh = 3R vs wss = R (the study's ~600 ms at 3G).
    assert.ok(fresh - ws >= 0.9 * R, `http-fresh ${fresh} - ws ${ws} < 0.9 RTT`);
    assert.ok(httpsFresh - wss >= R, `https fresh ${httpsFresh} - wss ${wss} < one RTT`);
    assert.ok(within(keepalive, ws, 0.15), `keep-alive ${keepalive} not within 15 % of ws ${ws}`);
    assert.ok(within(h2, wss, 0.15), `http2 ${h2} not within 15 % of wss ${wss}`);
    // The socket's set-up is reported apart: upgrade 2R (TCP + upgrade), init R.
    assert.ok(p50(m, 'setup_duration{scenario:ws_c1,phase:ws_upgrade}') >= 1.9 * R);
    assert.ok(p50(m, 'setup_duration{scenario:ws_c1,phase:ws_init}') >= 0.9 * R);
  });
});

describe('grpc-vs-graphql (studies 003, 004)', () => {
  const lanes = ['grpc', 'grpc_fresh', 'http_keepalive', 'http_fresh'];
  test('4g: a new channel per call pays its set-up; warm gRPC and keep-alive GraphQL are close', async (t) => {
    const R = 170;
    const m = await run(t, 'grpc-vs-graphql', '4g', { BIG_SIZE: '100000', LANES: GRPC_VS_GRAPHQL_LANES });
    assertLanes(m, lanes, 'c1', 'op_duration');
    const key = (lane, payload, conn) => `op_duration{scenario:${lane}_c1,payload:${payload},conn:${conn}}`;
    const warm = p50(m, key('grpc', 'small', 'warm'));
    const fresh = p50(m, key('grpc_fresh', 'small', 'cold'));
    const keepalive = p50(m, key('http_keepalive', 'small', 'warm'));
    const cold = p50(m, key('grpc', 'small', 'cold'));
    t.diagnostic(
      `small p50 ms: grpc warm ${warm}, grpc first call ${cold}, grpc new channel ${fresh}, graphql keep-alive ${keepalive}`,
    );
    assert.ok(fresh - warm >= R, `new channel ${fresh} - warm ${warm} < one RTT`);
    assert.ok(cold - warm >= R, `first call ${cold} - warm ${warm} < one RTT`);
    assert.ok(within(warm, keepalive, 0.15), `warm gRPC ${warm} not within 15 % of keep-alive GraphQL ${keepalive}`);
    sub(m, 'setup_duration{scenario:grpc_c1,phase:grpc_connect}');
  });
});

describe('serialization (study 002)', () => {
  test('lan: the typed / JSON-string factor grows with N; resolving each author on its own (per-item) costs more than plain', async (t) => {
    const m = await run(t, 'serialization', 'lan');
    const typedLanes = ['typed', 'typed_per_item', 'typed_dataloader', 'typed_instrumented', 'typed_jit'];
    for (const lane of [...typedLanes, 'json', 'grpc_list', 'grpc_stream'])
      sub(m, `op_duration{scenario:${lane}_c1,n:1000}`);
    const factor = (lane, n) =>
      p50(m, `op_duration{scenario:${lane}_c1,n:${n}}`) / p50(m, `op_duration{scenario:json_c1,n:${n}}`);
    for (const lane of typedLanes)
      t.diagnostic(
        `${lane}/JSON p50 factor: ${[100, 1000, 10000].map((n) => `N=${n} ${factor(lane, n).toFixed(2)}`).join(', ')}`,
      );
    // End to end only where the effect is large: at N = 100 both medians are ~1-2 ms (k6's
    // and the link's jitter; factor 1.5 to 3.8 over 12 runs), at N = 10000 they are 25-250 ms.
    // Spread measured (typed/JSON at N=10000): 2.85..6.40 over 12 runs on 2026-11-26.
    const f10000 = factor('typed', 10000);
    assert.ok(f10000 > 1.5, `typed is not clearly slower than the JSON string at N=10000 (${f10000})`);
    // The factor grows with N, on the server's CPU time (Server-Timing cpu, which the
    // scenario asks for: servers/graphql/timing.js), the least of each step's operations
    // (28 typed, 63 JSON). Not on its wall time (total): that grows with every wait for a
    // core, and this file runs beside others. Its least once held up (16 runs alone on
    // 2026-11-26: typed's growth from 1000 to 10000 books 1.40..1.62), then a CI suite run
    // at a load average of 8.6 on 2 cores read 1.198 against the bound of 1.2 (2026-11-30),
    // and 3 runs beside 7 busy processes read 0.46..0.74 where the CPU time read 1.34..2.31.
    // Over 11 runs that day (5 quiet, 3 beside 7 busy processes, 3 pinned to one core), on
    // the CPU time of one run each:
    //   typed, at 10000 over at 1000: 1.28..1.58 and one 2.31 (mean of the ten 1.39, sd 0.09);
    //   per-item, at 10000 over at 100: 3.05..4.88 (the bound 1.5 is half the least);
    //   per-item's CPU over plain's at N = 10000: 1.46..3.86 (the bound 1.1: per-item, an
    //     async call per book, unbatched, the study's controller, costs clearly more;
    //     the model says 40 against 15 us a book).
    // Since typed's bound of 1.2 sits about 2 sd under that mean, the three lanes run once
    // more at N = 1000 and 10000, in another order, and each N keeps its least of both runs.
    const again = await run(t, 'serialization', 'lan', { LANES: 'typed_per_item,json,typed', NS: '1000,10000' });
    const least = (lane, n, part = 'cpu') =>
      Math.min(
        ...[m, again]
          .map((x) => x[`server_duration{scenario:${lane}_c1,n:${n},part:${part}}`]?.min)
          .filter((v) => v !== undefined),
      );
    const f = (lane, part) => [100, 1000, 10000].map((n) => least(lane, n, part) / least('json', n, part));
    const fmt = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
    for (const part of ['total', 'cpu'])
      t.diagnostic(
        `server ${part} (least) over JSON's at N=100, 1000, 10000: typed ${fmt(f('typed', part))}; per-item ${fmt(f('typed_per_item', part))}`,
      );
    const [typed, item] = [f('typed', 'cpu'), f('typed_per_item', 'cpu')];
    assert.ok(typed[2] >= 1.2 * typed[1], `typed's server CPU factor does not grow from N=1000 to 10000: ${typed}`);
    assert.ok(item[2] >= 1.5 * item[0], `per-item's server CPU factor does not grow from N=100 to 10000: ${item}`);
    const [itemCpu, plainCpu] = [least('typed_per_item', 10000), least('typed', 10000)];
    t.diagnostic(`N=10000 per-item/plain CPU: ${(itemCpu / plainCpu).toFixed(2)} (${itemCpu} / ${plainCpu} ms)`);
    assert.ok(
      itemCpu >= 1.1 * plainCpu,
      `per-item's CPU at N=10000 (${itemCpu} ms) is not 1.1x plain's (${plainCpu} ms)`,
    );
    // The server's own time is reported apart from the transfer, execution apart from serialization.
    for (const part of ['exec', 'ser']) sub(m, `server_duration{scenario:typed_per_item_c1,n:10000,part:${part}}`);
    sub(m, 'server_duration{scenario:typed_c1,n:10000,part:ser}');
  });
});

describe('compound-vs-parallel (study 001)', () => {
  const lanes = ['compound_h1', 'atomic_h1', 'compound_h2', 'atomic_h2'];
  test('lan: documents, caching and revalidation', async (t) => {
    const m = await run(t, 'compound-vs-parallel', 'lan', { STEP_SECONDS: '2' });
    assertLanes(m, lanes, 'c1', 'op_duration');
    for (const lane of lanes) {
      sub(m, `op_duration{scenario:${lane}_c1,size:small,cache:off,conn:cold}`);
      sub(m, `op_duration{scenario:${lane}_c1,size:large,cache:on,conn:warm}`);
      sub(m, `op_duration{scenario:${lane}_c1,size:large,cache:etag,conn:warm}`);
    }
  });

  test('4g, large documents: HTTP/2 atomic matches the compound document, HTTP/1.1 atomic pays its extra rounds', async (t) => {
    const R = 170;
    const m = await run(t, 'compound-vs-parallel', '4g', { DOC_SIZES: 'large' });
    assertLanes(m, lanes, 'c1', 'op_duration');
    const key = (lane) => `op_duration{scenario:${lane}_c1,size:large,cache:off,conn:warm}`;
    const [c1, a1, c2, a2] = lanes.map((l) => p50(m, key(l)));
    t.diagnostic(`large p50 ms: compound h1 ${c1}, atomic h1 ${a1}, compound h2 ${c2}, atomic h2 ${a2}`);
    // Toxiproxy shapes each connection: the 20 multiplexed requests share one
    // connection's bandwidth, so without server push they cannot beat the compound.
    assert.ok(within(a2, c2, 0.15), `HTTP/2 atomic ${a2} not within 15 % of compound ${c2}`);
    assert.ok(a1 - c1 >= R, `HTTP/1.1 atomic ${a1} - compound ${c1} < one RTT (4 rounds on 6 connections)`);
    // Revalidation answers 304 in about one round trip, without the document.
    const etag = p50(m, 'op_duration{scenario:compound_h2_c1,size:large,cache:etag,conn:warm}');
    assert.ok(etag < c2 - 100, `304 revalidation ${etag} not clearly faster than the document ${c2}`);
  });
});

describe("compound-vs-parallel: study 001's document (DOC_SIZES=study: 50 x 100 KB, 20 ms each, 15 hits)", () => {
  const key = (lane) => `op_duration{scenario:${lane}_c1,size:study,cache:off,conn:warm}`;

  test('lan: generating the parts one after another is the 4x; at once, compound costs what atomic does', async (t) => {
    // The three lanes the assertions read (atomic_h1 and vulcain_h2 only fed the diagnostic
    // line: 12 s of the timed phase, 2026-11-29).
    const lanes = ['compound_serial_h2', 'compound_h2', 'atomic_h2'];
    const m = await run(t, 'compound-vs-parallel', 'lan', { DOC_SIZES: 'study', LANES: lanes.join(',') });
    const [serial, parallel, atomic2] = lanes.map((l) => p50(m, key(l)));
    t.diagnostic(`study p50 ms: compound serial ${serial}, compound parallel ${parallel}, atomic h2 ${atomic2}`);
    t.diagnostic(
      `study min ms (count): ${lanes.map((l) => `${l} ${sub(m, key(l)).min} (${sub(m, key(l)).count})`).join(', ')}`,
    );
    // What the lanes differ in is the wait: the serial compound sleeps its misses one after
    // another, W = (nb - hits - 1) x delay = 680 ms more than one sleep. Beyond it, every lane
    // pays the transfer, which under lan is CPU work (k6 reading one 5 MB answer or fifty of
    // 100 KB): a loaded machine stretches it, and unevenly. Measured p50 (ms), 2026-11-29/30:
    //   quiet, 9 runs (6 suites, 3 alone, 1 pinned to one core): atomic h2 64..101,
    //     parallel 65..90; serial / atomic 7.5..12; parallel / atomic 0.64..1.16
    //   CI on 41b34d4, beside another timed file (test/run.js TIMED_AT_ONCE): parallel / atomic
    //     1.31 (83.4 / 63.5): a bound of 1.3 failed
    //   beside 7 busy loops, 11 runs: atomic h2 252..374, parallel 154..301, serial 863..941;
    //     serial / atomic 2.8..3.4 (a bound of 3 failed once); serial - parallel 602..751;
    //     |parallel - atomic| 0..163
    // So each claim is tested against W, with the bound midway between "pays the wait" (W)
    // and "does not" (0): no load seen moves a lane by W / 2 = 340 ms, and a lane that
    // paid or skipped the sleeps it should not would cross it.
    const W = (STUDY.nb - STUDY.hits - 1) * STUDY.delay;
    assert.ok(serial - atomic2 >= W / 2, `compound serial ${serial} - atomic h2 ${atomic2} < W / 2 (W = ${W} ms)`);
    assert.ok(serial - parallel >= W / 2, `compound serial ${serial} - parallel ${parallel} < W / 2 (W = ${W} ms)`);
    assert.ok(
      Math.abs(parallel - atomic2) <= W / 2,
      `compound parallel ${parallel} - atomic h2 ${atomic2}: over W / 2 (W = ${W} ms) apart`,
    );
    // The server's own time shows where the difference is: (nb - hits) x delay of sleeps in one handler.
    const server = (lane) => p50(m, `server_duration{scenario:${lane}_c1,size:study,cache:off,conn:warm,part:total}`);
    t.diagnostic(
      `study server p50 ms: compound serial ${server('compound_serial_h2')}, parallel ${server('compound_h2')}`,
    );
    assert.ok(
      server('compound_serial_h2') >= 35 * 19,
      `serial compound server time ${server('compound_serial_h2')} ms < 35 x 20 ms`,
    );
    // Its parallel time (sleeps at once, then 5 MB of JSON) read 83..123 ms beside 7 busy loops
    // (the bound was 200): it too is bounded midway, at W / 2.
    assert.ok(server('compound_h2') <= W / 2, `parallel compound server time ${server('compound_h2')} ms > W / 2`);
  });

  test('lte: the Vulcain flow pays one round trip more for its links', async (t) => {
    // Two lanes: compound_h2's study document is run under lan above; here it only fed
    // a vulcain - compound comparison of ~10 ms on two 3.7 s medians (spread measured
    // 4.7..14.9 ms over 4 runs on 2026-11-26: a coin toss, dropped), and cost 26 s.
    const env = { DOC_SIZES: 'study', LANES: 'atomic_h2,vulcain_h2' };
    const m = await run(t, 'compound-vs-parallel', 'lte', env);
    const [atomic, vulcain] = ['atomic_h2', 'vulcain_h2'].map((l) => p50(m, key(l)));
    // The model's difference: R plus the links' bytes (common/model.js, the plan).
    const env2 = { ...env, LOAD: 'smoke' };
    const built = buildScenario(declareCompound(env2), loadProfile('lte'), env2, policy);
    const model = (lane) => built.gates.find((g) => g.key === key(lane)).expected.p50.ms;
    const extra = model('vulcain_h2') - model('atomic_h2');
    t.diagnostic(
      `lte study p50 ms: atomic h2 ${atomic}, vulcain ${vulcain}; vulcain - atomic ${vulcain - atomic} (model ${extra.toFixed(1)}: R 70 + the links)`,
    );
    assert.ok(extra >= 70 && extra < 140, `the model's extra ${extra}`);
    // A difference of two ~3.7 s medians of six samples each (each steady within ~8 ms
    // run to run). The links' round also grows the link toxic's window, which the model
    // does not split out: the difference comes in below the model's extra, not above.
    // Spread measured (vulcain - atomic): 58..70 ms against the model's 74.7 (4.7..16.7
    // below it) over 7 runs on 2026-11-26; the old bound (extra - 18.2 ms = 56.5) sat 1.5 ms
    // under the lowest. Bounds: at least 0.7 R (the extra round trip is paid; the window
    // saves part of it: without that round the difference would be ~0), at most 15 % above
    // the model's extra.
    const R = 70;
    const diff = vulcain - atomic;
    assert.ok(
      diff >= 0.7 * R && diff <= 1.15 * extra,
      `vulcain - atomic h2 = ${diff} ms, not within ${0.7 * R}..${(1.15 * extra).toFixed(1)} ms (the model: one round trip and the links, ${extra.toFixed(1)} ms)`,
    );
  });
});

describe('push', () => {
  const lanes = ['ws', 'grpc_stream', 'http_poll'];
  test('4g: pushed events arrive in half a round trip, polled ones wait for the poll', async (t) => {
    const R = 170;
    const m = await run(t, 'push', '4g');
    for (const lane of lanes) {
      sub(m, `push_events{scenario:${lane}_c1}`);
      sub(m, `push_latency{scenario:${lane}_c1}`);
    }
    const ws = p50(m, 'push_latency{scenario:ws_c1}');
    const stream = p50(m, 'push_latency{scenario:grpc_stream_c1}');
    const poll = p50(m, 'push_latency{scenario:http_poll_c1}');
    t.diagnostic(`push latency p50 ms: ws ${ws}, grpc-stream ${stream}, http-poll ${poll}`);
    for (const [what, v] of [
      ['ws', ws],
      ['grpc-stream', stream],
    ]) {
      assert.ok(v >= R / 2 - 5 && v <= R / 2 + 50, `${what} push latency ${v} is not half an RTT`);
    }
    assert.ok(poll >= ws + 100, `polling ${poll} not clearly slower than pushing ${ws}`);
  });
});

describe('faults', () => {
  const lanes = ['http_keepalive', 'http2', 'ws', 'grpc'];
  test('lan+flaky: resets fail some operations, clients recover, the run ends normally', async (t) => {
    const m = await run(t, 'faults', 'lan+flaky', {}, { allowFailedChecks: true });
    assertLanes(m, lanes);
    assert.ok(m.op_failed.value > 0, 'no operation failed under flaky: the faults did not reach the clients');
    assert.ok(m.op_failed.value < 0.1, `too many failures: ${m.op_failed.value}`);
    sub(m, 'recovery_duration');
    sub(m, 'reconnects');
  });

  // Every fault on every lane: test/faults-matrix.test.js (under lan). A fault under a
  // shaped link ran here as 4g+flaky (33 s) until 2026-11-27: the suite's 25 minutes.
});
