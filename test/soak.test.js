// The soak in 40 s, and proof that it catches a leak: scenarios/soak.js
// at LOAD=soak for 40 s under lte, at once against two stacks: one as
// shipped (every soak threshold passes, k6 exits 0, and neither server's heap
// after a full GC grows past HEAP_GROWTH between the end of the warm-up and the
// end of the run) and one whose GraphQL server keeps 1 MB of Buffers and
// 128 KB of JS heap per HTTP request (dev/leak-preload.js, a test-only
// preload: the server itself has no leak switch), where the RSS growth gate
// fails, k6 exits 99, and the heap check fails too. Real servers, toxiproxy and
// k6. About 45 s.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { median } from '../common/quantiles.js';
import { leakEnv, sampleHeap, withExposeGc } from '../dev/heap.js';
import { startTestStack } from '../dev/test-stack.js';
import { ROOT } from '../lib/tools.js';
import { serverMemory } from '../dev/server-memory.js';
import { runK6 } from '../dev/run-k6.js';
import { assertPassedButLatency } from './helpers/exits.js';

// The thresholds a summary export marks failed (k6: { expression: true } when crossed).
const failedKeys = (summary) =>
  Object.entries(summary.metrics)
    .filter(([, m]) => Object.values(m.thresholds || {}).some(Boolean))
    .map(([key]) => key);

const SOAK = join(ROOT, 'scenarios', 'soak.js');
// 40 s, not 60 (issue 38: the suite in 20 minutes), with twice the leak per request so the
// leaking server's growth after warm-up stays as clear. Measured at 60 s with 512 KB + 64 KB
// over 5 runs on 2026-11-26: the leaking server's RSS growth 77..100 % (the gate fails above
// 50 %) and heap after GC +10.6..+11.7 MB (HEAP_GROWTH 6 MB); as shipped 1.3..3.2 % and
// +0.1..+0.2 MB. At 40 s with 1 MB + 128 KB, 3 runs on 2026-11-29: leaking 115..121 % and
// +14.3..+14.5 MB; as shipped 0.0 % and +0.1..+0.2 MB (44 s a run, was 62).
const SOAK_SECONDS = 40;
// RSS every 2 s: the 32 s after warm-up give ~16 growth samples (the check below wants 10).
const ENV = { PROFILE: 'lte', LOAD: 'soak', SOAK_DURATION: `${SOAK_SECONDS}s`, SAMPLE_SECONDS: '2' };
const LEAK_BYTES = 1024 * 1024;
const LEAK_HEAP_BYTES = 128 * 1024;
const GROWTH = 'server_rss_growth{server:graphql}';
const MB = 1024 * 1024;
// Heap after GC as shipped moves by about 1 MB under load (JIT code, Apollo's
// document cache filling), here and over 70,000 operations at lan alike; the
// leaking server keeps 128 KB x ~120 requests after warm-up, about 15 MB.
const HEAP_GROWTH = 6 * MB;
// As scenarios/soak.js: the first 20 % of the run is warm-up.
const WARMUP_MS = 0.2 * SOAK_SECONDS * 1000;

const soak = (stack) => runK6(SOAK, { env: { ...stack.env, ...ENV }, timeoutMs: (SOAK_SECONDS + 100) * 1000 });

// A stack's heap after GC: the median of its first three samples after warm-up,
// and one more once k6 has gone (its connections closed).
async function heapGrowth(stack, samples, startedAt) {
  const result = {};
  for (const server of ['graphql', 'grpc']) {
    const mine = samples.filter((s) => s.server === server && s.time >= startedAt + WARMUP_MS);
    assert.ok(mine.length >= 3, `${server}: ${mine.length} heap samples after warm-up`);
    const base = median(mine.slice(0, 3).map((s) => s.heapUsedBytes));
    const port = server === 'graphql' ? stack.ports.GRAPHQL_PORT : stack.ports.GRPC_PORT;
    const end = (await serverMemory({ kind: server, port })).heapUsedBytes;
    result[server] = { base, end, growth: end - base };
  }
  return result;
}

async function soakWithHeap(stack) {
  const startedAt = Date.now();
  const stop = sampleHeap(stack, { everyMs: 5000, maxSamples: 60 });
  let run;
  let samples;
  try {
    run = await soak(stack);
  } finally {
    samples = await stop();
  }
  return { ...run, heap: await heapGrowth(stack, samples, startedAt) };
}

