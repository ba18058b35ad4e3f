// Profiles applied from k6 do what they say: switching profiles replaces the toxics,
// teardown leaves none (also when a threshold aborts the run), and each fault profile
// shows up as the failure it describes. Real servers, toxiproxy and k6. About 40 s.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROXY_NAMES } from '../common/defaults.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { useTestStack } from '../dev/test-stack.js';
import { scaled } from './helpers/waits.js';

const NETWORK_PROBE = join(ROOT, 'test', 'k6', 'network-probe.js');
const FAULT_PROBE = join(ROOT, 'test', 'k6', 'faults-probe.js');

const stack = useTestStack();

async function k6(probe, env) {
  return runK6(probe, { env: { ...stack.env, ...env }, timeoutMs: 60000 });
}

const count = (summary, metric) => summary.metrics[metric]?.count ?? 0;

async function assertNoToxics() {
  for (const [name, proxy] of Object.entries(await stack.toxiproxy.proxies()))
    assert.deepEqual(proxy.toxics, [], `${name} has no toxics left`);
}

test(
  'switching profiles: each run carries exactly its own toxics, and none are left after it',
  { timeout: 60000 },
  async () => {
    const warm = {};
    for (const spec of ['lte', '3g+flaky', 'lan']) {
      const run = await k6(NETWORK_PROBE, { PROFILE: spec });
      assert.equal(run.code, 0, run.stderr.slice(-1500));
      assert.equal(
        count(run.summary, 'toxic_matches'),
        PROXY_NAMES.length,
        `${spec}: all ${PROXY_NAMES.length} proxies carry its toxics (${run.stderr.slice(-800)})`,
      );
      warm[spec] = run.summary.metrics.warm_request?.min;
      await assertNoToxics();
    }
    // A 3g+flaky connection may be reset; lte and lan always answer. This test
    // checks that each switch applied that profile and no other (lte's warm request
    // is one RTT of 70 ms: not lan's, not a fresh connection's 140 ms, not 4g's 170);
    // the 10 % fidelity bound is roundtrip.test.js's, on medians of several samples.
    // The least of 5 warm requests: one request timed alone took 22 ms under lan in a
    // suite run with one core kept busy (2026-11-26), while lan's floor is ~1 ms and
    // the nearest shaped profile (fios) has 4 ms of RTT, the next (cable) 28. Each bound sits
    // at what it tells apart (toxic_matches above checks the toxics themselves), so a busy
    // machine (load 9 on 2 cores, this file beside others) has that whole margin: lte's
    // below a fresh connection's 140 ms, lan's below cable's 28.
    assert.ok(warm.lte >= 70 && warm.lte < 140, `lte warm request ${warm.lte} ms`);
    assert.ok(warm.lan < 28, `lan warm request ${warm.lan} ms`);
    if (warm['3g+flaky'] !== undefined) assert.ok(warm['3g+flaky'] >= 300, `3g warm request ${warm['3g+flaky']} ms`);
  },
);

test(
  'a threshold with abortOnFail stops the run (exit 99) and teardown still clears the toxics',
  { timeout: 60000 },
  async () => {
    const run = await k6(NETWORK_PROBE, { PROFILE: '3g', ABORT: '1' });
    assert.equal(run.code, 99, run.stderr.slice(-1500));
    assert.match(run.stderr, /stopping test prematurely|abortOnFail/);
    assert.ok(count(run.summary, 'toxic_matches') >= 4, 'the toxics were on during the run');
    await assertNoToxics();
  },
);

// SHARE_REQUESTS requests, one connection each; a fault with toxicity 0.1 hits about 20
// of them. Binomial(200, 0.1): P(< 5) ~ 8e-6, P(> 50) ~ 3e-10. With 100 requests and
// bounds 2..25 (P(< 2) ~ 3e-4) a fresh-clone run of 5c77b19 saw 1 of 100 under truncate.
const SHARE_REQUESTS = 200;
function assertShare(summary, outcome, spec) {
  const hit = count(summary, `outcome_${outcome}`);
  const ok = count(summary, 'outcome_ok');
  assert.ok(hit >= 5 && hit <= 50, `${spec}: ${hit} of ${SHARE_REQUESTS} requests ended in ${outcome}`);
  assert.equal(hit + ok, SHARE_REQUESTS, `${spec}: every other request succeeded (${JSON.stringify(summary.metrics)})`);
}

