// `k6pack plan SCENARIO`: every k6 scenario a run will have (options.scenarios, as
// `k6 inspect` shows them), one line each: lane and step, executor, VUs or rate,
// start, duration and graceful stop; then where each figure comes from: the load
// level, the round-trip model, the spec, or an environment variable. No gates:
// `k6pack thresholds` prints those.
import { action } from '../cli-support.js';
import { planLines } from '../plan-lines.js';

export function register(program, ctx) {
  program
    .command('plan')
    .description("a scenario's load shape: every k6 scenario it runs, and where each figure comes from")
    .argument('<scenario>', 'scenario name (e.g. ws-vs-http)')
    .option('-p, --profile <name>', "profile, a fault combination, or a file of your own (default: the scenario's)")
    .option('-l, --load <level>', 'load level (default: ci)')
    .option('-w, --workload <kind>', 'closed (VUs in a loop, the default) or open (rising arrival rates)')
    .addHelpText(
      'after',
      `
The steps' lengths follow the profile: an iteration's time comes from the
round-trip model (docs/model.md). The environment counts as k6's -e flags
would (STEPS, STEP_SECONDS, STEP_ITERATIONS, OPEN_SHARES, SOAK_RATE, ...).

Examples:
  $ npx k6pack plan ws-vs-http --profile lte
  $ npx k6pack plan fanout --profile 3g --load full
  $ npx k6pack plan ws-vs-http --profile lte --workload open`,
    )
    .action(action((scenario, opts) => plan(scenario, opts, ctx)));
}

export async function plan(scenario, opts, ctx) {
  for (const line of await planLines(scenario, opts)) ctx.out(line);
  return 0;
}
