// scenarios/fanout.js through the pack's stack, where the assertions are not timings
// (so this file runs beside others in the suite; test/fanout.test.js has the timed
// ones): a subscriber whose socket is cut mid-run counts what it missed (graphql-ws
// has no resume, gRPC resumes after its last seq); an impossible budget fails the run
// with exit 99.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { useTestStack } from '../dev/test-stack.js';
import { count, fanoutOn, output, plannedEvents, policy } from './helpers/fanout-run.js';

const stack = useTestStack();
const fanout = fanoutOn(stack);
const dir = mkdtempSync(join(tmpdir(), 'k6pack-fanout-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Cuts every connection through one proxy for `ms` once the step's topic has had
// `afterSeq` events (Toxiproxy disables the proxy: its connections close, new ones
// are refused), then lets them back.
async function cutWhen(topic, { proxy, hub, afterSeq = 10, ms = 400 }) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && (await hub(topic)) < afterSeq) await sleep(50);
  await stack.toxiproxy.request('POST', `/proxies/${proxy}`, { enabled: false });
  await sleep(ms);
  await stack.toxiproxy.request('POST', `/proxies/${proxy}`, { enabled: true });
}

const graphqlLastSeq = async (topic) => {
  const res = await fetch(`http://127.0.0.1:${stack.ports.GRAPHQL_PORT}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'query($t: String!) { topic(name: $t) { lastSeq } }', variables: { t: topic } }),
  });
  return (await res.json()).data?.topic?.lastSeq ?? 0;
};

describe('a subscriber whose socket is cut mid-run', () => {
  test(
    'graphql-ws: the subscriber reconnects and delivery_missed counts what it lost (no resume); the step fails',
    { timeout: 180_000 },
    async () => {
      const id = `cut${Date.now().toString(36)}`;
      // The publisher goes through the gRPC server (its hub relays): the cut leaves it alone.
      const run = fanout({
        PROFILE: 'lan',
        LANES: 'ws',
        SUBSCRIBERS: '10',
        STEP_SECONDS: '8',
        PUBLISH_VIA: 'grpc',
        FANOUT_RUN_ID: id,
      });
      await cutWhen(`fanout.${id}.ws_c10`, { proxy: 'graphql_http', hub: graphqlLastSeq });
      const r = await run;
      assert.equal(r.code, 99, output(r));
      const missed = count(r, 'delivery_missed{scenario:ws_c10}');
      assert.ok(
        missed >= 10,
        `each of the 10 subscribers missed what was published while it was cut: ${missed}\n${output(r)}`,
      );
      assert.ok(count(r, 'reconnects') >= 10, `every subscriber reconnected: ${count(r, 'reconnects')}`);
      assert.equal(count(r, 'delivery_duplicates{scenario:ws_c10}'), 0);
      assert.match(r.stdout, /FAIL delivery_missed\{scenario:ws_c10\} count==0/);
      assert.match(r.stdout, /Held the budget up to: ws none \(failed at its first step\)/);
    },
  );

  test(
    "gRPC: the subscriber resumes after its last seq from the hub's kept events; nothing is missed",
    { timeout: 180_000 },
    async () => {
      const id = `cut${Date.now().toString(36)}`;
      const grpcLastSeq = async () => {
        // Through the GraphQL server's hub: the publisher writes there and the relay copies every event.
        return graphqlLastSeq(`fanout.${id}.grpc_stream_c10`);
      };
      const run = fanout({
        PROFILE: 'lan',
        LANES: 'grpc_stream',
        SUBSCRIBERS: '10',
        STEP_SECONDS: '8',
        PUBLISH_VIA: 'http',
        FANOUT_RUN_ID: id,
      });
      await cutWhen('unused', { proxy: 'grpc', hub: grpcLastSeq });
      const r = await run;
      assert.ok(
        count(r, 'reconnects') >= 1,
        `the streams broke and reconnected: ${count(r, 'reconnects')}\n${output(r)}`,
      );
      assert.equal(count(r, 'delivery_missed{scenario:grpc_stream_c10}'), 0, `resumed: nothing missed\n${output(r)}`);
      assert.equal(count(r, 'delivery_duplicates{scenario:grpc_stream_c10}'), 0);
      const events = plannedEvents({ LOAD: 'smoke', SUBSCRIBERS: '10', STEP_SECONDS: '8' }, 'lan', 'grpc_stream', 10);
      assert.equal(
        count(r, 'delivery_latency{scenario:grpc_stream_c10}'),
        10 * events,
        'every event reached every subscriber',
      );
      // The broken subscriptions are failed operations: the run says so (exit 99), not the delivery gates.
      assert.equal(r.code, 99);
      assert.doesNotMatch(r.stdout, /FAIL delivery_missed/);
    },
  );
});

test(
  'an impossible budget (an override in a policy file) makes k6 exit 99 and names the gate',
  { timeout: 120_000 },
  async () => {
    const file = join(dir, 'impossible.json');
    const fanoutPolicy = {
      ...policy.scenarios.fanout,
      overrides: [
        {
          where: { lane: 'ws' },
          metric: 'delivery_latency',
          p50Ms: 0.001,
          reason: 'a test: no event arrives in a microsecond',
        },
      ],
    };
    writeFileSync(file, JSON.stringify({ ...policy, scenarios: { ...policy.scenarios, fanout: fanoutPolicy } }));
    const r = await fanout({ PROFILE: 'lan', LANES: 'ws', THRESHOLDS: file });
    assert.equal(r.code, 99, output(r));
    assert.match(r.stdout, /FAIL delivery_latency\{scenario:ws_c10\} p\(50\)<0\.001/);
    assert.match(r.stdout, /Held the budget up to: ws none \(failed at its first step\)/);
  },
);