test(
  'flaky: a share of connections is reset, seen by the client as a transport error',
  { timeout: 60000 },
  async () => {
    const run = await k6(FAULT_PROBE, { PROFILE: 'lan+flaky', REQUESTS: SHARE_REQUESTS });
    assert.equal(run.code, 0, run.stderr.slice(-1500));
    assertShare(run.summary, 'reset', 'lan+flaky');
    assert.match(run.stderr, /connection reset by peer/);
  },
);

test('stall: a share of requests gets no answer and ends at the client timeout', { timeout: 60000 }, async () => {
  const run = await k6(FAULT_PROBE, { PROFILE: 'lan+stall', TIMEOUT: '300ms', REQUESTS: SHARE_REQUESTS });
  assert.equal(run.code, 0, run.stderr.slice(-1500));
  assertShare(run.summary, 'timeout', 'lan+stall');
});

test('truncate: a share of responses is cut short after 2048 bytes', { timeout: 60000 }, async () => {
  const run = await k6(FAULT_PROBE, { PROFILE: 'lan+truncate', SIZE: 5000, REQUESTS: SHARE_REQUESTS });
  assert.equal(run.code, 0, run.stderr.slice(-1500));
  assertShare(run.summary, 'eof', 'lan+truncate');
  assert.match(run.stderr, /unexpected EOF/);
  // Responses that fit in the limit are never cut.
  const small = await k6(FAULT_PROBE, { PROFILE: 'lan+truncate', SIZE: 500, REQUESTS: 50 });
  assert.equal(count(small.summary, 'outcome_ok'), 50);
});

test('jitter: warm round trips spread over 0-400 ms around a 200 ms mean', { timeout: 60000 }, async () => {
  const run = await k6(FAULT_PROBE, { PROFILE: 'lan+jitter', WARM: '1', REQUESTS: 30 });
  assert.equal(run.code, 0, run.stderr.slice(-1500));
  const rtt = run.summary.metrics.rtt;
  assert.equal(rtt.count, 30);
  assert.ok(rtt.max - rtt.min > 100, `spread ${rtt.min}-${rtt.max} ms`);
  assert.ok(rtt.avg > 140 && rtt.avg < 270, `mean ${rtt.avg} ms`); // 4 standard errors around 200
  // 400 ms at most from the toxic, and what the machine adds (50 ms on the reference one),
  // on the 90th percentile: one request of the 30 stalled by a busy machine is not the
  // toxic's (a fresh-clone suite at load 9 on 2 cores saw a max of 611 ms, 2026-11-30).
  // Jitter twice as wide would put it near 720 ms.
  assert.ok(rtt['p(90)'] < 400 + scaled(50), `p90 ${rtt['p(90)']} ms (max ${rtt.max} ms)`);
});

// Time from the end of a `Connection: close` response to the server's FIN, on a raw socket.
function closeDelayMs(port) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query: '{ book(id: "book-1") { id } }' });
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    let answered = 0;
    socket.setTimeout(10000, () => socket.destroy(new Error('no close within 10 s')));
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      text += chunk;
      if (!answered && text.includes('"book-1"')) answered = Date.now();
    });
    socket.on('end', () => {
      socket.destroy();
      if (answered) resolve(Date.now() - answered);
      else reject(new Error(`closed without an answer: ${text.slice(0, 200)}`));
    });
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

test("slow-close: the server's close reaches the client 3 s late", { timeout: 30000 }, async () => {
  const port = stack.ports.PROXY_GRAPHQL_PORT;
  await stack.toxiproxy.reset();
  assert.ok((await closeDelayMs(port)) < 500, 'without the fault the close follows the response');
  try {
    await stack.toxiproxy.applyToxics(loadProfile('lan+slow-close').toxics);
    const ms = await closeDelayMs(port);
    assert.ok(ms >= 2900 && ms < 3000 + scaled(1500), `close came ${ms} ms after the response`);
  } finally {
    await stack.toxiproxy.reset();
  }
});
