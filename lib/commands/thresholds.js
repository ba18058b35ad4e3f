// `k6pack thresholds SCENARIO`: a scenario's gates under a profile and load level.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseApiPlan } from '../../common/api.js';
import { describeGate, describeOpenStep } from '../../common/gates.js';
import { describeMachine } from '../../common/machine.js';
import { describeRecording } from '../../common/recording.js';
import { buildScenario } from '../../common/scenario.js';
import { parsePolicy } from '../../common/thresholds.js';
import { action, checkWorkload, profileOrUsage, scenarioNames, show, UsageError } from '../cli-support.js';
import { ROOT } from '../tools.js';

export function register(program, ctx) {
  program
    .command('thresholds')
    .description("a scenario's gates under a profile and load level, each with the model term behind it")
    .argument('<scenario>', 'scenario name (e.g. ws-vs-http)')
    .option(
      '-p, --profile <name>',
      "profile, a fault combination, or a file of your own (./my-network.json) (default: the scenario's)",
    )
    .option('-l, --load <level>', 'load level (default: ci; the steps follow it)')
    .option(
      '-w, --workload <kind>',
      "closed (the default) or open: then also each open step's arrivals, VU pool and dropped-arrivals gate",
    )
    .option('--file <path>', 'the policy file (default: THRESHOLDS, else thresholds.json)')
    .addHelpText(
      'after',
      `
Every lane at every step gets p50 and p95 budgets from the round-trip model
(docs/model.md) and the margins of thresholds.json; this prints them as k6
would get them, with the model's formula and expected time behind each.

Examples:
  $ npx k6pack thresholds ws-vs-http --profile 5g
  $ npx k6pack thresholds grpc-vs-graphql --profile ./my-network.json --load full
  $ npx k6pack thresholds ws-vs-http --profile lte --workload open`,
    )
    .action(action((scenario, opts) => thresholds(scenario, opts, ctx)));
}

// `k6pack thresholds SCENARIO --profile P --load L`: the gates a run would have,
// each with the model term behind it (the same derivation k6 makes: common/scenario.js).
export async function thresholds(scenario, { profile: spec, load, workload, file }, { out }) {
  const names = scenarioNames();
  if (!names.includes(scenario))
    throw new UsageError(`unknown scenario '${scenario}': choose one of ${names.join(', ')}`);
  const { default: declare } = await import(pathToFileURL(join(ROOT, 'scenarios', 'specs', `${scenario}.js`)).href);
  checkWorkload(workload);
  const env = { ...process.env, ...(load ? { LOAD: load } : {}), ...(workload ? { WORKLOAD: workload } : {}) };
  // api: the plan file `k6pack up --api` wrote (API=path), else the nominal API.
  const api =
    scenario === 'api' && env.API
      ? withUsage(() => parseApiPlan(readFileSync(resolve(env.API), 'utf8'), env.API, env))
      : null;
  if (scenario === 'api' && !api)
    out(
      '(no API=<plan file> given: the gates of a nominal API, one operation of 200 B up, 500 B down and 5 ms of server time)',
    );
  const decl = withUsage(() => declare(env, api));
  const profile = profileOrUsage(spec || decl.defaultProfile);
  const policyFile = file || process.env.THRESHOLDS || join(ROOT, 'thresholds.json');
  const policy = withUsage(() => parsePolicy(readFileSync(policyFile, 'utf8'), show(resolve(policyFile))));
  const built = withUsage(() => buildScenario(decl, profile, env, policy));
  const net = profile.network;
  out(
    `${scenario} under ${profile.name} (R ${net.rttMs} ms, down ${net.downKbps ?? '∞'} / up ${net.upKbps ?? '∞'} kbit/s${profile.modifiers.length ? `, ${profile.modifiers.map((m) => m.name).join('+')}` : ''}${profile.faults.length ? `, faults ${profile.faults.map((f) => f.name).join('+')}` : ''}), load ${built.plan.level}: ${built.gates.length} latency gates (${show(resolve(policyFile))})`,
  );
  out(
    `(CPU budgets for ${describeMachine(built.machine)}: -e CPU_CORES, CPU_SCALE; \`k6pack run\` measures them before each run)`,
  );
  if (built.recording.metrics === 'lean') out(`(${describeRecording(built.recording)}: no gates on them)`);
  for (const g of built.gates) out(`  ${describeGate(g)}`);
  if (built.plan.pools) {
    out('open steps:');
    for (const name of Object.keys(built.plan.pools)) out(`  ${describeOpenStep(policy, built.plan, name)}`);
  }
  const other = Object.entries(built.thresholds).filter(([k]) => !built.gates.some((g) => g.key === k));
  out('other gates:');
  for (const [k, list] of other)
    out(
      `  ${k} ${list.map((t) => (typeof t === 'string' ? t : `${t.threshold}${t.abortOnFail ? ' (aborts the run)' : ''}`)).join(' ')}`,
    );
  return 0;
}

// A setting a declaration or the policy refuses (a string thrown, as k6 shows it) -> exit 2.
function withUsage(fn) {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(typeof err === 'string' ? err : err.message);
  }
}
