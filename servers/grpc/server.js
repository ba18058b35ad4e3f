#!/usr/bin/env node
// The gRPC reference server: books.v1.Books (servers/proto/books.proto) in
// plaintext on one port and over TLS on another, with the standard health
// service and server reflection (of all three: see reflection.js). A third port
// serves the same in plaintext and sends a keepalive PING on each connection every
// GRPC_KEEPALIVE_MS (common/defaults.js LIMITS): the mobile scenario's gRPC lane with
// pings, since k6's gRPC client has no keepalive setting of its own.
//
//   node servers/grpc/server.js          # 127.0.0.1:5051 plaintext, :5052 TLS, :5053 plaintext with pings
//   HOST=0.0.0.0 GRPC_PORT=6000 GRPC_TLS_PORT=6001 GRPC_KEEPALIVE_PORT=6002 TLS_CERT_FILE=c.pem TLS_KEY_FILE=k.pem node servers/grpc/server.js
//   STREAM_IDLE_MS=65000: a client or bidirectional stream silent this long is ended
//
// Tests import createServer() and start it on port 0. Responses can be large
// (ListBooks(500000) is 35,042,049 bytes): clients raise their 4 MB receive limit
// (k6: connect(addr, { maxReceiveSize: 64 * 1024 * 1024 })).
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { DEFAULT_HOST, LIMITS } from '../../common/defaults.js';
import { exitOnSignals, fatal, hostFromEnv, listenErrorMessage, portFromEnv } from '../shared/lifecycle.js';
import { SLOW_CLIENT_MS, requirePrefaceWithin } from '../shared/slow-clients.js';
import { loadTlsMaterial } from '../shared/tls.js';
import { Hub } from '../shared/hub.js';
import { MAX_METADATA_BYTES, booksHandlers } from './books-service.js';
import { hubHandlers } from './hub-service.js';
import { SERVICE_NAME, serverBooksService } from './proto.js';
import { streamHandlers } from './stream-service.js';
import { addReflection } from './reflection.js';
import { rawSetting } from '../../common/settings.js';

// How long close() lets calls in flight finish before cutting connections;
// well under lifecycle's 5 s grace so SIGTERM always exits 0.
export const DRAIN_MS = 2000;

const SERVER_OPTIONS = {
  'grpc.max_receive_message_length': LIMITS.MAX_BODY_BYTES, // requests are tiny
  'grpc.max_send_message_length': -1, // ListBooks(500000) is ~35 MB
};

// The keepalive port's server: grpc-js pings each connection keepalive_time_ms after the
// last PING's ACK, whether or not calls are in flight, and drops a connection whose ACK
// takes longer than keepalive_timeout_ms.
const keepaliveOptions = (keepaliveMs) => ({
  ...SERVER_OPTIONS,
  'grpc.keepalive_time_ms': keepaliveMs,
  'grpc.keepalive_timeout_ms': LIMITS.GRPC_KEEPALIVE_TIMEOUT_MS,
});

// The transport's hard limit on request headers (metadata included): beyond it
// HTTP/2 refuses the stream (RST_STREAM ENHANCE_YOUR_CALM; grpc-js clients report
// RESOURCE_EXHAUSTED). grpc-js sets no limit, so a client could send ~8 MB of
// metadata per call; gRPC itself allows 16 KB.
export const MAX_HEADER_LIST_BYTES = 2 * MAX_METADATA_BYTES;

// grpc-js exposes none of Node's http2/tls server settings, so they are set on
// what it builds: the TLS credentials' constructor options (it passes them to
// http2.createSecureServer) and the http2 servers it keeps in `http2Servers`.
// Both are grpc-js internals: if an upgrade moves them, the server refuses to
// start instead of running without the bounds (and the hostile-input tests say so).
function hardenCredentials(credentials) {
  const options = credentials._getConstructorOptions?.();
  if (!options)
    throw new Error('gRPC server: this grpc-js has no _getConstructorOptions(); cannot set the TLS handshake timeout');
  options.handshakeTimeout = SLOW_CLIENT_MS;
  return credentials;
}

function hardenHttp2Servers(server) {
  const servers = server.http2Servers;
  if (!(servers instanceof Map) || servers.size === 0)
    throw new Error('gRPC server: this grpc-js keeps no http2Servers map; cannot bound slow clients and metadata');
  for (const http2Server of servers.keys()) {
    http2Server.updateSettings({ maxHeaderListSize: MAX_HEADER_LIST_BYTES });
    requirePrefaceWithin(http2Server);
  }
}

const hostPort = (host, port) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

// grpc-js reports bind failures as one message; recover the errno so
// listenErrorMessage can say what to do.
function bindError(err, endpoint) {
  const errno = /\b(EADDRINUSE|EACCES|EADDRNOTAVAIL)\b/.exec(err.message);
  if (errno) err.code = errno[1];
  else if (/Name resolution failed/.test(err.message)) err.code = 'EADDRNOTAVAIL';
  err.endpoint = endpoint;
  return err;
}

function bind(server, host, port, credentials, endpoint) {
  return new Promise((resolve, reject) => {
    server.bindAsync(hostPort(host, port), credentials, (err, boundPort) => {
      if (err) return reject(bindError(err, { ...endpoint, port }));
      return resolve(boundPort);
    });
  });
}

