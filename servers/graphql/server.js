/*
 * GraphQL reference server (Apollo Server 5 + graphql-ws 6), schema in schema.graphql.
 *
 * Cleartext port (GRAPHQL_PORT, 4000):
 *   POST|GET /graphql   GraphQL over HTTP/1.1
 *   ws://  /graphql     GraphQL over WebSocket, subprotocol graphql-transport-ws
 *   GET /healthz        {status, rssBytes, heapUsedBytes, uptimeSeconds}
 * TLS port (GRAPHQL_TLS_PORT, 4443): the same, HTTP/2 by ALPN (h2) with HTTP/1.1 as
 *   fallback, and wss:// over the HTTP/1.1 Upgrade path. Certificate: TLS_CERT_FILE +
 *   TLS_KEY_FILE, else self-signed for localhost/127.0.0.1/::1.
 * TLS HTTP/1.1 port (GRAPHQL_TLS_H1_PORT, 4444): the same over TLS, but ALPN offers
 *   http/1.1 alone, as a server without HTTP/2 does: a client keeps HTTP/1.1 over TLS
 *   there (the https_keepalive lane; k6 offers h2 and takes it wherever it is offered).
 *
 * Every answer says how long the server spent: `Server-Timing: exec, ser, total` over
 * HTTP, extensions.timing {execMs, serMs, totalMs} on WebSocket results (timing.js).
 * Documents are parsed, validated and priced once, in one cache for every
 * transport (documents.js).
 * GET queries are HTTP-cacheable (ETag, 304); RESPONSE_CACHE=on (or the header
 * `x-response-cache: on`) turns on the server-side response cache (x-cache header).
 * Per request (docs/servers.md): the executor (`extensions.executor`:
 * plain, per-item, dataloader, instrumented, jit; execution.js), generation time
 * per resource (`x-generate: delay=20, hits=15, resolve=serial`; generation.js) and
 * Vulcain's `Preload` header, answered with preload links (preload.js).
 * Bounds come from LIMITS in common/defaults.js (rules.js, resolvers.js).
 *
 * Choices: no landing page (GET /graphql without a query is a 400 JSON error, not
 * HTML); introspection on; CSRF prevention off, since k6 sends plain GETs without
 * preflight headers and nothing here uses cookies; batched requests refused
 * (Apollo's default); stack traces never sent.
 *
 * Fan-out: a topic hub (servers/shared/hub.js; publish, topic, topicEvents in
 * hub.graphql); with HUB_PEER=<gRPC server host:port> it relays with the gRPC
 * server's hub (hub-relay.js), so writes through either server reach both.
 *
 * Run: node servers/graphql/server.js   (HOST, GRAPHQL_PORT, GRAPHQL_TLS_PORT, GRAPHQL_TLS_H1_PORT,
 * TLS_CERT_FILE, TLS_KEY_FILE, RESPONSE_CACHE=on|off, HUB_PEER). Drains on SIGTERM/SIGINT.
 * Tests: createServer({ port: 0, tlsPort: 0, tlsH1Port: 0 }) and close() afterwards.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { pathToFileURL } from 'node:url';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControl } from '@apollo/server/plugin/cacheControl';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { DEFAULT_HOST, LIMITS } from '../../common/defaults.js';
import { Hub } from '../shared/hub.js';
import { exitOnSignals, fatal, hostFromEnv, listen, listenErrorMessage, portFromEnv } from '../shared/lifecycle.js';
import { SLOW_CLIENT_MS, TIMEOUT_CHECK_MS, requirePrefaceWithin } from '../shared/slow-clients.js';
import { loadTlsMaterial } from '../shared/tls.js';
import { createDocumentCache } from './documents.js';
import { startRelay } from './hub-relay.js';
import { drainSecureServerPlugin } from './drain.js';
import { createExecution } from './execution.js';
import { GRAPHQL_PATH, HEALTH_PATH, createHttpHandler, onClientError } from './http.js';
import { createResponseCache, parseOnOff } from './responseCache.js';
import { explainValidationError } from './rules.js';
import { createResolvers, createSchema, extraValidationRules } from './schema.js';
import { timedStringifyResult, timingPlugin } from './timing.js';
import { createWebSocketEndpoint } from './ws.js';
import { rawSetting } from '../../common/settings.js';

// In-flight requests and WebSockets get this long to finish when the server stops;
// well inside the 5 s that exitOnSignals allows.
export const DRAIN_GRACE_MS = 2000;

export const { KEEP_ALIVE_MS } = LIMITS;
export const MAX_H2_STREAMS = 250;

// hubPeer: the gRPC server's address (host:port), whose hub this server's hub
// relays to and from (hub-relay.js); without it the hub serves this server alone.
export async function createServer({
  host = DEFAULT_HOST,
  port = 0,
  tlsPort = 0,
  tlsH1Port = 0,
  tls,
  responseCache = false,
  hubPeer = null,
} = {}) {
  const { cert, key } = tls ?? (await loadTlsMaterial());
  const resolvers = createResolvers();
  const hub = new Hub({ origin: 'graphql' });
  const schema = createSchema({ resolvers, hub });
  // Node closes an idle kept-alive connection after 5 s by default; a scenario
  // with think time would then silently measure fresh connections in its
  // keep-alive lane. 65 s outlasts any pause the scenarios make.
  const httpServer = http.createServer({ keepAliveTimeout: KEEP_ALIVE_MS });
  const tlsServer = http2.createSecureServer({
    cert,
    key,
    allowHTTP1: true,
    handshakeTimeout: SLOW_CLIENT_MS,
    // Node allows 2^32-1 streams per session; Go (k6) allows 250, which is plenty.
    settings: { maxConcurrentStreams: MAX_H2_STREAMS },
  });
  // No h2 in its ALPN list: Node's https server speaks HTTP/1.1 only.
  const tlsH1Server = https.createServer({
    cert,
    key,
    ALPNProtocols: ['http/1.1'],
    handshakeTimeout: SLOW_CLIENT_MS,
    keepAliveTimeout: KEEP_ALIVE_MS,
  });
  // Slow clients (slow-clients.js): request headers and body each within
  // SLOW_CLIENT_MS (the handler answers a slow body itself, http.js; Node's
  // requestTimeout is the backstop), the HTTP/2 preface too, and an HTTP/2 session
  // idle as long as a kept-alive HTTP/1.1 connection is closed.
  for (const server of [httpServer, tlsServer, tlsH1Server]) {
    server.keepAliveTimeout = KEEP_ALIVE_MS; // on the TLS port: its HTTP/1.1 fallback
    server.headersTimeout = SLOW_CLIENT_MS;
    server.requestTimeout = 2 * SLOW_CLIENT_MS;
    server.connectionsCheckingInterval = TIMEOUT_CHECK_MS;
    server.on('clientError', onClientError);
  }
  tlsServer.setTimeout(KEEP_ALIVE_MS);
  requirePrefaceWithin(tlsServer);
  // One cache of parsed, validated and priced documents for every transport.
  const documents = createDocumentCache({ schema, validationRules: extraValidationRules });
  const execution = createExecution(schema);
  const ws = createWebSocketEndpoint({ schema, documents, execution });

  const apolloOptions = (schema, plugins) => ({
    schema,
    introspection: true,
    csrfPrevention: false,
    includeStacktraceInErrorResponses: false,
    validationRules: extraValidationRules,
    documentStore: null, // documents.apolloPlugin keeps Apollo's documents, in the cache the WebSocket shares
    stringifyResult: timedStringifyResult,
    formatError: (formatted) => ({ ...formatted, message: explainValidationError(formatted.message) }),
    plugins: [timingPlugin, documents.apolloPlugin, ApolloServerPluginLandingPageDisabled(), ...plugins],
  });
  const apollo = new ApolloServer(
    apolloOptions(schema, [
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: DRAIN_GRACE_MS }),
      ApolloServerPluginDrainHttpServer({ httpServer: tlsH1Server, stopGracePeriodMillis: DRAIN_GRACE_MS }),
      drainSecureServerPlugin(tlsServer, { graceMs: DRAIN_GRACE_MS }),
      ws.drainPlugin,
      execution.jitPlugin,
      ApolloServerPluginCacheControlDisabled(), // http.js sets Cache-Control itself
    ]),
  );
  // The `instrumented` executor: Apollo Server as it ships, whose cache-control
  // plugin is on by default and hooks every field (willResolveField). Apollo wraps
  // the resolvers of the schema it runs for that, so it gets a schema of its own
  // (the same type definitions and resolvers): the other executors' fields stay
  // unwrapped. It computes cache hints only; http.js still sets Cache-Control.
  const apolloInstrumented = new ApolloServer(
    apolloOptions(createSchema({ resolvers, hub }), [ApolloServerPluginCacheControl({ calculateHttpHeaders: false })]),
  );
  await apollo.start();
  await apolloInstrumented.start();
  // Apollo wraps the schema's resolvers on the first request that has a field hook:
  // do it now, so that request is not the one that pays for it.
  await apolloInstrumented.executeOperation({ query: '{ __typename }' });
  execution.useInstrumented(apolloInstrumented);

  const onRequest = createHttpHandler({
    apollo,
    apolloInstrumented,
    documents,
    cache: createResponseCache(),
    cacheByDefault: responseCache,
  });
  for (const server of [httpServer, tlsServer, tlsH1Server]) {
    server.on('request', onRequest);
    server.on('upgrade', ws.handleUpgrade);
  }
  for (const server of [tlsServer, tlsH1Server]) server.on('tlsClientError', () => {}); // e.g. plain HTTP on the TLS port: the socket is closed, nothing to report

  const relay = hubPeer ? startRelay(hub, hubPeer) : null;
  let stopped;
  const close = () => (stopped ??= (relay?.close(), Promise.all([apollo.stop(), apolloInstrumented.stop()])));
  try {
    const ports = {
      httpPort: await listen(httpServer, { port, host, label: 'GraphQL HTTP', envVar: 'GRAPHQL_PORT' }),
      tlsPort: await listen(tlsServer, { port: tlsPort, host, label: 'GraphQL TLS', envVar: 'GRAPHQL_TLS_PORT' }),
      tlsH1Port: await listen(tlsH1Server, {
        port: tlsH1Port,
        host,
        label: 'GraphQL TLS HTTP/1.1',
        envVar: 'GRAPHQL_TLS_H1_PORT',
      }),
    };
    return { ...ports, hub, relay, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function main() {
  const host = hostFromEnv();
  const port = portFromEnv('GRAPHQL_PORT');
  const tlsPort = portFromEnv('GRAPHQL_TLS_PORT');
  const tlsH1Port = portFromEnv('GRAPHQL_TLS_H1_PORT');
  const responseCache = parseOnOff(rawSetting(process.env, 'RESPONSE_CACHE'), false);
  const hubPeer = rawSetting(process.env, 'HUB_PEER') || null;
  if (hubPeer && !/^[A-Za-z0-9.:[\]-]+:\d{1,5}$/.test(hubPeer))
    fatal(`HUB_PEER=${hubPeer}: give the gRPC server's host:port (e.g. 127.0.0.1:5051), or unset it`);
  if (responseCache === null) fatal(`RESPONSE_CACHE=${rawSetting(process.env, 'RESPONSE_CACHE')}: use on or off`);
  let tls;
  try {
    tls = await loadTlsMaterial();
  } catch (err) {
    fatal(`GraphQL TLS: ${err.message}`);
  }
  let server;
  try {
    server = await createServer({ host, port, tlsPort, tlsH1Port, tls, responseCache, hubPeer });
  } catch (err) {
    if (err.endpoint) fatal(listenErrorMessage(err, err.endpoint));
    throw err;
  }
  const h = host.includes(':') ? `[${host}]` : host;
  const plain = `${h}:${server.httpPort}`;
  const secure = `${h}:${server.tlsPort}`;
  const secureH1 = `${h}:${server.tlsH1Port}`;
  console.log(
    `graphql: http://${plain}${GRAPHQL_PATH} ws://${plain}${GRAPHQL_PATH} https://${secure}${GRAPHQL_PATH} (h2, http/1.1) ` +
      `wss://${secure}${GRAPHQL_PATH} https://${secureH1}${GRAPHQL_PATH} (http/1.1) health http://${plain}${HEALTH_PATH}; response cache ${responseCache ? 'on' : 'off'}`,
  );
  exitOnSignals(server.close, { name: 'graphql' });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => fatal(`graphql: ${err.stack ?? err.message}`));
}
