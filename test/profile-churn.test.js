// Profile changes under live traffic (the emulator must survive them): connections
// open and close on all four proxies (fresh HTTP/1.1 and HTTPS, new gRPC channels on
// plaintext and TLS, WebSocket connect + init + close: test/k6/churn.js) while the
// profile changes 60 times among network profiles and fault combinations,
// through the same code as `k6pack profile`. Afterwards Toxiproxy is still up, every
// switch succeeded, every proxy carries exactly the last profile's toxics, and a
// single-VU run measures that profile's round trips. Unpatched, toxiproxy v2.5.0
// panics in ToxicLink.AddToxic within a few switches (tools/toxiproxy/patches).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { PROXY_NAMES } from '../common/defaults.js';
import { toxicChanges } from '../common/toxics.js';
import { k6RunArgs, requireK6 } from '../lib/k6.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { useTestStack } from '../dev/test-stack.js';

const SPECS = ['lan', 'lte', '3g', '2g', '3g+flaky', 'lte+stall', '4g+jitter', 'lte+truncate', '3g+slow-close'];
// 60, not 120 (until 2026-11-28): each of the nine specs six times or more, where the
// unpatched build panics within a few switches; bench/profile-switch.js switches for 60 s.
const SWITCHES = 60;
const LAST = 'lte';

const stack = useTestStack();

test(`${SWITCHES} profile changes while connections open and close on every proxy`, { timeout: 240000 }, async (t) => {
  const churn = execa(
    requireK6(),
    k6RunArgs(join(ROOT, 'test', 'k6', 'churn.js'), {
      env: { ...stack.env, CHURN_SECONDS: 600 },
      args: ['--quiet', '--address', ''],
    }),
    {
      reject: false,
      stdin: 'ignore',
      timeout: 230000,
    },
  );
  try {
    await sleep(3000); // connections under way
    const failures = [];
    const took = [];
    for (let i = 0; i < SWITCHES; i++) {
      const spec = i === SWITCHES - 1 ? LAST : SPECS[i % SPECS.length];
      const t0 = performance.now();
      try {
        await stack.toxiproxy.applyToxics(loadProfile(spec).toxics);
      } catch (err) {
        failures.push(`switch ${i + 1} to ${spec}: ${err.message}`);
        if (!(await stack.toxiproxy.isReachable())) break;
      }
      took.push(performance.now() - t0);
      await sleep(50 + (i % 7) * 30); // let connections open and close under each profile
    }
    took.sort((a, b) => a - b);
    t.diagnostic(
      `${took.length} switches: p50 ${took[Math.floor(took.length / 2)].toFixed(1)} ms, max ${took.at(-1).toFixed(1)} ms`,
    );
    assert.ok(await stack.toxiproxy.isReachable(), `toxiproxy died during the churn: ${failures[0] || ''}`);
    assert.deepEqual(failures, []);
    const proxies = await stack.toxiproxy.proxies();
    for (const name of PROXY_NAMES) {
      assert.deepEqual(
        toxicChanges(proxies[name].toxics, loadProfile(LAST).toxics),
        [],
        `${name} carries exactly ${LAST}'s toxics`,
      );
    }
  } finally {
    churn.kill('SIGTERM');
    await churn;
  }
  // A single VU right after measures the last profile's round trips (test/roundtrip.test.js's probe).
  const run = await runK6(join(ROOT, 'test', 'k6', 'roundtrip.js'), {
    env: { ...stack.env, PROFILE: LAST, SAMPLES: 5, BIG_BYTES: 1000 },
    timeoutMs: 90000,
  });
  assert.equal(run.code, 0, run.stderr.slice(-1000));
  const R = loadProfile(LAST).network.rttMs;
  for (const [op, rounds] of [
    ['http_warm', 1],
    ['http_fresh', 2],
    ['ws_op', 1],
    ['grpc_warm', 1],
    ['grpc_fresh', 3],
  ]) {
    const p50 = run.summary.metrics[op].med;
    const model = rounds * R;
    t.diagnostic(`${LAST} ${op}: p50 ${p50} ms, model ${model} ms`);
    // As test/roundtrip.test.js: never below the model (3 % for whole-ms clocks); the p50 at
    // most 10 % or 25 ms above it, the fastest sample 10 %. Spread measured with this probe
    // under lte: one round trip's p50 71..92 ms over 50 runs on 2026-11-26 (above 77 ms only
    // while the machine was loaded), 2R and 3R within x1.07 but one (+16 ms); the fastest
    // sample x1.010..x1.038 over 12 runs, 7 of them beside a k6 load.
    const fastest = run.summary.metrics[op].min;
    assert.ok(
      p50 >= model * 0.97 && p50 <= Math.max(model * 1.1, model + 25) && fastest <= model * 1.1,
      `${op}: p50 ${p50} ms, fastest ${fastest} ms, model ${model} ms (p50 -3 %, +10 % or 25 ms; fastest +10 %)`,
    );
  }
});