// streamIdleMs: how long a client or bidirectional stream may stay silent before
// the server ends it (LIMITS.STREAM_IDLE_MS; env STREAM_IDLE_MS). keepaliveMs: the
// keepalive port's PING interval (tests shorten it).
export async function createServer({
  host = DEFAULT_HOST,
  port = 0,
  tlsPort = 0,
  keepalivePort = 0,
  tls,
  streamIdleMs = LIMITS.STREAM_IDLE_MS,
  keepaliveMs = LIMITS.GRPC_KEEPALIVE_MS,
} = {}) {
  const material = tls ?? (await loadTlsMaterial());
  const server = new grpc.Server(SERVER_OPTIONS);
  const pinging = new grpc.Server(keepaliveOptions(keepaliveMs));
  const streams = new Set();
  // The fan-out hub (servers/shared/hub.js); the GraphQL server's hub dials Relay.
  const hub = new Hub({ origin: 'grpc' });
  const handlers = {
    ...booksHandlers(streams),
    ...hubHandlers(hub, streams),
    ...streamHandlers(streams, { idleMs: streamIdleMs }),
  };
  const health = new HealthImplementation({ '': 'SERVING', [SERVICE_NAME]: 'SERVING' });
  // Both servers serve the same: one set of handlers, streams, hub and health.
  for (const s of [server, pinging]) {
    s.addService(serverBooksService, handlers);
    health.addToServer(s);
    addReflection(s);
  }

  const tlsCredentials = hardenCredentials(
    grpc.ServerCredentials.createSsl(
      null,
      [{ cert_chain: Buffer.from(material.cert), private_key: Buffer.from(material.key) }],
      false,
    ),
  );
  let bound;
  try {
    bound = {
      port: await bind(server, host, port, grpc.ServerCredentials.createInsecure(), {
        label: 'gRPC (plaintext)',
        envVar: 'GRPC_PORT',
      }),
      tlsPort: await bind(server, host, tlsPort, tlsCredentials, { label: 'gRPC (TLS)', envVar: 'GRPC_TLS_PORT' }),
      keepalivePort: await bind(pinging, host, keepalivePort, grpc.ServerCredentials.createInsecure(), {
        label: 'gRPC (plaintext, keepalive pings)',
        envVar: 'GRPC_KEEPALIVE_PORT',
      }),
    };
    hardenHttp2Servers(server);
    hardenHttp2Servers(pinging);
  } catch (err) {
    server.forceShutdown();
    pinging.forceShutdown();
    throw err;
  }

  // Health turns NOT_SERVING, open streams end with UNAVAILABLE, calls in
  // flight get DRAIN_MS to finish, then every connection is cut.
  const shutdown = () =>
    new Promise((resolve) => {
      health.setStatus('', 'NOT_SERVING');
      health.setStatus(SERVICE_NAME, 'NOT_SERVING');
      for (const stream of [...streams]) stream.shutdown();
      const both = [server, pinging];
      const force = setTimeout(() => both.forEach((x) => x.forceShutdown()), DRAIN_MS);
      let left = both.length;
      for (const x of both)
        x.tryShutdown(() => {
          if (--left > 0) return;
          clearTimeout(force);
          resolve();
        });
    });
  let closing = null;
  return {
    ...bound,
    host,
    cert: material.cert,
    selfSigned: Boolean(material.selfSigned),
    openStreams: () => streams.size, // server, client and bidirectional streams not yet over
    hub,
    close: () => (closing ??= shutdown()),
  };
}

// grpc-js logs a failed bind itself; main() reports it in one line instead.
function quietBindErrors() {
  const print =
    (prefix) =>
    (message, ...rest) =>
      console.error(`${prefix} ${message}`, ...rest);
  const error = print('E');
  grpc.setLogger({
    error: (message, ...rest) => (/^No address added/.test(message) ? undefined : error(message, ...rest)),
    info: print('I'),
    debug: print('D'),
  });
}

async function main() {
  quietBindErrors();
  const host = hostFromEnv();
  const port = portFromEnv('GRPC_PORT');
  const tlsPort = portFromEnv('GRPC_TLS_PORT');
  const keepalivePort = portFromEnv('GRPC_KEEPALIVE_PORT');
  const idle = rawSetting(process.env, 'STREAM_IDLE_MS');
  const streamIdleMs = idle ? Number(idle) : LIMITS.STREAM_IDLE_MS;
  if (!Number.isInteger(streamIdleMs) || streamIdleMs < 100 || streamIdleMs > 3_600_000)
    fatal(
      `STREAM_IDLE_MS=${idle}: give the ms a stream may stay silent, 100 to 3600000 (default ${LIMITS.STREAM_IDLE_MS})`,
    );
  let tls;
  try {
    tls = await loadTlsMaterial();
  } catch (err) {
    fatal(`gRPC server: TLS certificate: ${err.message}`);
  }
  let server;
  try {
    server = await createServer({ host, port, tlsPort, keepalivePort, tls, streamIdleMs });
  } catch (err) {
    if (err.endpoint) fatal(listenErrorMessage(err, err.endpoint));
    throw err;
  }
  const cert = server.selfSigned
    ? 'self-signed certificate for localhost/127.0.0.1/::1'
    : 'certificate from TLS_CERT_FILE';
  console.log(
    `gRPC server listening: plaintext ${hostPort(host, server.port)}, TLS ${hostPort(host, server.tlsPort)} (${cert}), ` +
      `plaintext with a keepalive ping every ${LIMITS.GRPC_KEEPALIVE_MS / 1000} s ${hostPort(host, server.keepalivePort)}`,
  );
  exitOnSignals(server.close, { name: 'gRPC server' });
}

// `node servers/grpc/server.js`, also through a symlink; not when imported.
function runDirectly() {
  try {
    return Boolean(process.argv[1]) && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

if (runDirectly()) main().catch((err) => fatal(`gRPC server: ${err.stack ?? err.message}`));
