// The soak in two minutes, and proof that it catches a leak: scenarios/soak.js
// at LOAD=soak for 100 s under lte, at once against two stacks: one as
// shipped (every soak threshold passes, k6 exits 0) and one whose GraphQL
// server keeps 512 KB per HTTP request (bench/lib/leak-preload.js, a
// test-only preload: the server itself has no leak switch), where the RSS
// growth gate fails and k6 exits 99. Real servers, toxiproxy and k6. About 2 min.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { leakEnv, startStack } from '../bench/lib/common.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from './helpers/k6.js';

const SOAK = join(ROOT, 'scenarios', 'soak.js');
const ENV = { PROFILE: 'lte', LOAD: 'soak', SOAK_DURATION: '100s', SAMPLE_SECONDS: '5' };
const LEAK_BYTES = 512 * 1024;
const GROWTH = 'server_rss_growth{server:graphql}';

const soak = (stack) => runK6(SOAK, { env: { ...stack.env, ...ENV }, timeoutMs: 200000 });

test('a 100 s soak passes on the servers as shipped and fails (exit 99, RSS growth) on a leaking one', { timeout: 240000 }, async (t) => {
  // The leaking stack first: its servers inherit the preload from this process's environment at spawn.
  const leaky = await startStack({ serverEnv: leakEnv(LEAK_BYTES) });
  t.after(() => leaky.stop());
  const clean = await startStack();
  t.after(() => clean.stop());

  const [ok, leaking] = await Promise.all([soak(clean), soak(leaky)]);
  const show = (r) => `${r.stdout.slice(-2500)}\n${r.stderr.slice(-1500)}`;

  // As shipped: every gate passes, and the memory lane really sampled.
  assert.equal(ok.code, 0, show(ok));
  const okGrowth = ok.summary.metrics[GROWTH];
  assert.ok(okGrowth?.count >= 10, `graphql RSS sampled after warm-up (${JSON.stringify(okGrowth)})`);
  assert.ok(okGrowth.max < 0.5, `clean server grew ${(okGrowth.max * 100).toFixed(0)} %`);
  t.diagnostic(`as shipped: graphql RSS growth max ${(okGrowth.max * 100).toFixed(1)} %, op_drift p50 ${ok.summary.metrics.op_drift?.med?.toFixed(2)}`);

  // Leaking: the growth gate is what fails (k6's summary export marks a failed threshold true).
  assert.equal(leaking.code, 99, show(leaking));
  const growth = leaking.summary.metrics.server_rss_growth;
  assert.equal(growth.thresholds['max<0.5'], true, `server_rss_growth max<0.5 failed (${JSON.stringify(growth)})`);
  assert.ok(leaking.summary.metrics[GROWTH].max > 0.5, JSON.stringify(leaking.summary.metrics[GROWTH]));
  // ...and nothing else: the leak does not break operations.
  assert.equal(leaking.summary.metrics.op_failed.thresholds['rate<0.01'], false, show(leaking));
  t.diagnostic(`leaking ${LEAK_BYTES / 1024} KB per request: graphql RSS growth max ${(leaking.summary.metrics[GROWTH].max * 100).toFixed(0)} %`);
});
