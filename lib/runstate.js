// What `k6pack up` leaves in the run dir (.run/ by default) so later commands
// find the stack: stack.json (ports, pids, profile) and one <name>.pid per process.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { show } from './cli-support.js';
import { stopReleasing } from './ports.js';
import { isOurs, lastLogLine } from './processes.js';
import { services } from './stack.js';

const STATE_FILE = 'stack.json';

export function readState(runDir) {
  const file = join(runDir, STATE_FILE);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null; // a torn or hand-edited file: treat the stack as not recorded
  }
}

export function writeState(runDir, state) {
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
  for (const [name, pid] of Object.entries(state.pids)) writeFileSync(join(runDir, `${name}.pid`), `${pid}\n`);
}

export function clearState(runDir, state) {
  for (const name of Object.keys(state?.pids || {})) rmSync(join(runDir, `${name}.pid`), { force: true });
  if (state?.api?.plan) rmSync(state.api.plan, { force: true }); // `up --api`'s plan file
  rmSync(join(runDir, STATE_FILE), { force: true });
}

// [{ name, pid, alive }] for every recorded process; alive only if the pid still runs our command.
export function processesOf(state) {
  return Object.entries(state.pids).map(([name, pid]) => ({ name, pid, alive: isOurs(pid, state.markers[name]) }));
}

// What each recorded process is, for messages.
export const LABELS = {
  graphql: 'GraphQL server',
  grpc: 'gRPC server',
  connect: 'Connect server',
  toxiproxy: 'toxiproxy-server',
};

// The recorded processes that are gone, each with what its log says about it:
// [{ name, label, pid, log, said }].
export function deadOf(state) {
  if (!state?.pids) return [];
  return processesOf(state)
    .filter((p) => !p.alive)
    .map((p) => {
      const log = state.logs?.[p.name];
      return { name: p.name, label: LABELS[p.name] || p.name, pid: p.pid, log, said: lastLogLine(log, 3) };
    });
}

// One line naming what died and what its log says.
export function deadLine(dead) {
  const parts = dead.map(
    (d) =>
      `the ${d.label} (pid ${d.pid}) is not running; ${d.said ? `its log${d.log ? ` (${show(d.log)})` : ''} ends: ${d.said}` : 'its log shows no error (was it killed from outside?)'}`,
  );
  return parts.join('; ');
}

// Stops every recorded process that is still ours and waits until the ports they
// listened on are free (lib/ports.js stopReleasing, bounded); returns { stopped,
// held }: the processes it stopped, and the ports still held after the wait.
export async function stopRecorded(runDir, state) {
  const running = processesOf(state).filter((p) => p.alive);
  const declared = Object.fromEntries(services(state.ports).map((s) => [s.name, s.ports]));
  // A Toxiproxy started alone for a team's API (`up --api`) has no reference proxies.
  const portsOf = (name) =>
    (declared[name] || [])
      .filter((v) => state.reference !== false || !v.startsWith('PROXY_'))
      .map((v) => ({ name: v, port: state.ports[v] }));
  const held = await stopReleasing(
    running.map((p) => ({ pid: p.pid, label: LABELS[p.name] || p.name, ports: portsOf(p.name) })),
  );
  clearState(runDir, state);
  return { stopped: running, held };
}
