// One request handler for HTTP/1.1 (cleartext and TLS) and HTTP/2 (compat API):
// POST/GET /graphql through Apollo's executeHTTPGraphQLRequest (the documented way
// to build an integration), GET /healthz, and the HTTP side of caching (study 001):
// GET queries get `Cache-Control: public, max-age=60` and a strong ETag, and
// If-None-Match answers 304; the optional response cache answers repeats without
// executing (x-cache: HIT | MISS | BYPASS).
// Per request: the executor (`extensions.executor`, study 002: an instrumented
// request goes to the instrumented Apollo server, execution.js), generation time per
// resource (the x-generate header, study 001: resolvers.js), and Vulcain's Preload
// header, answered with preload Link headers (preload.js).
import { createHash } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import { HeaderMap } from '@apollo/server';
import { GRAPHQL_PATH, LIMITS } from '../../common/defaults.js';
import { executorOf } from '../../common/executors.js';
import { GENERATE_HEADER, parseGenerate } from '../../common/generation.js';
import { PRELOAD_HEADER, linkValues, parsePreload, preloadLinks } from './preload.js';
import { parseOnOff, responseCacheKey } from './responseCache.js';
import { nestingError } from './rules.js';
import { SLOW_CLIENT_MS } from '../shared/slow-clients.js';
import { processStats } from '../shared/stats.js';
import { asksCpu, newTiming, serverTimingHeader } from './timing.js';

export { GRAPHQL_PATH };
export const HEALTH_PATH = '/healthz';
const JSON_TYPE = 'application/json; charset=utf-8';
const GET_CACHE_CONTROL = 'public, max-age=60';

// The error shape GraphQL clients read: { errors: [{ message, extensions: { code } }] }.
export function errorBody(message, code) {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] }) + '\n';
}

function sendJson(res, status, body, headers = {}) {
  res.statusCode = status;
  res.setHeader('content-type', JSON_TYPE);
  res.setHeader('cache-control', 'no-store');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(body);
}

function sendError(res, status, message, code, headers = {}) {
  sendJson(res, status, errorBody(message, code), headers);
}

// The body as a Buffer, or { tooLarge } past `limit` bytes (the rest is read and
// dropped so the client gets to read the 413), or { tooSlow } when it is not all
// there within SLOW_CLIENT_MS (slowloris), or { aborted }.
function readBody(req, limit) {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(result);
      }
    };
    const timer = setTimeout(() => settle({ tooSlow: true }), SLOW_CLIENT_MS);
    if (Number(req.headers['content-length']) > limit) {
      req.resume();
      settle({ tooLarge: true });
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        settle({ tooLarge: true });
      } else chunks.push(chunk);
    });
    req.on('end', () => settle({ buffer: Buffer.concat(chunks, size) }));
    req.on('error', () => settle({ aborted: true }));
    req.on('close', () => settle({ aborted: true }));
  });
}

// HTTP/1.1: an answer sent before the request body is all in (413, 408) ends the
// connection; the rest of the body is not worth reading. Node would close the
// socket as soon as the answer is written, and bytes the client is still sending
// then make the kernel reset the connection, which can wipe the answer from the
// client's receive queue before it reads it. So close in stages (RFC 9112 9.6):
// FIN after the answer, keep reading (and dropping) for LINGER_MS, then close.
// Returns the header that tells the client.
const LINGER_MS = 2000;
function endConnection(req) {
  if (req.httpVersionMajor !== 1) return {}; // HTTP/2: the stream is reset instead (onRequest)
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  return { connection: 'close' };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

// A POST body -> { value } or { error: sentence }. Refused before JSON.parse:
// bytes that are not UTF-8 (they would turn into U+FFFD silently) and nesting
// deeper than MAX_NESTING (JSON.stringify of it overflows the stack later).
function parseJsonBody(buffer) {
  let text;
  try {
    text = utf8.decode(buffer);
  } catch {
    return { error: 'request body is not valid UTF-8: send JSON encoded as UTF-8' };
  }
  const depthError = nestingError(text, 'request JSON');
  if (depthError) return { error: depthError };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: `request body is not valid JSON (${err.message}); send {"query": "...", "variables": {...}}` };
  }
}

