// Small promise-shaped clients for the GraphQL server: the tests use them, and so
// can anything in Node that needs to ask it something. TLS is not verified (the
// server's default certificate is self-signed).
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const TIMEOUT_MS = 30_000;

// One HTTP/1.1 request (http: or https:) -> { status, headers, text, alpn }. `body` is
// sent as given (string or Buffer); `json` is JSON.stringify-ed with its content type.
export function httpRequest(
  url,
  { method = 'GET', headers = {}, body, json, agent = false, timeoutMs = TIMEOUT_MS } = {},
) {
  const u = new URL(url);
  const h = { ...headers };
  if (json !== undefined) {
    body = JSON.stringify(json);
    h['content-type'] ??= 'application/json';
  }
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      { method, headers: h, agent, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'], timeout: timeoutMs },
      (res) => {
        const alpn = res.socket?.alpnProtocol ?? null; // read now: a keep-alive socket goes back to its pool at 'end'
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), alpn }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

// POST a GraphQL operation -> { status, headers, body (parsed JSON) }.
export async function postGraphQL(url, operation, { headers = {}, ...options } = {}) {
  const res = await httpRequest(url, { method: 'POST', json: operation, headers, ...options });
  return { ...res, body: JSON.parse(res.text) };
}

// A GET URL for an operation: ?query=...&variables=...&operationName=...
export function graphqlGetUrl(url, { query, variables, operationName, extensions }) {
  const u = new URL(url);
  u.searchParams.set('query', query);
  if (variables) u.searchParams.set('variables', JSON.stringify(variables));
  if (operationName) u.searchParams.set('operationName', operationName);
  if (extensions) u.searchParams.set('extensions', JSON.stringify(extensions));
  return u.href;
}

// An HTTP/2 session to https://host:port (close it when done).
export async function h2Connect(origin) {
  const session = http2.connect(origin, { rejectUnauthorized: false });
  session.on('error', () => {}); // a failed connect rejects below; later errors fail the pending request
  await new Promise((resolve, reject) => {
    session.once('connect', resolve);
    session.once('error', reject);
  });
  return session;
}

// One request on an HTTP/2 session -> { status, headers, text }.
export function h2Request(
  session,
  { method = 'GET', path = '/graphql', headers = {}, body, json, timeoutMs = TIMEOUT_MS } = {},
) {
  const h = { ':method': method, ':path': path, ...headers };
  if (json !== undefined) {
    body = JSON.stringify(json);
    h['content-type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    const stream = session.request(h);
    stream.setTimeout(timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    let head = null;
    const chunks = [];
    stream.on('response', (headers) => (head = headers));
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () =>
      resolve({ status: head?.[':status'], headers: head, text: Buffer.concat(chunks).toString('utf8') }),
    );
    stream.on('error', reject);
    stream.on('close', () => {
      if (!head) reject(new Error(`${method} ${path}: stream closed without a response (code ${stream.rstCode})`));
    });
    stream.end(body);
  });
}

// A graphql-ws client on ws:// or wss:// (no retries, lazy: connects on the first subscribe).
export function wsClient(url, options = {}) {
  class InsecureWebSocket extends WebSocket {
    constructor(address, protocols) {
      super(address, protocols, { rejectUnauthorized: false });
    }
  }
  return createClient({ url, webSocketImpl: InsecureWebSocket, retryAttempts: 0, ...options });
}

// Runs one operation to its end -> { results: [next payloads], errors: null | error payload }.
// `onNext(result, results)` may return true to unsubscribe there.
export function runOperation(client, payload, { onNext, timeoutMs = TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const results = [];
    let unsubscribe = () => {};
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`operation did not complete within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (value) => {
      clearTimeout(timer);
      resolve(value);
    };
    unsubscribe = client.subscribe(payload, {
      next: (result) => {
        results.push(result);
        if (onNext?.(result, results)) {
          unsubscribe();
          finish({ results, errors: null, unsubscribed: true });
        }
      },
      error: (errors) => finish({ results, errors }),
      complete: () => finish({ results, errors: null }),
    });
  });
}
