// GraphQL over HTTP, written once for every scenario.
//
// transport:
//   http-fresh      a new connection per request (`Connection: close`): over TLS
//                   this is a new TCP + TLS + HTTP/2 connection (Go's HTTP/2
//                   client honours Connection: close by using its own connection)
//   http-keepalive  HTTP/1.1 keep-alive (k6 keeps one connection per VU); over TLS to
//                   the endpoint whose ALPN offers no h2 (GRAPHQL_HTTPS_H1_URL), since
//                   k6 takes h2 wherever it is offered (no per-request ALPN): res.proto
//                   is checked
//   http2           HTTP/2 over TLS: k6 negotiates h2 by ALPN; res.proto is checked
//
// An operation's duration is connecting + tls_handshaking + sending + waiting +
// receiving (k6's timings.duration leaves set-up out; the user does not).
// Through Toxiproxy the emulated TCP handshake (the link toxic holds the
// first chunk for one RTT) lands in `waiting`, since the proxy accepts at once.
import http from 'k6/http';
import { ENV, TARGETS } from './config.js';
import { recordOp, recordOutcome, recordServerTimingText, recordSetup, serverTimingDue, withTag } from './metrics.js';
import { setting } from '../../common/settings.js';

export const graphqlUrl = (tls, transport) =>
  !tls
    ? TARGETS.GRAPHQL_HTTP_URL
    : transport === 'http-keepalive'
      ? TARGETS.GRAPHQL_HTTPS_H1_URL
      : TARGETS.GRAPHQL_HTTPS_URL;

// Per-request timeout: a stalled connection fails the operation instead of the test.
export const HTTP_TIMEOUT = setting(ENV, 'HTTP_TIMEOUT');

// One GraphQL request as k6 http.batch() / http.request() arguments.
//   method: POST (default) or GET (cacheable: ETag, If-None-Match -> 304)
//   headers: extra request headers (x-response-cache, If-None-Match, ...); timeout: '30s'
//   url: another endpoint than the reference server's (the api scenario's)
//   extensions: the request's extensions, e.g. { executor: 'jit' } (common/executors.js)
// Without extra headers the params object is made once per (transport, method,
// name, timeout) and handed to k6 again: it is never changed after use.
const paramsMade = {};
function paramsOf(transport, method, name, timeout, headers) {
  const plain = !headers || Object.keys(headers).length === 0;
  const key = plain ? `${transport}|${method}|${name}|${timeout}` : null;
  if (key !== null && paramsMade[key]) return paramsMade[key];
  const h = plain ? {} : { ...headers };
  if (transport === 'http-fresh') h.Connection = 'close';
  if (method !== 'GET') h['Content-Type'] = 'application/json';
  const params = { headers: h, tags: { name }, timeout };
  if (key !== null) paramsMade[key] = params;
  return params;
}

export function graphqlRequest({
  transport,
  tls,
  query,
  variables = {},
  extensions,
  method = 'POST',
  headers,
  name = 'graphql',
  timeout = HTTP_TIMEOUT,
  url: given,
}) {
  const url = given || graphqlUrl(tls || transport === 'http2', transport);
  const params = paramsOf(transport, method, name, timeout, headers);
  if (method === 'GET') {
    const qs = `query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify(variables))}${extensions ? `&extensions=${encodeURIComponent(JSON.stringify(extensions))}` : ''}`;
    return { method: 'GET', url: `${url}?${qs}`, body: null, params };
  }
  return { method: 'POST', url, body: requestJson(query, variables, extensions), params };
}

// {"query":...,"variables":...[,"extensions":...]}, as JSON.stringify({ query, variables,
// extensions }) writes it: the POST body, and graphql-ws's subscribe payload (ws.js). The
// query's JSON text is kept from the last call (a lane sends one or two documents over and
// over); the variables are written every time.
let lastQuery = null;
let lastQueryJson = '';
export function requestJson(query, variables = {}, extensions) {
  if (typeof query !== 'string')
    return JSON.stringify(extensions ? { query, variables, extensions } : { query, variables });
  if (query !== lastQuery) {
    lastQueryJson = JSON.stringify(query);
    lastQuery = query;
  }
  return `{"query":${lastQueryJson},"variables":${JSON.stringify(variables)}${extensions ? `,"extensions":${JSON.stringify(extensions)}` : ''}}`;
}

