// The stack commands of bin/k6pack.js: up, down, status, profile, list.
// Each returns the process exit code; errors are thrown as one-line messages.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseApiPlan } from '../common/api.js';
import { ALL_PROXY_NAMES, targetsFor } from '../common/defaults.js';
import { describeGate, describeOpenStep } from '../common/gates.js';
import { describeMachine } from '../common/machine.js';
import { buildScenario } from '../common/scenario.js';
import { describeRecording } from '../common/recording.js';
import { parsePolicy } from '../common/thresholds.js';
import { checkWorkload, profileOrUsage, scenarioDescription, scenarioNames, show, UsageError } from './cli-support.js';
import { ROOT } from './tools.js';
import { listProfiles, loadProfile } from './profiles.js';
import { HoldError, holdStatus, takeHold } from './hold.js';
import { clearState, deadLine, deadOf, processesOf, readState, stopRecorded, writeState } from './runstate.js';
import { stillHeldMessage } from './ports.js';
import { resolvePorts, services, StackError, startStack } from './stack.js';
import { Toxiproxy } from './toxiproxy.js';

// 'latency_up: latency upstream latency=150 jitter=0'
export function describeToxic(t) {
  const attrs = Object.entries(t.attributes || {}).map(([k, v]) => `${k}=${v}`);
  const toxicity = t.toxicity !== undefined && t.toxicity < 1 ? [`toxicity=${t.toxicity}`] : [];
  return `${t.name}: ${t.type} ${t.stream} ${[...attrs, ...toxicity].join(' ')}`.trim();
}

function printProfile(out, profile) {
  if (!profile.toxics.length) {
    out(`profile ${profile.name}: no toxics (every proxy passes traffic through unchanged)`);
    return;
  }
  out(`profile ${profile.name}: on every proxy`);
  for (const t of profile.toxics) out(`  ${describeToxic(t)}`);
}

function printTargets(out, targets) {
  out('endpoints (k6 reads them as -e NAME=value):');
  for (const [k, v] of Object.entries(targets)) out(`  ${k}=${v}`);
}

async function applyProfile(toxiproxy, profile, runDir, out) {
  await toxiproxy.applyToxics(profile.toxics);
  printProfile(out, profile);
  const state = readState(runDir);
  if (state) writeState(runDir, { ...state, profile: profile.spec });
}

// Applies a profile under the stack's hold (refused, or waited for, while a run holds it).
async function applyHeld(toxiproxy, profile, runDir, { wait }, ctx) {
  const hold = await takeHold(toxiproxy, { kind: 'k6pack profile', profile: profile.name, wait }, ctx);
  try {
    await applyProfile(toxiproxy, profile, runDir, ctx.out);
  } finally {
    await hold.release();
  }
}

// A recorded stack with a dead member: one line naming it and what its log says.
const deadError = (dead, what) => new StackError(`${deadLine(dead)}: ${what}`);

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

export async function list(_opts, { out }) {
  out('scenarios (npx k6pack run NAME):');
  const names = scenarioNames();
  if (!names.length) out('  (none yet in scenarios/)');
  for (const name of names) out(`  ${name.padEnd(24)} ${scenarioDescription(name)}`);
  const { network, modifiers, faults } = listProfiles();
  const describe = (name) => {
    // A modifier or a fault alone is not a profile: describe it through lan+name.
    for (const spec of [name, `lan+${name}`]) {
      try {
        const p = loadProfile(spec);
        const text = spec === name ? p.network?.description : [...p.modifiers, ...p.faults].at(-1)?.description;
        return (p.description || text || '').split(/(?<=\.)\s/)[0];
      } catch {
        // try the next form
      }
    }
    return '';
  };
  out('network profiles (--profile NAME):');
  for (const name of network) out(`  ${name.padEnd(24)} ${describe(name)}`);
  out("modifiers (change how the network's TCP behaves: --profile 3g+loss1, 3g+ideal):");
  for (const name of modifiers) out(`  ${name.padEnd(24)} ${describe(name)}`);
  out('fault profiles (combine with a network profile: --profile 3g+flaky):');
  for (const name of faults) out(`  ${name.padEnd(24)} ${describe(name)}`);
  return 0;
}

// `k6pack thresholds SCENARIO --profile P --load L`: the gates a run would have,
// each with the model term behind it (the same derivation k6 makes: common/scenario.js).
export async function thresholds(scenario, { profile: spec, load, workload, file }, { out }) {
  const names = scenarioNames();
  if (!names.includes(scenario))
    throw new UsageError(`unknown scenario '${scenario}': choose one of ${names.join(', ')}`);
  const { default: declare } = await import(pathToFileURL(join(ROOT, 'scenarios', 'plans', `${scenario}.js`)).href);
  checkWorkload(workload);
  const env = { ...process.env, ...(load ? { LOAD: load } : {}), ...(workload ? { WORKLOAD: workload } : {}) };
  // api: the plan file `k6pack up --api` wrote (API=path), else the nominal API.
  const api =
    scenario === 'api' && env.API
      ? withUsage(() => parseApiPlan(readFileSync(resolve(env.API), 'utf8'), env.API, env))
      : null;
  if (scenario === 'api' && !api)
    out(
      '(no API=<plan file> given: the gates of a nominal API, one operation of 200 B up, 500 B down and 5 ms of server time)',
    );
  const decl = withUsage(() => declare(env, api));
  const profile = profileOrUsage(spec || decl.defaultProfile);
  const policyFile = file || process.env.THRESHOLDS || join(ROOT, 'thresholds.json');
  const policy = withUsage(() => parsePolicy(readFileSync(policyFile, 'utf8'), show(resolve(policyFile))));
  const built = withUsage(() => buildScenario(decl, profile, env, policy));
  const net = profile.network;
  out(
    `${scenario} under ${profile.name} (R ${net.rttMs} ms, down ${net.downKbps ?? '∞'} / up ${net.upKbps ?? '∞'} kbit/s${profile.modifiers.length ? `, ${profile.modifiers.map((m) => m.name).join('+')}` : ''}${profile.faults.length ? `, faults ${profile.faults.map((f) => f.name).join('+')}` : ''}), load ${built.plan.level}: ${built.gates.length} latency gates (${show(resolve(policyFile))})`,
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

// A setting a declaration or the policy refuses (a string thrown, as k6 shows it) -> exit 2.
function withUsage(fn) {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(typeof err === 'string' ? err : err.message);
  }
}
