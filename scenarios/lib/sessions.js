// Long-lived per-VU sessions shared by the scenarios: a WebSocket kept for the
// whole step (see ws.js for why a socket lives inside one iteration), with
// reconnect-and-resume when the socket breaks.
//
// Nothing a session waits on outlives its step: the connect, every operation
// and the reconnect pause end before the step's end minus the time a close
// takes, and the socket is closed before the step ends. So k6 never has to cut
// the iteration at gracefulStop with a socket and a timer pending, the state in
// which k6 v1.8.1 can wedge a VU (docs/known-limits.md). The one wait no script
// can end, an upgrade that stalls, is given up at its deadline (see ws.js).
import { remainingMs } from './load.js';
import { reconnects, recordAbandoned, recordOp, trackRecovery } from './metrics.js';
import { stepStarted } from './progress.js';
import { reportVu } from './silent-vus.js';
import { GraphqlWs, wsUrl } from './ws.js';
import { setting } from '../../common/settings.js';
import { ENV } from './config.js';

// Upper bound of operations on one socket in one iteration (every loop is bounded).
export const MAX_OPS_PER_SESSION = setting(ENV, 'WS_OPS_PER_SOCKET');
// A short pause before reconnecting, as clients back off.
const RECONNECT_PAUSE_MS = 100;
// Time kept free at the step's end for the close handshake (one round trip),
// at least this much; the last operation's duration estimates the round trip.
const MIN_CLOSE_RESERVE_MS = 100;

export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Per VU, across its sessions: how long its last connect and operation took, so
// a session does not start a connect or an operation that cannot end in time.
const seen = { connectMs: 0, opMs: 0 };

// Runs op(ws, i) one after another over one socket until the step is about to
// end (the last operation's duration, doubled, no longer fits before the close
// reserve; before a connect, the last connect's duration too) or maxOps (at
// most MAX_OPS_PER_SESSION). If the socket breaks, a new
// one is opened and the loop resumes (counted in reconnects; recovery_duration
// when `recover` is set), at most `maxReconnects` times. op returns
// { ok, ms, done, abandoned } (done: stop now; abandoned: cut by the deadline).
// timeoutMs bounds the connect (open + ack) too; default WS_TIMEOUT_MS. The
// socket's deadline (ws.deadline) caps every operation op starts on it.
// reconnectWaitMs(n): the pause before reconnection n (from 0), a client's retry
// policy (unstable: graphql-ws's retryWait); default RECONNECT_PAUSE_MS.
// dropOnFailure: a failed operation's socket is closed and a new one opened (a
// client that takes a timed-out operation for a dead connection). url:
// the endpoint, when not the pack's GraphQL one (wsUrl(tls)); headers (on the upgrade) and
// initPayload (connection_init's): your API's credentials.
export async function wsSession({
  tls,
  tags,
  op,
  maxReconnects = 0,
  recover = false,
  maxOps = MAX_OPS_PER_SESSION,
  timeoutMs,
  reconnectWaitMs = () => RECONNECT_PAUSE_MS,
  dropOnFailure = false,
  url = wsUrl(tls),
  headers,
  initPayload,
}) {
  const stepEnd = Date.now() + remainingMs();
  let ws = null;
  let opened = 0;
  let attempt = 0; // reconnections since the last connect that succeeded (graphql-ws's `retries`)
  // Each VU reports its first outcome and its first completed operation per step (silent-vus.js).
  let reported = false;
  let completed = false;
  const outcome = (ok) => {
    if (reported && (completed || !ok)) return;
    reported = true;
    if (ok) completed = true;
    reportVu(ok);
  };
  stepStarted();
  for (let i = 0; i < Math.min(maxOps, MAX_OPS_PER_SESSION); i++) {
    const deadline = stepEnd - Math.max(MIN_CLOSE_RESERVE_MS, seen.opMs);
    const connected = ws !== null && ws.isOpen;
    if (deadline - Date.now() < (connected ? 0 : seen.connectMs) + Math.max(2 * seen.opMs, 50)) {
      // Too late to start: wait the step out, or k6 would start iteration after empty iteration.
      if (!ws) await pause(Math.max(0, stepEnd - Date.now()) + 10);
      break;
    }
    if (!connected) {
      if (opened > maxReconnects) break;
      if (opened > 0) {
        reconnects.add(1, tags);
        await pause(Math.min(reconnectWaitMs(attempt), Math.max(0, deadline - Date.now())));
      }
      ws = new GraphqlWs(url, { tags, timeoutMs, headers, initPayload });
      ws.deadline = deadline;
      opened++;
      const t0 = Date.now();
      try {
        await ws.open();
        seen.connectMs = Date.now() - t0;
        attempt = 0;
      } catch (err) {
        const connect = { ...tags, op: 'connect' };
        if (err.abandoned) {
          recordAbandoned(connect);
          outcome(false);
          ws = null;
          break; // the step is over
        }
        attempt++;
        // A failed connect is a failed operation: it is what the user waits on.
        recordOp({ ok: false, tags: connect, reason: String(err.message || err) });
        outcome(false);
        if (recover) trackRecovery(`ws:${tags.tls}`, false, tags);
        ws = null;
        continue;
      }
    }
    ws.deadline = deadline;
    const r = await op(ws, i);
    outcome(r.ok);
    if (r.done || r.abandoned) break;
    if (recover) trackRecovery(`ws:${tags.tls}`, r.ok, tags);
    if (r.ms) seen.opMs = r.ms;
    if (!r.ok && dropOnFailure && ws.isOpen) {
      await ws.close({ timeoutMs: Math.max(0, deadline - Date.now()) });
      ws = null;
    }
  }
  if (ws) await ws.close({ timeoutMs: stepEnd - Date.now() });
}
