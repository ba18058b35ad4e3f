// GraphQL over HTTP, written once for every scenario.
//
// transport:
//   http-fresh      a new connection per request (`Connection: close`): over TLS
//                   this is a new TCP + TLS + HTTP/2 connection (Go's HTTP/2
//                   client honours Connection: close by using its own connection)
//   http-keepalive  HTTP/1.1 keep-alive on cleartext (k6 keeps one connection per VU)
//   http2           HTTP/2 over TLS: k6 negotiates h2 by ALPN; res.proto is checked
// k6 cannot speak HTTP/1.1 over TLS to a server that offers h2 (no per-request
// ALPN), so keep-alive over TLS is the http2 transport.
//
// An operation's duration is connecting + tls_handshaking + sending + waiting +
// receiving (k6's timings.duration leaves set-up out; the user does not).
// Through Toxiproxy the emulated TCP handshake (the link toxic holds the
// first chunk for one RTT) lands in `waiting`, since the proxy accepts at once.
import http from 'k6/http';
import { TARGETS } from './config.js';
import { parseServerTiming } from '../../common/server-timing.js';
import { recordOp, recordServerTiming, recordSetup, withTag } from './metrics.js';

export const graphqlUrl = (tls) => (tls ? TARGETS.GRAPHQL_HTTPS_URL : TARGETS.GRAPHQL_HTTP_URL);

// Per-request timeout: a stalled connection fails the operation instead of the test.
export const HTTP_TIMEOUT = __ENV.HTTP_TIMEOUT || '30s';

// One GraphQL request as k6 http.batch() / http.request() arguments.
//   method: POST (default) or GET (cacheable: ETag, If-None-Match -> 304)
//   headers: extra request headers (x-response-cache, If-None-Match, ...); timeout: '30s'
//   url: another endpoint than the reference server's (the api scenario's)
//   extensions: the request's extensions, e.g. { executor: 'jit' } (common/executors.js)
export function graphqlRequest({ transport, tls, query, variables = {}, extensions, method = 'POST', headers = {}, name = 'graphql', timeout = HTTP_TIMEOUT, url: given }) {
  const url = given || graphqlUrl(tls || transport === 'http2');
  const h = { ...headers };
  if (transport === 'http-fresh') h.Connection = 'close';
  const params = { headers: h, tags: { name }, timeout };
  if (method === 'GET') {
    const qs = `query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify(variables))}${extensions ? `&extensions=${encodeURIComponent(JSON.stringify(extensions))}` : ''}`;
    return { method: 'GET', url: `${url}?${qs}`, body: null, params };
  }
  h['Content-Type'] = 'application/json';
  return { method: 'POST', url, body: JSON.stringify(extensions ? { query, variables, extensions } : { query, variables }), params };
}

export function opMs(res) {
  const t = res.timings;
  return t.connecting + t.tls_handshaking + t.duration;
}

// Checks of one GraphQL response, as { name: boolean }, plus the parsed data.
//   validate(data, res) -> null when right, else a sentence (shape, count)
//   expectStatus: 200 by default; 304 for revalidation (no body to check)
// Runs on every response: no per-call closures or template keys.
const STATUS_CHECK = { 200: 'status 200', 304: 'status 304' };
export function judge(res, { transport, validate, expectStatus = 200, rawBody = false }) {
  const checks = {};
  let reason = null;
  const status = res.status;
  let ok = status === expectStatus;
  checks[STATUS_CHECK[expectStatus] || `status ${expectStatus}`] = ok;
  if (!ok) {
    reason = res.error ? `${res.error_code || ''} ${res.error}`.trim() : `status ${status}: ${String(res.body || '').slice(0, 160)}`;
  }
  if (transport === 'http2') {
    const h2 = res.proto === 'HTTP/2.0';
    checks['HTTP/2'] = h2;
    if (!h2) {
      ok = false;
      if (!reason) reason = `protocol ${res.proto}, not HTTP/2.0`;
    }
  }
  let data = null;
  if (expectStatus === 200 && status === 200) {
    const raw = res.body;
    if (!rawBody) {
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch (err) {
        reason = reason || `body is not JSON: ${String(err)}`;
      }
      const errors = body && body.errors;
      const clean = Boolean(body) && !errors;
      checks['no GraphQL errors'] = clean;
      if (!clean) ok = false;
      if (errors) reason = reason || graphqlErrorText(errors);
      data = body && body.data;
      // A 200 without data answered nothing (GraphQL over HTTP: data or errors).
      if (clean && (data === undefined || data === null)) {
        ok = false;
        checks['no GraphQL errors'] = false;
        reason = reason || 'the answer has no data';
      }
    }
    if (validate) {
      const problem = validate(rawBody ? raw : data, res);
      checks['right shape and count'] = !problem;
      if (problem) {
        ok = false;
        reason = reason || problem;
      }
    }
  }
  return { checks, reason, data, ok };
}

