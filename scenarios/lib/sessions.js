// Long-lived per-VU sessions shared by the scenarios: a WebSocket kept for the
// whole step (see ws.js for why a socket lives inside one iteration), with
// reconnect-and-resume when the socket breaks.
import { remainingMs } from './load.js';
import { reconnects, recordOp, trackRecovery } from './metrics.js';
import { stepStarted } from './progress.js';
import { GraphqlWs, wsUrl } from './ws.js';

// Upper bound of operations on one socket in one iteration (every loop is bounded).
export const MAX_OPS_PER_SESSION = Number(__ENV.WS_OPS_PER_SOCKET || 10000);
// A short pause before reconnecting, as clients back off.
const RECONNECT_PAUSE_MS = 100;

export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Runs op(ws, i) one after another over one socket until the step is about to
// end (the last operation's duration, doubled, no longer fits) or
// maxOps (at most MAX_OPS_PER_SESSION). If the socket breaks, a new one is opened and the loop
// resumes (counted in reconnects; recovery_duration when `recover` is set),
// at most `maxReconnects` times. op returns { ok, ms, done } (done: stop now).
// timeoutMs bounds the connect (open + ack) too; default WS_TIMEOUT_MS.
export async function wsSession({ tls, tags, op, maxReconnects = 0, recover = false, maxOps = MAX_OPS_PER_SESSION, timeoutMs }) {
  let ws = null;
  let lastMs = 0;
  let opened = 0;
  stepStarted();
  for (let i = 0; i < Math.min(maxOps, MAX_OPS_PER_SESSION); i++) {
    if (remainingMs() < Math.max(2 * lastMs, 50)) {
      // Too late to start: wait the step out, or k6 would start iteration after empty iteration.
      if (!ws) await pause(Math.max(0, remainingMs()) + 10);
      break;
    }
    if (!ws || !ws.isOpen) {
      if (opened > maxReconnects) break;
      if (opened > 0) {
        reconnects.add(1, tags);
        await pause(RECONNECT_PAUSE_MS);
      }
      ws = new GraphqlWs(wsUrl(tls), { tags, timeoutMs });
      opened++;
      try {
        await ws.open();
      } catch (err) {
        // A failed connect is a failed operation: it is what the user waits on.
        recordOp({ ok: false, tags: { ...tags, op: 'connect' }, reason: String(err.message || err) });
        if (recover) trackRecovery(`ws:${tags.tls}`, false, tags);
        ws = null;
        continue;
      }
    }
    const r = await op(ws, i);
    if (r.done) break;
    if (recover) trackRecovery(`ws:${tags.tls}`, r.ok, tags);
    if (r.ms) lastMs = r.ms;
  }
  if (ws) await ws.close();
}
