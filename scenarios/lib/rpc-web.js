// The browser's RPC over k6's http module: one unary call over the Connect protocol
// (JSON or binary protobuf) or gRPC-Web, recorded as an operation the way
// graphqlHttp records one (scenarios/lib/http.js): set-up, server time, outcome.
//
//   connect-json   POST /<service>/<method>, Content-Type application/json; an error
//                  is a non-200 status with {"code","message"} (connectrpc.com/docs/protocol)
//   connect-proto  the same with application/proto: the body is the bare message
//   grpc-web       POST with application/grpc-web+proto: the body is length-prefixed
//                  frames, the message's (flag 0) then the trailers' (flag 0x80,
//                  "grpc-status: 0\r\n..."), both in the body (github.com/grpc/grpc,
//                  doc/PROTOCOL-WEB.md); an answer that ends without its trailer
//                  frame is a failed call
// transport: http-keepalive, http-fresh (Connection: close) or http2 (TLS, ALPN h2),
// as for GraphQL (http.js). k6 reads a response whole, so a server stream would be
// timed to its end only: the lanes are unary.
import http from 'k6/http';
import { TARGETS } from './config.js';
import { HTTP_TIMEOUT } from './http.js';
import { recordOutcome, recordServerTimingText, recordSetup, serverTimingDue, withTag } from './metrics.js';
import { decodeMessage, encodeMessage } from './protowire.js';

export const RPC_PROTOCOLS = {
  'connect-json': { contentType: 'application/json', binary: false },
  'connect-proto': { contentType: 'application/proto', binary: true },
  'grpc-web': { contentType: 'application/grpc-web+proto', binary: true, framed: true },
};

export const connectUrl = (tls) => (tls ? TARGETS.CONNECT_TLS_URL : TARGETS.CONNECT_URL);

// books.v1's messages the lanes send and read (servers/proto/books.proto), by their
// JSON names (what Connect's JSON and k6's gRPC client use).
const AUTHOR = { id: [1, 'string'], firstName: [2, 'string'], lastName: [3, 'string'] };
const BOOK = { id: [1, 'string'], name: [2, 'string'], pageCount: [3, 'int32'], author: [4, AUTHOR] };
export const BOOKS_METHODS = {
  GetBook: { request: { id: [1, 'string'] }, response: BOOK },
  Payload: {
    request: { size: [1, 'int32'] },
    response: { size: [1, 'int32'], data: [2, 'string'] },
    lengthOnly: { data: true },
  },
};
export const BOOKS_SERVICE = 'books.v1.Books';

// A Connect / gRPC-Web error code by gRPC status number (the same table).
const CODES = [
  'ok',
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
];

