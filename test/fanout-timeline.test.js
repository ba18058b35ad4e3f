// Fan-out's step timeline (scenarios/specs/fanout.js), under every built-in network
// profile at ci load, no k6: a count==0 gate on missed events is only as good as
// the step's end, so each step leaves room for the tally to wait for what was
// published (the hub's answer, then a poller's last poll after the last publish)
// and for its subscribers to close, and the publisher's planned count fits its
// window (every VU falls back on that count when the hub does not answer).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildScenario, rttOf } from '../common/scenario.js';
import { listProfiles, loadProfile } from '../lib/profiles.js';
import { linkOf, lossCost, rtoMs } from '../common/model.js';
import { SAMPLE_FLOORS } from '../common/gates.js';
import declare from '../scenarios/specs/fanout.js';
import { policy } from './helpers/fanout-run.js';

const ENV = { LOAD: 'ci' };

test('every step of every profile: a window for the planned events, a drain, a tally and a close', () => {
  const decl = declare(ENV);
  const rows = [];
  for (const spec of listProfiles().network) {
    const profile = loadProfile(spec);
    const R = rttOf(profile);
    const built = buildScenario(decl, profile, ENV, policy);
    for (const lane of decl.lanes) {
      for (const n of decl.SUBSCRIBERS) {
        const name = `${lane.name}_c${n}`;
        const durationMs = built.plan.durations[name];
        if (durationMs === undefined) continue;
        const at = `${spec} ${name}`;
        const t = decl.timeline(lane.name, n, profile);
        const events = decl.eventsIn(lane.name, n, profile, durationMs);
        // The window the publisher writes in: from readyMs to drainMs before the deadline.
        const windowMs = durationMs - t.readyMs - t.drainMs - t.closeMs;
        assert.ok(windowMs >= 0, `${at}: the step (${durationMs} ms) holds subscribing, draining and closing`);
        assert.ok(
          ((events - 1) * 1000) / decl.RATE <= windowMs + 1e-9,
          `${at}: the last of the ${events} planned events is due within the window (${windowMs} ms)`,
        );
        assert.ok(events >= decl.MIN_EVENTS, `${at}: ${events} events, at least MIN_EVENTS`);
        // The last event reaches every subscriber before the deadline: a poller polls again.
        if (lane.name === 'http_poll') assert.ok(t.drainMs >= decl.POLL_MS + 2 * R, `${at}: a whole poll drains`);
        // The tally: the hub's answer (a round trip) and, for a poller, one more poll.
        assert.ok(t.tallyMs >= (lane.name === 'http_poll' ? 2 : 1) * R + 100, `${at}: room for the tally`);
        // Then the subscribers close (a round trip), before the step ends.
        assert.ok(t.closeMs - t.tallyMs >= R + 100, `${at}: room to close after the tally`);
        rows.push(`${at}: ${events} events, drain ${t.drainMs} ms, tally ${t.tallyMs} ms, close ${t.closeMs} ms`);
      }
    }
  }
  assert.ok(rows.length >= 8 * listProfiles().network.length, `every lane and step: ${rows.length} rows`);
});

// Under loss a copy may wait out retransmissions: under 4g+shared+loss3 a ws_c100 step
// whose drain and tally left no room for them counted 2 copies as missed (wss_c100 7;
// their spread p95 was 1.1 s). Each phase holds the model's tail of the slowest
// subscriber's stalls (common/model.js lossCost), and a step is one subscribe-drain
// cycle whose events reach the p95's floor.
test('under loss: drain and tally wait out the slowest copy, and a step holds the p95 floor of events', () => {
  const decl = declare(ENV);
  for (const spec of ['lte+loss3', '4g+shared+loss3', '3g+loss3']) {
    const profile = loadProfile(spec);
    const link = linkOf(profile);
    const built = buildScenario(decl, profile, ENV, policy);
    for (const lane of decl.lanes) {
      const n = Math.max(...decl.SUBSCRIBERS);
      const name = `${lane.name}_c${n}`;
      const at = `${spec} ${name}`;
      const t = decl.timeline(lane.name, n, profile);
      const alone = decl.timeline(lane.name, n, { ...profile, network: { ...profile.network, loss: undefined } });
      const copy = lossCost(link, [{ bytes: 100, rto: rtoMs(link.R) }], n).p95;
      assert.ok(copy > 2 * rtoMs(link.R), `${at}: the slowest of ${n} copies meets more than one timeout (${copy} ms)`);
      assert.ok(t.drainMs - alone.drainMs >= copy, `${at}: the drain holds the slowest copy's stalls`);
      assert.ok(t.tallyMs - alone.tallyMs >= copy, `${at}: the tally holds them too`);
      const events = decl.eventsIn(lane.name, n, profile, built.plan.durations[name]);
      assert.ok(events >= SAMPLE_FLOORS.p95, `${at}: ${events} events, the p95's floor`);
      const cycleMs = decl.laneSeconds(lane.name, profile) * 1000;
      assert.ok(built.plan.durations[name] < 2 * cycleMs, `${at}: one cycle of ${cycleMs} ms, not five`);
    }
  }
});
