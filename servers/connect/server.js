#!/usr/bin/env node
// The Connect reference server: books.v1.Books (servers/proto/books.proto) over the
// Connect protocol (JSON and binary protobuf), gRPC-Web and gRPC, all from one
// handler (@connectrpc/connect-node), on three ports:
//   CONNECT_PORT      HTTP/1.1 cleartext: what a browser's fetch speaks without TLS
//   CONNECT_H2C_PORT  HTTP/2 cleartext (prior knowledge): gRPC too, health and
//                     reflection for grpcurl -plaintext
//   CONNECT_TLS_PORT  TLS: HTTP/2 by ALPN, or HTTP/1.1
//
//   node servers/connect/server.js     # 127.0.0.1:6080, :6081 (h2c), :6443 (TLS)
//
// It joins the gRPC server (servers/grpc) instead of replacing it: the gRPC lanes'
// figures stay those of @grpc/grpc-js, whose HTTP/2 stack and encoding differ from
// connect-node's, and the streams and the hub stay where they are. This server
// carries the browser's calls: the unary ones and the server streams.
//
// The same bounds as the other servers: a request message over 1 MiB
// (LIMITS.MAX_BODY_BYTES) is refused with RESOURCE_EXHAUSTED; slow clients get
// SLOW_CLIENT_MS per step (servers/shared/slow-clients.js); GET /healthz answers
// 200 on every port, grpc.health.v1.Health/Check SERVING.
import http from 'node:http';
import http2 from 'node:http2';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { DEFAULT_HOST, LIMITS } from '../../common/defaults.js';
import { exitOnSignals, fatal, hostFromEnv, listen, listenErrorMessage, portFromEnv } from '../shared/lifecycle.js';
import { SLOW_CLIENT_MS, TIMEOUT_CHECK_MS, requirePrefaceWithin } from '../shared/slow-clients.js';
import { loadTlsMaterial } from '../shared/tls.js';
import { booksImplementation } from './books-service.js';
import { BooksService } from './proto.js';
import {
  HealthService,
  ReflectionServices,
  healthImplementation,
  reflectionImplementation,
} from './standard-services.js';

export const HEALTH_PATH = '/healthz';
// Calls in flight get this long when the server stops (well inside lifecycle's 5 s).
export const DRAIN_MS = 2000;
// As the GraphQL server: an idle kept-alive connection outlasts any pause a scenario makes.
export const { KEEP_ALIVE_MS } = LIMITS;
const MAX_H2_STREAMS = 250;

