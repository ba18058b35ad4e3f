// GraphQL over WebSocket (graphql-transport-ws) on k6/websockets, with promises.
//
// How a socket lives in k6: k6/websockets keeps an iteration running while a
// socket is open (the socket holds the VU's event loop), so a socket cannot
// outlive its iteration. A VU therefore runs ONE long iteration per socket:
// open + connection_init/ack (measured apart, as setup_duration{phase:ws_upgrade}
// and {phase:ws_init}), then operations one after another until the step is
// about to end or the session's operation budget is spent, then close. With
// steps of seconds or minutes the set-up is paid once per step per VU, like an
// app that keeps its socket.
//
//   const ws = new GraphqlWs(url, { tags });
//   await ws.open();                       // resolves on connection_ack
//   const r = await ws.execute({ query, variables, validate }); // one op, recorded
//   await ws.subscribe({ query, variables, onNext });           // until complete
//   const s = await ws.takeEvents({ query, variables, events }); // N events, recorded
//   await ws.close();
//
// Protocol handling: ping -> pong; next/error/complete per operation id; any
// other or malformed message is a protocol error that fails the pending
// operations and closes the socket with 4400 (as graphql-ws does). An
// unexpected close or a transport error rejects every pending operation, so
// nothing waits forever; every wait also has a timeout.
//
// Deadline: `ws.deadline` (epoch ms; sessions.js sets it from the step's end)
// caps the open and every operation, and sessions.js bounds close() by the
// step's end, so nothing is still pending when k6 ends the step: k6 v1.8.1 can wedge a VU whose iteration it cuts
// while a socket and a timer are pending (docs/known-limits.md). A wait that
// the deadline shortens and that runs out is abandoned, not failed: the
// operation was in flight when its step ended (op_abandoned). One thing no
// script can end is a socket whose upgrade stalls: k6 has no way to cancel a
// connecting socket (its handshake timeout is a fixed 60 s), so open() gives up
// on it and the caller moves on; the iteration then ends when the socket does
// (or k6 cuts it with nothing else pending).
import { eventsPerSecond } from '../../common/streams.js';
import { WebSocket } from 'k6/websockets';
import { ENV, TARGETS } from './config.js';
import { graphqlErrorText, requestJson } from './http.js';
import {
  eventRate,
  firstEvent,
  recordAbandoned,
  recordOutcome,
  recordServerTimingNow,
  recordSetup,
  serverTimingDue,
} from './metrics.js';
import { setting } from '../../common/settings.js';

export const SUBPROTOCOL = 'graphql-transport-ws';
export const wsUrl = (tls) => (tls ? TARGETS.GRAPHQL_WSS_URL : TARGETS.GRAPHQL_WS_URL);
export const WS_TIMEOUT_MS = setting(ENV, 'WS_TIMEOUT_MS');

// WebSocket ready states.
const CONNECTING = 0;
const OPEN = 1;

// abandoned: the step's deadline ended the wait (not the operation's own timeout).
export class WsError extends Error {
  constructor(message, abandoned = false) {
    super(message);
    this.abandoned = abandoned;
  }
}

const WS_TAGS = { name: 'graphql-ws' };

// Longest close() waits for the server's close frame.
const CLOSE_WAIT_MS = 5000;

export class GraphqlWs {
  // headers: more headers on the upgrade; initPayload: connection_init's payload (credentials).
  constructor(url, { tags = {}, timeoutMs = WS_TIMEOUT_MS, headers, initPayload } = {}) {
    this.url = url;
    this.params = headers ? { tags: WS_TAGS, headers } : { tags: WS_TAGS };
    this.initMessage = JSON.stringify({ type: 'connection_init', payload: initPayload || {} });
    this.tags = tags;
    this.timeoutMs = timeoutMs;
    this.nextId = 1;
    this.pending = {}; // id -> { onNext, resolve, reject, deadline, timeoutMs, results }
    this.watchdog = null; // one timer for every pending operation's deadline (see arm())
    this.watchdogAt = Infinity;
    this.socket = null;
    this.closed = false;
    this.closeInfo = null;
    this.waiters = []; // { resolve, reject, timer } for open() and close()
    this.deadline = Infinity; // epoch ms no wait may outlast (see the header)
    this.ka = null; // keepAlive()'s { intervalMs, timeoutMs, timer }
    this.openedAt = null; // epoch ms of the open (pingAt)
    this.lastPingAt = null; // epoch ms of the server's last ping (pingAt)
  }