// URLSearchParams turns percent-encoded bytes that are not UTF-8 into U+FFFD silently.
function isUtf8QueryString(search) {
  try {
    for (const part of search.slice(1).split('&')) decodeURIComponent(part.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

const mediaType = (header) => (header ?? '').split(';')[0].trim().toLowerCase();

function strongEtag(body) {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

// If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/ prefixes are ignored.
function etagMatches(ifNoneMatch, etag) {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

// The document a GET (search string) or POST (parsed body) sends, for the shape
// checks; Apollo reads the request itself.
function queryOf(method, search, body) {
  if (method === 'GET') return new URLSearchParams(search).get('query');
  if (method === 'POST' && body && typeof body === 'object' && !Array.isArray(body)) return body.query;
  return undefined;
}

// The request's `extensions` (a GET's parameter is JSON text; one that is not is
// left for Apollo to refuse).
function extensionsOf(method, search, body) {
  if (method === 'GET') {
    const text = new URLSearchParams(search).get('extensions');
    if (!text) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  return method === 'POST' && body && typeof body === 'object' && !Array.isArray(body) ? body.extensions : undefined;
}

// What a GET or POST asks for, variables as JSON text: the response cache's key.
function operationParams(method, search, body) {
  if (method === 'GET') {
    const params = new URLSearchParams(search);
    return {
      query: params.get('query'),
      variables: params.get('variables'),
      operationName: params.get('operationName'),
    };
  }
  if (method === 'POST' && body && typeof body === 'object' && !Array.isArray(body)) {
    const variables = body.variables == null ? null : JSON.stringify(body.variables);
    return { query: body.query, variables, operationName: body.operationName };
  }
  return {};
}

function apolloHeaders(req) {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(':') || value === undefined) continue; // HTTP/2 pseudo-headers
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

// `?gc=1` collects garbage first when the server runs with --expose-gc (tests
// measuring retained memory); otherwise it is ignored.
function health(req, res, search) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 405, `${HEALTH_PATH} answers GET only`, 'METHOD_NOT_ALLOWED', { allow: 'GET, HEAD' });
  }
  const gc = new URLSearchParams(search).get('gc') === '1';
  return sendJson(res, 200, JSON.stringify({ status: 'ok', ...processStats({ gc }) }) + '\n');
}

// What a malformed or too slow HTTP/1.1 request gets instead of Node's bare
// status line: the same JSON error shape, saying what was wrong. (On the TLS port
// this also sees TLS errors, where there is no HTTP to answer in.)
const CLIENT_ERRORS = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    'Request Timeout',
    'REQUEST_TIMEOUT',
    () =>
      `request not received in time: headers within ${SLOW_CLIENT_MS / 1000} s, the body within ${SLOW_CLIENT_MS / 1000} s after them`,
  ],
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'HEADERS_TOO_LARGE',
    () => `request headers are over ${http.maxHeaderSize} bytes: send fewer or smaller headers`,
  ],
  HPE_INVALID_EOF_STATE: [
    400,
    'Bad Request',
    'BAD_REQUEST',
    () => 'the client ended the connection before the request was complete',
  ],
};