// A GraphQL errors list as one line: the first error's message (and where), then how many more.
export function graphqlErrorText(errors) {
  const list = Array.isArray(errors) ? errors : [errors];
  const first = list[0] || {};
  const message = typeof first.message === 'string' ? first.message : JSON.stringify(first).slice(0, 200);
  const path = Array.isArray(first.path) ? ` (at ${first.path.join('.')})` : '';
  return `GraphQL error: ${message.slice(0, 300)}${path}${list.length > 1 ? ` (+${list.length - 1} more)` : ''}`;
}

// Records set-up time and the server's own time of one response.
export function recordResponseTimings(res, tags) {
  const t = res.timings;
  if (t.connecting > 0) recordSetup('connect', t.connecting, tags);
  if (t.tls_handshaking > 0) recordSetup('tls', t.tls_handshaking, tags);
  recordServerTiming(parseServerTiming(res.headers['Server-Timing']), tags);
}

// One GraphQL operation over HTTP, recorded. Returns { ok, ms, res, data }.
// A response that opened its connection is tagged conn:cold, else conn:warm.
export const connOf = (res) => (res.timings.connecting > 0 || res.timings.tls_handshaking > 0 ? 'cold' : 'warm');

const NO_TAGS = {};
// The operation's tags plus conn, the same object for the same tags (metrics.js withTag).
const opTagsOf = (tags, res) => (tags && tags.conn !== undefined ? tags : withTag(tags || NO_TAGS, 'conn', connOf(res)));

export function graphqlHttp(opts) {
  const req = graphqlRequest(opts);
  const res = http.request(req.method, req.url, req.body, req.params);
  const tags = opTagsOf(opts.tags, res);
  const verdict = judge(res, opts);
  const ms = opMs(res);
  if (res.status !== 0) recordResponseTimings(res, tags);
  const ok = recordOp({ ok: verdict.ok, ms, tags, checks: verdict.checks, reason: verdict.reason });
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
  const checks = {};
  responses.forEach((res, i) => {
    const v = judge(res, { transport, expectStatus, validate: validate && ((data, r) => validate(data, r, i)) });
    for (const [k, pass] of Object.entries(v.checks)) checks[k] = checks[k] !== false && pass;
    if (!v.ok && !reason) reason = `request ${i + 1}/${responses.length}: ${v.reason}`;
    if (res.status !== 0) recordResponseTimings(res, tags);
  });
  const ok = recordOp({ ok: !reason, ms, tags, checks, reason });
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
export async function graphqlPreload(root, { transport = 'http2', preload, linkHeaders = () => ({}), validate, validateLink, tags: opTags = {} }) {
  const first = graphqlRequest({ transport, method: 'GET', ...root, headers: { ...(root.headers || {}), Preload: preload } });
  const t0 = Date.now();
  const rootRes = await http.asyncRequest(first.method, first.url, first.body, first.params);
  const links = rootRes.status === 200 ? preloadLinksOf(rootRes.headers.Link) : [];
  const origin = originOf(first.url);
  const responses = await Promise.all(
    links.map((link, i) => http.asyncRequest('GET', `${origin}${link}`, null, { headers: linkHeaders(i), tags: { name: 'graphql' }, timeout: first.params.timeout })),
  );
  const ms = Date.now() - t0;
  const tags = { conn: connOf(rootRes) === 'cold' || responses.some((r) => connOf(r) === 'cold') ? 'cold' : 'warm', ...opTags };
  const checks = {};
  let reason = null;
  const judged = (res, v, what) => {
    for (const [k, pass] of Object.entries(v.checks)) checks[k] = checks[k] !== false && pass;
    if (!v.ok && !reason) reason = `${what}: ${v.reason}`;
    if (res.status !== 0) recordResponseTimings(res, tags);
  };
  judged(rootRes, judge(rootRes, { transport, validate: validate && ((data, r) => validate(data, r, links)) }), 'the root document');
  responses.forEach((res, i) => judged(res, judge(res, { transport, validate: validateLink && ((data, r) => validateLink(data, r, i)) }), `link ${i + 1}/${links.length}`));
  const ok = recordOp({ ok: !reason, ms, tags, checks, reason });
  return { ok, ms, links, responses };
}
