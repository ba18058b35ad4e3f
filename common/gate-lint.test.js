// The gate lint (common/gate-lint.js) over every scenario under every built-in network
// profile, alone, with +loss3 and with +shared, at ci load, and the nominal API's gate:
// no gated percentile rests on fewer operations than its floor, sits within 3 expected
// spreads of its model, or lets a whole-ms reading land on its limit. A new lane whose
// step is too thin is not gated (and `k6pack thresholds` says why); one whose gate is
// too tight fails here, on the developer's machine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lintCounts, lintGates, lintTable, MARGIN_SPREADS } from './gate-lint.js';
import { SAMPLE_FLOORS } from './gates.js';
import { expectedSpreadMs, familyOf } from './noise.js';
import { buildSpec } from '../lib/specs.js';
import { lintProfiles } from '../lib/profiles.js';
import { scenarioNames } from '../lib/cli-support.js';

const quiet = { out: () => {} };

test('every scenario, profile and modifier at ci: every row listed, none gated below its floor or margin', async () => {
  const profiles = lintProfiles();
  assert.ok(profiles.includes('lte+loss3') && profiles.includes('3g+shared') && profiles.includes('lan'));
  let gated = 0;
  for (const scenario of scenarioNames())
    for (const profile of profiles) {
      const { built } = await buildSpec(scenario, { profile, load: 'ci' }, quiet, {});
      const rows = lintGates(built);
      // Every row's p50 and p95 (set-up rows: p50) is listed.
      const expected = built.gates.reduce((n, g) => n + (g.metric === 'setup_duration' ? 1 : 2), 0);
      assert.equal(rows.length, expected, `${scenario} ${profile}`);
      const failed = rows.filter((r) => r.verdict === 'FAIL');
      assert.deepEqual(failed, [], `${scenario} under ${profile}:\n${lintTable(failed).join('\n')}`);
      for (const r of rows.filter((x) => x.gated)) {
        assert.ok(r.samples >= SAMPLE_FLOORS[r.which], `${r.key} ${r.which}: ${r.samples}`);
        gated += 1;
      }
    }
  // The gate still gates: lan and lte keep rows with enough operations.
  assert.ok(gated > 1000, `${gated} gated percentiles`);
});

test('the lint fails a gated percentile below its floor, within its spread, or on a whole-ms integer', () => {
  const e = (ms) => ({ ms, formula: 'R', terms: [] });
  const built = (g) => ({
    plan: { level: 'ci' },
    profile: { network: { rttMs: 70 } },
    gates: [
      {
        key: 'op_duration{scenario:ws_c1}',
        metric: 'op_duration',
        lane: 'ws',
        step: 'c1',
        transport: 'ws',
        expected: { p50: e(71.6), p95: e(71.6) },
        budget: { p50: 110, p95: null },
        samples: 30,
        verdicts: { p50: { gated: true, why: null }, p95: { gated: false, why: 'few' } },
        ...g,
      },
    ],
  });
  const [ok, tail] = lintGates(built());
  assert.deepEqual([ok.verdict, tail.verdict, tail.why], ['gated', 'not gated', 'few']);
  assert.ok(ok.spreadMs > 0 && ok.marginMs > MARGIN_SPREADS * ok.spreadMs);
  // Gated on 5 operations (a hand-made gate that skipped the floors).
  const [thin] = lintGates(built({ samples: 5 }));
  assert.equal(thin.verdict, 'FAIL');
  assert.match(thin.why, /5 operations, under the floor of 20/);
  // A margin inside the expected spread: a 3 s operation's rel spread at 20 draws.
  const [tight] = lintGates(
    built({
      samples: 20,
      transport: 'http-keepalive',
      expected: { p50: e(3000), p95: e(3000) },
      budget: { p50: 3001, p95: null },
    }),
  );
  assert.match(tight.why, /margin 1\.0 ms, under 3 x the expected spread/);
  // A whole-ms timing whose limit sits on the model's integer.
  const [edge] = lintGates(built({ expected: { p50: e(20.2), p95: e(20.2) }, budget: { p50: 22, p95: null } }));
  assert.match(edge.why, /a whole-ms timing whose budget 22 is within 2 ms of the model's 21/);
  assert.deepEqual(lintCounts([ok, tail, thin]), { rows: 3, gated: 1, notGated: 1, failed: 1 });
  assert.match(
    lintTable([thin])[1],
    /^op_duration\{scenario:ws_c1\}\s+p50\s+5\s+110\s+71\.6\s+38\.4\s+[\d.]+ {2}FAIL: /,
  );
});

test('the noise model: a spread per lane family and profile class, shrinking with the operations', () => {
  assert.equal(familyOf({ transport: 'http-keepalive', variant: 'connect-json' }), 'rpc-web');
  assert.equal(familyOf({ transport: 'grpc-client-stream' }), 'grpc');
  assert.equal(familyOf({ transport: 'ws' }), 'ws');
  assert.equal(familyOf({ transport: 'http-poll' }), 'poll');
  assert.equal(familyOf({ transport: 'http2' }), 'http');
  const lte = { network: { rttMs: 70 } };
  const at = (n) => expectedSpreadMs('grpc', lte, 'p50', 100, n);
  assert.ok(Math.abs(at(100) / at(25) - 0.5) < 1e-9);
  assert.ok(expectedSpreadMs('grpc', lte, 'p95', 100, 100) > at(100));
  assert.equal(at(Infinity), 0);
  // A family the fit had no rows for takes its class's widest.
  assert.ok(expectedSpreadMs('poll', lte, 'p50', 100, 20) >= expectedSpreadMs('ws', lte, 'p50', 100, 20));
  assert.ok(expectedSpreadMs('http', { network: { rttMs: 0 } }, 'p50', 1, 20) > 0);
});
