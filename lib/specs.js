// A scenario's spec built on the Node side as k6 builds it (common/scenario.js):
// the schedule, the rows and the gates, for `k6pack thresholds` and `k6pack plan`.
// The environment is the process's, with --load and --workload on top, as the k6
// run's -e flags would carry them; it is read once into the run's settings
// (common/settings.js readSettings), which the declaration and the plan take.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseApiPlan } from '../common/your-api.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { checkWorkload, profileOrUsage, scenarioNames, show, UsageError } from './cli-support.js';
import { ROOT } from './tools.js';
import { rawSetting, readSettings } from '../common/settings.js';

const specUrl = (scenario) => pathToFileURL(join(ROOT, 'scenarios', 'specs', `${scenario}.js`)).href;

// What a scenario's declaration says of the gate (GATE in scenarios/specs/<name>.js):
// { runs: true, load } or { runs: false, why }.
export async function specGate(scenario) {
  const { GATE } = await import(specUrl(scenario));
  if (!GATE) throw new Error(`scenarios/specs/${scenario}.js exports no GATE: say whether the gate runs it`);
  return GATE;
}

// A scenario's own settings (the mobile scenario's INTERACTION_SECONDS, …), checked by
// making its declaration under `env` as k6 would: a bad one is a UsageError, one line and
// exit 2, before anything starts. (api's declaration reads its plan file: not here.)
export async function checkDeclaration(scenario, env) {
  if (scenario === 'api' || !scenarioNames().includes(scenario)) return;
  const { default: declare } = await import(specUrl(scenario));
  withUsage(() => declare(readSettings(env)));
}

// -> { built, profile, policy, policyFile (as messages show it) }. baseEnv: what k6's
// -e flags would hold besides --load and --workload (default: this process's env).
export async function buildSpec(scenario, { profile: spec, load, workload, file }, { out }, baseEnv = process.env) {
  const names = scenarioNames();
  if (!names.includes(scenario))
    throw new UsageError(`unknown scenario '${scenario}': choose one of ${names.join(', ')}`);
  const { default: declare } = await import(specUrl(scenario));
  checkWorkload(workload);
  const env = { ...baseEnv, ...(load ? { LOAD: load } : {}), ...(workload ? { WORKLOAD: workload } : {}) };
  // api: the plan file `k6pack up --api` wrote (API=path), else the nominal API.
  const api =
    scenario === 'api' && rawSetting(env, 'API')
      ? withUsage(() =>
          parseApiPlan(readFileSync(resolve(rawSetting(env, 'API')), 'utf8'), rawSetting(env, 'API'), env),
        )
      : null;
  if (scenario === 'api' && !api)
    out(
      '(no API=<plan file> given: the gates of a nominal API, one operation of 200 B up, 500 B down and 5 ms of server time)',
    );
  const settings = withUsage(() => readSettings(env));
  const decl = withUsage(() => declare(settings, api));
  const profile = profileOrUsage(spec || decl.defaultProfile);
  const { policy, policyFile } = readPolicyFile(file || baseEnv.THRESHOLDS);
  const built = withUsage(() => buildScenario(decl, profile, settings, policy));
  return { built, profile, policy, policyFile };
}

// The gate's policy: a thresholds file (THRESHOLDS, as k6 reads it) or the pack's own.
// -> { policy, policyFile (as messages show it) }
export function readPolicyFile(file = rawSetting(process.env, 'THRESHOLDS')) {
  const path = resolve(file || join(ROOT, 'thresholds.json'));
  const policy = withUsage(() => parsePolicy(readFileSync(path, 'utf8'), show(path)));
  return { policy, policyFile: show(path) };
}

// 'lte (R 70 ms, down 12000 / up 12000 kbit/s)', with its modifiers and faults.
export function describeLink(profile) {
  const net = profile.network;
  const modifiers = profile.modifiers.length ? `, ${profile.modifiers.map((m) => m.name).join('+')}` : '';
  const faults = profile.faults.length ? `, faults ${profile.faults.map((f) => f.name).join('+')}` : '';
  return `${profile.name} (R ${net.rttMs} ms, down ${net.downKbps ?? '∞'} / up ${net.upKbps ?? '∞'} kbit/s${modifiers}${faults})`;
}

// A setting a declaration or the policy refuses (a string thrown, as k6 shows it) -> exit 2.
function withUsage(fn) {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(typeof err === 'string' ? err : err.message);
  }
}
