// The mobile scenario's kept HTTP lanes with the client's own idle timeout
// (CLIENT_IDLE_SECONDS, issue 41): at a gap longer than it the lane closes its connection
// after each operation (Connection: close, which k6's Go transport honours over HTTP/1.1
// and HTTP/2), so the next one opens a new connection; at a shorter gap it keeps the one it
// has. Read from each operation's conn tag (cold: it opened its connection), never from a
// time. Under lan (no radio).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack } from '../dev/test-stack.js';
import { assertPassedButLatency, crossedInStderr } from './helpers/exits.js';

const dir = mkdtempSync(join(tmpdir(), 'k6pack-client-idle-'));
let stack;
before(async () => {
  stack = await startTestStack();
});
after(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// Runs scenarios/mobile.js under lan with these settings (and the stack's), k6's points
// to a JSON file; -> { r, output, points: the op_duration points' tags }, after checking it
// passed but for latency, with no failed operation.
async function runMobile(name, env) {
  const file = join(dir, `${name}.json`);
  const r = await runK6(join(ROOT, 'scenarios', 'mobile.js'), {
    env: { ...stack.env, PROFILE: 'lan', ...env },
    args: ['--out', `json=${file}`],
    timeoutMs: 120000,
  });
  const output = `${r.stdout}\n${r.stderr.slice(-3000)}`;
  assertPassedButLatency(r.code, crossedInStderr(r.stderr), output);
  assert.equal(r.summary.metrics.op_failed.passes, 0, `failed operations\n${output}`);
  const points = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"op_duration"') && line.includes('"Point"'))
    .map((line) => JSON.parse(line).data.tags);
  return { r, output, points };
}

test('CLIENT_IDLE_SECONDS=3: at one operation every 5 s each opens a new connection; every 2 s one connection serves them all', async () => {
  const OPS = 2; // after each step's first
  const { output, points } = await runMobile('points', {
    LANES: 'http_keepalive_t2,http_keepalive_t5,http2_t2,http2_t5',
    INTERACTION_SECONDS: '2,5',
    MOBILE_OPS: String(OPS),
    CLIENT_IDLE_SECONDS: '3',
  });
  // Each operation after its gap, by step: did it open its connection (conn:cold) or find
  // one (conn:warm)? (A step's first operation may find the connection the step before
  // left on the same k6 VU: not counted.)
  const seen = {};
  for (const tags of points) if (tags.gap === 'after') (seen[tags.scenario] ??= []).push(tags.conn);
  const cold = Array(OPS).fill('cold');
  const warm = Array(OPS).fill('warm');
  assert.deepEqual(
    seen,
    { http_keepalive_t2_c1: warm, http_keepalive_t5_c1: cold, http2_t2_c1: warm, http2_t5_c1: cold },
    output,
  );
});

test('MOBILE_ANSWER_BYTES=1000: every lane asks for a payload of 1000 B, over HTTP, WebSocket and gRPC, and gets it', async () => {
  const OPS = 2;
  const lanes = ['http_keepalive_t1', 'ws_t1', 'grpc_t1'];
  const { r, output, points } = await runMobile('payload', {
    LANES: lanes.join(','),
    INTERACTION_SECONDS: '1',
    MOBILE_OPS: String(OPS),
    MOBILE_ANSWER_BYTES: '1000',
  });
  // Each answer is checked in k6 (scenarios/lib/queries.js validatePayload,
  // validateGrpcPayload: its size and its data's length): a wrong one fails its operation,
  // and runMobile wants none.
  const ops = {};
  for (const tags of points) (ops[tags.scenario] ??= []).push(tags.op);
  const payloads = Array(OPS + 2).fill('payload'); // the first, the warm one, the rows
  assert.deepEqual(ops, Object.fromEntries(lanes.map((l) => [`${l}_c1`, payloads])), output);
  assert.match(r.stdout, /each answer a payload of 1000 B \(MOBILE_ANSWER_BYTES\)/);
});
