// `k6pack status`: each process, its ports, the toxics per proxy and the hold.
import { ALL_PROXY_NAMES, targetsFor } from '../../common/defaults.js';
import { action, show } from '../cli-support.js';
import { holdStatus } from '../hold.js';
import { deadOf, processesOf, readState } from '../runstate.js';
import { describeToxic } from '../stack-profile.js';
import { services } from '../stack.js';
import { Toxiproxy } from '../toxiproxy.js';

export function register(program, ctx) {
  program
    .command('status')
    .description('show each process, its ports and the toxics per proxy; exit 1 unless all is running')
    .addHelpText('after', '\nExample:\n  $ npx k6pack status || npx k6pack up')
    .action(action((opts) => status(opts, ctx)));
}

export async function status(_opts, { runDir, out }) {
  const state = readState(runDir);
  if (!state) {
    out(`the stack is not running (nothing recorded in ${show(runDir)}): start it with \`npx k6pack up\``);
    return 1;
  }
  let ok = true;
  const procs = processesOf(state);
  const dead = Object.fromEntries(deadOf(state).map((d) => [d.name, d]));
  const svcByName = Object.fromEntries(services(state.ports).map((s) => [s.name, s]));
  out(`stack in ${show(runDir)}, started ${state.startedAt}, profile ${state.profile ?? '(none)'}`);
  for (const p of procs) {
    const svc = svcByName[p.name];
    const answering = p.alive && (await svc.ready());
    const health = !p.alive ? 'NOT RUNNING' : answering ? 'running' : 'running, NOT ANSWERING';
    ok &&= answering;
    // A Toxiproxy started alone for a team's API (`up --api`) has no reference proxies.
    const ports = svc.ports
      .filter((v) => state.reference !== false || !v.startsWith('PROXY_'))
      .map((v) => `${state.ports[v]} (${v})`)
      .join(', ');
    out(`  ${p.name.padEnd(9)} pid ${String(p.pid).padEnd(7)} ${health}; ports ${ports}`);
    if (dead[p.name]?.said) out(`    its log (${show(dead[p.name].log)}) ends: ${dead[p.name].said}`);
  }
  const toxiproxy = new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL, { timeoutMs: 2000 });
  try {
    const proxies = await toxiproxy.proxies();
    out('toxics:');
    for (const p of ALL_PROXY_NAMES.map((n) => proxies[n]).filter(Boolean)) {
      out(
        `  ${p.name} ${p.listen} -> ${p.upstream}${p.enabled ? '' : ' (DISABLED)'}${p.toxics.length ? '' : ': none'}`,
      );
      for (const t of p.toxics) out(`    ${describeToxic(t)}`);
    }
    const held = await holdStatus(toxiproxy);
    if (!held) out('hold: free (no run is using the stack)');
    else if (held.gone) {
      await releaseIfGone(toxiproxy, held);
      out(`hold: was held by ${held.text}, which is no longer running: released it`);
    } else out(`hold: in use by ${held.text}`);
  } catch (err) {
    ok = false;
    out(`toxics: unknown (${err.message})`);
  }
  if (!ok) {
    out(
      Object.keys(dead).length
        ? `the stack is not fully running (${Object.keys(dead).join(', ')} died): \`npx k6pack up\` restarts what died`
        : 'the stack is not fully running: `npx k6pack down` then `npx k6pack up`',
    );
  }
  return ok ? 0 : 1;
}

// Deletes a gone holder's record (only that record: another may have replaced it).
async function releaseIfGone(toxiproxy, held) {
  const now = await toxiproxy.holder();
  if (now && now.token === held.holder.token) await toxiproxy.deleteHold();
}
