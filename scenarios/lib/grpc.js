// gRPC on k6/net/grpc, written once for every scenario.
//
// k6 loads servers/proto/books.proto (the server's own contract) in the init
// context, so create clients at module level: `const client = newClient();`.
//   transport grpc        a warm channel per VU: connect on the VU's first
//                         operation, then reuse it; that first operation is
//                         tagged conn:cold and includes the connect
//   transport grpc-fresh  a new channel per call: connect + call + close
//   transport grpc-stream server streaming over the VU's warm channel
//   transport grpc-bidi   requests and responses one after another on one long-lived
//                         bidirectional stream (BidiStream)
//   transport grpc-client-stream  a client stream answered once it ends (clientStream)
// k6's connect() blocks until the channel is ready (TCP, TLS, HTTP/2
// preface), so setup_duration{phase:grpc_connect} is the whole channel set-up.
// TLS uses k6's TLS config: insecureSkipTLSVerify covers the self-signed cert.
import { eventsPerSecond } from '../../common/streams.js';
import grpc from 'k6/net/grpc';
import { ENV, TARGETS } from './config.js';
import {
  eventRate,
  firstEvent,
  reconnects,
  recordFailedCheck,
  recordOp,
  recordOutcome,
  recordServerTimingText,
  recordSetup,
  serverTimingDue,
  withTag,
} from './metrics.js';
import { stepStarted } from './progress.js';
import { setting } from '../../common/settings.js';

export const SERVICE = 'books.v1.Books';
// The proto's directory, resolved from this module so any scenario can load it.
const PROTO_DIR = import.meta.resolve('../../servers/proto').replace(/^file:\/\//, '');
export const GRPC_TIMEOUT = setting(ENV, 'GRPC_TIMEOUT');
// Study 002 sends up to 500000 books in one message (tens of MB).
const MAX_MESSAGE = 256 * 1024 * 1024;

export const grpcAddr = (tls) => (tls ? TARGETS.GRPC_TLS_ADDR : TARGETS.GRPC_ADDR);

const NO_TAGS = {};
// A method of the channel's service ('GetBook'), or any ('pkg.Service/Method').
const pathOf = (service, method) => (method.includes('/') ? method : `${service}/${method}`);
// invoke() params, made once per (discard, timeout): call() runs per operation.
const invokeParams = [{}, {}];
function paramsFor(timeout, discard) {
  const byTimeout = invokeParams[discard ? 1 : 0];
  return byTimeout[timeout] || (byTimeout[timeout] = { timeout, discardResponseMessage: discard });
}

// Init context only (k6 restriction). Another API's proto: newClient([dir], 'svc.proto').
export function newClient(importPaths = [PROTO_DIR], file = 'books.proto') {
  const client = new grpc.Client();
  client.load(importPaths, file);
  return client;
}

// gRPC status codes by number (k6 gives the number), so a failure names its code.
const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];
// k6 hands a status over as Go's code, which prints as Go names it ('NotFound').
const GO_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];
export function statusText(code, message) {
  let n = Number(code);
  if (!Number.isInteger(n)) n = GO_NAMES.indexOf(String(code));
  return `gRPC status ${STATUS_NAMES[n] || String(code)} (${n >= 0 ? n : '?'})${message ? `: ${message}` : ''}`;
}

// One gRPC channel: a k6 client and whether it is connected.
//   addr: another endpoint than the reference server's; service: the methods' service;
//   metadata: sent with every call (your API's credentials)
export class Channel {
  constructor(client, { tls = false, tags = {}, addr = null, service = SERVICE, metadata } = {}) {
    this.client = client;
    this.metadata = metadata;
    this.withMetadata = {}; // invoke() params with the metadata, per (discard, timeout)
    this.tls = tls;
    this.tags = tags;
    this.addr = addr;
    this.service = service;
    this.connected = false;
  }

  // Connects; records setup_duration{phase:grpc_connect}. Returns the time it took
  // or throws an Error saying why it could not connect.
  connect(timeout = GRPC_TIMEOUT) {
    const t0 = Date.now();
    this.client.connect(this.addr || grpcAddr(this.tls), {
      plaintext: !this.tls,
      timeout,
      maxReceiveSize: MAX_MESSAGE,
      maxSendSize: MAX_MESSAGE,
    });
    const ms = Date.now() - t0;
    this.connected = true;
    recordSetup('grpc_connect', ms, this.tags);
    return ms;
  }

