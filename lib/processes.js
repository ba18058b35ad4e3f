// Background processes by pid: spawn with output to a log file, tell whether a
// pid is still ours and alive, stop it (SIGTERM, then SIGKILL after a grace period).
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { deathLine } from '../common/log-tail.js';

export const STOP_GRACE_MS = 5000;

// [file, args] that start `file args` so the kernel kills it (SIGKILL) when this
// process dies, however it dies: util-linux's setpriv --pdeathsig, where there is
// one (Linux). A k6 that outlived a killed CLI would block for ever on the samples
// FIFO it opens read-write (lib/report/sample-stream.js) once nobody reads it.
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
export function diesWithParent(file, args) {
  return SETPRIV && process.platform === 'linux'
    ? [SETPRIV, ['--pdeathsig', 'KILL', '--', file, ...args]]
    : [file, args];
}

// Starts `file args` with stdout+stderr appended to `logFile`. A detached process
// gets its own process group (a Ctrl-C in the terminal does not reach it) and
// outlives this one; otherwise execa kills it when this process exits.
export function spawnLogged(file, args, { env, logFile, detached = false, cwd }) {
  const fd = openSync(logFile, 'w');
  try {
    const child = execa(file, args, {
      cwd,
      env,
      extendEnv: true,
      detached,
      cleanup: !detached,
      stdin: 'ignore',
      stdout: fd,
      stderr: fd,
      reject: false,
      forceKillAfterDelay: STOP_GRACE_MS,
    });
    if (detached) child.unref();
    return child;
  } finally {
    closeSync(fd); // the child holds its own copy
  }
}

// What a log says went wrong, for one-line errors (common/log-tail.js: a Go panic
// with its frame, a Node uncaught error, else the last lines); '' if none. Only the
// log's last 64 KB are read: a panic is at its end, and a log can be long.
export function lastLogLine(file, max = 1) {
  if (!file || !existsSync(file)) return '';
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 65536);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    return deathLine(buf.toString('utf8'), max);
  } finally {
    closeSync(fd);
  }
}

// Linux keeps exited children of a live parent as zombies, which kill(pid, 0)
// still reaches; /proc tells them apart.
function procState(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  return procState(pid) !== 'Z';
}

// The command line of a pid, or null where /proc is not available.
export function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return null;
  }
}

// True if pid is alive and (where /proc tells) still runs a command containing `marker`,
// so a pid reused by an unrelated process is never signalled.
export function isOurs(pid, marker) {
  if (!isAlive(pid)) return false;
  const cmd = commandLine(pid);
  return cmd === null || cmd.includes(marker);
}

async function waitGone(pid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(50);
  }
  return !isAlive(pid);
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

// SIGTERM, then SIGKILL after graceMs. Resolves once the pid is gone.
export async function stopPid(pid, { graceMs = STOP_GRACE_MS } = {}) {
  if (!isAlive(pid)) return;
  signal(pid, 'SIGTERM');
  if (await waitGone(pid, graceMs)) return;
  signal(pid, 'SIGKILL');
  await waitGone(pid, 2000);
}