export function opMs(res) {
  const t = res.timings;
  return t.connecting + t.tls_handshaking + t.duration;
}

// The verdict on one GraphQL response: { ok, reason, data, failedCheck, checks }.
//   validate(data, res) -> null when right, else a sentence (shape, count)
//   expectStatus: 200 by default; 304 for revalidation (no body to check)
//   rawBody: validate gets the body's text (megabytes are not parsed)
// failedCheck names the first check that failed ('status 200', 'HTTP/2', 'no GraphQL
// errors', 'right shape and count'); checks holds it as { name: false } ({} when all
// passed). The body is parsed only when something reads the data: a validator, or the
// caller (data is then parsed on first read); otherwise its text is checked for an
// answer with data and no errors (parsed after all when the text leaves it in doubt).
// Runs on every response: no per-call closures or template keys.
const STATUS_CHECK = { 200: 'status 200', 304: 'status 304' };
const PASSED = Object.freeze({});
const failedWith = (name, reason, data = null) => ({
  ok: false,
  reason,
  data,
  failedCheck: name,
  checks: { [name]: false },
});
export function judge(res, { transport, tls, validate, expectStatus = 200, rawBody = false }) {
  const status = res.status;
  if (status !== expectStatus) {
    const reason = res.error
      ? `${res.error_code || ''} ${res.error}`.trim()
      : `status ${status}: ${String(res.body || '').slice(0, 160)}`;
    return failedWith(STATUS_CHECK[expectStatus] || `status ${expectStatus}`, reason);
  }
  if (transport === 'http2' && res.proto !== 'HTTP/2.0')
    return failedWith('HTTP/2', `protocol ${res.proto}, not HTTP/2.0`);
  if (tls && transport === 'http-keepalive' && res.proto !== 'HTTP/1.1')
    return failedWith('HTTP/1.1', `protocol ${res.proto}, not HTTP/1.1: the endpoint offers h2`);
  if (expectStatus !== 200) return { ok: true, reason: null, data: null, failedCheck: null, checks: PASSED };
  const raw = res.body;
  let data = null;
  if (!rawBody) {
    if (!validate && plainAnswer(raw)) return lazyAnswer(raw);
    let body = null;
    let reason = null;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      reason = `body is not JSON: ${String(err)}`;
    }
    const errors = body && body.errors;
    if (!body || errors) return failedWith('no GraphQL errors', reason || graphqlErrorText(errors));
    data = body.data;
    // A 200 without data answered nothing (GraphQL over HTTP: data or errors).
    if (data === undefined || data === null) return failedWith('no GraphQL errors', 'the answer has no data');
  }
  if (validate) {
    const problem = validate(rawBody ? raw : data, res);
    if (problem) return failedWith('right shape and count', problem, data);
  }
  return { ok: true, reason: null, data, failedCheck: null, checks: PASSED };
}

// A body that is an answer with data and no errors, by its text alone: {"data":{ or [
// first, a closing brace last and no "errors" key anywhere (a quote inside a JSON string
// is escaped, so an unescaped "errors" is a key; a field of that name sends it to JSON.parse).
function plainAnswer(raw) {
  if (typeof raw !== 'string' || !raw.startsWith('{"data":')) return false;
  const first = raw[8];
  if (first !== '{' && first !== '[') return false;
  let end = raw.length - 1;
  while (end > 0 && (raw[end] === '\n' || raw[end] === ' ' || raw[end] === '\r')) end--;
  return raw[end] === '}' && raw.indexOf('"errors"') === -1;
}

