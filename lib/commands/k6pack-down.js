// `k6pack down`: stops what `up` started and returns once its ports are free.
import { targetsFor } from '../../common/defaults.js';
import { action, show } from '../cli-support.js';
import { HoldError, holdStatus } from '../hold.js';
import { stillHeldMessage } from '../ports.js';
import { deadOf, readState, stopRecorded } from '../runstate.js';
import { StackError } from '../stack.js';
import { Toxiproxy } from '../toxiproxy.js';

export function register(program, ctx) {
  program
    .command('down')
    .description(
      'stop everything `up` started (SIGTERM, SIGKILL after 5 s) and wait until its ports are free; safe to repeat',
    )
    .option('--force', 'stop it even while a run holds the stack')
    .addHelpText(
      'after',
      '\nRefuses (exit 4) while a run holds the stack, unless --force. Returns once every port the stack held can be\nbound again; a port still held 5 s after the stop is named with the pid holding it (exit 1).\n\nExample:\n  $ npx k6pack down',
    )
    .action(action((opts) => down(opts, ctx)));
}

export async function down({ force }, { runDir, out }) {
  const state = readState(runDir);
  if (!state) {
    out('the stack is not running (nothing recorded in ' + show(runDir) + ')');
    return 0;
  }
  // Stopping the stack under a run would break it: refuse unless --force.
  if (!force && !deadOf(state).some((d) => d.name === 'toxiproxy')) {
    const held = await holdStatus(new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL, { timeoutMs: 2000 })).catch(
      () => null,
    );
    if (held && !held.gone)
      throw new HoldError(
        `the stack is in use by ${held.text}: wait for it to end, or \`npx k6pack down --force\` to stop it anyway`,
      );
  }
  // Returns once the ports of what it stopped can be bound again (bounded: one line naming a port still held, exit 1).
  const { stopped, held } = await stopRecorded(runDir, state);
  out(
    stopped.length
      ? `stopped ${stopped.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}`
      : 'nothing was running; cleared the pid files',
  );
  if (held.length) throw new StackError(stillHeldMessage(held));
  return 0;
}
