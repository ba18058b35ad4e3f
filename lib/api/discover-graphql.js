// Discovery of a GraphQL endpoint, Node side, before any k6 run: does it answer
// GraphQL, does it answer introspection (then the operations are validated against
// its schema), does its TLS offer h2, does it accept graphql-transport-ws; then every
// operation's bytes and server time under lan at one VU: the median of CALLS calls on
// one kept-alive connection, from the Server-Timing header when the server sends one,
// else from the round trip. A subscription is measured on one graphql-transport-ws
// socket instead: SUB_CALLS subscriptions, each for SUB_EVENTS events (then completed),
// timed to its last event, with the time to its first event and its events per second.
import { eventsPerSecond } from '../../common/streams.js';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { buildClientSchema, getIntrospectionQuery } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { hostPort } from '../../common/your-api.js';
import { DISCOVERY_VU, variableSource } from '../../common/variables.js';
import { setting } from '../../common/settings.js';
import { parseServerTiming, serverTotal } from '../../common/server-timing.js';
import { UsageError } from '../cli-support.js';
import {
  AUTH_CLOSE,
  AUTH_STATUS,
  authRefused,
  isUnreachable,
  MEASURE_BOUND_MS,
  measureCalls,
  median,
  PROBE_TIMEOUT_MS,
  round3,
  tlsProbe,
  unreachable,
} from './probe.js';

// Subscriptions measured before the run (each lasts SUB_EVENTS events, so fewer).
export const SUB_CALLS = 5;
// The server's time travels in an HTTP response's Server-Timing header (lib/api/probe.js measureCalls).
export const SERVER_TIMING_HEADER = 'Server-Timing';
const SUBPROTOCOL = 'graphql-transport-ws';