// The verdict of a plain answer, its data parsed only if someone reads it.
function lazyAnswer(raw) {
  let parsed;
  return {
    ok: true,
    reason: null,
    failedCheck: null,
    checks: PASSED,
    get data() {
      if (parsed === undefined) parsed = JSON.parse(raw).data;
      return parsed;
    },
  };
}

// A GraphQL errors list as one line: the first error's message (and where), then how many more.
export function graphqlErrorText(errors) {
  const list = Array.isArray(errors) ? errors : [errors];
  const first = list[0] || {};
  const message = typeof first.message === 'string' ? first.message : JSON.stringify(first).slice(0, 200);
  const path = Array.isArray(first.path) ? ` (at ${first.path.join('.')})` : '';
  return `GraphQL error: ${message.slice(0, 300)}${path}${list.length > 1 ? ` (+${list.length - 1} more)` : ''}`;
}

// Records set-up time and (when its turn has come) the server's own time of one response.
export function recordResponseTimings(res, tags, serverDue) {
  const t = res.timings;
  if (t.connecting > 0) recordSetup('connect', t.connecting, tags);
  if (t.tls_handshaking > 0) recordSetup('tls', t.tls_handshaking, tags);
  if (serverDue) recordServerTimingText(res.headers['Server-Timing'], tags);
}

// One GraphQL operation over HTTP, recorded. Returns { ok, ms, res, data, reason }.
// A response that opened its connection is tagged conn:cold, else conn:warm.
export const connOf = (res) => (res.timings.connecting > 0 || res.timings.tls_handshaking > 0 ? 'cold' : 'warm');

const NO_TAGS = {};

export function graphqlHttp(opts) {
  const req = graphqlRequest(opts);
  const res = http.request(req.method, req.url, req.body, req.params);
  const t = res.timings;
  const connecting = t.connecting;
  const handshaking = t.tls_handshaking;
  const ms = connecting + handshaking + t.duration;
  // The operation's tags plus conn, the same object for the same tags (metrics.js withTag).
  const given = opts.tags || NO_TAGS;
  const tags =
    given.conn !== undefined ? given : withTag(given, 'conn', connecting > 0 || handshaking > 0 ? 'cold' : 'warm');
  const verdict = judge(res, opts);
  if (res.status !== 0) {
    if (connecting > 0) recordSetup('connect', connecting, tags);
    if (handshaking > 0) recordSetup('tls', handshaking, tags);
    if (serverTimingDue()) recordServerTimingText(res.headers['Server-Timing'], tags);
  }
  const ok = recordOutcome(verdict.ok, ms, tags, verdict.reason, verdict.failedCheck);
  return { ok, ms, res, data: verdict.data, reason: verdict.reason };
}

// Several GraphQL requests at once, recorded as ONE operation whose duration
// is the wall time until the last response. Returns a promise of { ok, ms, responses }.
//   HTTP/1.1: http.batch, at most options.batchPerHost connections per host (a browser's 6)
//   HTTP/2:   every request at once with http.asyncRequest, multiplexed on the
//             VU's one connection (http.batch would also cap HTTP/2 streams at batchPerHost)
export async function graphqlParallel(requests, { transport, tags: opTags = {}, validate, expectStatus = 200 }) {
  const built = requests.map((r) => graphqlRequest({ transport, ...r }));
  const t0 = Date.now();
  const responses =
    transport === 'http2'
      ? await Promise.all(built.map((b) => http.asyncRequest(b.method, b.url, b.body, b.params)))
      : http.batch(built.map((b) => [b.method, b.url, b.body, b.params]));
  const ms = Date.now() - t0;
  const tags = { conn: responses.some((r) => connOf(r) === 'cold') ? 'cold' : 'warm', ...opTags };
  let reason = null;
  let failedCheck = null;
  // One operation: its server times are recorded (for every response) when its turn has come.
  const serverDue = serverTimingDue();
  responses.forEach((res, i) => {
    const v = judge(res, { transport, expectStatus, validate: validate && ((data, r) => validate(data, r, i)) });
    if (!v.ok && !reason) {
      reason = `request ${i + 1}/${responses.length}: ${v.reason}`;
      failedCheck = v.failedCheck;
    }
    if (res.status === 0) return;
    const t = res.timings;
    if (t.connecting > 0) recordSetup('connect', t.connecting, tags);
    if (t.tls_handshaking > 0) recordSetup('tls', t.tls_handshaking, tags);
    if (serverDue) recordServerTimingText(res.headers['Server-Timing'], tags);
  });
  const ok = recordOp({ ok: !reason, ms, tags, reason, failedCheck });
  return { ok, ms, responses };
}

