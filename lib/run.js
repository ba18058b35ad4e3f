// `k6pack run`: one k6 run of a scenario per profile against the embedded
// stack, which it starts for the run if it is not up and stops afterwards.
// The stack is left as found: toxics present before the run are put back.
// Each k6 run writes into its own run folder (lib/report/run-folder.js).
import { join } from 'node:path';
import { execa } from 'execa';
import { targetsFor } from '../common/defaults.js';
import { profileList, resolveScenario } from './cli-support.js';
import { describeToxic } from './commands.js';
import { k6RunArgs } from './k6.js';
import { isOurs } from './processes.js';
import { processesOf, readState } from './runstate.js';
import { resolvePorts, services, StackError, startStack } from './stack.js';
import { ensureTools } from './tools.js';
import { Toxiproxy } from './toxiproxy.js';
import { describePlan, envFlagsOf, inspectPlan, prepareRunResults, resultsRoot, resultsSaid, showPath } from './report/run-folder.js';

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
    return { ports: state.ports, toxiproxy: new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL), stop: null, processes: state };
  }
  const ports = resolvePorts();
  const toxiproxy = new Toxiproxy(targetsFor(ports).TOXIPROXY_URL, { timeoutMs: 2000 });
  if (await toxiproxy.isReachable()) return { ports, toxiproxy: new Toxiproxy(toxiproxy.url), stop: null };
  out('the stack is not running: starting it for this run (stopped afterwards)');
  const stack = await startStack({ runDir: join(runDir, 'run'), detached: true, log: out, signal: trap.signal });
  return { ports: stack.ports, toxiproxy: stack.toxiproxy, stop: stack.stop, pids: Object.values(stack.pids), processes: stack };
}

// The stack's processes (the run's own, or the ones `up` recorded) that are
// gone: [{ name, label, pid, log }]. A stack found only by its ports (docker
// compose) has none to watch.
function deadProcesses(stack) {
  const { pids = {}, markers = {}, logs = {} } = stack.processes || {};
  const labels = Object.fromEntries(services(stack.ports).map((s) => [s.name, s.label]));
  return Object.entries(pids)
    .filter(([name, pid]) => !isOurs(pid, markers[name]))
    .map(([name, pid]) => ({ name, label: labels[name] || name, pid, log: logs[name] }));
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

// k6 in its own process group, so a terminal Ctrl-C reaches it once (forwarded
// from here) and k6 stops gracefully and runs teardown instead of aborting.
async function runK6Forwarding(k6, args, trap, env = {}) {
  const child = execa(k6, args, { env, stdin: 'ignore', stdout: 'inherit', stderr: 'inherit', detached: true, cleanup: false, reject: false });
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

// The stack for a command's k6 runs: attached (or started, then stopped) around
// fn(stack); a stack found running gets its toxics back afterwards, and a
// crash of this process does not leave a stack it started behind.
export async function withRunStack(fn, { runDir, out, warn, trap }) {
  const stack = await attachStack({ runDir, out, trap });
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
  let snapshot = [];
  try {
    snapshot = stack.stop ? [] : await snapshotToxics(stack.toxiproxy);
    return await fn(stack);
  } finally {
    try {
      if (stack.stop) await stack.stop();
      else if (!deadProcesses(stack).some((d) => d.name === 'toxiproxy')) await restoreToxics(stack.toxiproxy, snapshot);
    } catch (err) {
      warn(`cleaning up after the run: ${err.message}`);
    }
    process.off('exit', killStack);
  }
}

// A scenario's k6 runs on an attached stack, one per profile (null: the
// scenario's own). Returns { code, runs: [{ scenario, profile, dir, exitCode,
// seconds }] }: code is the first non-zero k6 exit, 1 if a server or toxiproxy
// died (later profiles do not run).
// opts: { k6, root (the results root), load, k6Args, samples, dashboard }.
export async function runProfiles(stack, scenario, script, profiles, { k6, root, load, k6Args = [], samples = true, dashboard = false }, { out, warn, trap }) {
  let code = 0;
  const runs = [];
  const targets = targetsFor(stack.ports);
  for (const prof of profiles) {
    if (trap.received) break;
    const started = Date.now();
    const name = prof ? `profile ${prof.name}` : "the scenario's default profile";
    let toxics = '';
    if (prof) {
      await stack.toxiproxy.applyToxics(prof.toxics);
      toxics = `: ${prof.toxics.map(describeToxic).join('; ') || 'no toxics'}`;
    }
    out(`== ${scenario}, ${name}${load ? `, load ${load}` : ''}${toxics}`);
    const env = { ...targets, PROFILE: prof?.name, LOAD: load };
    const plan = await inspectPlan(k6, script, [...k6RunArgs(script, { env }).slice(1, -1), ...envFlagsOf(k6Args)]);
    const res = await prepareRunResults(script, prof?.name || plan?.profile, k6Args, { root, samples, dashboard, plan });
    if (res.dir) out(`== results: ${showPath(res.dir)}/${plan?.steps ? ` (${describePlan(plan)})` : ''}`);
    if (res.dashboardUrl) out(`== dashboard: ${res.dashboardUrl} while k6 runs; saved as ${showPath(join(res.dir, 'k6-dashboard.html'))}`);
    const c = await runK6Forwarding(k6, k6RunArgs(script, { env: { ...env, ...res.env }, args: [...res.args, ...k6Args] }), trap, res.processEnv);
    runs.push({ scenario, profile: prof?.name || plan?.profile || null, dir: res.dir, exitCode: c, seconds: (Date.now() - started) / 1000 });
    // A server or toxiproxy that died (a crash, the OOM killer, a kill) made
    // this run's numbers meaningless: say which, and stop.
    const dead = deadProcesses(stack);
    for (const d of dead) warn(`the ${d.label} (pid ${d.pid}) died during the run${d.log ? `; its log: ${showPath(d.log)}` : ''}`);
    // Always: k6 skips teardown() on a second Ctrl-C or a kill, and a scenario's
    // own default profile must not outlive its run.
    if (!dead.some((d) => d.name === 'toxiproxy')) await stack.toxiproxy.reset();
    out(`== ${scenario}, ${name}: k6 exited ${c}`);
    if (dead.length) {
      if (!stack.stop) warn('the stack `up` started is not fully running: `npx k6pack down`, then `npx k6pack up`');
      code = 1;
      break;
    }
    if (res.dir) out(resultsSaid(res.dir));
    if (c !== 0 && code === 0) code = c;
    // A failed threshold is a result, so the other profiles still run; any other failure stops.
    if (c !== 0 && c !== THRESHOLDS_FAILED) break;
  }
  return { code, runs };
}

// Without --profile, k6 runs once with no PROFILE: a scenario applies its own
// default profile in setup() (scenarios/lib/network.js), a plain script runs
// through whatever toxics the stack has.
// opts.results: the folder that holds the run folders; opts.samples: false
// (--no-samples) keeps no raw samples; opts.dashboard: k6's web dashboard,
// exported into the run folder.
export async function runScenario(scenario, { profile, load, k6Args = [], results, samples = true, dashboard = false }, ctx) {
  const script = resolveScenario(scenario);
  const profiles = profile === undefined ? [null] : profileList(profile);
  const { k6 } = ensureTools({ log: ctx.out });
  const root = resultsRoot(results);
  const { code } = await withRunStack((stack) => runProfiles(stack, scenario, script, profiles, { k6, root, load, k6Args, samples, dashboard }, ctx), ctx);
  return ctx.trap.received ? ctx.trap.exitCode() : code;
}