export function onClientError(err, socket) {
  const known =
    CLIENT_ERRORS[err.code] ??
    (err.code?.startsWith('HPE_') && [
      400,
      'Bad Request',
      'BAD_REQUEST',
      () => `malformed HTTP request (${err.code}: ${err.reason ?? err.message})`,
    ]);
  const answered = socket._httpMessage?.headersSent;
  if (!known || !socket.writable || answered) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = known;
  const body = errorBody(message(), code);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

// `entry`: { status, headers, body, hasErrors, etag? } from Apollo or the response cache;
// `preload`: the Preload header's selectors, if any.
function sendGraphQL(req, res, entry, { timing, xCache, preload }) {
  res.statusCode = entry.status;
  for (const [name, value] of entry.headers) res.setHeader(name, value);
  res.setHeader('x-cache', xCache);
  if (preload && entry.status === 200) {
    const links = preloadLinks(preload.selectors, entry.body);
    if (links.length) res.setHeader('link', linkValues(links));
  }
  res.setHeader('server-timing', serverTimingHeader(timing));
  const httpCacheable = req.method === 'GET' && entry.status === 200 && !entry.hasErrors;
  if (!httpCacheable) {
    res.setHeader('cache-control', 'no-store');
    res.end(entry.body);
    return;
  }
  entry.etag ??= strongEtag(entry.body);
  res.setHeader('etag', entry.etag);
  res.setHeader('cache-control', GET_CACHE_CONTROL);
  if (etagMatches(req.headers['if-none-match'], entry.etag)) {
    res.statusCode = 304;
    res.removeHeader('content-type');
    res.end();
    return;
  }
  res.end(entry.body);
}

// Returns the (req, res) listener. `apollo` runs every request but the
// instrumented ones, which `apolloInstrumented` runs (server.js); `documents` is
// the shared document cache (documents.js); `cache` is an LRU from
// createResponseCache(); `cacheByDefault` is the server-wide RESPONSE_CACHE switch.
export function createHttpHandler({ apollo, apolloInstrumented = apollo, documents, cache, cacheByDefault }) {
  async function graphql(req, res, search) {
    const read = await readBody(req, LIMITS.MAX_BODY_BYTES);
    if (read.aborted) return;
    if (read.tooLarge) {
      return sendError(
        res,
        413,
        `request body is over ${LIMITS.MAX_BODY_BYTES} bytes (LIMITS.MAX_BODY_BYTES): send a smaller request`,
        'PAYLOAD_TOO_LARGE',
        endConnection(req),
      );
    }
    if (read.tooSlow) {
      return sendError(
        res,
        408,
        `request body not complete within ${SLOW_CLIENT_MS / 1000} s of its headers: send the whole request at once`,
        'REQUEST_TIMEOUT',
        endConnection(req),
      );
    }
    const timing = newTiming({ cpu: asksCpu(req.headers) });
    let body;
    if (req.method === 'POST') {
      const type = mediaType(req.headers['content-type']);
      if (type !== 'application/json') {
        return sendError(
          res,
          415,
          `POST ${GRAPHQL_PATH} needs Content-Type: application/json (got ${type || 'none'})`,
          'UNSUPPORTED_MEDIA_TYPE',
        );
      }
      if (read.buffer.length > 0) {
        const parsed = parseJsonBody(read.buffer);
        if (parsed.error) return sendError(res, 400, parsed.error, 'BAD_REQUEST');
        body = parsed.value;
      }
    }
    if (req.method === 'GET' && !isUtf8QueryString(search)) {
      return sendError(
        res,
        400,
        'the query string is not valid UTF-8 once percent-decoded: percent-encode UTF-8 bytes',
        'BAD_REQUEST',
      );
    }
    const useCache = parseOnOff(req.headers['x-response-cache'], cacheByDefault);
    if (useCache === null) {
      return sendError(
        res,
        400,
        `x-response-cache must be "on" or "off" (got "${req.headers['x-response-cache']}")`,
        'BAD_REQUEST',
      );
    }
    const shapeError = documents.shapeError(queryOf(req.method, search, body));
    if (shapeError) return sendError(res, 400, shapeError, 'BAD_REQUEST');
    const executor = executorOf(extensionsOf(req.method, search, body));
    if (executor.error) return sendError(res, 400, executor.error, 'BAD_REQUEST');
    const generate = parseGenerate(req.headers[GENERATE_HEADER]);
    if (generate.error) return sendError(res, 400, generate.error, 'BAD_REQUEST');
    const preload = parsePreload(req.headers[PRELOAD_HEADER]);
    if (preload?.error) return sendError(res, 400, preload.error, 'BAD_REQUEST');
    const key = useCache ? responseCacheKey(operationParams(req.method, search, body), req.headers.accept) : null;
    const hit = key === null ? undefined : cache.get(key);
    if (hit) return sendGraphQL(req, res, hit, { timing, xCache: 'HIT', preload });

    const server = executor.value === 'instrumented' ? apolloInstrumented : apollo;
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method.toUpperCase(), headers: apolloHeaders(req), search, body },
      context: async () => ({ timing, executor: executor.value, generate: generate.value }),
    });
    const isQuery = timing.operation === 'query';
    const xCache = useCache && (isQuery || timing.operation === null) ? 'MISS' : 'BYPASS';
    if (response.body.kind === 'chunked') {
      // Incremental delivery (@defer/@stream): streamed as Apollo produces it, never cached.
      res.statusCode = response.status ?? 200;
      for (const [name, value] of response.headers) res.setHeader(name, value);
      res.setHeader('cache-control', 'no-store');
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
      return;
    }
    const entry = {
      status: response.status ?? 200,
      headers: [...response.headers],
      body: response.body.string,
      hasErrors: timing.hasErrors,
    };
    if (key !== null && isQuery && entry.status === 200 && !entry.hasErrors) cache.set(key, entry);
    sendGraphQL(req, res, entry, { timing, xCache, preload });
  }

  async function handle(req, res) {
    const q = req.url.indexOf('?');
    const pathname = q === -1 ? req.url : req.url.slice(0, q);
    const search = q === -1 ? '' : req.url.slice(q);
    if (pathname === GRAPHQL_PATH) return graphql(req, res, search);
    if (pathname === HEALTH_PATH) {
      req.resume();
      return health(req, res, search);
    }
    req.resume();
    return sendError(
      res,
      404,
      `nothing at ${pathname}: GraphQL is at ${GRAPHQL_PATH} (POST or GET), health at ${HEALTH_PATH}`,
      'NOT_FOUND',
    );
  }

  return function onRequest(req, res) {
    // HTTP/2: a response sent before the whole request arrived (413, 408, /healthz)
    // also ends the request stream (RST_STREAM NO_ERROR, RFC 9113 8.1); otherwise a
    // client that never ends its body would hold the stream open.
    if (req.httpVersionMajor === 2) {
      req.stream.once('finish', () => {
        if (!req.complete && !req.stream.destroyed) req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
      });
    }
    handle(req, res).catch((err) => {
      // Never let one request take the process down; say what happened once.
      console.error(`graphql: ${req.method} ${req.url}: ${err.stack ?? err}`);
      if (!res.headersSent) sendError(res, 500, `internal server error: ${err.message}`, 'INTERNAL_SERVER_ERROR');
      else res.destroy();
    });
  };
}
