// The PR gate's plan fits its time: every scenario the gate runs, under its profiles, at
// its load (what `npx k6pack gate` runs by default), adds up to at most GATE_PLAN_SECONDS
// of steps. Pure: the plans are the model's (no k6, no stack).
//
// Why 220 s: the gate's target is GATE_TARGET_SECONDS (240 s, lib/gate-defaults.js).
// On top of its steps a gate spends the stack's start and stop and each k6 run's start:
// 201.3 s of steps (gate-lint, b40a4da) took 204-210 s a gate on 2 cores (5 runs) and
// 212-214 s pinned to one core (3 runs; bench/gate-trust.js, 2026-11-29), so up to 13 s
// beyond its steps. 220 s of steps leaves that and 7 s more.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GATE_DEFAULTS, GATE_TARGET_SECONDS, gateScenarios } from '../lib/gate-defaults.js';
import { buildSpec, specGate } from '../lib/specs.js';

const GATE_PLAN_SECONDS = 220;
const quiet = { out: () => {} };

test(`the gate's steps add up to at most ${GATE_PLAN_SECONDS} s (its target: ${GATE_TARGET_SECONDS} s a gate)`, async () => {
  const per = [];
  for (const scenario of await gateScenarios()) {
    const { load } = await specGate(scenario);
    for (const profile of GATE_DEFAULTS.profile.split(',')) {
      const { built } = await buildSpec(scenario, { profile, load }, quiet, {});
      per.push([`${scenario} ${profile}`, built.plan.totalSeconds]);
    }
  }
  const total = per.reduce((sum, [, s]) => sum + s, 0);
  assert.ok(
    total <= GATE_PLAN_SECONDS,
    `the gate's steps take ${total.toFixed(1)} s: ${per.map(([k, s]) => `${k} ${s.toFixed(1)}`).join(', ')}`,
  );
});