const mbText = (n) => `${(n / MB).toFixed(1)} MB`;
const heapText = (h) =>
  Object.entries(h)
    .map(([s, g]) => `${s} heap after GC ${mbText(g.base)} -> ${mbText(g.end)}`)
    .join(', ');

test(
  'a 40 s soak passes on the servers as shipped and fails (exit 99, RSS growth, heap growth) on a leaking one',
  { timeout: 300000 },
  async (t) => {
    // The leaking stack first: its servers inherit the preload from this process's environment at spawn.
    const leaky = await startTestStack({
      serverEnv: withExposeGc(leakEnv(LEAK_BYTES, { heapBytes: LEAK_HEAP_BYTES })),
    });
    t.after(() => leaky.stop());
    const clean = await startTestStack({ serverEnv: withExposeGc() });
    t.after(() => clean.stop());

    const [ok, leaking] = await Promise.all([soakWithHeap(clean), soakWithHeap(leaky)]);
    const show = (r) => `${r.stdout.slice(-2500)}\n${r.stderr.slice(-1500)}`;

    // As shipped: every gate of what a soak is about passes (memory, drift, dropped
    // iterations, failures), and the memory lane really sampled. Its latency budgets are
    // the gate's subject, not this test's: two soaks run at once here, and under a load
    // average of 15 (other work beside it, 2026-11-28) the clean one's ws p95 crossed
    // 161 ms by 6 ms in 1 run of 4. So a latency gate alone may fail (test/helpers/exits.js).
    assertPassedButLatency(ok.code, failedKeys(ok.summary), show(ok));
    const okGrowth = ok.summary.metrics[GROWTH];
    assert.ok(okGrowth?.count >= 10, `graphql RSS sampled after warm-up (${JSON.stringify(okGrowth)})`);
    assert.ok(okGrowth.max < 0.5, `clean server grew ${(okGrowth.max * 100).toFixed(0)} %`);
    // Every transport ran in the mix, each server's memory was sampled and drift measured
    // (scenarios-smoke.test.js ran a lan soak for these until 2026-11-28; exit 0 above
    // holds the dropped-iterations gate).
    const m = ok.summary.metrics;
    for (const lane of ['http_keepalive', 'http2', 'ws', 'grpc'])
      assert.ok(m[`op_duration{scenario:${lane}_mix}`]?.count > 0, `${lane}: no operations in the mix`);
    for (const server of ['graphql', 'grpc'])
      assert.ok(m[`server_rss_bytes{server:${server}}`]?.value > 1e6, `${server} RSS not sampled`);
    assert.ok(m.op_drift?.count > 0, 'op_drift has no samples');
    for (const [server, h] of Object.entries(ok.heap)) {
      assert.ok(
        h.growth < HEAP_GROWTH,
        `as shipped, ${server} retained ${mbText(h.growth)} more heap after GC (${heapText(ok.heap)})`,
      );
    }
    t.diagnostic(
      `as shipped: graphql RSS growth max ${(okGrowth.max * 100).toFixed(1)} %, op_drift p50 ${ok.summary.metrics.op_drift?.med?.toFixed(2)}; ${heapText(ok.heap)}`,
    );

    // Leaking: the growth gate is what fails (k6's summary export marks a failed threshold true).
    assert.equal(leaking.code, 99, show(leaking));
    const growth = leaking.summary.metrics.server_rss_growth;
    assert.equal(growth.thresholds['max<0.5'], true, `server_rss_growth max<0.5 failed (${JSON.stringify(growth)})`);
    assert.ok(leaking.summary.metrics[GROWTH].max > 0.5, JSON.stringify(leaking.summary.metrics[GROWTH]));
    // ...and nothing else: the leak does not break operations.
    assert.equal(leaking.summary.metrics.op_failed.thresholds['rate<0.01'], false, show(leaking));
    // The heap check sees the JS-heap part of the leak.
    assert.ok(
      leaking.heap.graphql.growth > HEAP_GROWTH,
      `leaking graphql heap after GC grew only ${mbText(leaking.heap.graphql.growth)}`,
    );
    t.diagnostic(
      `leaking ${LEAK_BYTES / 1024} KB + ${LEAK_HEAP_BYTES / 1024} KB heap per request: graphql RSS growth max ${(leaking.summary.metrics[GROWTH].max * 100).toFixed(0)} %; ${heapText(leaking.heap)}`,
    );
  },
);
