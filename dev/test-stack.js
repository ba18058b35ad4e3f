// startTestStack(): the embedded stack (the servers + toxiproxy, proxies
// populated, no toxics) on free ports in a temp run dir, attached to the test
// process. Resolves { ports, env, toxiproxy, pids, runDir, stop }:
// `env` is targetsFor(ports), the -e variables for k6; always call stop()
// (e.g. `t.after(() => stack.stop())`).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PORTS } from '../common/defaults.js';
import { isAlive } from '../lib/processes.js';
import { portIsFree, StackError, startStack } from '../lib/stack.js';

// Below Linux's ephemeral range (32768+), where port-0 listeners and outgoing
// connections of parallel tests would land, and away from the default ports.
const LOW = 20000;
const HIGH = 32000;

// Test processes run side by side (test/run.js) and each picks its ports at random:
// one could pick a port another has picked but not bound yet, or still holds
// (a CLI env checks every port of its map is free after each run). So a process
// claims each port it picks with a file here holding its pid, until it exits; a
// claim whose pid is dead is taken over.
const CLAIMS = join(tmpdir(), 'k6pack-test-ports');
const claimed = [];

function claim(port) {
  const file = join(CLAIMS, String(port));
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      if (!claimed.length) process.once('exit', releaseClaims);
      claimed.push(file);
      return true;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // An empty file: another process between creating and writing it.
      const owner = Number(readFileSync(file, 'utf8'));
      if (!owner || owner === process.pid || isAlive(owner)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

function releaseClaims() {
  for (const file of claimed) rmSync(file, { force: true });
}

// `count` distinct ports that are free right now and no other live test process claimed.
export async function freePorts(count) {
  mkdirSync(CLAIMS, { recursive: true });
  const found = new Set();
  for (let attempt = 0; found.size < count && attempt < 400; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (!found.has(port) && (await portIsFree(port)) === null && claim(port)) found.add(port);
  }
  if (found.size < count) throw new Error(`found only ${found.size} of ${count} free ports in ${LOW}-${HIGH}`);
  return [...found];
}

// Every port variable mapped to a free port, for a stack or a CLI child's env.
// more: other port variables to include (e.g. the api scenario's PROXY_API_* ones).
export async function freePortMap(more = []) {
  const names = [...Object.keys(DEFAULT_PORTS), ...more];
  const ports = await freePorts(names.length);
  return Object.fromEntries(names.map((name, i) => [name, ports[i]]));
}

// serverEnv: extra environment for the servers (they inherit this process's at spawn,
// so it is set for the start-up only), e.g. dev/heap.js withExposeGc, leakEnv.
export async function startTestStack({ log, serverEnv = {} } = {}) {
  const saved = Object.fromEntries(Object.keys(serverEnv).map((k) => [k, process.env[k]]));
  Object.assign(process.env, serverEnv);
  try {
    return await startPrivateStack({ log });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function startPrivateStack({ log }) {
  // A port picked here can be taken by a parallel test before the stack binds it: try
  // again on other ports at once (waiting for that one to come free would not help).
  for (let attempt = 1; ; attempt++) {
    const runDir = mkdtempSync(join(tmpdir(), 'k6pack-stack-'));
    try {
      const stack = await startStack({ ports: await freePortMap(), runDir, detached: false, log, portWaitMs: 0 });
      return {
        ports: stack.ports,
        env: stack.targets,
        toxiproxy: stack.toxiproxy,
        pids: stack.pids,
        runDir,
        stop: async () => {
          await stack.stop();
          rmSync(runDir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      rmSync(runDir, { recursive: true, force: true });
      if (!(err instanceof StackError && /already in use/.test(err.message)) || attempt >= 3) throw err;
    }
  }
}

// One stack for a whole test file: started in its `before`, stopped in its
// `after`. Returns an object that holds the stack's fields once it is up.
export function useTestStack(opts) {
  const stack = {};
  before(async () => {
    Object.assign(stack, await startTestStack(opts));
  });
  after(() => stack.stop?.());
  return stack;
}
