// The books.v1.Books handlers. Books come from servers/shared/data.js, so they
// are the GraphQL server's books; fields are renamed to the proto's snake_case.
//
// Bad input is answered, never thrown: INVALID_ARGUMENT with a sentence naming
// the bound, NOT_FOUND for an id that names no book. Streams respect
// backpressure, stop when the call is cancelled, and end with UNAVAILABLE when
// the server shuts down.
import grpc from '@grpc/grpc-js';
import { LIMITS } from '../../common/defaults.js';
import { BOOK_COUNT, bookIndex, checkCount, filler, fullBookAt } from '../shared/data.js';
import { BadRequest, encodeResponse } from './proto.js';
import { ServerTiming } from './server-timing.js';
import { processStats } from '../shared/stats.js';

const { status } = grpc;

// An event stream may not pause longer than this between events (count <= MAX_EVENTS
// bounds its length, this bounds its duration).

export class RpcError extends Error {
  constructor(code, details) {
    super(details);
    this.code = code;
    this.details = details;
  }
}

export const invalid = (details) => new RpcError(status.INVALID_ARGUMENT, details);

function check(problem) {
  if (problem) throw invalid(problem);
}

export function checkRange(name, value, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be an integer from ${min} to ${max} (got ${value})`);
  }
}

function toProtoBook({ id, name, pageCount, author }) {
  return {
    id,
    name,
    page_count: pageCount,
    author: { id: author.id, first_name: author.firstName, last_name: author.lastName },
  };
}

function quoted(text, max = 40) {
  const s = String(text);
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}...` : s);
}

// The book an id names (servers/shared/data.js's camelCase shape), or the answer
// to an id that names none. The Connect server (servers/connect/) shares it.
export function findBook(id) {
  const i = bookIndex(id);
  if (i !== null) return fullBookAt(i);
  if (/^book-\d+$/.test(id)) {
    throw new RpcError(status.NOT_FOUND, `no book with id ${quoted(id)}; ids run from book-1 to book-${BOOK_COUNT}`);
  }
  throw invalid(`id must look like "book-<n>" with n from 1 to ${BOOK_COUNT} (got ${quoted(id)})`);
}

const getBook = ({ id }) => toProtoBook(findBook(id));

export function listedCount(n) {
  check(checkCount('n', n, LIMITS.MAX_BOOKS));
  return n;
}

function listBooks({ n }) {
  listedCount(n);
  const books = new Array(n);
  for (let i = 0; i < n; i++) books[i] = toProtoBook(fullBookAt(i + 1));
  return { books };
}

export function payload({ size }) {
  return { size, data: filler(payloadSize(size)) };
}

export function payloadSize(size) {
  check(checkCount('size', size, LIMITS.MAX_PAYLOAD_BYTES));
  return size;
}

// Metadata `gc: 1` collects garbage first when the server runs with --expose-gc
// (tests measuring retained memory); otherwise it is ignored.
function stats(_request, call) {
  const gc = call.metadata.get('gc')[0] === '1';
  const { rssBytes, heapUsedBytes, uptimeSeconds } = processStats({ gc });
  return { rss_bytes: rssBytes, heap_used_bytes: heapUsedBytes, uptime_seconds: uptimeSeconds };
}

export function toStatus(err) {
  if (err instanceof RpcError) return { code: err.code, details: err.details };
  console.error(`grpc server: ${err.stack || err}`);
  return { code: status.INTERNAL, details: `internal error: ${err.message}` };
}

// gRPC's own default for max_metadata_size; grpc-js's server has no such limit.
// Metadata up to the hard limit the transport enforces (server.js) reaches the
// handler, which answers with a sentence; beyond that HTTP/2 refuses the stream.
export const MAX_METADATA_BYTES = 8 * 1024;

// Header list size as HTTP/2 counts it (RFC 7541 4.1): name + value + 32 per entry.
function metadataBytes(metadata) {
  let bytes = 0;
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    for (const value of values) bytes += key.length + value.length + 32;
  }
  return bytes;
}

export function checkMetadata(call) {
  const bytes = metadataBytes(call.metadata);
  if (bytes > MAX_METADATA_BYTES) {
    throw new RpcError(
      status.RESOURCE_EXHAUSTED,
      `request metadata is ${bytes} bytes; the limit is ${MAX_METADATA_BYTES}: send less metadata`,
    );
  }
}

// A request message (of a unary call, or one message of a stream) that decoded.
export function checkMessage(message) {
  if (message instanceof BadRequest) throw invalid(message.message);
  return message;
}