// One POST of a JSON body, with the credentials' headers. -> { status, type, headers,
// body (text), ms }; rejects on a transport error.
function post(url, payload, { agent, signal, headers = {} }) {
  const u = new URL(url);
  const body = Buffer.from(JSON.stringify(payload));
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = request(
      u,
      {
        method: 'POST',
        agent,
        signal,
        timeout: PROBE_TIMEOUT_MS * 2,
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          resolve({
            status: res.statusCode,
            type: String(res.headers['content-type'] || ''),
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

const json = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};
const answersGraphql = (doc) => doc !== null && typeof doc === 'object' && ('data' in doc || Array.isArray(doc.errors));

// A 401 or 403: one line saying which flag supplies credentials (exit 2).
function checkAllowed(r, url, headers) {
  if (AUTH_STATUS.has(r.status))
    throw authRefused('GraphQL endpoint', url, `HTTP ${r.status}`, { given: Object.keys(headers) });
}

// The endpoint answers GraphQL, or one line saying what it answered instead.
async function checkAnswersGraphql(url, http) {
  let r;
  try {
    r = await post(url, { query: '{ __typename }' }, http);
  } catch (err) {
    if (http.signal?.aborted) throw err;
    if (isUnreachable(err)) throw unreachable('GraphQL endpoint', url, '--graphql', err);
    throw new UsageError(`GraphQL endpoint ${url}: ${err.code || err.message}`);
  }
  checkAllowed(r, url, http.headers);
  if (!answersGraphql(json(r.body))) {
    throw new UsageError(
      `GraphQL endpoint ${url}: does not answer GraphQL (POST {"query":"{ __typename }"} got HTTP ${r.status}${r.type ? `, ${r.type.split(';')[0]}` : ''}): give the URL of the GraphQL endpoint itself (--graphql), e.g. http://127.0.0.1:4000/graphql`,
    );
  }
}

// The endpoint's schema, or null when introspection is off.
async function introspect(url, http) {
  const r = await post(url, { query: getIntrospectionQuery() }, http);
  const doc = json(r.body);
  if (!doc || !doc.data || !doc.data.__schema) return null;
  try {
    return buildClientSchema(doc.data);
  } catch {
    return null;
  }
}

const errorText = (errors) => `GraphQL error: ${(errors[0] && errors[0].message) || JSON.stringify(errors[0])}`;

// One operation CALLS times on one connection, its variables from next() (a set per
// call). -> { reqBytes, resBytes, serverMs, serverFrom, calls, error }
async function measure(url, op, next, http) {
  let reqBytes = 0;
  let resBytes = 0;
  let error = null;
  const measured = await measureCalls(
    async () => {
      const payload = { query: op.query, variables: next(DISCOVERY_VU) };
      reqBytes = Buffer.byteLength(JSON.stringify(payload));
      const r = await post(url, payload, http);
      checkAllowed(r, url, http.headers);
      const doc = json(r.body);
      if (!error) {
        if (r.status !== 200) error = `HTTP ${r.status}: ${r.body.slice(0, 200)}`;
        else if (!doc) error = 'the answer is not JSON';
        else if (doc.errors) error = errorText(doc.errors);
        else if (doc.data === undefined || doc.data === null) error = 'the answer has no data';
      }
      resBytes = Buffer.byteLength(r.body);
      return { ms: r.ms, timing: serverTotal(parseServerTiming(r.headers['server-timing'])) };
    },
    { timingFrom: SERVER_TIMING_HEADER },
  );
  return { reqBytes, resBytes, ...measured, error };
}

// Does the endpoint accept graphql-transport-ws? -> { ok } or { reason }. The upgrade
// with `ws` (so a refusal shows its HTTP status), then connection_init/ack and the
// first operation with graphql-ws's own client.
// A subscription (op.kind) has answered once it sends its first event.
async function probeWs(url, op, variables, { insecure, headers, initPayload }) {
  const options = { rejectUnauthorized: !insecure, handshakeTimeout: PROBE_TIMEOUT_MS, headers };
  const upgrade = await new Promise((resolve) => {
    const sock = new WebSocket(url, SUBPROTOCOL, options);
    sock.on('unexpected-response', (req, res) => {
      res.resume();
      req.destroy();
      resolve(
        AUTH_STATUS.has(res.statusCode)
          ? { refused: `the WebSocket upgrade got HTTP ${res.statusCode}` }
          : { reason: `the endpoint refused the ${SUBPROTOCOL} subprotocol (HTTP ${res.statusCode})` },
      );
    });
    sock.on('error', (err) => {
      const said = String(err.message || err.code);
      resolve({
        reason: /subprotocol/i.test(said)
          ? `the endpoint did not accept the ${SUBPROTOCOL} subprotocol (${said})`
          : `the endpoint does not upgrade to WebSocket (${err.code || said})`,
      });
    });
    sock.on('open', () => {
      const chosen = sock.protocol;
      sock.close();
      resolve(
        chosen === SUBPROTOCOL
          ? { ok: true }
          : { reason: `the endpoint accepted the WebSocket without the ${SUBPROTOCOL} subprotocol` },
      );
    });
  });
  if (upgrade.refused) throw authRefused('WebSocket endpoint', url, upgrade.refused, { given: Object.keys(headers) });
  if (!upgrade.ok) return upgrade;
  const client = wsClient(url, { insecure, headers, initPayload });
  let timer;
  try {
    const subscription = op.kind === 'subscription';
    await Promise.race([
      new Promise((resolve, reject) => {
        client.subscribe(
          { query: op.query, variables },
          { next: () => subscription && resolve(), error: reject, complete: resolve },
        );
      }),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer to ${op.name} within ${PROBE_TIMEOUT_MS / 1000} s`)),
          PROBE_TIMEOUT_MS,
        );
      }),
    ]);
    return { ok: true };
  } catch (err) {
    // GraphQL errors come back as a list: the endpoint speaks the protocol (they count at run time).
    if (Array.isArray(err)) return { ok: true };
    checkWsAllowed(err, url, initPayload);
    return { reason: `the endpoint upgraded with ${SUBPROTOCOL} but did not run ${op.name} (${closeText(err)})` };
  } finally {
    clearTimeout(timer);
    await client.dispose();
  }
}

// graphql-ws's own client on `ws`, with the credentials; no retries, connecting lazily.
function wsClient(url, { insecure, headers, initPayload }) {
  const Impl = class extends WebSocket {
    constructor(u, protocols) {
      super(u, protocols, { rejectUnauthorized: !insecure, headers });
    }
  };
  return createClient({
    url,
    webSocketImpl: Impl,
    retryAttempts: 0,
    lazy: true,
    connectionAckWaitTimeout: PROBE_TIMEOUT_MS,
    ...(initPayload ? { connectionParams: initPayload } : {}),
  });
}

// What a failed graphql-ws operation said: a close (code, reason) or an error.
const closeText = (err) =>
  err && err.code !== undefined && err.reason !== undefined
    ? `closed ${err.code}${err.reason ? ` ${err.reason}` : ''}`
    : String((err && err.message) || err);

// A close 4401/4403: one line saying which flag supplies credentials (exit 2).
function checkWsAllowed(err, url, initPayload) {
  if (err && AUTH_CLOSE.has(err.code))
    throw authRefused('WebSocket endpoint', url, closeText(err), {
      given: initPayload ? Object.keys(initPayload).map((k) => `the init payload's ${k}`) : [],
      supply: 'initPayload',
    });
}

// One subscription, taken for `events` events and then completed (or until the server
// completes it). -> { ms (to its last event), firstMs, count, resBytes, error }
function takeEvents(client, payload, events) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let first = null;
    let last = null;
    let count = 0;
    let resBytes = 0;
    let stop = () => {};
    let timer = null;
    let settled = false;
    const done = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop();
      const end = last ?? performance.now();
      resolve({ ms: end - t0, firstMs: first === null ? null : first - t0, count, resBytes, error });
    };
    timer = setTimeout(() => done(`no ${events} events within ${MEASURE_BOUND_MS / 1000} s`), MEASURE_BOUND_MS);
    stop = client.subscribe(payload, {
      next: (value) => {
        last = performance.now();
        if (first === null) first = last;
        count++;
        // Each event as graphql-transport-ws frames it: {"id":"1","type":"next","payload":…}.
        resBytes += Buffer.byteLength(JSON.stringify(value)) + 30;
        if (value && value.errors) done(errorText(value.errors));
        else if (count >= events) done(null);
      },
      error: (err) => done(Array.isArray(err) ? errorText(err) : { close: err }),
      complete: () => done(count ? null : 'the subscription completed with no event'),
    });
  });
}

// A subscription SUB_CALLS times on one socket (the first, which opens it, not
// measured). -> measure()'s, with firstEventMs, eventsPerSecond and events.
async function measureSubscription(url, op, next, options) {
  const events = setting(process.env, 'SUB_EVENTS');
  const client = wsClient(url, options);
  const runs = [];
  let error = null;
  let reqBytes = 0;
  let resBytes = 0;
  const deadline = Date.now() + MEASURE_BOUND_MS;
  try {
    for (let i = 0; i <= SUB_CALLS && Date.now() < deadline; i++) {
      const payload = { query: op.query, variables: next(DISCOVERY_VU) };
      reqBytes = Buffer.byteLength(JSON.stringify({ id: '1', type: 'subscribe', payload }));
      const r = await takeEvents(client, payload, events);
      if (r.error && r.error.close) {
        checkWsAllowed(r.error.close, url, options.initPayload);
        error = closeText(r.error.close);
        break;
      }
      if (!error && r.error) error = r.error;
      if (i === 0) continue;
      resBytes = r.resBytes;
      if (!r.error) runs.push(r);
    }
  } finally {
    await client.dispose();
  }
  const rates = runs.map((r) => eventsPerSecond(r.count, r.firstMs, r.ms)).filter((x) => x !== null);
  return {
    reqBytes,
    resBytes,
    serverMs: runs.length ? round3(median(runs.map((r) => r.ms))) : 0,
    serverFrom: `${events} events`,
    calls: runs.length,
    events,
    firstEventMs: runs.length ? round3(median(runs.map((r) => r.firstMs))) : null,
    eventsPerSecond: rates.length ? round3(median(rates)) : null,
    error: error || (runs.length ? null : 'no subscription delivered its events'),
  };
}

// Discovery's first look at a GraphQL endpoint, over one kept connection: its TLS (and
// ALPN), that it answers GraphQL (credentials too), and its schema (null when
// introspection is off). -> { url, tls, alpn, agent, http, schema }; the caller destroys agent.
async function reachGraphql(cfg, signal) {
  const url = cfg.graphql;
  const tls = url.startsWith('https:');
  let alpn = null;
  if (tls)
    alpn = (
      await tlsProbe(hostPort(url), {
        what: 'GraphQL endpoint',
        target: url,
        flag: '--graphql',
        insecure: cfg.insecure,
      })
    ).alpn;
  const Agent = tls ? HttpsAgent : HttpAgent;
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ...(tls ? { rejectUnauthorized: !cfg.insecure } : {}) });
  const http = { agent, signal, headers: cfg.expanded.headers };
  try {
    await checkAnswersGraphql(url, http);
    return { url, tls, alpn, agent, http, schema: await introspect(url, http) };
  } catch (err) {
    agent.destroy();
    throw err;
  }
}