// The request's body: JSON text, the bare message, or one gRPC-Web frame.
export function requestBody(protocol, method, message) {
  const p = RPC_PROTOCOLS[protocol];
  if (!p.binary) return JSON.stringify(message);
  const bytes = encodeMessage(method.request, message);
  if (!p.framed) return bytes.buffer;
  const framed = new Uint8Array(5 + bytes.length);
  const n = bytes.length;
  framed.set([0, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  framed.set(bytes, 5);
  return framed.buffer;
}

const percentDecode = (s) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

// gRPC-Web's answer: its frames -> { message bytes range, status, grpcMessage } or { problem }.
export function readGrpcWebFrames(bytes) {
  let message = null;
  for (let i = 0; i < bytes.length;) {
    if (i + 5 > bytes.length) return { problem: `truncated frame header at byte ${i} of ${bytes.length}` };
    const flag = bytes[i];
    const n = ((bytes[i + 1] << 24) >>> 0) + (bytes[i + 2] << 16) + (bytes[i + 3] << 8) + bytes[i + 4];
    const start = i + 5;
    if (start + n > bytes.length)
      return { problem: `truncated frame: ${n} bytes announced, ${bytes.length - start} came` };
    if (flag & 0x80) {
      let text = '';
      for (let k = start; k < start + n; k++) text += String.fromCharCode(bytes[k]);
      const trailers = {};
      for (const line of text.split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      if (start + n !== bytes.length) return { problem: 'bytes after the trailer frame' };
      return { message, trailers, status: Number(trailers['grpc-status']) };
    }
    if (message) return { problem: 'a second message in a unary answer' };
    message = [start, start + n];
    i = start + n;
  }
  return { problem: `no trailer frame: the answer ended after ${bytes.length} bytes without grpc-status` };
}

// The verdict on one answer: { ok, reason, failedCheck, message }.
export function judgeRpc(res, { protocol, transport, method, validate }) {
  const fail = (failedCheck, reason) => ({ ok: false, failedCheck, reason, message: null });
  if (res.status === 0) return fail('status 200', `${res.error_code || ''} ${res.error}`.trim());
  if (transport === 'http2' && res.proto !== 'HTTP/2.0') return fail('HTTP/2', `protocol ${res.proto}, not HTTP/2.0`);
  const p = RPC_PROTOCOLS[protocol];
  const body = res.body;
  if (res.status !== 200) {
    let text = typeof body === 'string' ? body : '';
    if (!text && body) text = String.fromCharCode.apply(null, new Uint8Array(body).slice(0, 300));
    let why = text.slice(0, 200);
    try {
      const e = JSON.parse(text);
      if (e && e.code) why = `${e.code}: ${e.message || ''}`;
    } catch {
      // not Connect's JSON error: the text as it came
    }
    return fail('status 200', `status ${res.status}: ${why}`);
  }
  const type = String(res.headers['Content-Type'] || '');
  if (!type.startsWith(p.contentType))
    return fail('content type', `the answer's content type is ${type || 'missing'}, not ${p.contentType}`);
  let message;
  try {
    if (!p.binary) message = JSON.parse(body);
    else {
      const bytes = new Uint8Array(body || new ArrayBuffer(0));
      let range = [0, bytes.length];
      if (p.framed) {
        const frames = readGrpcWebFrames(bytes);
        if (frames.problem) return fail('trailers', frames.problem);
        if (frames.status !== 0) {
          const code = CODES[frames.status] || `status ${frames.trailers['grpc-status']}`;
          return fail('grpc-status 0', `${code}: ${percentDecode(frames.trailers['grpc-message'] || '')}`);
        }
        if (!frames.message) return fail('right shape and count', 'no message before the trailers');
        range = frames.message;
      }
      message = decodeMessage(method.response, bytes, range[0], range[1], method.lengthOnly);
    }
  } catch (err) {
    return fail('right shape and count', `the answer is not a ${protocol} message: ${err.message || err}`);
  }
  const problem = validate ? validate(message) : null;
  if (problem) return fail('right shape and count', problem);
  return { ok: true, reason: null, failedCheck: null, message };
}

const paramsMade = {};
function paramsOf(protocol, transport, timeout, headers) {
  const key = headers ? null : `${protocol}|${transport}|${timeout}`;
  if (key && paramsMade[key]) return paramsMade[key];
  const p = RPC_PROTOCOLS[protocol];
  const h = { 'Content-Type': p.contentType, ...(headers || {}) };
  if (p.framed) h['X-Grpc-Web'] = '1';
  else h['Connect-Protocol-Version'] = '1';
  if (transport === 'http-fresh') h.Connection = 'close';
  const params = { headers: h, tags: { name: protocol }, timeout, responseType: p.binary ? 'binary' : 'text' };
  if (key) paramsMade[key] = params;
  return params;
}

const NO_TAGS = {};

// k6 keeps a VU's connections from one k6 scenario to the next, so a kept lane that
// follows another to the same server would start on its connection and never time
// the call that opens one (conn:cold). A request with Connection: close (health,
// not recorded) takes the idle connection, if any, and closes it: HTTP/1.1 and
// HTTP/2 alike (measured with k6 v1.8.1: the next call dials and handshakes anew).
export function dropKeptConnection(tls) {
  http.get(`${connectUrl(tls)}/healthz`, { headers: { Connection: 'close' }, tags: { name: 'drop-connection' } });
}

// One unary call, recorded. opts: { protocol, transport, tls, method ('Payload'),
// request (its message as an object), validate(message) -> null or a sentence, tags,
// url (another server than the reference one), service, methods (another table),
// headers, timeout }. Returns { ok, ms, res, message, reason }.
export function rpcCall(opts) {
  const { protocol, transport, tls, request, validate, timeout = HTTP_TIMEOUT } = opts;
  const methods = opts.methods || BOOKS_METHODS;
  const method = methods[opts.method];
  const base = opts.url || connectUrl(tls || transport === 'http2');
  const url = `${base}/${opts.service || BOOKS_SERVICE}/${opts.method}`;
  const res = http.request(
    'POST',
    url,
    requestBody(protocol, method, request),
    paramsOf(protocol, transport, timeout, opts.headers),
  );
  const t = res.timings;
  const ms = t.connecting + t.tls_handshaking + t.duration;
  const given = opts.tags || NO_TAGS;
  const tags =
    given.conn !== undefined
      ? given
      : withTag(given, 'conn', t.connecting > 0 || t.tls_handshaking > 0 ? 'cold' : 'warm');
  const verdict = judgeRpc(res, { protocol, transport, method, validate });
  if (res.status !== 0) {
    if (t.connecting > 0) recordSetup('connect', t.connecting, tags);
    if (t.tls_handshaking > 0) recordSetup('tls', t.tls_handshaking, tags);
    if (serverTimingDue()) recordServerTimingText(res.headers['Server-Timing'], tags);
  }
  const ok = recordOutcome(verdict.ok, ms, tags, verdict.reason, verdict.failedCheck);
  return { ok, ms, res, message: verdict.message, reason: verdict.reason };
}

// Payload's answer, whichever the protocol: JSON gives the text, protobuf its length.
export const validateRpcPayload = (size) => (msg) => {
  const length = msg && msg.data && (typeof msg.data === 'string' ? msg.data.length : msg.data.bytes);
  if (!msg || Number(msg.size) !== size || length !== size) return `Payload of ${size} bytes expected`;
  return null;
};
