// Running k6 against a stack, for `run`, `gate` and `run api` (lib/commands/):
// the stack is the one recorded, one already answering, or one started for the
// run and stopped afterwards; one k6 run per profile, the stack held meanwhile.
// The stack is left as found: toxics present before the run are put back.
// Each k6 run writes into its own run folder (lib/report/run-folder.js).
import { join } from 'node:path';
import { execa } from 'execa';
import { targetsFor } from '../common/defaults.js';
import { describeMachine } from '../common/machine.js';
import { withEpoch } from '../common/profiles.js';
import { METRICS_MODES } from '../common/recording.js';
import { choiceHelp } from '../common/settings.js';
import { measureMachine } from './calibrate.js';
import { checkWorkload, UsageError } from './cli-support.js';
import { takeHold } from './hold.js';
import { k6RunArgs, THRESHOLDS_FAILED } from './k6.js';
import { diesWithParent } from './processes.js';
import { prometheusRun } from './prometheus.js';
import {
  describePlan,
  envFlagsOf,
  inspectPlan,
  prepareRunResults,
  resultsSaid,
  showPath,
} from './report/run-folder.js';
import { deadLine, deadOf, readState } from './runstate.js';
import { describeToxic } from './stack-profile.js';
import { resolvePorts, StackError, startStack } from './stack.js';
import { Toxiproxy } from './toxiproxy.js';

export { checkWorkload };

// After a forwarded Ctrl-C, k6 stops its VUs (gracefulStop, 30 s by default) and
// runs teardown (teardownTimeout, 60 s): past both it is killed.
const K6_STOP_BOUND_MS = 95000;

// The stack to run against: the one `up` recorded, another already answering
// on the configured ports (e.g. docker compose), or a new one owned by this run.
// start: startStack's options for a new one (the api scenario's: Toxiproxy only).
async function attachStack({ runDir, out, trap }, start = {}) {
  const state = readState(runDir);
  if (state) {
    const dead = deadOf(state);
    if (dead.length) throw new StackError(`${deadLine(dead)}: \`npx k6pack up\` restarts what died`);
    return {
      ports: state.ports,
      toxiproxy: new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL),
      stop: null,
      processes: state,
    };
  }
  const ports = resolvePorts();
  const toxiproxy = new Toxiproxy(targetsFor(ports).TOXIPROXY_URL, { timeoutMs: 2000 });
  if (await toxiproxy.isReachable()) return { ports, toxiproxy: new Toxiproxy(toxiproxy.url), stop: null };
  out(
    `the stack is not running: starting ${start.only ? start.only.join(' and ') : 'it'} for this run (stopped afterwards)`,
  );
  const stack = await startStack({
    runDir: join(runDir, 'run'),
    detached: true,
    log: out,
    signal: trap.signal,
    ...start,
  });
  return {
    ports: stack.ports,
    toxiproxy: stack.toxiproxy,
    stop: stack.stop,
    pids: Object.values(stack.pids),
    processes: stack,
  };
}

// The stack's processes (the run's own, or the ones `up` recorded) that are
// gone, with what their logs say. A stack found only by its ports (docker
// compose) has none to watch.
const deadProcesses = (stack) => deadOf(stack.processes);

