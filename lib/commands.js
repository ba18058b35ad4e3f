// The stack commands of bin/k6pack.js: up, down, status, profile, list.
// Each returns the process exit code; errors are thrown as one-line messages.
import { relative } from 'node:path';
import { targetsFor } from '../common/defaults.js';
import { profileOrUsage, scenarioDescription, scenarioNames } from './cli-support.js';
import { listProfiles, loadProfile } from './profiles.js';
import { clearState, processesOf, readState, stopRecorded, writeState } from './runstate.js';
import { resolvePorts, services, startStack } from './stack.js';
import { ROOT } from './tools.js';
import { Toxiproxy } from './toxiproxy.js';

const show = (path) => (path.startsWith(ROOT) ? relative(process.cwd(), path) || '.' : path);

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
  if (state) writeState(runDir, { ...state, profile: profile.name });
}

export async function up({ profile: spec }, { runDir, out, trap }) {
  const profile = profileOrUsage(spec || 'lan');
  const found = readState(runDir);
  if (found) {
    const procs = processesOf(found);
    if (procs.every((p) => p.alive)) {
      out(`the stack is already running (${procs.map((p) => `${p.name} pid ${p.pid}`).join(', ')})`);
      if (spec) await applyProfile(new Toxiproxy(targetsFor(found.ports).TOXIPROXY_URL), profile, runDir, out);
      printTargets(out, targetsFor(found.ports));
      return 0;
    }
    const dead = procs.filter((p) => !p.alive).map((p) => p.name);
    out(`the recorded stack is incomplete (${dead.join(', ')} not running): restarting it`);
    await stopRecorded(runDir, found);
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
    await stack.stop();
    clearState(runDir, readState(runDir));
    throw err;
  }
  out(`stack up; logs and pid files in ${show(runDir)}; stop it with \`npx k6pack down\``);
  printTargets(out, stack.targets);
  return 0;
}

export async function down(_opts, { runDir, out }) {
  const state = readState(runDir);
  if (!state) {
    out('the stack is not running (nothing recorded in ' + show(runDir) + ')');
    return 0;
  }
  const stopped = await stopRecorded(runDir, state);
  out(stopped.length ? `stopped ${stopped.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}` : 'nothing was running; cleared the pid files');
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
  const svcByName = Object.fromEntries(services(state.ports).map((s) => [s.name, s]));
  out(`stack in ${show(runDir)}, started ${state.startedAt}, profile ${state.profile ?? '(none)'}`);
  for (const p of procs) {
    const svc = svcByName[p.name];
    const answering = p.alive && (await svc.ready());
    const health = !p.alive ? 'NOT RUNNING' : answering ? 'running' : 'running, NOT ANSWERING';
    ok &&= answering;
    const ports = svc.ports.map((v) => `${state.ports[v]} (${v})`).join(', ');
    out(`  ${p.name.padEnd(9)} pid ${String(p.pid).padEnd(7)} ${health}; ports ${ports}`);
  }
  const toxiproxy = new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL, { timeoutMs: 2000 });
  try {
    const proxies = await toxiproxy.proxies();
    out('toxics:');
    for (const p of Object.values(proxies).sort((a, b) => a.name.localeCompare(b.name))) {
      out(`  ${p.name} ${p.listen} -> ${p.upstream}${p.enabled ? '' : ' (DISABLED)'}${p.toxics.length ? '' : ': none'}`);
      for (const t of p.toxics) out(`    ${describeToxic(t)}`);
    }
  } catch (err) {
    ok = false;
    out(`toxics: unknown (${err.message})`);
  }
  if (!ok) out('the stack is not fully running: `npx k6pack down` then `npx k6pack up`');
  return ok ? 0 : 1;
}

export async function profile(spec, _opts, { runDir, out }) {
  const prof = profileOrUsage(spec);
  const state = readState(runDir);
  const url = targetsFor(state ? state.ports : resolvePorts()).TOXIPROXY_URL;
  await applyProfile(new Toxiproxy(url), prof, runDir, out);
  return 0;
}

export async function list(_opts, { out }) {
  out('scenarios (npx k6pack run NAME):');
  const names = scenarioNames();
  if (!names.length) out('  (none yet in scenarios/)');
  for (const name of names) out(`  ${name.padEnd(24)} ${scenarioDescription(name)}`);
  const { network, faults } = listProfiles();
  const describe = (name) => {
    // A fault alone is not a profile: describe it through lan+fault.
    for (const spec of [name, `lan+${name}`]) {
      try {
        const p = loadProfile(spec);
        return (p.description || (spec === name ? p.network?.description : p.faults?.at(-1)?.description) || '').split(/(?<=\.)\s/)[0];
      } catch {
        // try the next form
      }
    }
    return '';
  };
  out('network profiles (--profile NAME):');
  for (const name of network) out(`  ${name.padEnd(24)} ${describe(name)}`);
  out('fault profiles (combine with a network profile: --profile 3g+flaky):');
  for (const name of faults) out(`  ${name.padEnd(24)} ${describe(name)}`);
  return 0;
}
