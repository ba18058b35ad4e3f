// scenarios/fanout.js through the pack's stack (real servers with their hubs,
// Toxiproxy, k6): every subscriber of every lane gets every event once and in
// order under lan and lte, at the latency the model says. A cut socket and an
// impossible budget: test/fanout-faults.test.js (no timings).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadProfile } from '../lib/profiles.js';
import { useTestStack } from '../dev/test-stack.js';
import { count, fanoutOn, metric, output, plannedEvents } from './helpers/fanout-run.js';

const LANES = ['ws', 'wss', 'grpc_stream', 'http_poll'];
const stack = useTestStack();
const fanout = fanoutOn(stack);

describe('every subscriber gets every event, once and in order', () => {
  for (const spec of ['lan', 'lte']) {
    test(`${spec}: every lane, 10 subscribers`, { timeout: 180_000 }, async (t) => {
      const env = { LOAD: 'smoke', PROFILE: spec, SUBSCRIBERS: '10' };
      const r = await fanout(env);
      assert.equal(r.code, 0, output(r));
      const R = loadProfile(spec).network.rttMs;
      for (const lane of LANES) {
        const key = `{scenario:${lane}_c10}`;
        const events = plannedEvents(env, spec, lane, 10);
        assert.ok(events >= 5, `${lane}: ${events} events planned`);
        assert.equal(
          count(r, `delivery_latency${key}`),
          10 * events,
          `${lane}: every subscriber got every one of the ${events} events\n${output(r)}`,
        );
        assert.equal(count(r, `delivery_missed${key}`), 0, `${lane}: nothing missed or out of order`);
        assert.equal(count(r, `delivery_duplicates${key}`), 0, `${lane}: nothing twice`);
        const p50 = metric(r, `delivery_latency${key}`).med;
        t.diagnostic(
          `${spec} ${lane}: ${events} events x 10 subscribers, delivery p50 ${p50.toFixed(1)} ms, spread p95 ${metric(r, `delivery_spread${key}`)?.['p(95)']?.toFixed(1)} ms`,
        );
        // A pushed event takes R/2 (one way) plus the fan-out; a poll waits for the next poll.
        if (lane === 'http_poll') assert.ok(p50 > R / 2 + 100, `${lane}: p50 ${p50} ms is a poll's wait`);
        else if (R) assert.ok(p50 >= 0.9 * (R / 2) && p50 <= R / 2 + 15, `${lane}: p50 ${p50} ms vs R/2 = ${R / 2} ms`);
      }
      assert.match(
        r.stdout,
        /Held the budget up to: ws 10 subscribers, wss 10 subscribers, grpc stream 10 subscribers, http poll 10 subscribers\./,
      );
    });
  }
});
