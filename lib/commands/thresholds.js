// `k6pack thresholds SCENARIO`: a scenario's gates under a profile and load level.
import { describeGate, describeOpenStep } from '../../common/gates.js';
import { describeMachine } from '../../common/machine.js';
import { describeRecording } from '../../common/recording.js';
import { action } from '../cli-support.js';
import { buildSpec, describeLink } from '../specs.js';

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
export async function thresholds(scenario, opts, ctx) {
  const { out } = ctx;
  const { built, profile, policy, policyFile } = await buildSpec(scenario, opts, ctx);
  out(
    `${scenario} under ${describeLink(profile)}, load ${built.plan.level}: ${built.gates.length} latency gates (${policyFile})`,
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
