// scenarios/fanout.js run by plain k6 through a test stack, and what the tests read
// from its summary (test/fanout.test.js, test/fanout-faults.test.js).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildScenario } from '../../common/scenario.js';
import { parsePolicy } from '../../common/thresholds.js';
import { loadProfile } from '../../lib/profiles.js';
import { ROOT } from '../../lib/tools.js';
import { runK6 } from '../../dev/run-k6.js';
import declare from '../../scenarios/specs/fanout.js';

const SCRIPT = join(ROOT, 'scenarios', 'fanout.js');
const POLICY_FILE = join(ROOT, 'thresholds.json');
export const policy = parsePolicy(readFileSync(POLICY_FILE, 'utf8'), POLICY_FILE);

// stack: useTestStack()'s. -> fanout(env, timeoutMs): runK6's result, at LOAD=smoke unless env says.
export const fanoutOn =
  (stack) =>
  (env, timeoutMs = 150_000) =>
    runK6(SCRIPT, { env: { ...stack.env, LOAD: 'smoke', ...env }, timeoutMs });
export const metric = (r, key) => r.summary.metrics[key];
export const count = (r, key) => metric(r, key)?.count ?? 0;
export const output = (r) => `${r.stdout}\n${r.stderr.slice(-3000)}`;

// The events the publisher writes in a step, as every VU works it out (scenarios/specs/fanout.js).
export function plannedEvents(env, spec, lane, n) {
  const decl = declare(env);
  const profile = loadProfile(spec);
  const built = buildScenario(decl, profile, env, policy);
  return decl.eventsIn(lane, n, profile, built.plan.durations[`${lane}_c${n}`]);
}
