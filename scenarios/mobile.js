/*
 * Mobile: each lane at an interaction rate, on a phone whose radio sleeps.
 * One operation (the study-000 book query or rating; with MOBILE_ANSWER_BYTES=N a
 * payload of N bytes, which 3G's FACH promotes to DCH past 475 B) every T seconds
 * (INTERACTION_SECONDS, default 1,5,15,60), over HTTP/1.1 fresh and
 * keep-alive, HTTP/2, a graphql-ws socket without and with a keepalive
 * ping (every 10 or 30 s after the last pong), and gRPC GetBook on a kept
 * channel without and with keepalive pings (k6's client has no keepalive
 * setting: the server on GRPC_KEEPALIVE_ADDR pings every 10 s). One VU per lane and T (one
 * phone: the radio is the device's, every proxy's link toxic shares it), the
 * steps one after another. A step runs the operation once (gap:first: it opens
 * a kept lane's connection) and again straight after (gap:warm), then MOBILE_OPS
 * more, one every T seconds from the warm one's start (gap:after: the rows).
 * Under +rrc the model prices each one with its gap, T less the operation before
 * (common/model.js: promotion, FACH, DRX); under +nat=SECONDS a kept
 * connection idle longer is dropped silently and its next operation fails
 * (the HTTP client opens a new connection next time, the WebSocket lane a new
 * socket).
 * Servers: the GraphQL and gRPC servers behind Toxiproxy.
 * Default profile: lte+rrc; try 3g+rrc, lte+rrc+nat=30.
 * Look at: p50/p95 after the gap and the model's split (promotion, set-up,
 * the operation), failures (a NAT's), the promotions the link's event log
 * shows (tools/toxiproxy/radio_log.go), the radio's time per state per hour
 * from it, the energy per operation and per hour (common/radio.js's powers),
 * every lane ranked by p50 and by energy per T, and one verdict line per T: the fastest
 * lanes and the cheapest on battery (lanes within 5 % of each other named together).
 *
 *   npx k6pack up && k6 run scenarios/mobile.js
 *   k6 run -e PROFILE=3g+rrc -e INTERACTION_SECONDS=5,15 scenarios/mobile.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan mobile --load ci`; dev/plan-headers.js writes it):
 *   mobile under lte+rrc (R 70 ms, down 12000 / up 12000 kbit/s, rrc), load ci, closed workload: 32 k6 scenarios, 3100.8 s in all
 *     k6 scenario            executor      VUs or rate  start    duration  graceful stop
 *     http_fresh_t1_c1       constant-vus  1 VU         0s       19.1s     0.8s
 *     http_fresh_t5_c1       constant-vus  1 VU         19.9s    35.1s     0.8s
 *     http_fresh_t15_c1      constant-vus  1 VU         55.8s    75.1s     0.8s
 *     http_fresh_t60_c1      constant-vus  1 VU         131.7s   255.1s    0.8s
 *     http_keepalive_t1_c1   constant-vus  1 VU         387.6s   19.1s     0.8s
 *     http_keepalive_t5_c1   constant-vus  1 VU         407.5s   35.1s     0.8s
 *     http_keepalive_t15_c1  constant-vus  1 VU         443.4s   75.1s     0.8s
 *     http_keepalive_t60_c1  constant-vus  1 VU         519.3s   255.1s    0.8s
 *     http2_t1_c1            constant-vus  1 VU         775.2s   19.1s     0.8s
 *     http2_t5_c1            constant-vus  1 VU         795.1s   35.1s     0.8s
 *     http2_t15_c1           constant-vus  1 VU         831s     75.1s     0.8s
 *     http2_t60_c1           constant-vus  1 VU         906.9s   255.1s    0.8s
 *     ws_t1_c1               constant-vus  1 VU         1162.8s  19.1s     0.8s
 *     ws_t5_c1               constant-vus  1 VU         1182.7s  35.1s     0.8s
 *     ws_t15_c1              constant-vus  1 VU         1218.6s  75.1s     0.8s
 *     ws_t60_c1              constant-vus  1 VU         1294.5s  255.1s    0.8s
 *     ws_ping10_t1_c1        constant-vus  1 VU         1550.4s  19.1s     0.8s
 *     ws_ping10_t5_c1        constant-vus  1 VU         1570.3s  35.1s     0.8s
 *     ws_ping10_t15_c1       constant-vus  1 VU         1606.2s  75.1s     0.8s
 *     ws_ping10_t60_c1       constant-vus  1 VU         1682.1s  255.1s    0.8s
 *     ws_ping30_t1_c1        constant-vus  1 VU         1938s    19.1s     0.8s
 *     ws_ping30_t5_c1        constant-vus  1 VU         1957.9s  35.1s     0.8s
 *     ws_ping30_t15_c1       constant-vus  1 VU         1993.8s  75.1s     0.8s
 *     ws_ping30_t60_c1       constant-vus  1 VU         2069.7s  255.1s    0.8s
 *     grpc_t1_c1             constant-vus  1 VU         2325.6s  19.1s     0.8s
 *     grpc_t5_c1             constant-vus  1 VU         2345.5s  35.1s     0.8s
 *     grpc_t15_c1            constant-vus  1 VU         2381.4s  75.1s     0.8s
 *     grpc_t60_c1            constant-vus  1 VU         2457.3s  255.1s    0.8s
 *     grpc_ping10_t1_c1      constant-vus  1 VU         2713.2s  19.1s     0.8s
 *     grpc_ping10_t5_c1      constant-vus  1 VU         2733.1s  35.1s     0.8s
 *     grpc_ping10_t15_c1     constant-vus  1 VU         2769s    75.1s     0.8s
 *     grpc_ping10_t60_c1     constant-vus  1 VU         2844.9s  255.1s    0.8s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (the spec's steps: 1)
 *     duration, http_fresh_t1: 1 iteration of the model's 19.036 s
 *     duration, http_fresh_t5: 1 iteration of the model's 35.036 s
 *     duration, http_fresh_t15: 1 iteration of the model's 75.036 s
 *     duration, http_fresh_t60: 1 iteration of the model's 255.036 s
 *     duration, http_keepalive_t1: 1 iteration of the model's 19.036 s
 *     duration, http_keepalive_t5: 1 iteration of the model's 35.036 s
 *     duration, http_keepalive_t15: 1 iteration of the model's 75.036 s
 *     duration, http_keepalive_t60: 1 iteration of the model's 255.036 s
 *     duration, http2_t1: 1 iteration of the model's 19.036 s
 *     duration, http2_t5: 1 iteration of the model's 35.036 s
 *     duration, http2_t15: 1 iteration of the model's 75.036 s
 *     duration, http2_t60: 1 iteration of the model's 255.036 s
 *     duration, ws_t1: 1 iteration of the model's 19.036 s
 *     duration, ws_t5: 1 iteration of the model's 35.036 s
 *     duration, ws_t15: 1 iteration of the model's 75.036 s
 *     duration, ws_t60: 1 iteration of the model's 255.036 s
 *     duration, ws_ping10_t1: 1 iteration of the model's 19.036 s
 *     duration, ws_ping10_t5: 1 iteration of the model's 35.036 s
 *     duration, ws_ping10_t15: 1 iteration of the model's 75.036 s
 *     duration, ws_ping10_t60: 1 iteration of the model's 255.036 s
 *     duration, ws_ping30_t1: 1 iteration of the model's 19.036 s
 *     duration, ws_ping30_t5: 1 iteration of the model's 35.036 s
 *     duration, ws_ping30_t15: 1 iteration of the model's 75.036 s
 *     duration, ws_ping30_t60: 1 iteration of the model's 255.036 s
 *     duration, grpc_t1: 1 iteration of the model's 19.036 s
 *     duration, grpc_t5: 1 iteration of the model's 35.036 s
 *     duration, grpc_t15: 1 iteration of the model's 75.036 s
 *     duration, grpc_t60: 1 iteration of the model's 255.036 s
 *     duration, grpc_ping10_t1: 1 iteration of the model's 19.036 s
 *     duration, grpc_ping10_t5: 1 iteration of the model's 35.036 s
 *     duration, grpc_ping10_t15: 1 iteration of the model's 75.036 s
 *     duration, grpc_ping10_t60: 1 iteration of the model's 255.036 s
 *     graceful stop: the spec's time to close
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import declare, { opTimeoutMs, rowOnPingCycle, SERVER_PING_S, settleSeconds } from './specs/mobile.js';
import { waitOutStep } from './lib/fit.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { remainingMs } from './lib/load.js';
import { recordOutcome, trackRecovery } from './lib/metrics.js';
import { radioLogAt } from './lib/network.js';
import { bookId, bookOperation, PAYLOAD_QUERY, validateGrpcPayload, validatePayload } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';
import { pause } from './lib/sessions.js';
import { withObservers } from './lib/thresholds.js';
import { GraphqlWs, WS_TIMEOUT_MS, wsUrl } from './lib/ws.js';
import { linkOf } from '../common/model.js';
import { alikeGroups, list, span } from '../common/verdict.js';
import { batteryShare, statePowers } from '../common/radio.js';
import { energyOfStates, perHour, timeInStates, timerParams, timersOf } from '../common/radio-log.js';
import { cellKey } from '../common/results.js';
import { SETTINGS, TARGETS } from './lib/config.js';

const decl = declare(SETTINGS);
const { OPS, EVERY, BATTERY_MAH, CLIENT_IDLE_S, ANSWER_BYTES } = decl;
const s = defineScenario(decl, { notes });
export const { options, setup, teardown, handleSummary } = s;
const link = linkOf(s.profile);
const SETTLE_MS = settleSeconds(s.profile) * 1000;
const PING_MS = SERVER_PING_S * 1000;

// The radio's figures of each step, from the link's event log (laneOnly columns and notes).
const energyOp = new Trend('radio_energy_op');
const energyHour = new Trend('radio_energy_hour');
const onHour = new Trend('radio_on_hour');
const stateHour = new Trend('radio_state_hour');
// The promotions the log shows in a step (gap:first: its first and warm operations'; gap:after:
// the rows') and how long each took.
const promotions = new Counter('radio_promotions');
const promotionMs = new Trend('radio_promotion', true);
// The radio's timers as the log shows them (promotion, tail ...: common/radio-log.js
// timersOf), run-wide, against the papers' values (bench/mobile.js).
const timerMs = new Trend('radio_timer', true);
const TIMERS = link.radio ? Object.keys(timerParams(link.radio)) : [];
const STATES = link.radio ? Object.keys(statePowers(link.radio)) : [];
const STEP_NAMES = Object.keys(s.plan.scenarios).filter((n) => s.plan.scenarios[n].tags.transport);
Object.assign(
  options.thresholds,
  withObservers(
    options.thresholds,
    STEP_NAMES.flatMap((n) => [
      ...STATES.map((state) => cellKey('radio_state_hour', { scenario: n, state })),
      ...['first', 'after'].flatMap((gap) => [
        cellKey('radio_promotions', { scenario: n, gap }),
        cellKey('radio_promotion', { scenario: n, gap }),
      ]),
    ]),
  ),
  withObservers(
    options.thresholds,
    TIMERS.map((timer) => cellKey('radio_timer', { timer })),
  ),
);

// The radio in a step whose first operation began at `started` and whose rows began at
// `rows` (ms): its promotions (gap:first: those before the first row, the first and warm
// operations'), and from the first row's start to the last's, each period opening with a
// row after its gap, its time per state and energy (per operation: an hour's over the 3600/T
// operations of an hour, the rows of a WebSocket lane being spread over the ping's cycle).
function recordRadio(started, rows, T) {
  const log = radioLogAt();
  if (!log) return;
  for (const p of timeInStates(log, { fromMs: started - 50 }).promotions) {
    const gap = rows.length && p.atMs >= rows[0] ? 'after' : 'first';
    promotions.add(1, { gap });
    if (p.ms !== null) promotionMs.add(p.ms, { gap });
  }
  for (const x of timersOf(log, { fromMs: started - 50 })) timerMs.add(x.ms, { timer: x.timer });
  const periods = rows.length - 1;
  if (periods < 1) return;
  const r = timeInStates(log, { fromMs: rows[0], toMs: rows[periods] });
  if (!(r.windowS > 0)) return;
  const e = energyOfStates(log.radio, r.seconds);
  energyOp.add((e.mj * T) / 1000 / r.windowS);
  energyHour.add((e.mj * 3600) / r.windowS);
  onHour.add(((r.windowS - (r.seconds.idle || 0)) * 3600) / r.windowS);
  for (const [state, sec] of Object.entries(perHour(r.seconds, r.windowS))) stateHour.add(sec, { state });
}

// A step's one iteration: once the radio has settled to idle, the operation at once
// (gap:first: it opens a kept lane's connection), another straight after it (gap:warm), then
// OPS more (gap:after: the rows), T, 2T, ... after the warm one's start, as long as each
// still has a second before the step ends; then the radio. Start to start, as the energy's
// rhythm (common/radio.js rhythm) counts a period, and every row's gap alike: T less the
// operation before, a warm one (common/model.js radioWake prices that gap). The first
// operation also pays the promotion and opens the connection (and under 3g a gRPC channel's
// answer is followed by a PING's round trip): timed from it, the first row's gap was
// another's. From its start it was seconds shorter; from its end it was T, a tie at T equal
// to 3G's DCH tail (5 s) or to a NAT's timeout, where the later rows (T less the operation)
// were not: under 3g+rrc at T = 5 s that first row found FACH and the radio stayed there
// (http_fresh p50 985 ms against the DCH rhythm's), and at T = 60 s under +nat=60 the kept
// HTTP lanes lost their first row (2026-11-30, issue 41). A VU that k6 starts again in the
// same step waits the step out. op(gap, i) -> ok; a failure (a NAT's) to the next success is
// recovery_duration (metrics.js trackRecovery). pingAt() (a WebSocket lane's): when the
// server's last ping came, or the socket opened (null: no socket); at T of at least its
// interval each row moves onto its own phase of the ping's cycle (specs/mobile.js
// rowOnPingCycle).
async function paced(l, { op, close, pingAt }) {
  if (exec.vu.iterationInScenario > 0) {
    waitOutStep(s);
    return;
  }
  const T = l.everyS * 1000;
  // Every step starts with the radio idle (settleSeconds: the step before decides nothing).
  await pause(SETTLE_MS);
  const started = Date.now();
  const step = exec.scenario.name;
  let i = 0;
  trackRecovery(step, await op('first', i++));
  const t0 = Date.now();
  trackRecovery(step, await op('warm', i++));
  const rows = [];
  const spread = pingAt && T >= PING_MS;
  for (let k = 1; k <= OPS; k++) {
    const clock = spread ? pingAt() : null;
    const at = clock === null ? t0 + k * T : rowOnPingCycle(t0 + k * T, k, OPS, clock, PING_MS);
    if (at - Date.now() > remainingMs() - 1000) break;
    await pause(Math.max(0, at - Date.now()));
    rows.push(Date.now());
    trackRecovery(step, await op('after', i++));
  }
  if (close) await close();
  recordRadio(started, rows, T);
}

// The book query or rating, or with MOBILE_ANSWER_BYTES a payload of that many bytes.
const payloadOperation = (size) => ({
  query: PAYLOAD_QUERY,
  variables: { size },
  validate: validatePayload(size),
  tags: { op: 'payload' },
});
const operation = (gap, i) => {
  const o = ANSWER_BYTES > 0 ? payloadOperation(ANSWER_BYTES) : bookOperation(exec.vu.idInTest, i);
  return { ...o, tags: { ...o.tags, gap } };
};

// Each operation times out within its slot (specs/mobile.js opTimeoutMs).
// A lane whose client would close its idle connection before the next operation
// (specs/mobile.js clientClose, CLIENT_IDLE_SECONDS) asks for the close with the operation:
// k6's client then closes it once the answer is in (Go's transport, HTTP/1.1 and HTTP/2).
const CLOSE = { Connection: 'close' };
function httpLane(l) {
  const timeout = `${opTimeoutMs(l.everyS)}ms`;
  const headers = l.clientClose ? CLOSE : undefined;
  return paced(l, {
    op: async (gap, i) =>
      graphqlHttp({ transport: l.transport, tls: l.tls, timeout, headers, ...operation(gap, i) }).ok,
  });
}

// One socket for the step; a failed operation (a NAT that forgot the connection, a ping
// that got no pong) takes the socket for dead: the next operation opens a new one.
function wsLane(l) {
  let ws = null;
  const stop = async () => {
    if (!ws) return;
    if (ws.ka) clearTimeout(ws.ka.timer);
    await ws.close({ timeoutMs: Math.max(0, remainingMs()) });
    if (ws.ka) clearTimeout(ws.ka.timer);
    ws = null;
  };
  const op = async (gap, i) => {
    const o = operation(gap, i);
    if (!ws) {
      ws = new GraphqlWs(wsUrl(l.tls), { tags: {} });
      ws.deadline = Date.now() + remainingMs();
      try {
        await ws.open();
      } catch (err) {
        recordOutcome(false, null, o.tags, `connect: ${err && err.message ? err.message : err}`, 'ws connect');
        await stop();
        return false;
      }
      if (l.pingS) ws.keepAlive({ intervalMs: l.pingS * 1000, timeoutMs: WS_TIMEOUT_MS });
    }
    const r = await ws.execute({ ...o, timeoutMs: opTimeoutMs(l.everyS) });
    if (!r.ok && !r.abandoned) await stop();
    return r.ok;
  };
  return paced(l, { op, close: stop, pingAt: () => (ws ? ws.pingAt() : null) });
}

// One channel per VU, kept across the step's calls; a failed call drops it (Channel.reset)
// and the next one connects again. A lane with pings calls the server that sends them
// (specs/mobile.js: GRPC_KEEPALIVE_ADDR). k6 loads a proto only in the init context: each
// channel is made here, and only when a lane of this run (LANES) uses it.
const grpcLanes = s.lanes.filter((l) => l.family === 'grpc');
const channels = {
  plain: grpcLanes.some((l) => !l.keepaliveServer) ? new Channel(newClient()) : null,
  keepalive: grpcLanes.some((l) => l.keepaliveServer)
    ? new Channel(newClient(), { addr: TARGETS.GRPC_KEEPALIVE_ADDR })
    : null,
};
function grpcLane(l) {
  const channel = l.keepaliveServer ? channels.keepalive : channels.plain;
  const timeout = `${opTimeoutMs(l.everyS)}ms`;
  const op = async (gap, i) => {
    if (ANSWER_BYTES > 0) {
      const size = ANSWER_BYTES;
      const tags = { op: 'payload', gap };
      return channel.call('Payload', { size }, { validate: validateGrpcPayload(size), timeout, tags }).ok;
    }
    const id = bookId(1 + ((exec.vu.idInTest * 7919 + i) % 1000));
    const validate = (b) => (b && b.id === id ? null : `GetBook answered ${b && b.id}`);
    return channel.call('GetBook', { id }, { validate, timeout, tags: { op: 'query', gap } }).ok;
  };
  return paced(l, { op, close: async () => channel.close() });
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch).
export const runLane = s.dispatch({ http: httpLane, ws: wsLane, grpc: grpcLane });

// ---- the summary's notes: the model's split, the radio per hour, the verdict per T ----

const fmt = (x, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits));

const stepOf = (l) => STEP_NAMES.find((n) => n === `${l.name}_${s.plan.scenarios[n].tags.step}`);

function notes(data) {
  const m = data.metrics;
  const stat = (key, st) => (m[key] && m[key].values.count ? m[key].values[st] : null);
  const count = (key) => (m[key] ? m[key].values.count : 0);
  const lines = [
    '',
    `mobile: one operation every T s (INTERACTION_SECONDS ${EVERY.join(',')}), ${OPS} after each step's first; radio ${link.radio || 'none (add +rrc)'}${link.natIdleS ? `, NAT idle timeout ${link.natIdleS} s` : ''}; the client closes a kept HTTP connection idle ${CLIENT_IDLE_S} s (CLIENT_IDLE_SECONDS)${ANSWER_BYTES ? `; each answer a payload of ${ANSWER_BYTES} B (MOBILE_ANSWER_BYTES)` : ''}`,
  ];
  const verdicts = [];
  for (const T of EVERY) {
    const ranked = [];
    for (const l of s.lanes.filter((x) => x.everyS === T)) {
      const name = stepOf(l);
      if (!name) continue;
      const rowKey = cellKey('op_duration', { scenario: name, gap: 'after' });
      const p50 = stat(rowKey, 'med');
      const p95 = stat(rowKey, 'p(95)');
      const failed = m[cellKey('op_failed', { scenario: name, gap: 'after' })];
      const fails = failed ? failed.values.passes : 0;
      const gate = s.gates.find((g) => g.key === rowKey);
      const e = gate ? gate.expected.p50 : null;
      const split = e
        ? `model ${fmt(e.ms)} ms = promotion ${fmt(e.radioMs || 0)} + set-up ${fmt(e.setupMs)} + operation ${fmt(e.ms - (e.radioMs || 0) - e.setupMs)}`
        : 'no model';
      const promoted = count(cellKey('radio_promotions', { scenario: name, gap: 'after' }));
      const promotedMs = stat(cellKey('radio_promotion', { scenario: name, gap: 'after' }), 'med');
      const mj = p50Of(data, cellKey('radio_energy_op', { scenario: name }));
      const mjh = p50Of(data, cellKey('radio_energy_hour', { scenario: name }));
      const states = STATES.map((st) => [st, p50Of(data, cellKey('radio_state_hour', { scenario: name, state: st }))])
        .filter(([, v]) => v)
        .map(([st, v]) => `${st} ${fmt(v)}`)
        .join(', ');
      lines.push(
        `  ${l.base} every ${T} s: p50 ${fmt(p50)} ms, p95 ${fmt(p95)} ms (${split}); failed ${fails}` +
          (fails
            ? ` (recovered in ${fmt(stat(cellKey('recovery_duration', { scenario: name }), 'med'))} ms, p50)`
            : '') +
          (link.radio ? `; promotions ${promoted}${promotedMs !== null ? ` (${fmt(promotedMs)} ms each)` : ''}` : '') +
          (mj !== null
            ? `; ${fmt(mj)} mJ/op, ${fmt(mjh)} mJ/h (${fmt(batteryShare(mjh, BATTERY_MAH) * 100, 2)} % of a ${BATTERY_MAH} mAh battery an hour); radio s/h: ${states}`
            : ''),
      );
      ranked.push({ lane: l.base, p50, mj, fails });
    }
    // Every lane ranked by p50 and by energy, those that ran alike together (common/verdict.js
    // alikeGroups: within 5 %), a lane that lost operations marked. The verdict names the
    // first group of the lanes that lost none; when every lane lost some (a NAT), of all,
    // and the line says so.
    const names = (g) => list(g.items.map((r) => (r.fails ? `${r.lane} (${r.fails} failed)` : r.lane)));
    const figures = (g, key, unit) =>
      span(
        g.items.map((r) => r[key]),
        fmt,
        unit,
      );
    const rank = (rows, key, unit) =>
      alikeGroups(
        rows.filter((r) => r[key] !== null),
        (r) => r[key],
        fmt,
      ).map((g) => ({ names: names(g), figures: figures(g, key, unit) }));
    const byP50 = rank(ranked, 'p50', ' ms');
    const byEnergy = rank(ranked, 'mj', ' mJ/op');
    if (byP50.length)
      lines.push(
        `  every ${T} s, ranked by p50: ${byP50.map((g) => `${g.names} ${g.figures}`).join('; ')}` +
          (byEnergy.length ? `; by energy: ${byEnergy.map((g) => `${g.names} ${g.figures}`).join('; ')}` : ''),
      );
    const clean = ranked.filter((r) => r.fails === 0);
    const lostNone = clean.length === ranked.length; // then the rankings above are the pool's
    const pool = clean.length ? clean : ranked;
    const [fastest] = lostNone ? byP50 : rank(pool, 'p50', ' ms');
    const [cheapest] = lostNone ? byEnergy : rank(pool, 'mj', ' mJ/op');
    const noEnergy = link.radio ? '-' : '- (no radio: add +rrc)';
    verdicts.push(
      `${s.profile.name}, one operation every ${T} s: fastest ${fastest ? `${fastest.names} (p50 ${fastest.figures})` : '-'}, cheapest on battery ${cheapest ? `${cheapest.names} (${cheapest.figures})` : noEnergy}` +
        (clean.length || !ranked.length ? '' : '; every lane failed some operations'),
    );
  }
  return [...lines, '', ...verdicts];
}
