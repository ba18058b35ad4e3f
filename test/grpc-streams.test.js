// grpc-vs-graphql's stream lanes through the pack's stack (real servers,
// Toxiproxy, k6): grpc-bidi sends operations one after another on one long-lived
// PayloadStream and each costs one round trip, as an operation on an open
// WebSocket does (p50 = R, -3..+10 % under lte); grpc-client-stream's upload
// costs a round trip plus its bytes (never below the model's; at most 10 % above
// it, 20 % for the 100 KB upload); both run clean under lan.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cpuMsOf } from '../common/model.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { useTestStack } from '../dev/test-stack.js';
import declare from '../scenarios/specs/grpc-vs-graphql.js';

const SCRIPT = join(ROOT, 'scenarios', 'grpc-vs-graphql.js');
const POLICY_FILE = join(ROOT, 'thresholds.json');
const policy = parsePolicy(readFileSync(POLICY_FILE, 'utf8'), POLICY_FILE);
const stack = useTestStack();
const LANES = 'grpc_bidi,grpc_client_stream';
// A shaped operation is never faster than the model's round trips and bytes; gRPC's
// times are whole milliseconds, hence 3 % below.
const FLOOR = 0.97;
// How far above the model an upload's p50 may be. small: spread measured x1.00..x1.03
// over 10 runs on 2026-11-26. big (100 KB of books, ~80 KB up): x1.09..x1.15 over the same
// 10 runs (164..174 ms against the model's 150.8), steady run to run: the model leaves
// out some 15-20 ms of the big upload (k6 writing the stream's messages, reported to the
// model's owner), so its ceiling is 1.2: at 1.1 it failed 8 runs of 10. On one core
// (taskset -c 0) the model adds k6's writes in full: 185 ms against 150.8 without them
// (x1.227, one run, 2026-11-29); with them, x0.98..x1.04 over 3 runs (182..193 ms
// against 185.8; on 2 cores 170 ms twice against 150.8, the same day).
const UPLOAD_CEILING = { small: 1.1, big: 1.2 };

// The run's metrics; with `gated` k6 must also exit 0 (every threshold held).
async function run(env, { gated = true } = {}) {
  const r = await runK6(SCRIPT, { env: { ...stack.env, LOAD: 'smoke', LANES, ...env }, timeoutMs: 120_000 });
  if (gated) assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
  else assert.ok([0, 99].includes(r.code), `${r.stdout}\n${r.stderr.slice(-3000)}`);
  return r.summary.metrics;
}

test(
  'lte: an operation on an open bidirectional stream costs R; an upload R plus its bytes, as the model says',
  { timeout: 150_000 },
  async (t) => {
    // CPU_CORES: the cores this test may use (1 under taskset -c 0), where the model
    // decides whether k6's writes hide behind the upload (scenarios/specs/grpc-vs-graphql.js).
    const env = { PROFILE: 'lte', BIG_SIZE: '100000', STEP_SECONDS: '4', CPU_CORES: String(availableParallelism()) };
    const m = await run(env);
    const R = loadProfile('lte').network.rttMs;
    const p50 = (key) => m[key]?.med;
    const bidi = p50('op_duration{scenario:grpc_bidi_c1,payload:small,conn:warm}');
    t.diagnostic(
      `grpc-bidi small p50 ${bidi} ms (R ${R} ms), ${m['op_duration{scenario:grpc_bidi_c1,payload:small,conn:warm}'].count} operations on one stream`,
    );
    // Never below R (the link holds each way R/2; gRPC's times are whole ms: 3 % slack),
    // at most 10 % above. Spread measured: 71..72.5 ms (R 70) over 10 runs on 2026-11-26.
    assert.ok(bidi >= FLOOR * R && bidi <= 1.1 * R, `grpc-bidi p50 ${bidi} ms is not R = ${R} ms within -3..+10 %`);
    assert.ok(
      m['op_duration{scenario:grpc_bidi_c1,payload:small,conn:warm}'].count >= 5,
      'several operations on the stream',
    );
    // The client stream: the model's operation (round trip, the books' bytes up, the server's and k6's time).
    const built = buildScenario(declare(env), loadProfile('lte'), env, policy);
    for (const payload of ['small', 'big']) {
      const key = `op_duration{scenario:grpc_client_stream_c1,payload:${payload},conn:warm}`;
      const model = built.gates.find((g) => g.key === key).expected.p50;
      t.diagnostic(
        `grpc-client-stream ${payload} p50 ${p50(key)} ms, model ${model.formula} = ${model.ms.toFixed(1)} ms`,
      );
      // The floor is the network's part (round trips and bytes: the model less its CPU
      // terms, whose time a scheduler may partly hide); the ceiling the whole model's. On
      // one core the upload's CPU overlaps the link by turns: 177..193 ms over 10 runs against
      // 185.8 (2026-11-29), 177 and 179 under the old floor of 0.97 x 185.8.
      const network = model.ms - cpuMsOf(model);
      assert.ok(
        p50(key) >= FLOOR * network && p50(key) <= UPLOAD_CEILING[payload] * model.ms,
        `${payload} upload p50 ${p50(key)} ms vs model ${model.ms.toFixed(1)} ms, ${network.toFixed(1)} of it the network's (x${(p50(key) / model.ms).toFixed(3)}, want ${FLOOR} x the network's..${UPLOAD_CEILING[payload]} x the model)`,
      );
    }
  },
);

// Under lan a cold row is one sample of a few ms against a 25 ms budget, which a
// busy machine can cross (docs/known-limits.md): this run checks the work, the
// shaped run above the gates.
test('lan: both stream lanes run clean', { timeout: 150_000 }, async () => {
  const m = await run({ PROFILE: 'lan', STEP_SECONDS: '2' }, { gated: false });
  for (const lane of ['grpc_bidi', 'grpc_client_stream']) {
    // op_failed is a rate of failures: its "passes" are failed operations.
    assert.equal(m[`op_failed{scenario:${lane}_c1}`].passes, 0, `${lane}: no failed operation`);
    assert.ok(m[`op_failed{scenario:${lane}_c1}`].fails > 0, `${lane}: operations ran`);
    for (const payload of ['small', 'big'])
      assert.ok(m[`op_duration{scenario:${lane}_c1,payload:${payload},conn:warm}`].count > 0, `${lane} ${payload}`);
  }
});