// The origin (scheme://host:port) of the GraphQL endpoint, which links are relative to.
const originOf = (url) => /^[a-z]+:\/\/[^/]+/i.exec(url)[0];

// The targets of a response's `Link: <url>; rel=preload` headers, in order (k6
// joins repeated headers with ", "; a URL in <> holds no raw comma or >).
export function preloadLinksOf(header) {
  const out = [];
  const text = Array.isArray(header) ? header.join(', ') : String(header || '');
  const re = /<([^>]*)>([^,<]*)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) if (/;\s*rel="?preload"?/i.test(m[2])) out.push(m[1]);
  return out;
}

// Vulcain's flow (draft-dunglas-vulcain-01), recorded as ONE operation from the
// first request to the last answer: the root document, asked for with a
// `Preload` header, answers with `Link: <url>; rel=preload` headers; every linked
// document is then fetched at once (multiplexed on the VU's HTTP/2 connection).
// It is the closest a client comes to HTTP/2 Server Push today, and costs one
// round trip more. Returns a promise of { ok, ms, links, responses }.
//   root: graphqlRequest's arguments for the root document (GET); preload: the
//   header's value; linkHeaders(i): the i-th link's request headers;
//   validate(data, res): the root's answer; validateLink(data, res, i): the i-th link's.
export async function graphqlPreload(
  root,
  { transport = 'http2', preload, linkHeaders = () => ({}), validate, validateLink, tags: opTags = {} },
) {
  const first = graphqlRequest({
    transport,
    method: 'GET',
    ...root,
    headers: { ...(root.headers || {}), Preload: preload },
  });
  const t0 = Date.now();
  const rootRes = await http.asyncRequest(first.method, first.url, first.body, first.params);
  const links = rootRes.status === 200 ? preloadLinksOf(rootRes.headers.Link) : [];
  const origin = originOf(first.url);
  const responses = await Promise.all(
    links.map((link, i) =>
      http.asyncRequest('GET', `${origin}${link}`, null, {
        headers: linkHeaders(i),
        tags: { name: 'graphql' },
        timeout: first.params.timeout,
      }),
    ),
  );
  const ms = Date.now() - t0;
  const tags = {
    conn: connOf(rootRes) === 'cold' || responses.some((r) => connOf(r) === 'cold') ? 'cold' : 'warm',
    ...opTags,
  };
  const checks = {};
  let reason = null;
  // One operation: its server times are recorded (for every response) when its turn has come.
  const serverDue = serverTimingDue();
  const judged = (res, v, what) => {
    for (const [k, pass] of Object.entries(v.checks)) checks[k] = checks[k] !== false && pass;
    if (!v.ok && !reason) reason = `${what}: ${v.reason}`;
    if (res.status !== 0) recordResponseTimings(res, tags, serverDue);
  };
  judged(
    rootRes,
    judge(rootRes, { transport, validate: validate && ((data, r) => validate(data, r, links)) }),
    'the root document',
  );
  responses.forEach((res, i) =>
    judged(
      res,
      judge(res, { transport, validate: validateLink && ((data, r) => validateLink(data, r, i)) }),
      `link ${i + 1}/${links.length}`,
    ),
  );
  const ok = recordOp({ ok: !reason, ms, tags, checks, reason });
  return { ok, ms, links, responses };
}
