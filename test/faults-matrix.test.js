// Every fault profile with every transport: scenarios/faults.js runs its four
// lanes (HTTP/1.1 keep-alive, HTTP/2, graphql-ws, gRPC) one after another in
// one k6 run per fault, under lan+<fault>. Each run completes (exit 0 or 99,
// no crash, no hang), every lane records operations and counts its failures
// in op_failed instead of throwing them, the faults that break connections
// show up as failed operations, and no toxics are left afterwards.
// Three faults run at once, each against one of three stacks (a run holds its stack:
// scenarios/lib/hold.js), a stack serving one fault after another as the file's one
// did. Real servers, toxiproxy and k6. About 30 s.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listProfiles } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack } from '../dev/test-stack.js';

const SCENARIO = join(ROOT, 'scenarios', 'faults.js');
const LANES = ['http_keepalive', 'http2', 'ws', 'grpc'];
// Faults that break or stall connections: at lan speed each lane opens a new
// connection every few milliseconds (CONN_OPS operations each), so hundreds of
// connections per lane meet a 10 % fault: P(no failure at all) < 1e-9.
const BREAKS = new Set(['flaky', 'stall', 'truncate']);
// truncate cuts a connection after 2048 bytes from the server: with the
// scenario's 5 operations per connection only HTTP/2 (its TLS handshake alone
// is ~1.7 KB) gets there; 20 operations carry every transport past it.
const EXTRA = { truncate: { CONN_OPS: '20' } };

// The stacks the fault runs take turns on: take() resolves a free one, give() frees it.
const STACKS = 3;
const free = [];
const waiting = [];
const started = [];
before(async () => {
  const done = await Promise.allSettled(Array.from({ length: STACKS }, () => startTestStack()));
  for (const d of done) if (d.status === 'fulfilled') started.push(d.value);
  const failed = done.find((d) => d.status === 'rejected');
  if (failed) throw failed.reason;
  free.push(...started);
});
after(() => Promise.all(started.map((stack) => stack.stop())));
const take = () => (free.length ? Promise.resolve(free.pop()) : new Promise((resolve) => waiting.push(resolve)));
const give = (stack) => (waiting.length ? waiting.shift()(stack) : free.push(stack));

// k6's summary export counts a Rate's non-zero samples (failures) as "passes".
const failures = (m) => m?.passes ?? 0;
const total = (m) => (m ? m.passes + m.fails : 0);

test('the catalogue has the five fault profiles this matrix covers', () => {
  assert.deepEqual(listProfiles().faults.sort(), ['flaky', 'jitter', 'slow-close', 'stall', 'truncate']);
});

describe('every fault with every transport', { concurrency: STACKS }, () => {
  for (const fault of ['flaky', 'stall', 'slow-close', 'truncate', 'jitter']) {
    test(
      `lan+${fault}: every transport completes, failures are counted, no toxics are left`,
      { timeout: 90000 },
      async (t) => {
        const stack = await take();
        t.after(() => give(stack));
        const started = Date.now();
        const run = await runK6(SCENARIO, {
          env: {
            ...stack.env,
            PROFILE: `lan+${fault}`,
            LOAD: 'smoke',
            STEPS: '1',
            STEP_SECONDS: '2',
            // A stalled operation fails inside its 2 s step instead of outliving it.
            FAULT_TIMEOUT_MS: '500',
            ...EXTRA[fault],
          },
          timeoutMs: 60000,
        });
        const output = `${run.stdout.slice(-1500)}\n${run.stderr.slice(-2500)}`;
        assert.ok(!run.timedOut, `k6 hung under lan+${fault}\n${output}`);
        assert.ok([0, 99].includes(run.code), `k6 exited ${run.code} under lan+${fault}\n${output}`);
        // Nothing escaped an iteration: no uncaught exception, no Go panic.
        assert.doesNotMatch(run.stderr, /Uncaught|source=stacktrace|panic:|goroutine \d+ \[/, output);
        const m = run.summary.metrics;
        const cells = LANES.map((lane) => {
          const failed = m[`op_failed{scenario:${lane}_c1}`];
          assert.ok(total(failed) > 0, `lan+${fault} ${lane}: no operation was recorded\n${output}`);
          return `${lane} ${failures(failed)}/${total(failed)} failed`;
        });
        t.diagnostic(
          `lan+${fault} (${((Date.now() - started) / 1000).toFixed(0)} s, exit ${run.code}): ${cells.join(', ')}`,
        );
        if (BREAKS.has(fault))
          assert.ok(failures(m.op_failed) > 0, `lan+${fault}: no failed operation counted\n${output}`);
        // teardown() cleared the profile.
        for (const [name, proxy] of Object.entries(await stack.toxiproxy.proxies()))
          assert.deepEqual(proxy.toxics, [], `${name} has toxics left after lan+${fault}`);
      },
    );
  }
});