// The endpoint's schema, or null when introspection is off, after discovery's own checks:
// `k6pack init` builds a first operation from it.
export async function graphqlSchema(cfg, { signal } = {}) {
  const { agent, schema } = await reachGraphql(cfg, signal);
  agent.destroy();
  return schema;
}

// -> { url, tls, alpn, h2, schema, wsUrl, ws: { ok } | { reason }, measured: { op: measure() } }
// hooks: { checkOperations(schema) } runs once the schema is known, before anything is measured.
export async function discoverGraphql(cfg, ops, variables, { signal, checkOperations }) {
  const { url, tls, alpn, agent, http, schema } = await reachGraphql(cfg, signal);
  const { headers, initPayload } = cfg.expanded;
  try {
    checkOperations(schema);
    const measured = {};
    const next = Object.fromEntries(ops.map((op) => [op.name, variableSource(variables[op.name])]));
    const subscriptions = ops.filter((op) => op.kind === 'subscription');
    for (const op of ops.filter((o) => o.kind !== 'subscription'))
      measured[op.name] = await measure(url, op, next[op.name], http);
    const wsUrl = cfg.ws || url.replace(/^http/, 'ws');
    if (cfg.ws && !cfg.ws.startsWith(tls ? 'wss:' : 'ws:') && hostPort(cfg.ws) === hostPort(url)) {
      throw new UsageError(
        `--ws ${cfg.ws}: the same host:port as --graphql ${url} but ${tls ? 'cleartext' : 'TLS'}: one port speaks one of them`,
      );
    }
    const wsOptions = { insecure: cfg.insecure, headers, initPayload };
    const ws = await probeWs(wsUrl, ops[0], next[ops[0].name](DISCOVERY_VU), wsOptions);
    // Subscriptions run on ws and wss only: measured there, or not run at all.
    for (const op of subscriptions)
      measured[op.name] = ws.ok ? await measureSubscription(wsUrl, op, next[op.name], wsOptions) : null;
    return { url, tls, alpn, h2: alpn === 'h2', schema, wsUrl, ws, measured };
  } finally {
    agent.destroy();
  }
}
