// The unstable scenario through the real stack (servers, the pack's toxiproxy, k6)
// under each kind of link event, on short schedules (a network file of the test's own:
// lte with events every few seconds, so each lane's step meets one): every lane
// completes, recovers by its model (the scenario's own gates, model x 1.25 + 250 ms,
// must pass: k6 exits 0), and the lane whose policy is deliberately wrong for a silent
// death (k6's HTTP/2 keeps the connection its request timed out on: common/policies.js)
// never recovers in its step, as the model predicts.
// In the suite's second phase: what is asserted is recovery made of timeouts, RTOs and
// backoffs (150 ms to 12 s) against margins of 250 ms and more, which other files
// running beside it move by milliseconds. About 55 s.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runK6 } from '../dev/k6.js';
import { useTestStack } from '../dev/stack.js';
import { ROOT } from '../lib/tools.js';

const stack = useTestStack();
const dir = mkdtempSync(join(tmpdir(), 'k6pack-unstable-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// lte's link with events of its own (docs/profiles.md#unstable-links): a network file.
function network(name, events) {
  const lte = JSON.parse(readFileSync(join(ROOT, 'profiles', 'network', 'lte.json'), 'utf8'));
  const file = join(dir, `${name}.json`);
  const { rttMs, jitterMs, downKbps, upKbps } = lte;
  writeFileSync(
    file,
    JSON.stringify({ name, source: 'test/unstable.test.js', rttMs, jitterMs, downKbps, upKbps, events }),
  );
  return file;
}

async function run(profile, lanes) {
  const r = await runK6(join(ROOT, 'scenarios', 'unstable.js'), {
    env: { ...stack.env, LOAD: 'smoke', PROFILE: profile, LANES: lanes.join(',') },
    timeoutMs: 120000,
  });
  const output = `${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`;
  return { ...r, output, m: r.summary ? r.summary.metrics : {} };
}

const recovery = (m, lane) => m[`event_recovery{scenario:${lane}_c1}`];
const failed = (m, lane) => m[`op_failed{scenario:${lane}_c1}`];

test('a handover: every lane holds its operations and recovers by the model', { timeout: 120000 }, async () => {
  // 1.5 s dark, 2 s into each 6 s step.
  const file = network('lte-handover-6s', { kind: 'blackout', lengthMs: 1500, periodS: 6, offsetS: 2 });
  const lanes = ['http_fresh', 'ws'];
  const r = await run(file, lanes);
  assert.equal(r.code, 0, `k6 exited ${r.code}: a gate failed or the run broke\n${r.output}`);
  for (const lane of lanes) {
    const got = recovery(r.m, lane);
    assert.ok(got && got.count === 1, `${lane}: one recovery after its step's blackout\n${r.output}`);
    // Bytes sent into the dark wait for a retransmission: never back at the return itself.
    assert.ok(got.max > 0, `${lane}: recovery ${got.max} ms`);
    assert.equal(failed(r.m, lane).passes, 0, `${lane}: a handover fails nothing\n${r.output}`);
  }
});

test(
  'a silent move: HTTP/1.1 recovers at its timeout; HTTP/2 keeps the dead connection and never does',
  { timeout: 120000 },
  async () => {
    // The 10 s timeout ends ~11 s into the step: 14 s steps.
    const file = network('lte-move-14s', { kind: 'move', death: 'silent', lengthMs: 1000, periodS: 14, offsetS: 1 });
    const r = await run(file, ['http_keepalive', 'http2']);
    assert.equal(r.code, 0, `k6 exited ${r.code}\n${r.output}`);
    const keep = recovery(r.m, 'http_keepalive');
    assert.ok(keep && keep.count === 1, `http_keepalive recovered once\n${r.output}`);
    // The operation in flight waits for its timeout (10 s from its start, before the move).
    assert.ok(keep.max > 8000, `http_keepalive: recovery ${keep.max} ms, after its 10 s timeout`);
    assert.ok(failed(r.m, 'http_keepalive').passes >= 1, 'the operation in flight failed');
    assert.ok(!recovery(r.m, 'http2') || recovery(r.m, 'http2').count === 0, `http2 never recovers\n${r.output}`);
    assert.ok(failed(r.m, 'http2').passes >= 1, 'http2: its requests time out');
    assert.match(r.stdout, /http2_c1: no success after a return in its step \(model p50 never/);
  },
);

test(
  'a move with a reset: the operation in flight fails at once, ws waits for graphql-ws retryWait',
  { timeout: 120000 },
  async () => {
    const file = network('lte-move-reset-8s', { kind: 'move', death: 'reset', lengthMs: 1000, periodS: 8, offsetS: 1 });
    const r = await run(file, ['http_keepalive', 'ws']);
    assert.equal(r.code, 0, `k6 exited ${r.code}\n${r.output}`);
    const keep = recovery(r.m, 'http_keepalive');
    const ws = recovery(r.m, 'ws');
    assert.ok(keep && ws, `both lanes recovered\n${r.output}`);
    // A reset is heard at once: HTTP reconnects within a second; ws first waits
    // retryWait(0) = 1 s + 300-3000 ms (common/policies.js).
    assert.ok(keep.max < 1000, `http_keepalive: ${keep.max} ms`);
    assert.ok(ws.max >= 1300, `ws: ${ws.max} ms, after graphql-ws's retryWait`);
  },
);