  // When the server's last WebSocket ping came, or, before its first, when the socket opened
  // (the server's ping interval starts there: graphql-ws's useServer); null before that.
  pingAt() {
    return this.lastPingAt ?? this.openedAt ?? null;
  }

  // A wait of `timeoutMs` cut to the deadline: { ms, byDeadline }.
  budget(timeoutMs) {
    const left = this.deadline - Date.now();
    return left < timeoutMs ? { ms: Math.max(0, left), byDeadline: true } : { ms: timeoutMs, byDeadline: false };
  }

  // Opens the socket and completes connection_init/ack. Resolves true, or
  // rejects with a WsError saying what went wrong (abandoned when the deadline
  // ended the wait).
  open() {
    const t0 = Date.now();
    let tOpen = null;
    const { ms, byDeadline } = this.budget(this.timeoutMs);
    return new Promise((resolve, reject) => {
      const fail = (msg, abandoned = false) => {
        clearTimeout(timer);
        reject(new WsError(msg, abandoned));
      };
      const timer = setTimeout(() => {
        if (byDeadline) fail(`the step ended before connection_ack (${ms} ms)`, true);
        else fail(`no connection_ack within ${ms} ms`);
        this.abort(4408, 'Connection initialisation timeout');
      }, ms);
      this.ackWaiter = {
        resolve: (ev) => {
          clearTimeout(timer);
          recordSetup('ws_upgrade', tOpen - t0, this.tags);
          recordSetup('ws_init', ev.timestamp - tOpen, this.tags);
          resolve(true);
        },
        reject: fail,
      };
      let socket;
      try {
        socket = new WebSocket(this.url, SUBPROTOCOL, this.params);
      } catch (err) {
        fail(`cannot open ${this.url}: ${err}`);
        return;
      }
      this.socket = socket;
      socket.onopen = (ev) => {
        if (this.closeWhenOpen) {
          // open() already gave up on this socket (see abort()).
          socket.close(this.closeWhenOpen.code, this.closeWhenOpen.reason);
          return;
        }
        tOpen = ev.timestamp || Date.now();
        this.openedAt = tOpen;
        if (socket.protocol !== SUBPROTOCOL) {
          fail(`server chose subprotocol "${socket.protocol}", not ${SUBPROTOCOL}`);
          this.abort(4406, 'Subprotocol not acceptable');
          return;
        }
        socket.send(this.initMessage);
      };
      socket.onmessage = (ev) => this.onMessage(ev);
      // The server's WebSocket pings (k6 answers each with a pong): pingAt().
      socket.onping = () => {
        this.lastPingAt = Date.now();
      };
      socket.onerror = (ev) => this.onBroken(`socket error: ${ev.error || 'unknown'}`);
      socket.onclose = (ev) => this.onClosed(ev);
    });
  }

  // graphql-ws's keepAlive with the library's ping/pong-timeout recipe: a ping
  // intervalMs after this call and after each pong; no pong within timeoutMs fails
  // every pending operation and closes the socket (4408, as the recipe does). Call once
  // the socket is open; graphql-ws leaves it off by default (common/policies.js).
  keepAlive({ intervalMs, timeoutMs }) {
    this.ka = { intervalMs, timeoutMs, timer: null };
    this.schedulePing();
  }

  schedulePing() {
    const ka = this.ka;
    clearTimeout(ka.timer);
    if (this.closed) return;
    ka.timer = setTimeout(() => {
      if (!this.isOpen) return;
      this.send({ type: 'ping' });
      ka.timer = setTimeout(() => {
        this.onBroken(`no pong within ${ka.timeoutMs} ms`);
        this.abort(4408, 'Request Timeout');
      }, ka.timeoutMs);
    }, ka.intervalMs);
  }

  get isOpen() {
    return !this.closed && this.socket !== null && this.socket.readyState === OPEN;
  }

