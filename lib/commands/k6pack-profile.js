// `k6pack profile NAME`: switches the running stack's toxics to another profile.
import { targetsFor } from '../../common/defaults.js';
import { action, profileOrUsage } from '../cli-support.js';
import { deadLine, deadOf, readState } from '../runstate.js';
import { applyHeld } from '../stack-profile.js';
import { resolvePorts, StackError } from '../stack.js';
import { Toxiproxy } from '../toxiproxy.js';

export function register(program, ctx) {
  program
    .command('profile')
    .description('switch the running stack to another network profile (removes the old toxics)')
    .argument('<name>', "profile, e.g. lan, 3g, 3g+flaky ('npx k6pack list' shows them)")
    .option('--wait', 'when a run holds the stack, wait for it to end first')
    .addHelpText(
      'after',
      '\nRefuses (exit 4) while a run holds the stack, naming it, unless --wait.\n\nExamples:\n  $ npx k6pack profile 3g\n  $ npx k6pack profile lan',
    )
    .action(action((name, opts) => profile(name, opts, ctx)));
}

// A recorded stack with a dead member: one line naming it and what its log says.
const deadError = (dead, what) => new StackError(`${deadLine(dead)}: ${what}`);

export async function profile(spec, { wait }, ctx) {
  const { runDir } = ctx;
  const prof = profileOrUsage(spec);
  const state = readState(runDir);
  if (state) {
    const dead = deadOf(state);
    if (dead.length) throw deadError(dead, '`npx k6pack up` restarts what died');
  }
  const url = targetsFor(state ? state.ports : resolvePorts()).TOXIPROXY_URL;
  await applyHeld(new Toxiproxy(url), prof, runDir, { wait }, ctx);
  return 0;
}
