// `k6pack run`: one k6 run of a scenario per profile against the embedded
// stack, which it starts for the run if it is not up and stops afterwards.
// The stack is left as found: toxics present before the run are put back.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { targetsFor } from '../scenarios/lib/defaults.js';
import { profileList, resolveScenario } from './cli-support.js';
import { describeToxic } from './commands.js';
import { k6RunArgs } from './k6.js';
import { processesOf, readState } from './runstate.js';
import { resolvePorts, StackError, startStack } from './stack.js';
import { ensureTools, ROOT } from './tools.js';
import { Toxiproxy } from './toxiproxy.js';

const THRESHOLDS_FAILED = 99;
// After a forwarded Ctrl-C, k6 stops its VUs (gracefulStop, 30 s by default) and
// runs teardown (teardownTimeout, 60 s): past both it is killed.
const K6_STOP_BOUND_MS = 95000;

// The stack to run against: the one `up` recorded, another already answering
// on the configured ports (e.g. docker compose), or a new one owned by this run.
async function attachStack({ runDir, out, trap }) {
  const state = readState(runDir);
  if (state) {
    const dead = processesOf(state).filter((p) => !p.alive);
    if (dead.length) {
      throw new StackError(
        `the stack \`up\` started is not fully running (${dead.map((p) => p.name).join(', ')} exited): \`npx k6pack down\`, then \`npx k6pack up\``,
      );
    }
    return { ports: state.ports, toxiproxy: new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL), stop: null };
  }
  const ports = resolvePorts();
  const toxiproxy = new Toxiproxy(targetsFor(ports).TOXIPROXY_URL, { timeoutMs: 2000 });
  if (await toxiproxy.isReachable()) return { ports, toxiproxy: new Toxiproxy(toxiproxy.url), stop: null };
  out('the stack is not running: starting it for this run (stopped afterwards)');
  const stack = await startStack({ runDir: join(runDir, 'run'), detached: true, log: out, signal: trap.signal });
  return { ports: stack.ports, toxiproxy: stack.toxiproxy, stop: stack.stop, pids: Object.values(stack.pids) };
}

// The toxics each proxy has now, to put back after the run.
async function snapshotToxics(toxiproxy) {
  const proxies = await toxiproxy.proxies();
  return Object.values(proxies).flatMap((p) => p.toxics.map((t) => [p.name, t]));
}

async function restoreToxics(toxiproxy, snapshot) {
  await toxiproxy.reset();
  for (const [proxy, toxic] of snapshot) await toxiproxy.addToxic(proxy, toxic);
}

// The pack's scenarios write their summary files into RESULTS_DIR (default
// results/, relative to where k6 runs; 'none' writes nothing), and k6 cannot
// create directories.
function ensureResultsDir(script, k6Args) {
  if (!script.startsWith(join(ROOT, 'scenarios'))) return;
  const given = k6Args.map((a) => /^(?:--env=|-e)?RESULTS_DIR=(.*)$/.exec(a)?.[1]).findLast((v) => v !== undefined);
  const dir = given ?? (process.env.RESULTS_DIR || 'results');
  if (dir !== 'none') mkdirSync(resolve(dir), { recursive: true });
}

// k6 in its own process group, so a terminal Ctrl-C reaches it once (forwarded
// from here) and k6 stops gracefully and runs teardown instead of aborting.
async function runK6Forwarding(k6, args, trap) {
  const child = execa(k6, args, { stdin: 'ignore', stdout: 'inherit', stderr: 'inherit', detached: true, cleanup: false, reject: false });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let bound;
  const forward = (sig) => {
    child.kill(sig);
    bound ??= setTimeout(() => child.kill('SIGKILL'), K6_STOP_BOUND_MS);
  };
  const untrap = trap.onSignal(forward);
  if (trap.received) forward(trap.received);
  try {
    const r = await child;
    if (r.failed && r.exitCode === undefined && !r.signal) throw new Error(`could not start k6: ${r.shortMessage}`);
    return r.exitCode ?? 1;
  } finally {
    untrap();
    clearTimeout(bound);
    process.off('exit', killOnExit);
  }
}

// Without --profile, k6 runs once with no PROFILE: a scenario applies its own
// default profile in setup() (scenarios/lib/network.js), a plain script runs
// through whatever toxics the stack has.
export async function runScenario(scenario, { profile, load, k6Args = [] }, { runDir, out, warn, trap }) {
  const script = resolveScenario(scenario);
  const profiles = profile === undefined ? [null] : profileList(profile);
  const { k6 } = ensureTools({ log: out });
  ensureResultsDir(script, k6Args);
  const stack = await attachStack({ runDir, out, trap });
  // A crash must not leave the run's own stack behind.
  const killStack = () => {
    for (const pid of stack.pids || []) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', killStack);
  let code = 0;
  let snapshot = [];
  try {
    snapshot = stack.stop ? [] : await snapshotToxics(stack.toxiproxy);
    const targets = targetsFor(stack.ports);
    for (const prof of profiles) {
      if (trap.received) break;
      const name = prof ? `profile ${prof.name}` : "the scenario's default profile";
      let toxics = '';
      if (prof) {
        await stack.toxiproxy.applyToxics(prof.toxics);
        toxics = `: ${prof.toxics.map(describeToxic).join('; ') || 'no toxics'}`;
      }
      out(`== ${scenario}, ${name}${load ? `, load ${load}` : ''}${toxics}`);
      const env = { ...targets, PROFILE: prof?.name, LOAD: load };
      const c = await runK6Forwarding(k6, k6RunArgs(script, { env, args: k6Args }), trap);
      // Always: k6 skips teardown() on a second Ctrl-C or a kill, and a scenario's
      // own default profile must not outlive its run.
      await stack.toxiproxy.reset();
      out(`== ${scenario}, ${name}: k6 exited ${c}`);
      if (c !== 0 && code === 0) code = c;
      // A failed threshold is a result, so the other profiles still run; any other failure stops.
      if (c !== 0 && c !== THRESHOLDS_FAILED) break;
    }
  } finally {
    try {
      if (stack.stop) await stack.stop();
      else await restoreToxics(stack.toxiproxy, snapshot);
    } catch (err) {
      warn(`cleaning up after the run: ${err.message}`);
    }
    process.off('exit', killStack);
  }
  return trap.received ? trap.exitCode() : code;
}
