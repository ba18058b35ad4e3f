#!/usr/bin/env node
/*
 * The gate lint's figures (common/gate-lint.js): every scenario under every built-in
 * network profile, alone, with +loss3 and with +shared, at --load (default ci), and
 * the PR gate's scenarios under its profiles at LOAD=gate; `gate --api` on the nominal
 * API (the api scenario without a plan file). Per scenario and load: the percentiles
 * listed, gated, not gated (too few operations) and failed, and the gate's own plan
 * length. Target: every row listed, 0 failed (none gated below its floor, inside its
 * expected spread or on a whole-ms integer). No k6, no stack: seconds.
 *
 *   node bench/gate-lint.js
 *   node bench/gate-lint.js --load full
 * Appends its figures to bench/results.jsonl.
 */
import { lintCounts, lintGates } from '../common/gate-lint.js';
import { GATE_DEFAULTS, gateScenarios } from '../lib/gate-defaults.js';
import { lintProfiles } from '../lib/profiles.js';
import { scenarioNames } from '../lib/cli-support.js';
import { buildSpec, specGate } from '../lib/specs.js';
import { main, parseFlags, recordResult, round, table } from './lib/common.js';

const quiet = { out: () => {} };
const add = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k] + b[k]]));
const ZERO = { rows: 0, gated: 0, notGated: 0, failed: 0 };

await main(async () => {
  const flags = parseFlags({ load: 'ci', quick: false });
  const profiles = flags.quick ? ['lan', 'lte+loss3', '3g+shared'] : lintProfiles();
  const rows = [];
  let total = { ...ZERO };
  for (const scenario of scenarioNames()) {
    let counts = { ...ZERO };
    for (const profile of profiles) {
      const { built } = await buildSpec(scenario, { profile, load: flags.load }, quiet, {});
      counts = add(counts, lintCounts(lintGates(built)));
    }
    total = add(total, counts);
    rows.push({ scenario, load: flags.load, profiles: profiles.length, ...counts });
  }
  // The PR gate as it runs: its scenarios under its profiles at its load.
  let gateSeconds = 0;
  let gate = { ...ZERO };
  for (const scenario of await gateScenarios()) {
    const { load } = await specGate(scenario);
    for (const profile of GATE_DEFAULTS.profile.split(',')) {
      const { built } = await buildSpec(scenario, { profile, load }, quiet, {});
      gate = add(gate, lintCounts(lintGates(built)));
      gateSeconds += built.plan.totalSeconds;
    }
  }
  rows.push({ scenario: 'the gate', load: GATE_DEFAULTS.load, profiles: 2, ...gate });
  console.log(table(rows, ['scenario', 'load', 'profiles', 'rows', 'gated', 'notGated', 'failed']));
  const verdict = total.failed + gate.failed === 0 ? 'met' : 'MISSED';
  console.log(
    `\nthe gate lint at ${flags.load}: ${total.rows} percentiles of ${scenarioNames().length} scenarios x ${profiles.length} profiles, ${total.gated} gated, ${total.notGated} not gated, ${total.failed} failed; the gate (${GATE_DEFAULTS.load}): ${gate.gated} gated of ${gate.rows}, its steps ${round(gateSeconds, 1)} s (target: 0 failed): ${verdict}`,
  );
  recordResult(
    'gate-lint',
    {
      load: flags.load,
      profiles: profiles.length,
      total,
      gate: { ...gate, planSeconds: round(gateSeconds, 1) },
      rows,
      verdict,
    },
    { quick: flags.quick },
  );
});
