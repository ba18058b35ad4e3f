// Running bin/k6pack.js as a child process the way a user would, on free ports
// (never the defaults) and with its own run dir, plus checks that nothing is left.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { isAlive } from '../../lib/processes.js';
import { portIsFree } from '../../lib/stack.js';
import { ROOT } from '../../lib/tools.js';
import { freePortMap } from '../../dev/test-stack.js';
import { API_PROXY_PORTS } from '../../common/defaults.js';
import { scaled } from './waits.js';

export const CLI = join(ROOT, 'bin', 'k6pack.js');

// An env for CLI children: every port variable on a free port, a temp K6PACK_RUN_DIR
// (and the run folders of `run` inside it, not in the repo's results/).
// cleanup() stops whatever a failed test left recorded there and removes the dir.
// api: true adds the api scenario's proxy ports (PROXY_API_*).
export async function cliEnv({ api = false } = {}) {
  const ports = await freePortMap(api ? Object.keys(API_PROXY_PORTS) : []);
  const runDir = mkdtempSync(join(tmpdir(), 'k6pack-cli-'));
  const env = {
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    K6PACK_RUN_DIR: runDir,
    K6PACK_RESULTS_DIR: join(runDir, 'results'),
  };
  const cleanup = async () => {
    await execa(process.execPath, [CLI, 'down'], { env, reject: false, timeout: 20000 });
    for (const pid of recordedPids(runDir)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(runDir, { recursive: true, force: true });
  };
  return { ports, runDir, env, cleanup };
}

// Starts the CLI; the returned execa child (await it, or signal it with .kill())
// resolves { exitCode, stdout, stderr } and never rejects; killed at timeoutMs (by
// default a minute on the reference machine, scaled to this one: ./machine.js).
// A signal (.kill(), or the timeout's SIGTERM) becomes SIGKILL only after
// FORCE_KILL_MS: the CLI stops k6 gracefully and then its stack, which took over the
// 2 s execa allows by default on a loaded machine (phase 2 five at a time, 2026-11-27:
// a SIGTERM test saw the CLI SIGKILLed mid-cleanup, exit code undefined, not 143).
const FORCE_KILL_MS = 30000;

export function runCli(args, { env, timeoutMs = scaled(60000) } = {}) {
  return execa(process.execPath, [CLI, ...args], {
    env,
    reject: false,
    timeout: timeoutMs,
    forceKillAfterDelay: FORCE_KILL_MS,
    stdin: 'ignore',
  });
}

// Resolves once a CLI child (runCli's) has printed `text` on stdout or stderr;
// throws with the output so far after `ms` (a caller scales it: scaled(ms), ./machine.js).
export async function waitFor(child, text, ms) {
  const deadline = Date.now() + ms;
  let seen = '';
  const collect = (chunk) => (seen += chunk);
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  while (!seen.includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" within ${ms} ms; output so far:\n${seen}`);
    await sleep(100);
  }
}

// The pids `up` recorded in <runDir>/*.pid.
export function recordedPids(runDir) {
  try {
    return readdirSync(runDir)
      .filter((f) => f.endsWith('.pid'))
      .map((f) => Number(readFileSync(join(runDir, f), 'utf8')));
  } catch {
    return [];
  }
}

// Pids of live processes whose command line contains `text` (Linux /proc).
export function processesMatching(text) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(text) && isAlive(Number(name))) found.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

// The port variables whose port is still held by something.
export async function portsInUse(ports) {
  const held = [];
  for (const [name, port] of Object.entries(ports)) if ((await portIsFree(port)) !== null) held.push(name);
  return held;
}
