// `k6pack up`: starts the servers and Toxiproxy in the background (or restarts what
// died), applies a profile; with --api, proxies in front of your own API (lib/api/run-api.js).
import { targetsFor } from '../../common/defaults.js';
import { addApiOptions, apiFlagsIn } from '../api/api-config.js';
import { upApi } from '../api/run-api.js';
import { action, profileOrUsage, show } from '../cli-support.js';
import { clearState, deadLine, deadOf, processesOf, readState, writeState } from '../runstate.js';
import { applyHeld, applyProfile, printTargets } from '../stack-profile.js';
import { startStack, StackError } from '../stack.js';
import { Toxiproxy } from '../toxiproxy.js';

export function register(program, ctx) {
  addApiOptions(
    program
      .command('up')
      .description(
        'start the reference servers and toxiproxy in the background, populate the proxies, apply a profile; with --api/--graphql/--grpc: proxies in front of your own API',
      )
      .option('-p, --profile <name>', 'network profile, optionally +fault (default: lan)')
      .option('--wait', 'when a run holds the stack, wait for it before changing the profile'),
  )
    .addHelpText(
      'after',
      `
Installs the tools if missing. If the stack already runs, says so and applies
--profile (not while a run holds the stack: exit 4, or --wait); if one of its
processes died, names it with the end of its log and restarts just what died.
With your own API (the same flags as \`run api\`): checks and discovers it, puts
Toxiproxy proxies in front of its endpoints (PROXY_API_GRAPHQL_PORT=16000,
PROXY_API_WS_PORT=16001, PROXY_API_GRPC_PORT=16051, on 127.0.0.1; starting
Toxiproxy alone when no stack runs) and writes .run/api-plan.json for
\`k6 run -e API=.run/api-plan.json scenarios/api.js\`.

Examples:
  $ npx k6pack up
  $ npx k6pack up --profile 3g+flaky
  $ GRAPHQL_PORT=5000 PROXY_GRAPHQL_PORT=15000 npx k6pack up
  $ npx k6pack up --api ./api.json --profile 3g`,
    )
    .action(action((opts) => (apiFlagsIn(opts).length ? upApi(opts, ctx) : up(opts, ctx))));
}

export async function up({ profile: spec, wait }, ctx) {
  const { runDir, out, warn, trap } = ctx;
  const profile = profileOrUsage(spec || 'lan');
  const found = readState(runDir);
  if (found && found.reference === false) {
    throw new StackError(
      `the stack in ${show(runDir)} is Toxiproxy alone, for your API (\`up --api\`): \`npx k6pack down\`, then \`npx k6pack up\` for the reference servers (or set K6PACK_RUN_DIR and the port variables for a second stack)`,
    );
  }
  if (found) {
    const dead = deadOf(found);
    if (!dead.length) {
      out(
        `the stack is already running (${processesOf(found)
          .map((p) => `${p.name} pid ${p.pid}`)
          .join(', ')})`,
      );
      if (spec) await applyHeld(new Toxiproxy(targetsFor(found.ports).TOXIPROXY_URL), profile, runDir, { wait }, ctx);
      printTargets(out, targetsFor(found.ports));
      return 0;
    }
    // Restart only what died, on the recorded ports; the rest keeps running (and serving a run, if one holds the stack).
    warn(deadLine(dead));
    out(`restarting ${dead.map((d) => d.name).join(', ')}`);
    const restarted = await startStack({
      ports: found.ports,
      runDir,
      detached: true,
      log: out,
      signal: trap.signal,
      only: dead.map((d) => d.name),
    });
    const state = {
      ...found,
      pids: { ...found.pids, ...restarted.pids },
      markers: { ...found.markers, ...restarted.markers },
      logs: { ...found.logs, ...restarted.logs },
    };
    writeState(runDir, state);
    const toxiproxy = new Toxiproxy(targetsFor(found.ports).TOXIPROXY_URL);
    // A new Toxiproxy has no toxics: give it the recorded profile back (or --profile).
    if (spec || dead.some((d) => d.name === 'toxiproxy')) {
      const again = spec ? profile : found.profile ? profileOrUsage(found.profile) : profile;
      await applyHeld(toxiproxy, again, runDir, { wait }, ctx);
    }
    out(`stack up again; logs and pid files in ${show(runDir)}`);
    printTargets(out, targetsFor(found.ports));
    return 0;
  }
  const stack = await startStack({ runDir, detached: true, log: out, signal: trap.signal });
  try {
    writeState(runDir, {
      ports: stack.ports,
      pids: stack.pids,
      markers: stack.markers,
      logs: stack.logs,
      startedAt: new Date().toISOString(),
      profile: null,
    });
    await applyProfile(stack.toxiproxy, profile, runDir, out);
    trap.signal.throwIfAborted(); // Ctrl-C while starting: stop what this command started
  } catch (err) {
    await stack.stop().catch(() => {}); // the error that stopped the start says more
    clearState(runDir, readState(runDir));
    throw err;
  }
  out(`stack up; logs and pid files in ${show(runDir)}; stop it with \`npx k6pack down\``);
  printTargets(out, stack.targets);
  return 0;
}