// k6 in its own process group, so a terminal Ctrl-C reaches it once (forwarded
// from here) and k6 stops gracefully and runs teardown instead of aborting.
async function runK6Forwarding(k6, args, trap, env = {}, onStart = () => {}) {
  // (setpriv execs k6 in place: the pid is k6's.)
  const [file, argv] = diesWithParent(k6, args);
  const child = execa(file, argv, {
    env,
    stdin: 'ignore',
    stdout: 'inherit',
    stderr: 'inherit',
    detached: true,
    cleanup: false,
    reject: false,
  });
  if (child.pid) await onStart(child.pid);
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
// fn(stack, hold), and held for the whole time (lib/hold.js: another run, gate or
// profile change on it is refused, or waits with --wait). A stack found running
// gets its toxics back afterwards (only what differs is changed), and a crash of
// this process does not leave a stack it started behind.
// hold: { kind, what, profile, wait }; start: how to start a stack (attachStack).
export async function withRunStack(fn, { runDir, out, warn, trap }, hold, start = {}) {
  const stack = await attachStack({ runDir, out, trap }, start);
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
  let held = null;
  let snapshot = null;
  try {
    held = await takeHold(stack.toxiproxy, hold, { out, warn, trap });
    snapshot = stack.stop ? null : await stack.toxiproxy.snapshot();
    return await fn(stack, held);
  } finally {
    try {
      if (stack.stop) await stack.stop();
      else if (!deadProcesses(stack).some((d) => d.name === 'toxiproxy')) {
        if (snapshot) await stack.toxiproxy.restore(snapshot);
        await held?.release();
      }
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
// opts: { k6, root (the results root), load, workload, metrics, k6Args, samples, dashboard, hold,
// env (more -e variables), processEnv (variables for k6's environment only, off its
// command line: the api scenario's literal credentials), endpointsGone() -> lines naming endpoints outside the stack
// that stopped answering (the api scenario's: the team's own servers) }.
export async function runProfiles(
  stack,
  scenario,
  script,
  profiles,
  {
    k6,
    root,
    load,
    workload,
    metrics,
    k6Args = [],
    samples = true,
    dashboard = false,
    hold,
    env: more = {},
    processEnv = {},
    endpointsGone,
    prometheus = null,
  },
  { out, warn, trap },
) {
  let code = 0;
  const runs = [];
  const targets = targetsFor(stack.ports);
  for (const prof of profiles) {
    if (trap.received) break;
    const started = Date.now();
    const name = prof ? `profile ${prof.name}` : "the scenario's default profile";
    // The run's k6 proceeds under this command's hold (scenarios/lib/hold.js).
    // The CPU the budgets assume, measured now (lib/calibrate.js), unless given.
    const machine = await machineFor(k6Args, more, out);
    const env = {
      ...targets,
      PROFILE: prof?.spec,
      LOAD: load,
      WORKLOAD: workload,
      METRICS: metrics,
      K6PACK_HOLD: hold?.token,
      ...machine,
      ...more,
    };
    // k6 inspect first: a script or setting k6 refuses (a broken thresholds file, a
    // bad -e value) stops here, before the network is touched.
    const plan = await inspectPlan(k6, script, [...k6RunArgs(script, { env }).slice(1, -1), ...envFlagsOf(k6Args)]);
    let toxics = '';
    if (prof && plan) {
      // A timed profile (events, a trace) starts its clock now; k6's setup() restarts it
      // at its own apply (scenarios/lib/network.js), and that epoch is the run's.
      const { epochMs } = await stack.toxiproxy.applyToxics(prof.toxics);
      toxics = `: ${
        withEpoch(prof.toxics, epochMs).map(describeToxic).join('; ') || 'no toxics'
      }${epochMs ? " (k6's setup() sets the epoch again)" : ''}`;
    }
    out(
      `== ${scenario}, ${name}${load ? `, load ${load}` : ''}${workload ? `, ${workload} workload` : ''}${metrics ? `, metrics ${metrics}` : ''}${toxics}`,
    );
    const res = await prepareRunResults(script, prof?.name || plan?.profile, k6Args, {
      root,
      samples,
      dashboard,
      plan,
      warn,
    });
    if (res.dir) out(`== results: ${showPath(res.dir)}/${plan?.steps ? ` (${describePlan(plan)})` : ''}`);
    if (res.dashboardUrl)
      out(`== dashboard: ${res.dashboardUrl} while k6 runs; saved as ${showPath(join(res.dir, 'k6-dashboard.html'))}`);
    const prom = prometheusRun(prometheus, scenario, prof?.name || plan?.profile);
    if (prometheus) out(`== metrics: also to Prometheus at ${prometheus} (native histograms)`);
    let c;
    try {
      c = await runK6Forwarding(
        k6,
        k6RunArgs(script, { env: { ...env, ...res.env }, args: [...res.args, ...prom.args, ...k6Args] }),
        trap,
        { ...processEnv, ...res.processEnv, ...prom.processEnv },
        (pid) => hold?.child(pid),
      );
    } finally {
      // The last of k6's samples, then histograms.json.gz (also when k6 could not start).
      await res.finish();
    }
    runs.push({
      scenario,
      profile: prof?.name || plan?.profile || null,
      dir: res.dir,
      exitCode: c,
      seconds: (Date.now() - started) / 1000,
    });
    // A server or toxiproxy that died (a crash, the OOM killer, a kill) made
    // this run's numbers meaningless: say which, with what its log says, and stop.
    const dead = deadProcesses(stack);
    if (dead.length) warn(`${deadLine(dead)} (it died during the run)`);
    const gone = dead.length || !endpointsGone || trap.received ? [] : await endpointsGone();
    for (const line of gone) warn(`${line} (it stopped during the run: this run's numbers are not valid)`);
    out(`== ${scenario}, ${name}: k6 exited ${c}`);
    if (dead.length || gone.length) {
      if (dead.length && !stack.stop)
        warn('the stack `up` started is not fully running: `npx k6pack up` restarts what died');
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

// CPU_CORES and CPU_SCALE for a k6 run: the user's (-e or the run's env) when given,
// else measured here and said in one line.
async function machineFor(k6Args, more, out) {
  const given = Object.fromEntries(
    envFlagsOf(k6Args)
      .filter((_, i) => i % 2 === 1) // ['-e', 'K=V', ...] -> the K=V
      .map((f) => f.split('='))
      .map(([k, ...v]) => [k, v.join('=')]),
  );
  if ('CPU_SCALE' in given || 'CPU_SCALE' in more) return {};
  const m = await measureMachine();
  out(
    `== machine: ${describeMachine(m)} (calibration rounds ${m.roundMs.join(', ')} ms, reference ${m.referenceMs} ms; -e CPU_SCALE=1 to assume the reference)`,
  );
  return { CPU_CORES: m.cores, CPU_SCALE: m.cpuScale };
}

// --metrics, checked before anything starts.
export function checkMetrics(metrics) {
  if (metrics !== undefined && !METRICS_MODES.includes(metrics))
    throw new UsageError(`--metrics ${metrics} is not ${choiceHelp('METRICS')}`);
}
