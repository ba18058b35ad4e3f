// A server that hands its listening socket to a child, for the tests of stopping
// (lib/ports.js stopReleasing, `k6pack down`): the child keeps the port open after
// the parent is gone. startPortHolder() starts one the way `up` starts the stack's
// processes (detached: a process group of its own); as a script:
//
//   node test/helpers/port-holder.js PORT group     # the child in the parent's process group
//   node test/helpers/port-holder.js PORT outside   # the child in a session of its own
//
// it prints 'child <pid>' once the child holds the port and exits 0 on SIGTERM (the
// child keeps the default: SIGTERM ends it).
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isAlive, spawnLogged } from '../../lib/processes.js';

const SCRIPT = fileURLToPath(import.meta.url);

// Resolves { pid (the parent), child, cleanup() (SIGKILL to whichever is left) } once the child holds the port.
export async function startPortHolder(port, where) {
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-holder-'));
  const log = join(dir, 'holder.log');
  const parent = spawnLogged(process.execPath, [SCRIPT, String(port), where], { logFile: log, detached: true });
  let child = null;
  const cleanup = () => {
    for (const pid of [parent.pid, child]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const deadline = Date.now() + 10000; !child; await sleep(50)) {
      child = Number(/child (\d+)/.exec(readFileSync(log, 'utf8'))?.[1]) || null;
      if (!child && Date.now() > deadline)
        throw new Error(`port-holder.js did not start: ${readFileSync(log, 'utf8')}`);
    }
  } catch (err) {
    cleanup();
    throw err;
  }
  return { pid: parent.pid, child, cleanup };
}

if (process.argv[1] === SCRIPT && process.argv[2] === '--child') {
  process.on('message', (message, server) => {
    if (message === 'server') server.on('connection', (socket) => socket.destroy());
  });
  setInterval(() => {}, 60000);
} else if (process.argv[1] === SCRIPT) {
  const [port, where] = process.argv.slice(2);
  const server = createServer().listen(Number(port), '127.0.0.1', () => {
    const child = fork(SCRIPT, ['--child'], {
      detached: where === 'outside',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    child.send('server', server, () => {
      child.disconnect();
      child.unref();
      console.log(`child ${child.pid}`);
    });
  });
  process.on('SIGTERM', () => process.exit(0));
}