  onMessage(ev) {
    let msg;
    try {
      msg = JSON.parse(ev.data);
    } catch {
      this.protocolError(`message is not JSON: ${String(ev.data).slice(0, 80)}`);
      return;
    }
    const op = msg && msg.id !== undefined ? this.pending[msg.id] : null;
    switch (msg && msg.type) {
      case 'connection_ack':
        if (this.ackWaiter) {
          const w = this.ackWaiter;
          this.ackWaiter = null;
          w.resolve(ev);
        } else this.protocolError('second connection_ack');
        return;
      case 'ping':
        this.send({ type: 'pong' });
        return;
      case 'pong':
        if (this.ka) this.schedulePing();
        return;
      case 'next':
        if (!op) return; // a late message for an operation already settled
        op.count++;
        if (op.count === 1) op.first = msg.payload;
        if (op.keep) op.results.push(msg.payload);
        if (op.onNext) op.onNext(msg.payload, ev.timestamp);
        // Enough events: complete it from this side, as a client that leaves does.
        if (op.stopAfter && op.count >= op.stopAfter && this.pending[msg.id]) {
          this.send({ id: msg.id, type: 'complete' });
          this.settle(msg.id, null, ev.timestamp);
        }
        return;
      case 'error':
        if (!op) return;
        this.settle(msg.id, new WsError(graphqlErrorText(msg.payload)));
        return;
      case 'complete':
        if (!op) return;
        this.settle(msg.id, null, ev.timestamp);
        return;
      default:
        this.protocolError(`unexpected message type ${JSON.stringify(msg && msg.type)}`);
    }
  }

  send(obj) {
    if (this.isOpen) this.socket.send(JSON.stringify(obj));
  }

  protocolError(why) {
    this.onBroken(`protocol error: ${why}`);
    this.abort(4400, 'protocol error');
  }

  // Every pending operation (and a pending open) fails with `why`.
  onBroken(why) {
    if (this.ackWaiter) {
      const w = this.ackWaiter;
      this.ackWaiter = null;
      w.reject(why);
    }
    for (const id of Object.keys(this.pending)) this.settle(id, new WsError(why));
  }