  paramsFor(timeout, discard) {
    if (!this.metadata) return paramsFor(timeout, discard);
    const key = `${timeout}|${discard}`;
    return (
      this.withMetadata[key] || (this.withMetadata[key] = { ...paramsFor(timeout, discard), metadata: this.metadata })
    );
  }

  // Marked closed before the client is: when a step's end interrupts the VU inside
  // close(), the next step must not find a channel that says connected and is not
  // ("no gRPC connection, you must call connect first": serialization under 3g).
  close() {
    const was = this.connected;
    this.connected = false;
    if (was) this.client.close();
  }

  // After a failure: drop the channel so the next call connects again.
  reset() {
    if (this.connected) reconnects.add(1, this.tags);
    this.close();
  }

  // One unary call, recorded as an operation. On the warm transport the call
  // that opens the channel is tagged conn:cold and its duration includes the
  // connect; with fresh: true the channel is opened and closed around the call.
  //   validate(message) -> null | sentence;  discard: skip converting the reply to JS
  // Returns { ok, ms, message }.
  // record: false checks the reply without timing an operation: a reply that fails
  // its check still counts in op_failed (metrics.js recordFailedCheck).
  call(
    method,
    request,
    { validate, discard = false, fresh = false, tags = NO_TAGS, record = true, timeout = GRPC_TIMEOUT } = {},
  ) {
    const t0 = Date.now();
    const cold = fresh || !this.connected;
    // The same tags object per channel and conn when the call adds none (metrics.js withTag).
    const opTags = withTag(tags === NO_TAGS ? this.tags : { ...this.tags, ...tags }, 'conn', cold ? 'cold' : 'warm');
    const methods = this.methods || (this.methods = {});
    const path = methods[method] || (methods[method] = pathOf(this.service, method));
    let res = null;
    let reason = null;
    try {
      if (!this.connected) this.connect(timeout);
      res = this.client.invoke(path, request, this.paramsFor(timeout, discard));
    } catch (err) {
      reason = String(err.message || err);
    }
    const ms = Date.now() - t0;
    if (fresh) this.close();
    const statusOk = res !== null && res.status === grpc.StatusOK;
    let failedCheck = statusOk ? null : 'gRPC status OK';
    if (res && !statusOk) reason = statusText(res.status, res.error ? res.error.message : '');
    if (statusOk) {
      if (record && serverTimingDue()) recordServerTimingText(res.trailers && res.trailers['server-timing'], opTags);
      if (validate) {
        const problem = validate(discard ? null : res.message);
        if (problem) {
          failedCheck = 'right shape and count';
          reason = problem;
        }
      }
    }
    let ok = failedCheck === null;
    if (record) ok = recordOutcome(ok, ms, opTags, reason, failedCheck);
    else if (!ok) recordFailedCheck({ tags: opTags, reason, failedCheck });
    if (!ok && !fresh) this.reset();
    return { ok, ms, message: res && res.message, reason };
  }

  // One server-streaming call, recorded as one operation: from the request to the
  // stream's end (every message received); a status other than OK fails it. The call
  // that opens the channel is tagged conn:cold. events: also record first_event (to the
  // first message) and event_rate (messages a second from the first to the last).
  // Returns a promise of { ok, ms, count, reason }.
  async stream(method, request, { tags = NO_TAGS, timeout = GRPC_TIMEOUT, events = false } = {}) {
    const t0 = Date.now();
    const opTags = withTag(
      tags === NO_TAGS ? this.tags : { ...this.tags, ...tags },
      'conn',
      this.connected ? 'warm' : 'cold',
    );
    let first = null;
    let last = null;
    const onData = events
      ? (_message, at) => {
          last = at;
          if (first === null) first = at;
        }
      : undefined;
    const r = await serverStream(this, method, request, { timeout, onData });
    const reason = r.error;
    const ok = recordOp({
      ok: !reason,
      ms: r.endedAt - t0,
      tags: opTags,
      reason,
      failedCheck: reason ? 'gRPC status OK' : null,
    });
    if (ok && first !== null) {
      firstEvent.add(first - t0, opTags);
      // k6 stamps messages here in whole milliseconds: a stream that arrives within one
      // counts as spread over one (its rate then a lower bound).
      const rate = eventsPerSecond(r.count, first, last, 1);
      if (rate !== null) eventRate.add(rate, opTags);
    }
    if (!ok) this.reset();
    return { ok, ms: r.endedAt - t0, count: r.count, reason };
  }
}

