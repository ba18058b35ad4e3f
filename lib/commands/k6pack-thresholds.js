// `k6pack thresholds SCENARIO`: a scenario's gates under a profile and load level.
import { describeGate, describeOpenStep } from '../../common/gates.js';
import { lintCounts, lintGates, lintTable } from '../../common/gate-lint.js';
import { lintProfiles } from '../profiles.js';
import { describeMachine } from '../../common/machine.js';
import { describeRecording } from '../../common/recording.js';
import { action, scenarioNames, UsageError } from '../cli-support.js';
import { buildSpec, describeLink } from '../specs.js';

export function register(program, ctx) {
  program
    .command('thresholds')
    .description("a scenario's gates under a profile and load level, each with the model term behind it")
    .argument('[scenario]', 'scenario name (e.g. ws-vs-http); with --lint and none, every scenario')
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
    .option(
      '--lint',
      'the gate lint: per row and percentile the operations it rests on, its margin and expected spread, and a verdict; without --profile every built-in profile, alone, +loss3 and +shared',
    )
    .addHelpText(
      'after',
      `
Every lane at every step gets p50 and p95 budgets from the round-trip model
(docs/model.md) and the margins of thresholds.json; this prints them as k6
would get them, with the model's formula and expected time behind each.

Examples:
  $ npx k6pack thresholds ws-vs-http --profile 5g
  $ npx k6pack thresholds grpc-vs-graphql --profile ./my-network.json --load full
  $ npx k6pack thresholds ws-vs-http --profile lte --workload open
  $ npx k6pack thresholds --lint                      # every scenario, profile and modifier at ci
  $ npx k6pack thresholds grpc-vs-graphql --lint --profile lte`,
    )
    .action(action((scenario, opts) => thresholds(scenario, opts, ctx)));
}

// `k6pack thresholds SCENARIO --profile P --load L`: the gates a run would have,
// each with the model term behind it (the same derivation k6 makes: common/scenario.js).
export async function thresholds(scenario, opts, ctx) {
  const { out } = ctx;
  if (opts.lint) return lint(scenario, opts, ctx);
  if (!scenario) throw new UsageError('thresholds needs a scenario (e.g. ws-vs-http), or --lint for every one');
  const { built, profile, policy, policyFile } = await buildSpec(scenario, opts, ctx);
  const gated = built.gates.filter((g) => g.thresholds.length).length;
  out(
    `${scenario} under ${describeLink(profile)}, load ${built.plan.level}: ${gated} of ${built.gates.length} rows gated (${policyFile}; a row is gated where its step holds enough operations: docs/thresholds.md#sample-floors)`,
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

// `k6pack thresholds --lint [SCENARIO] [--profile P]`: the lint's table per scenario and
// profile (every built-in profile alone, +loss3 and +shared when none is given), then
// one line of counts. Exit 1 when a gated percentile fails the lint.
async function lint(scenario, opts, ctx) {
  const { out } = ctx;
  const scenarios = scenario ? [scenario] : scenarioNames();
  const profiles = opts.profile ? [opts.profile] : lintProfiles();
  const total = { rows: 0, gated: 0, notGated: 0, failed: 0 };
  const quiet = { ...ctx, out: () => {} };
  for (const name of scenarios)
    for (const profile of profiles) {
      const { built } = await buildSpec(name, { ...opts, profile, load: opts.load || 'ci' }, quiet);
      const rows = lintGates(built);
      const c = lintCounts(rows);
      for (const k of Object.keys(total)) total[k] += c[k];
      out(
        `== ${name} under ${profile}, load ${built.plan.level}: ${c.gated} gated, ${c.notGated} not gated, ${c.failed} failed`,
      );
      for (const line of lintTable(rows)) out(`  ${line}`);
    }
  out(
    `== the gate lint: ${scenarios.length} scenario(s) x ${profiles.length} profile(s): ${total.rows} percentiles, ${total.gated} gated, ${total.notGated} not gated (too few operations), ${total.failed} failed`,
  );
  return total.failed ? 1 : 0;
}
