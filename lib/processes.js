// Background processes by pid: spawn with output to a log file, tell whether a
// pid is still ours and alive, stop it (SIGTERM, then SIGKILL after a grace period;
// to its whole process group when it leads one).
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
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
// outlives this one; otherwise it dies with this one: execa kills it when this process
// exits, and the kernel when it is killed (diesWithParent: a test runner that SIGKILLed a
// test at its timeout left that test's Toxiproxy running, 2026-11-29).
export function spawnLogged(file, args, { env, logFile, detached = false, cwd }) {
  const fd = openSync(logFile, 'w');
  try {
    const [cmd, argv] = detached ? [file, args] : diesWithParent(file, args);
    const child = execa(cmd, argv, {
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

// The fields of /proc/<pid>/stat after the command name ([state, ppid, pgrp, ...]),
// or null where there is none (gone, or no /proc).
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

// A zombie thread-group leader whose other threads are still exiting: until the
// last one is gone the process's files, its listening sockets too, stay open.
function stillExiting(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}

// Linux keeps exited children of a live parent as zombies, which kill(pid, 0)
// still reaches; /proc tells them apart.
export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  return procStat(pid)?.[0] !== 'Z' || stillExiting(pid);
}

// True if pid leads its own process group (a detached child: execa's detached
// spawns it with setsid). Where /proc tells nothing, false.
function leadsGroup(pid) {
  return Number(procStat(pid)?.[2]) === pid;
}

// The live processes of process group `pgid` (/proc; elsewhere [pgid] while kill(-pgid, 0) reaches one).
export function groupMembers(pgid) {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  return (processIds() ?? []).filter((pid) => {
    const stat = procStat(pid);
    return stat && Number(stat[2]) === pgid && (stat[0] !== 'Z' || stillExiting(pid));
  });
}

// Every process id on the machine (/proc), or null where /proc cannot be read.
export function processIds() {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return null;
  }
}

// A process's NUL-separated /proc file (`cmdline`, its arguments; `environ`, its
// environment) as a list, or null where it cannot be read (gone, another user's, no /proc).
export function procList(pid, file = 'cmdline') {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0');
  } catch {
    return null;
  }
}

// The command line of a pid, or null where /proc is not available.
export function commandLine(pid) {
  return procList(pid)?.join(' ').trim() ?? null;
}

// True if pid is alive and (where /proc tells) still runs a command containing `marker`,
// so a pid reused by an unrelated process is never signalled.
export function isOurs(pid, marker) {
  if (!isAlive(pid)) return false;
  const cmd = commandLine(pid);
  return cmd === null || cmd.includes(marker);
}

async function waitUntil(done, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (done()) return true;
    await sleep(50);
  }
  return done();
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

// SIGTERM, then SIGKILL after graceMs. A pid that leads its own process group (a
// detached child) is signalled with its whole group, and waited for with it: a
// process it started and that outlived it would still hold what it held (a
// listening port). Resolves true once every one is gone, false if one still runs
// 2 s after SIGKILL.
export async function stopPid(pid, { graceMs = STOP_GRACE_MS } = {}) {
  const group = leadsGroup(pid);
  const gone = group ? () => groupMembers(pid).length === 0 : () => !isAlive(pid);
  const target = group ? -pid : pid;
  if (gone()) return true;
  signal(target, 'SIGTERM');
  if (await waitUntil(gone, graceMs)) return true;
  signal(target, 'SIGKILL');
  return waitUntil(gone, 2000);
}