function checkRequest(call) {
  checkMetadata(call);
  return checkMessage(call.request);
}

// A unary handler: build the response, encode it (timed), answer with server-timing.
export function unary(method, build) {
  return (call, callback) => {
    const timing = new ServerTiming();
    let bytes;
    try {
      const message = timing.time('exec', () => build(checkRequest(call), call));
      bytes = timing.time('ser', () => encodeResponse(method, message));
    } catch (err) {
      return callback(toStatus(err));
    }
    return callback(null, bytes, timing.metadata());
  };
}

// The sending side of one server stream (and of the hub's streams: hub-service.js).
export class Outbound {
  constructor(method, call, active) {
    this.method = method;
    this.call = call;
    this.active = active;
    this.timing = new ServerTiming();
    this.done = false;
    this.timer = null;
    this.wake = null;
    this.cleanups = [];
    active.add(this);
    call.on('cancelled', () => this.finish());
  }

  // fn() runs once when the stream is over (ended, failed or cancelled).
  onFinish(fn) {
    if (this.done) fn();
    else this.cleanups.push(fn);
  }

  get open() {
    return !this.done && !this.call.cancelled;
  }

  // Stops timers and waits; the stream is over (ended, failed or cancelled).
  finish() {
    if (this.done) return false;
    this.done = true;
    this.active.delete(this);
    clearTimeout(this.timer);
    this.wake?.();
    for (const fn of this.cleanups.splice(0)) fn();
    return true;
  }

  // Resolves when `ms` have passed or the stream is over.
  sleep(ms) {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  // Encodes and writes one message; when the transport is full, resolves once
  // it drained (or the stream is over), so a slow client never piles up memory.
  send(build) {
    const message = this.timing.time('exec', build);
    const bytes = this.timing.time('ser', () => encodeResponse(this.method, message));
    if (this.call.write(bytes)) return null;
    return new Promise((resolve) => {
      const done = () => {
        this.call.off('drain', done);
        resolve();
      };
      this.wake = done;
      this.call.once('drain', done);
    });
  }

  end() {
    if (this.finish()) this.call.end(this.timing.metadata());
  }

  fail(err) {
    if (this.finish()) this.call.emit('error', toStatus(err));
  }

  shutdown() {
    this.fail(new RpcError(status.UNAVAILABLE, 'server is shutting down; reconnect and retry'));
  }
}

// A server-streaming handler: `produce(request, out)` sends messages through out.
function serverStream(method, active, produce) {
  return (call) => {
    const out = new Outbound(method, call, active);
    Promise.resolve()
      .then(() => produce(checkRequest(call), out))
      .then(
        () => out.end(),
        (err) => out.fail(err),
      );
  };
}

async function streamBooks({ n }, out) {
  check(checkCount('n', n, LIMITS.MAX_BOOKS));
  for (let i = 1; i <= n && out.open; i++) {
    const drained = out.send(() => toProtoBook(fullBookAt(i)));
    if (drained) await drained;
  }
}

async function streamEvents({ count, interval_ms: intervalMs, size }, out) {
  check(checkCount('count', count, LIMITS.MAX_EVENTS));
  checkRange('interval_ms', intervalMs, LIMITS.MIN_EVENT_INTERVAL_MS, LIMITS.MAX_EVENT_INTERVAL_MS);
  check(checkCount('size', size, LIMITS.MAX_PAYLOAD_BYTES));
  // As the GraphQL subscription does: the first event at once, event k due at
  // start + (k-1) * interval_ms (no drift); late events (backpressure) go out when drained.
  const start = performance.now();
  for (let seq = 1; seq <= count && out.open; seq++) {
    const wait = start + (seq - 1) * intervalMs - performance.now();
    if (wait > 0) await out.sleep(wait);
    if (!out.open) return;
    const drained = out.send(() => ({
      id: `event-${seq}`,
      seq,
      // Epoch ms, fractional, read just before encoding and writing.
      sent_at: performance.timeOrigin + performance.now(),
      data: filler(size, seq),
    }));
    if (drained) await drained;
  }
}

// Handlers for server.addService(serverBooksService, ...). Open streams are kept
// in `active` so the server can end them when it shuts down.
export function booksHandlers(active = new Set()) {
  return {
    GetBook: unary('GetBook', getBook),
    ListBooks: unary('ListBooks', listBooks),
    Payload: unary('Payload', payload),
    Stats: unary('Stats', stats),
    StreamBooks: serverStream('StreamBooks', active, streamBooks),
    StreamEvents: serverStream('StreamEvents', active, streamEvents),
  };
}
