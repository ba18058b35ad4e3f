// The unstable scenario through the real stack (servers, the pack's toxiproxy, k6)
// under a handover and a move with a reset, on short schedules (a network file of the
// test's own: lte with events every few seconds, so each lane's step meets one): every
// lane completes and recovers (the scenario's gates on failures, recoveries and missed
// events must pass; its timing gates, recovery within model x 1.25 + 250 ms, are the
// machine's: k6 exits 0, or 99 when only those failed), and the gRPC subscription
// resumes with nothing missed. unstable-silent.test.js has the silent move.
// In the suite's second phase: what is asserted is recovery made of timeouts, RTOs and
// backoffs, bounds no slower machine moves (a reset heard within a second, scaled with
// the CPU: well before any timeout). bench/recovery.js measures recovery against the
// model. About 50 s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failed, metric, recovery, useUnstable } from './helpers/unstable-run.js';
import { assertPassedButLatency, crossedInSummary } from './helpers/exits.js';
import { scaled } from './helpers/waits.js';

const { network, run } = useUnstable();

test('a handover: every lane holds its operations and recovers', { timeout: scaled(150000) }, async () => {
  // 1.5 s dark, 2 s into each 6 s step.
  const file = network('lte-handover-6s', { kind: 'blackout', lengthMs: 1500, periodS: 6, offsetS: 2 });
  const lanes = ['http_fresh', 'ws', 'sub_grpc'];
  const r = await run(file, lanes);
  assertPassedButLatency(r.code, crossedInSummary(r.summary), r.output);
  for (const lane of lanes) {
    const got = recovery(r.m, lane);
    assert.ok(got && got.count === 1, `${lane}: one recovery after its step's blackout\n${r.output}`);
    // Bytes sent into the dark wait for a retransmission: never back at the return itself.
    assert.ok(got.max > 0, `${lane}: recovery ${got.max} ms`);
    assert.equal(failed(r.m, lane).passes, 0, `${lane}: a handover fails nothing\n${r.output}`);
  }
  // The subscription's connection lives through the dark: its events wait, none lost.
  assert.equal(metric(r.m, 'delivery_missed', 'sub_grpc').count, 0);
  const events = metric(r.m, 'op_duration', 'sub_grpc');
  assert.ok(events && events.count > 10, `events flowed: ${JSON.stringify(events)}`);
});

test(
  'a move with a reset: the operation in flight fails at once, ws waits for graphql-ws retryWait, gRPC resumes',
  { timeout: scaled(150000) },
  async () => {
    const file = network('lte-move-reset-8s', { kind: 'move', death: 'reset', lengthMs: 1000, periodS: 8, offsetS: 1 });
    const r = await run(file, ['http_keepalive', 'ws', 'sub_grpc']);
    assertPassedButLatency(r.code, crossedInSummary(r.summary), r.output);
    const keep = recovery(r.m, 'http_keepalive');
    const ws = recovery(r.m, 'ws');
    const sub = recovery(r.m, 'sub_grpc');
    assert.ok(keep && ws && sub, `every lane recovered\n${r.output}`);
    // A reset is heard at once: HTTP reconnects within a second (on the reference
    // machine; scaled with this one's CPU); ws first waits retryWait(0) = 1 s + 300-3000 ms
    // (common/policies.js).
    assert.ok(keep.max < scaled(1000), `http_keepalive: ${keep.max} ms`);
    assert.ok(ws.max >= 1300, `ws: ${ws.max} ms, after graphql-ws's retryWait`);
    // gRPC opens a new stream at once with after_seq: the server sends what it kept.
    assert.ok(sub.max < scaled(1000), `sub_grpc: ${sub.max} ms`);
    assert.ok(failed(r.m, 'sub_grpc').passes >= 1, 'the stream broke at the reset');
    assert.equal(metric(r.m, 'delivery_missed', 'sub_grpc').count, 0, `resumed, nothing missed\n${r.output}`);
    assert.equal(metric(r.m, 'delivery_duplicates', 'sub_grpc').count, 0);
  },
);
