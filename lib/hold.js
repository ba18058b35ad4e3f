// The stack's hold on the CLI side (common/hold.js says what a hold is): taken
// before a command shapes the network, given back when it is done; a command
// that finds it taken refuses in one line, or with --wait waits for it.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeHolder, newToken, refusal } from '../common/hold.js';
import { isOurs, processIds, procList } from './processes.js';

// Exit code of a command refused because the stack is in use.
export const STACK_IN_USE = 4;

export class HoldError extends Error {
  constructor(message) {
    super(message);
    this.exitCode = STACK_IN_USE;
  }
}

const WAIT_POLL_MS = 1000;
const WAIT_SAY_EVERY_MS = 15000;

// The Toxiproxy port a k6 process was given: its last `-e TOXIPROXY_URL=` (or
// `--env`), else its environment's TOXIPROXY_URL (k6 reads the system's by default);
// null when it names none (a scenario may then find its stack by other means).
export function k6ToxiproxyPort(argv, environ = []) {
  let url = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const flag = a === '-e' || a === '--env' ? argv[i + 1] : a.startsWith('--env=') ? a.slice(6) : null;
    if (flag?.startsWith('TOXIPROXY_URL=')) url = flag.slice('TOXIPROXY_URL='.length);
  }
  url ??= environ.find((kv) => kv.startsWith('TOXIPROXY_URL='))?.slice('TOXIPROXY_URL='.length) ?? null;
  return url ? portOf(url) : null;
}

const portOf = (url) => {
  try {
    return new URL(url).port || null;
  } catch {
    return null;
  }
};

// k6 processes on this machine running `script` (a file name such as ws-vs-http.js)
// against the Toxiproxy at `url`. Another stack's k6 running the same scenario (a
// second stack on other ports, or another test's) is not this holder; a k6 whose
// Toxiproxy cannot be told is counted (a live hold is never taken over by a guess).
function k6Running(script, url) {
  const port = url ? portOf(url) : null;
  const pids = processIds();
  if (!pids) return true; // no /proc: cannot tell, so assume it runs
  return pids.some((pid) => {
    const argv = procList(pid);
    const runs =
      argv &&
      /(^|\/)k6$/.test(argv[0]) &&
      argv.includes('run') &&
      argv.some((a) => a.endsWith(`/${script}`) || a === script);
    if (!runs) return false;
    if (!port) return true;
    const environ = procList(pid, 'environ');
    if (!environ) return true;
    const its = k6ToxiproxyPort(argv, environ);
    return its === null || its === port;
  });
}

// Is the holder still there? null when it cannot be told (then it is assumed to be).
// A CLI holder is a pid on this machine; a k6 holder has no pid (k6 cannot read it),
// so on this machine it is alive while a k6 runs its script against this stack's
// Toxiproxy (`url`, the one the hold was found on), and anywhere it is gone once past
// the end its plan gave it.
export function holderGone(h, { now = Date.now(), url = null } = {}) {
  if (!h || !h.token) return false;
  const here = h.host === hostname();
  // A CLI holder runs k6 as a child of its own: both must be gone.
  if (here && h.pid) return !isOurs(h.pid, 'k6pack') && !(h.childPid && isOurs(h.childPid, 'k6'));
  if (here && h.script) return !k6Running(h.script, url);
  const ends = Date.parse(h.endsBy);
  return Number.isFinite(ends) && now > ends;
}

// Takes the stack's hold for `what`; returns { token, holder, release() }.
// Found taken: a holder that is gone is released (and said); a live one makes it
// throw a HoldError, or with wait: true waits for it (a progress line every 15 s).
export async function takeHold(toxiproxy, { kind, what = null, profile = null, wait = false }, { out, warn, trap }) {
  const record = {
    kind,
    what,
    profile,
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    token: newToken(),
  };
  const t0 = Date.now();
  let said = 0;
  for (;;) {
    trap?.signal.throwIfAborted();
    if (await toxiproxy.createHold(record)) break;
    const h = await toxiproxy.holder();
    if (!h) continue; // released between the two calls
    if (holderGone(h, { url: toxiproxy.url })) {
      // Delete only that record: another command may have replaced it meanwhile.
      const again = await toxiproxy.holder();
      if (again && again.token === h.token) await toxiproxy.deleteHold();
      warn(`the stack's hold was left by ${describeHolder(h)}, which is no longer running: released it`);
      continue;
    }
    if (!wait) throw new HoldError(refusal(h));
    if (Date.now() - said >= WAIT_SAY_EVERY_MS) {
      out(
        `== waiting for the stack: in use by ${describeHolder(h)} (waited ${Math.round((Date.now() - t0) / 1000)} s)`,
      );
      said = Date.now();
    }
    await sleep(WAIT_POLL_MS, undefined, { signal: trap?.signal }).catch(() => {});
  }
  if (said) out(`== the stack is free after ${Math.round((Date.now() - t0) / 1000)} s`);
  // The k6 a CLI holder runs (killing the CLI leaves its k6 running, in its own process group).
  const child = async (childPid) => {
    record.childPid = childPid;
    try {
      await toxiproxy.updateHold(record);
    } catch (err) {
      warn(`could not record k6's pid in the stack's hold (${err.message})`);
    }
  };
  const release = async () => {
    try {
      const h = await toxiproxy.holder();
      if (h && h.token === record.token) await toxiproxy.deleteHold();
    } catch (err) {
      warn(`could not give the stack's hold back (${err.message}); the next command releases it`);
    }
  };
  return { token: record.token, holder: record, release, child };
}

// For status: the holder and whether it is still there.
export async function holdStatus(toxiproxy) {
  const h = await toxiproxy.holder();
  return h ? { holder: h, gone: holderGone(h, { url: toxiproxy.url }), text: describeHolder(h) } : null;
}