  onClosed(ev) {
    this.closed = true;
    this.disarm();
    this.closeInfo = { code: ev.code, reason: ev.reason };
    this.onBroken(`socket closed (code ${ev.code}${ev.reason ? `, ${ev.reason}` : ''})`);
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.resolve(this.closeInfo);
    }
  }

  // Ends an operation: an execute()'s is judged and recorded (finish), a
  // subscription's promise resolves with its results or rejects.
  settle(id, err, timestamp) {
    const op = this.pending[id];
    if (!op) return;
    delete this.pending[id];
    if (op.execute) finish(op, err, timestamp || Date.now());
    else if (err) op.reject(err);
    else op.resolve({ results: op.results, endedAt: timestamp || Date.now() });
  }

  // Starts an operation; resolves { results, endedAt } on complete, rejects on error.
  // keep: false keeps no results (a long subscription handled in onNext); stopAfter: N
  // completes it after its Nth event.
  start({ query, variables = {}, onNext, timeoutMs = this.timeoutMs, keep = true, stopAfter = 0 }) {
    if (!this.isOpen) return Promise.reject(new WsError('socket is not open'));
    const { ms, byDeadline } = this.budget(timeoutMs);
    if (ms <= 0) return Promise.reject(new WsError('the step ended before the operation started', true));
    return new Promise((resolve, reject) => {
      this.begin(
        {
          execute: false,
          onNext,
          resolve,
          reject,
          results: [],
          keep,
          stopAfter,
          count: 0,
          first: null,
          deadline: 0,
          timeoutMs: 0,
          byDeadline: false,
        },
        query,
        variables,
        ms,
        byDeadline,
      );
    });
  }

  // Registers an operation (its timeout in the watchdog) and sends its subscribe.
  begin(op, query, variables, ms, byDeadline) {
    const id = String(this.nextId++);
    op.deadline = Date.now() + ms;
    op.timeoutMs = ms;
    op.byDeadline = byDeadline;
    this.pending[id] = op;
    this.arm(op.deadline);
    this.socket.send(`{"id":"${id}","type":"subscribe","payload":${requestJson(query, variables)}}`);
  }

  // Operation timeouts share one timer, armed for the earliest deadline: a
  // timer per operation (setTimeout + clearTimeout) cost as much as the rest of
  // an operation's bookkeeping in k6. When it fires it fails the operations
  // past their deadline (sending complete, as graphql-ws does) and re-arms for
  // the next one, so with operations of one timeout it runs once per timeout,
  // not once per operation. Disarmed when the socket closes, or the pending
  // timer would keep the k6 iteration alive.
  arm(deadline) {
    if (this.watchdog !== null && this.watchdogAt <= deadline) return;
    if (this.watchdog !== null) clearTimeout(this.watchdog);
    this.watchdogAt = deadline;
    this.watchdog = setTimeout(() => this.onWatchdog(), Math.max(0, deadline - Date.now()));
  }

  disarm() {
    if (this.ka) clearTimeout(this.ka.timer); // a pending timer would keep the iteration alive
    if (this.watchdog !== null) clearTimeout(this.watchdog);
    this.watchdog = null;
    this.watchdogAt = Infinity;
  }

  onWatchdog() {
    this.watchdog = null;
    this.watchdogAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const id of Object.keys(this.pending)) {
      const op = this.pending[id];
      if (op.deadline <= now) {
        this.send({ id, type: 'complete' });
        if (op.byDeadline)
          this.settle(id, new WsError(`the step ended with the operation in flight (${op.timeoutMs} ms)`, true));
        else this.settle(id, new WsError(`no complete within ${op.timeoutMs} ms`));
      } else if (op.deadline < next) next = op.deadline;
    }
    if (next !== Infinity && !this.closed) this.arm(next);
  }

  // One query or mutation, recorded as an operation: op_duration from sending
  // subscribe to complete; op_failed on errors, wrong shape, timeout or a broken
  // socket; op_abandoned when the deadline ended it first.
  // Resolves { ok, ms, data, abandoned }; never rejects. One promise per operation,
  // settled by the message that ends it (finish() judges and records it).
  execute({ query, variables = EMPTY, validate = null, tags = this.tags, timeoutMs = this.timeoutMs }) {
    const t0 = Date.now();
    const op = {
      execute: true,
      t0,
      validate,
      tags,
      resolve: null,
      results: null,
      keep: false,
      onNext: null,
      count: 0,
      first: null,
      deadline: 0,
      timeoutMs: 0,
      byDeadline: false,
    };
    if (!this.isOpen) return Promise.resolve(finish(op, new WsError('socket is not open'), t0));
    // The wait, cut to the socket's deadline (budget(), without its object).
    const left = this.deadline - t0;
    const byDeadline = left < timeoutMs;
    const ms = byDeadline ? Math.max(0, left) : timeoutMs;
    if (ms <= 0)
      return Promise.resolve(finish(op, new WsError('the step ended before the operation started', true), t0));
    return new Promise((resolve) => {
      op.resolve = resolve;
      this.begin(op, query, variables, ms, byDeadline);
    });
  }

  // A subscription until the server completes it; onNext(payload, receivedAt) per event
  // (receivedAt: when k6's reader received the frame, fractional ms).
  subscribe({ query, variables, onNext, timeoutMs, keep }) {
    return this.start({ query, variables, onNext, timeoutMs, keep });
  }

  // A subscription for `events` events (then completed; sooner if the server completes
  // it), recorded as one operation: op_duration from subscribe to its last event, beside
  // it first_event (to the first) and event_rate (events a second from the first to the
  // last). An event with errors, no event, a timeout or a broken socket fail it.
  // Resolves { ok, ms, count, abandoned }; never rejects.
  async takeEvents({ query, variables = EMPTY, events, tags = this.tags, timeoutMs = this.timeoutMs }) {
    const t0 = Date.now();
    let first = null;
    let last = null;
    let errors = null;
    let count = 0;
    const onNext = (payload, at) => {
      last = at || Date.now();
      if (first === null) first = last;
      count++;
      if (payload && payload.errors && !errors) errors = payload.errors;
    };
    let reason = null;
    try {
      await this.start({ query, variables, onNext, timeoutMs, keep: false, stopAfter: events });
    } catch (err) {
      if (err && err.abandoned) {
        recordAbandoned(tags);
        return { ok: false, ms: null, count, abandoned: true };
      }
      reason = String(err.message || err);
    }
    if (!reason && errors) reason = graphqlErrorText(errors);
    if (!reason && !count) reason = 'the subscription completed with no event';
    const ms = last === null ? null : last - t0;
    const ok = recordOutcome(!reason, ms, tags, reason, reason ? 'subscription events' : null);
    if (first !== null) firstEvent.add(first - t0, tags);
    const rate = first === null ? null : eventsPerSecond(count, first, last);
    if (rate !== null) eventRate.add(rate, tags);
    return { ok, ms, count, abandoned: false };
  }

  abort(code, reason) {
    if (!this.socket || this.closed) return;
    // k6 v1.8.1 blocks the whole VU in close() while the socket is still
    // connecting (its write queue has no reader until the handshake ends, and
    // none at all if it fails): a stalled upgrade would hang the run. Close it
    // once it opens instead; the VU's end (gracefulStop) cancels a handshake
    // that never completes.
    if (this.socket.readyState === CONNECTING) {
      this.closeWhenOpen = { code, reason };
      return;
    }
    try {
      this.socket.close(code, reason);
    } catch {
      // already closing
    }
  }

  // Closes normally and waits for the close event, at most CLOSE_WAIT_MS or
  // `timeoutMs` (sessions.js: until the step ends); null if it did not come.
  close({ timeoutMs = CLOSE_WAIT_MS } = {}) {
    this.disarm();
    if (!this.socket || this.closed) return Promise.resolve(this.closeInfo);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), Math.max(0, Math.min(CLOSE_WAIT_MS, timeoutMs)));
      this.waiters.push({ resolve, timer });
      this.abort(1000, 'done');
    });
  }
}

