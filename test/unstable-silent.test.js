// The unstable scenario under a silent move, through the real stack: the lanes whose
// client has no way to notice the death wait for what their policy gives them
// (common/policies.js). HTTP/1.1 recovers at its 10 s timeout; k6's HTTP/2 keeps the
// connection its request timed out on and never recovers in its step (the lane whose
// policy is deliberately wrong for a silent death, as the model predicts); the ws
// subscription has no operation to time out and learns of the death from its keepalive
// ping (graphql-ws's keepAlive 10 s with the 5 s pong timeout), then re-subscribes
// without resuming, missing what was published meanwhile. Its own file so that it runs
// beside unstable.test.js in the suite's second phase (see there).
// Each lane runs alone in a k6 run of its own against a stack of its own, the three at
// once: a lane of a combined run meets the event in its own period anyway (lanes run
// one after another, each for one period), so a lane alone meets it at the same point
// of its step, and the stacks keep the runs' link toxics apart. About 30 s.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestStack } from '../dev/test-stack.js';
import { failed, metric, networkFile, recovery, runUnstable } from './helpers/unstable-run.js';
import { assertPassedButLatency, crossedInSummary } from './helpers/exits.js';
import { scaled } from './helpers/waits.js';

const LANES = ['http_keepalive', 'http2', 'sub_ws'];
const dir = mkdtempSync(join(tmpdir(), 'k6pack-unstable-silent-'));
const stacks = {};
before(async () => {
  const started = await Promise.allSettled(LANES.map(() => startTestStack()));
  started.forEach((s, i) => s.status === 'fulfilled' && (stacks[LANES[i]] = s.value));
  const failedStart = started.find((s) => s.status === 'rejected');
  if (failedStart) throw failedStart.reason;
});
after(async () => {
  await Promise.all(Object.values(stacks).map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

test(
  'a silent move: HTTP/1.1 recovers at its timeout, HTTP/2 never does, the ws subscription at its keepalive',
  { timeout: scaled(150000) },
  async () => {
    // The ping goes 10 s after the socket opens (at the step's start), its pong timeout
    // ends 15 s in, retryWait adds up to 4 s: 23 s steps. The move: 1-2 s into each.
    const file = networkFile(dir, 'lte-move-23s', {
      kind: 'move',
      death: 'silent',
      lengthMs: 1000,
      periodS: 23,
      offsetS: 1,
    });
    const [keepRun, h2Run, subRun] = await Promise.all(
      LANES.map((lane) => runUnstable(stacks[lane].env, file, [lane])),
    );
    for (const [lane, r] of [
      ['http_keepalive', keepRun],
      ['http2', h2Run],
      ['sub_ws', subRun],
    ]) {
      // 0, or 99 when only a timing gate (recovery within the model) failed.
      assertPassedButLatency(r.code, crossedInSummary(r.summary), `${lane}\n${r.output}`);
      // The lane ran alone: its step and no other lane's.
      assert.deepEqual(
        Object.keys(r.m)
          .map((k) => /^op_failed\{scenario:(\w+)\}$/.exec(k)?.[1])
          .filter(Boolean),
        [`${lane}_c1`],
        r.output,
      );
    }
    const keep = recovery(keepRun.m, 'http_keepalive');
    assert.ok(keep && keep.count === 1, `http_keepalive recovered once\n${keepRun.output}`);
    // The operation in flight waits for its timeout (10 s from its start, before the move).
    assert.ok(keep.max > 8000, `http_keepalive: recovery ${keep.max} ms, after its 10 s timeout`);
    assert.ok(failed(keepRun.m, 'http_keepalive').passes >= 1, 'the operation in flight failed');
    assert.ok(
      !recovery(h2Run.m, 'http2') || recovery(h2Run.m, 'http2').count === 0,
      `http2 never recovers\n${h2Run.output}`,
    );
    assert.ok(failed(h2Run.m, 'http2').passes >= 1, 'http2: its requests time out');
    assert.match(h2Run.stdout, /http2_c1: no success after a return in its step \(model p50 never/);
    // The subscription: the ping 10 s after its socket opened goes unanswered for 5 s
    // (about 13 s after the return), then retryWait, a new socket, the next event.
    const sub = recovery(subRun.m, 'sub_ws');
    assert.ok(sub && sub.count === 1, `sub_ws recovered once\n${subRun.output}`);
    assert.ok(sub.max > 12000, `sub_ws: recovery ${sub.max} ms, after its keepalive's ping and pong timeout`);
    assert.match(subRun.stderr, /no pong within 5000 ms/);
    // graphql-transport-ws has no resume: what was published while it was gone is missed.
    assert.ok(metric(subRun.m, 'delivery_missed', 'sub_ws').count > 100, `sub_ws missed the events of its outage`);
  },
);
