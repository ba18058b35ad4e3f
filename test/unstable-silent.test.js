// The unstable scenario under a silent move, through the real stack: the lanes whose
// client has no way to notice the death wait for what their policy gives them
// (common/policies.js). HTTP/1.1 recovers at its 10 s timeout; k6's HTTP/2 keeps the
// connection its request timed out on and never recovers in its step (the lane whose
// policy is deliberately wrong for a silent death, as the model predicts); the ws
// subscription has no operation to time out and learns of the death from its keepalive
// ping (graphql-ws's keepAlive 10 s with the 5 s pong timeout), then re-subscribes
// without resuming, missing what was published meanwhile. Its own file so that it runs
// beside unstable.test.js in the suite's second phase (see there). About 75 s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failed, metric, recovery, useUnstable } from './helpers/unstable.js';
import { assertPassedButLatency, crossedInSummary } from './helpers/exits.js';
import { scaled } from './helpers/machine.js';

const { network, run } = useUnstable();

test(
  'a silent move: HTTP/1.1 recovers at its timeout, HTTP/2 never does, the ws subscription at its keepalive',
  { timeout: scaled(150000) },
  async () => {
    // The ping goes 10 s after the socket opens (at the step's start), its pong timeout
    // ends 15 s in, retryWait adds up to 4 s: 23 s steps. The move: 1-2 s into each.
    const file = network('lte-move-23s', { kind: 'move', death: 'silent', lengthMs: 1000, periodS: 23, offsetS: 1 });
    const r = await run(file, ['http_keepalive', 'http2', 'sub_ws']);
    // 0, or 99 when only a timing gate (recovery within the model) failed.
    assertPassedButLatency(r.code, crossedInSummary(r.summary), r.output);
    const keep = recovery(r.m, 'http_keepalive');
    assert.ok(keep && keep.count === 1, `http_keepalive recovered once\n${r.output}`);
    // The operation in flight waits for its timeout (10 s from its start, before the move).
    assert.ok(keep.max > 8000, `http_keepalive: recovery ${keep.max} ms, after its 10 s timeout`);
    assert.ok(failed(r.m, 'http_keepalive').passes >= 1, 'the operation in flight failed');
    assert.ok(!recovery(r.m, 'http2') || recovery(r.m, 'http2').count === 0, `http2 never recovers\n${r.output}`);
    assert.ok(failed(r.m, 'http2').passes >= 1, 'http2: its requests time out');
    assert.match(r.stdout, /http2_c1: no success after a return in its step \(model p50 never/);
    // The subscription: the ping 10 s after its socket opened goes unanswered for 5 s
    // (about 13 s after the return), then retryWait, a new socket, the next event.
    const sub = recovery(r.m, 'sub_ws');
    assert.ok(sub && sub.count === 1, `sub_ws recovered once\n${r.output}`);
    assert.ok(sub.max > 12000, `sub_ws: recovery ${sub.max} ms, after its keepalive's ping and pong timeout`);
    assert.match(r.stderr, /no pong within 5000 ms/);
    // graphql-transport-ws has no resume: what was published while it was gone is missed.
    assert.ok(metric(r.m, 'delivery_missed', 'sub_ws').count > 100, `sub_ws missed the events of its outage`);
  },
);