const EMPTY = Object.freeze({});
const ABANDONED = Object.freeze({ ok: false, ms: null, data: null, abandoned: true });

// Judges and records an execute()'s operation when it ends (err: a WsError, or
// null on complete); resolves its promise (when it has one) and returns the outcome.
function finish(op, err, endedAt) {
  let out;
  if (err && err.abandoned) {
    recordAbandoned(op.tags);
    out = ABANDONED;
  } else if (err) {
    recordOutcome(false, null, op.tags, String(err.message || err), 'ws result');
    out = { ok: false, ms: null, data: null, abandoned: false };
  } else {
    const ms = endedAt - op.t0;
    const first = op.first || {};
    const data = first.data || null;
    let reason = null;
    let failedCheck = null;
    if (op.count !== 1) {
      failedCheck = 'ws result';
      reason = `expected one result, got ${op.count}`;
    } else if (first.errors) {
      failedCheck = 'no GraphQL errors';
      reason = graphqlErrorText(first.errors);
    } else if (!data) {
      failedCheck = 'no GraphQL errors';
      reason = 'the answer has no data';
    } else if (op.validate) {
      reason = op.validate(data);
      if (reason) failedCheck = 'right shape and count';
    }
    if (op.count > 0 && serverTimingDue()) recordServerTimingNow(timingOf(first), op.tags);
    out = { ok: recordOutcome(failedCheck === null, ms, op.tags, reason, failedCheck), ms, data, abandoned: false };
  }
  if (op.resolve) op.resolve(out);
  return out;
}

// extensions.timing { execMs, serMs, totalMs } -> { exec, ser, total } (total:
// exec + ser from servers that send no totalMs).
export function timingOf(result) {
  const t = result && result.extensions && result.extensions.timing;
  if (!t) return null;
  const out = {};
  if (typeof t.execMs === 'number') out.exec = t.execMs;
  if (typeof t.serMs === 'number') out.ser = t.serMs;
  if (typeof t.totalMs === 'number') out.total = t.totalMs;
  else if (out.exec !== undefined && out.ser !== undefined) out.total = out.exec + out.ser;
  return out;
}