// A server stream: resolves { count, endedAt, error } when it ends (error is
// null or a sentence). onData(message, receivedAt) per message. Never rejects.
export function serverStream(channel, method, request, { onData, timeout = GRPC_TIMEOUT } = {}) {
  stepStarted();
  return new Promise((resolve) => {
    let count = 0;
    let error = null;
    let stream;
    try {
      if (!channel.connected) channel.connect();
      stream = new grpc.Stream(
        channel.client,
        pathOf(channel.service, method),
        channel.metadata ? { timeout, metadata: channel.metadata } : { timeout },
      );
    } catch (err) {
      resolve({ count, endedAt: Date.now(), error: String(err.message || err) });
      return;
    }
    stream.on('data', (msg) => {
      count += 1;
      if (onData) onData(msg, Date.now());
    });
    stream.on('error', (err) => {
      error = statusText(err.code, err.message);
    });
    stream.on('end', () => resolve({ count, endedAt: Date.now(), error }));
    stream.write(request);
    stream.end();
  });
}

// A bidirectional stream on which each request gets one response, in order:
//   const b = new BidiStream(channel, 'PayloadStream', { timeout });
//   const { message, at, error } = await b.send(request);   // never rejects
//   await b.close();                                        // half-close, wait for the end
// The channel connects first if it is not (blocking, as Channel.call).
export class BidiStream {
  constructor(channel, method, { timeout = GRPC_TIMEOUT } = {}) {
    this.pending = []; // resolvers, oldest first
    this.error = null;
    this.ended = false;
    this.onEnd = [];
    if (!channel.connected) channel.connect(timeout);
    this.stream = new grpc.Stream(channel.client, `${SERVICE}/${method}`, { timeout });
    this.stream.on('data', (message) => {
      const next = this.pending.shift();
      if (next) next({ message, at: Date.now(), error: null });
    });
    this.stream.on('error', (err) => {
      this.error = `status ${err.code}: ${err.message}`;
    });
    this.stream.on('end', () => {
      this.ended = true;
      for (const next of this.pending.splice(0))
        next({ message: null, at: Date.now(), error: this.error || 'the stream ended' });
      for (const fn of this.onEnd.splice(0)) fn();
    });
  }

  send(request) {
    if (this.ended) return Promise.resolve({ message: null, at: Date.now(), error: this.error || 'the stream ended' });
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.stream.write(request);
    });
  }

  // Half-closes and resolves once the server ended the stream (at most `waitMs`).
  close(waitMs = 5000) {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, waitMs));
      this.onEnd.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.stream.end();
    });
  }
}

// A client stream: writes every message, half-closes, and resolves with the
// server's one answer: { message, at, error } (never rejects).
export function clientStream(channel, method, messages, { timeout = GRPC_TIMEOUT } = {}) {
  stepStarted();
  return new Promise((resolve) => {
    let stream;
    try {
      if (!channel.connected) channel.connect(timeout);
      stream = new grpc.Stream(channel.client, `${SERVICE}/${method}`, { timeout });
    } catch (err) {
      resolve({ message: null, at: Date.now(), error: String(err.message || err) });
      return;
    }
    let message = null;
    let at = null;
    let error = null;
    stream.on('data', (m) => {
      message = m;
      at = Date.now();
    });
    stream.on('error', (err) => {
      error = `status ${err.code}: ${err.message}`;
    });
    stream.on('end', () => resolve({ message, at: at || Date.now(), error: error || (message ? null : 'no answer') }));
    for (const m of messages) stream.write(m);
    stream.end();
  });
}
