/*
 * Push: latency and throughput of server-sent events.
 *   ws           a graphql-ws subscription events(count, intervalMs, size)
 *   grpc-stream  books.v1.Books/StreamEvents on a warm channel
 *   http-poll    GraphQL over HTTP keep-alive, polled every POLL_INTERVAL_MS
 * Events are produced every PUSH_INTERVAL_MS (default 100) with PUSH_SIZE bytes
 * (default 100); a subscription lasts until its step is about to end.
 * push_latency = client receive time - the event's server send time (sentAt):
 * the servers and k6 share one clock (the pack only loads loopback). Polling has
 * no event log to read, so its events are a schedule (one every
 * PUSH_INTERVAL_MS from the poll loop's start) and a poll sees every event due by
 * the server's time when it answered (serverStats.uptimeSeconds, set against
 * the wall clock once in setup()).
 * Servers: the GraphQL server (ws, HTTP) and the gRPC server behind Toxiproxy.
 * Default profile: 4g.
 * Look at: push_latency p50/p95 per lane (model: a push costs half an RTT plus
 * the transfer; a poll adds POLL_INTERVAL_MS / 2 on average), events/s under the table.
 *
 *   npx k6pack up && k6 run scenarios/push.js
 *   k6 run -e PUSH_INTERVAL_MS=10 -e LOAD=full scenarios/push.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan push --load ci`; dev/plan-headers.js writes it):
 *   push under 4g (R 170 ms, down 9000 / up 9000 kbit/s), load ci, closed workload: 6 k6 scenarios, 21.6 s in all
 *     k6 scenario     executor      VUs or rate  start  duration  graceful stop
 *     ws_c1           constant-vus  1 VU         0s     2.7s      0.9s
 *     ws_c4           constant-vus  4 VUs        3.6s   2.7s      0.9s
 *     grpc_stream_c1  constant-vus  1 VU         7.2s   2.7s      0.9s
 *     grpc_stream_c4  constant-vus  4 VUs        10.8s  2.7s      0.9s
 *     http_poll_c1    constant-vus  1 VU         14.4s  2.7s      0.9s
 *     http_poll_c4    constant-vus  4 VUs        18s    2.7s      0.9s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (LOAD=ci's steps: 1, 4)
 *     duration: 1 iteration of the model's 2.680 s
 *     graceful stop: the spec's time to close
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import http from 'k6/http';
import { sleep } from 'k6';
import { calibrate } from './lib/clock.js';
import { graphqlOrigin, SETTINGS } from './lib/config.js';
import { rttOf } from '../common/scenario.js';
import declare from './specs/push.js';
import { LIMITS } from '../common/defaults.js';
import { Channel, newClient, serverStream } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { remainingMs } from './lib/load.js';
import { pushEvents, pushLatency, recordAbandoned, recordOp } from './lib/metrics.js';
import { EVENTS_SUBSCRIPTION, SERVER_STATS } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { pause, wsSession } from './lib/sessions.js';

const decl = declare(SETTINGS);
const { INTERVAL_MS, POLL_MS, SIZE } = decl;
const s = defineScenario(decl, { notes: rateNotes, setup: () => ({ serverStartMs: calibrateServerClock() }) });
export const { options, setup, teardown, handleSummary } = s;

// The GraphQL server's start as wall-clock ms on k6's clock, from /healthz uptime
// (the server's clock counted from its start), set by lib/clock.js.
function calibrateServerClock() {
  return calibrate(() => {
    const t0 = Date.now();
    const res = http.get(`${graphqlOrigin()}/healthz`, { tags: { name: 'healthz' }, timeout: '5s' });
    const t1 = Date.now();
    if (res.status !== 200)
      throw new Error(`GET /healthz answered ${res.status}: start the stack with \`npx k6pack up\``);
    return { t0, t1, serverMs: res.json('uptimeSeconds') * 1000 };
  }).offsetMs;
}

// Events that fit before the step ends (bounded by the server's limit).
function eventCount(setupMs) {
  return Math.min(LIMITS.MAX_EVENTS, Math.floor((remainingMs() - setupMs) / INTERVAL_MS));
}

// Checks one stream of events: seq runs 1..count, every event arrives.
function recordStream(kind, expected, received, lastSeq, error) {
  const ok = !error && received === expected && lastSeq === expected;
  recordOp({
    ok,
    checks: {
      [`${kind} ended without error`]: !error,
      [`${kind} delivered every event in order`]: received === expected && lastSeq === expected,
    },
    reason: error || `expected ${expected} events in order, got ${received} (last seq ${lastSeq})`,
  });
}

function onEvent(state, event, receivedAt) {
  state.received += 1;
  if (event.seq === state.lastSeq + 1) state.lastSeq = event.seq;
  pushLatency.add(receivedAt - event.sentAt);
  pushEvents.add(1);
}

// One subscription (or poll loop) per VU and step: it lasts until the step is
// about to end; later iterations of the step only wait it out.
const started = {};
function firstInStep() {
  if (started[exec.scenario.name]) return false;
  started[exec.scenario.name] = true;
  return true;
}

// Nothing left to do in this step: wait it out instead of spinning.
function idle() {
  sleep(Math.max(0, Math.min(remainingMs(), 5000)) / 1000 + 0.05);
}

function wsLane() {
  const setupMs = 4 * rttOf(s.profile) + 500;
  if (!firstInStep() || eventCount(setupMs) < 1) return idle();
  return wsSession({
    tls: false,
    tags: {},
    op: async (socket) => {
      const count = eventCount(setupMs - 2 * rttOf(s.profile));
      if (count < 1) return { ok: true, done: true };
      const state = { received: 0, lastSeq: 0 };
      let error = null;
      try {
        await socket.subscribe({
          query: EVENTS_SUBSCRIPTION,
          variables: { count, intervalMs: INTERVAL_MS, size: SIZE },
          onNext: (payload, at) => {
            if (payload.errors) error = `GraphQL errors: ${JSON.stringify(payload.errors).slice(0, 200)}`;
            else onEvent(state, payload.data.events, at);
          },
          timeoutMs: count * INTERVAL_MS + 30000,
        });
      } catch (err) {
        // Its step ended first (ws.js): in flight, neither delivered nor failed.
        if (err.abandoned) {
          recordAbandoned();
          return { ok: false, abandoned: true, done: true };
        }
        error = String(err.message || err);
      }
      recordStream('subscription', count, state.received, state.lastSeq, error);
      return { ok: !error, done: true };
    },
  });
}

const channel = new Channel(newClient());

async function grpcStream() {
  const setupMs = 3 * rttOf(s.profile) + 500;
  const count = eventCount(setupMs);
  if (!firstInStep() || count < 1) return idle();
  const state = { received: 0, lastSeq: 0 };
  const r = await serverStream(
    channel,
    'StreamEvents',
    { count, intervalMs: INTERVAL_MS, size: SIZE },
    {
      onData: (msg, at) => onEvent(state, { seq: msg.seq, sentAt: msg.sentAt }, at),
      timeout: `${count * INTERVAL_MS + 30000}ms`,
    },
  );
  recordStream('stream', count, state.received, state.lastSeq, r.error);
  if (r.error) channel.reset();
  return undefined;
}

// Polls until the step is about to end; each poll learns the events due by the
// server's clock at the time it answered.
async function httpPoll(data) {
  if (!firstInStep() || remainingMs() < POLL_MS + 2 * rttOf(s.profile)) return idle();
  const start = Date.now();
  let seen = 0;
  for (let i = 0; i < 100000 && remainingMs() > POLL_MS + 2 * rttOf(s.profile); i++) {
    const r = graphqlHttp({
      transport: 'http-keepalive',
      query: SERVER_STATS,
      validate: (d) => (d && d.serverStats ? null : 'no serverStats'),
    });
    const receivedAt = Date.now();
    if (r.ok) {
      const serverNow = data.serverStartMs + r.data.serverStats.uptimeSeconds * 1000;
      const due = Math.floor((serverNow - start) / INTERVAL_MS);
      for (let k = seen + 1; k <= due; k++) {
        pushLatency.add(receivedAt - (start + k * INTERVAL_MS));
        pushEvents.add(1);
      }
      seen = Math.max(seen, due);
    }
    await pause(POLL_MS);
  }
  return undefined;
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch).
export const runLane = s.dispatch({ ws: wsLane, grpc: grpcStream, http: (_l, data) => httpPoll(data) });

// Events per second per lane and step (push_events / the step's duration).
function rateNotes(data) {
  const lines = ['', `events/s (every ${INTERVAL_MS} ms per subscriber, ${SIZE} B each; polling every ${POLL_MS} ms):`];
  for (const [name, sc] of Object.entries(s.plan.scenarios)) {
    const m = data.metrics[`push_events{scenario:${name}}`];
    const seconds = parseFloat(sc.duration);
    if (m) lines.push(`  ${name}: ${(m.values.count / seconds).toFixed(1)}`);
  }
  return lines;
}