// connect-node answers what it cannot route with a bare status and an empty body:
// 404 (no such method), 405 (an HTTP method the call does not take), 415 (a
// content type no protocol takes), 505 (a bidirectional stream over HTTP/1.1).
// Those get one line saying why (text/plain), as every other refusal here has.
const pathOf = (req) => (req.url ?? '').split('?', 1)[0];
const BARE_STATUS = {
  404: (req) => `no such method: ${pathOf(req)}; this server has books.v1.Books, grpc.health.v1.Health and reflection`,
  405: (req) => `HTTP method ${req.method} is not allowed for ${pathOf(req)}: send POST`,
  415: (req) =>
    `content-type ${JSON.stringify(req.headers['content-type'] ?? '')} is not accepted for ${pathOf(req)}: ` +
    'Connect takes application/json or application/proto (streams: application/connect+json or +proto), ' +
    'gRPC application/grpc, gRPC-Web application/grpc-web',
  505: (req) => `${pathOf(req)} is a bidirectional stream: it needs HTTP/2 (the h2c or TLS port)`,
};
const explained = (req, status) => `${BARE_STATUS[status](req)}\n`;
// Set as res.writeHead on a response connect-node writes: a bare status gets its line.
function writeHeadExplained(status, headers) {
  const writeHead = Object.getPrototypeOf(this).writeHead;
  if (!BARE_STATUS[status] || headers?.['content-type']) return writeHead.call(this, status, headers);
  writeHead.call(this, status, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
  this.write(explained(this.req, status));
  return this;
}
function notFound(req, res) {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(explained(req, 404));
}

export async function createServer({ host = DEFAULT_HOST, port = 0, h2cPort = 0, tlsPort = 0, tls } = {}) {
  const { cert, key, selfSigned } = tls ?? (await loadTlsMaterial());
  const state = { serving: true };
  const connect = connectNodeAdapter({
    readMaxBytes: LIMITS.MAX_BODY_BYTES,
    shutdownSignal: (state.shutdown = new AbortController()).signal,
    fallback: notFound,
    routes: (router) => {
      router.service(BooksService, booksImplementation);
      router.service(HealthService, healthImplementation(state));
      for (const service of ReflectionServices) router.service(service, reflectionImplementation());
    },
  });
  const handler = (req, res) => {
    if (req.url === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(state.serving ? 200 : 503, { 'content-type': 'text/plain' });
      return res.end(state.serving ? 'ok\n' : 'shutting down\n');
    }
    res.writeHead = writeHeadExplained;
    return connect(req, res);
  };
  const h1 = http.createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, handler);
  const h2c = http2.createServer({ settings: { maxConcurrentStreams: MAX_H2_STREAMS } }, handler);
  const secure = http2.createSecureServer(
    {
      cert,
      key,
      allowHTTP1: true,
      handshakeTimeout: SLOW_CLIENT_MS,
      settings: { maxConcurrentStreams: MAX_H2_STREAMS },
    },
    handler,
  );
  for (const server of [h1, secure]) {
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.headersTimeout = SLOW_CLIENT_MS;
    server.requestTimeout = 2 * SLOW_CLIENT_MS;
    server.connectionsCheckingInterval = TIMEOUT_CHECK_MS;
  }
  for (const server of [h2c, secure]) {
    server.setTimeout(KEEP_ALIVE_MS);
    requirePrefaceWithin(server);
  }
  secure.on('tlsClientError', () => {}); // plain HTTP on the TLS port: the socket is closed
  const servers = [h1, h2c, secure];
  const sessions = new Set();
  for (const server of [h2c, secure])
    server.on('session', (s) => (sessions.add(s), s.once('close', () => sessions.delete(s))));

  // Health turns NOT_SERVING, streams end (shutdownSignal), calls in flight get
  // DRAIN_MS, then every connection is cut.
  let closing = null;
  const shutdown = async () => {
    state.serving = false;
    state.shutdown.abort();
    for (const s of sessions) s.close();
    const closed = Promise.all(servers.map((s) => new Promise((resolve) => s.close(() => resolve()))));
    h1.closeIdleConnections();
    const force = setTimeout(() => {
      h1.closeAllConnections();
      secure.closeAllConnections?.();
      for (const s of sessions) s.destroy();
    }, DRAIN_MS);
    await closed;
    clearTimeout(force);
  };
  const close = () => (closing ??= shutdown());
  try {
    const bound = {
      port: await listen(h1, { port, host, label: 'Connect HTTP/1.1', envVar: 'CONNECT_PORT' }),
      h2cPort: await listen(h2c, {
        port: h2cPort,
        host,
        label: 'Connect HTTP/2 cleartext',
        envVar: 'CONNECT_H2C_PORT',
      }),
      tlsPort: await listen(secure, { port: tlsPort, host, label: 'Connect TLS', envVar: 'CONNECT_TLS_PORT' }),
    };
    return { ...bound, host, cert, selfSigned: Boolean(selfSigned), close };
  } catch (err) {
    await Promise.race([close(), new Promise((r) => setTimeout(r, DRAIN_MS + 500))]);
    throw err;
  }
}

async function main() {
  const host = hostFromEnv();
  const ports = {
    port: portFromEnv('CONNECT_PORT'),
    h2cPort: portFromEnv('CONNECT_H2C_PORT'),
    tlsPort: portFromEnv('CONNECT_TLS_PORT'),
  };
  let tls;
  try {
    tls = await loadTlsMaterial();
  } catch (err) {
    fatal(`Connect server: TLS certificate: ${err.message}`);
  }
  let server;
  try {
    server = await createServer({ host, ...ports, tls });
  } catch (err) {
    if (err.endpoint) fatal(listenErrorMessage(err, err.endpoint));
    throw err;
  }
  const at = (p) => (host.includes(':') ? `[${host}]:${p}` : `${host}:${p}`);
  console.log(
    `Connect server listening: HTTP/1.1 ${at(server.port)}, HTTP/2 cleartext ${at(server.h2cPort)}, TLS ${at(server.tlsPort)}`,
  );
  exitOnSignals(server.close, { name: 'Connect server' });
}

function runDirectly() {
  try {
    return Boolean(process.argv[1]) && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

if (runDirectly()) main().catch((err) => fatal(`Connect server: ${err.stack ?? err.message}`));
