// Every address and port the pack uses, in one place.
//
// Plain ES module with no imports, so k6 scripts (`import ... from '../../common/defaults.js'`)
// and the Node side (servers, bin/k6pack.js, tests) read the same numbers.
// The embedded stack and docker compose both publish these ports on 127.0.0.1,
// so a scenario runs unchanged against either; override with `-e NAME=value`.

// The reference servers, reached directly (no network shaping). Every listen port
// stays below 32768, outside Linux's ephemeral range (32768-60999): a port in it can
// be held for a minute by another program's outgoing connection in TIME_WAIT (gRPC's
// conventional 50051/50052 did that to `k6pack up`).
export const SERVER_PORTS = {
  GRAPHQL_PORT: 4000, // GraphQL over HTTP/1.1 and ws://, cleartext
  GRAPHQL_TLS_PORT: 4443, // GraphQL over TLS: HTTP/2 (ALPN h2) or HTTP/1.1, and wss://
  // GraphQL over TLS, HTTP/1.1 only (ALPN offers no h2): a server without HTTP/2, where a
  // client keeps HTTP/1.1 over TLS (the https_keepalive lane; k6 cannot refuse h2 itself)
  GRAPHQL_TLS_H1_PORT: 4444,
  GRPC_PORT: 5051, // gRPC, plaintext
  GRPC_TLS_PORT: 5052, // gRPC over TLS
  // gRPC, plaintext, whose server sends a keepalive PING every GRPC_KEEPALIVE_MS on each
  // connection (the mobile scenario's grpc_ping lane; k6's gRPC client cannot send its own)
  GRPC_KEEPALIVE_PORT: 5053,
  // The browser's RPC (servers/connect): Connect, gRPC-Web and gRPC from one handler.
  CONNECT_PORT: 6080, // HTTP/1.1 cleartext: Connect and gRPC-Web
  CONNECT_H2C_PORT: 6081, // HTTP/2 cleartext (prior knowledge): gRPC, Connect, gRPC-Web; reflection
  CONNECT_TLS_PORT: 6443, // TLS: HTTP/2 (ALPN h2) or HTTP/1.1
};

// Toxiproxy's API and the proxies in front of each server endpoint.
// Listen ports stay below 32768 so they never collide with Linux's ephemeral range.
export const TOXIPROXY_PORTS = {
  TOXIPROXY_PORT: 8474, // the API; always on loopback
  PROXY_GRAPHQL_PORT: 14000, // -> GRAPHQL_PORT
  PROXY_GRAPHQL_TLS_PORT: 14443, // -> GRAPHQL_TLS_PORT
  PROXY_GRAPHQL_TLS_H1_PORT: 14444, // -> GRAPHQL_TLS_H1_PORT
  PROXY_GRPC_PORT: 15051, // -> GRPC_PORT
  PROXY_GRPC_TLS_PORT: 15052, // -> GRPC_TLS_PORT
  PROXY_GRPC_KEEPALIVE_PORT: 15053, // -> GRPC_KEEPALIVE_PORT
  PROXY_CONNECT_PORT: 17080, // -> CONNECT_PORT
  PROXY_CONNECT_H2C_PORT: 17081, // -> CONNECT_H2C_PORT
  PROXY_CONNECT_TLS_PORT: 17443, // -> CONNECT_TLS_PORT
};

// Every port, by the environment variable that overrides it.
export const DEFAULT_PORTS = { ...SERVER_PORTS, ...TOXIPROXY_PORTS };

export const DEFAULT_HOST = '127.0.0.1';

// Where the GraphQL server answers: HTTP (POST, GET) and WebSocket upgrades.
export const GRAPHQL_PATH = '/graphql';

// The proxies, named for what they front: [name, listen port var, upstream port var].
export const PROXY_ROUTES = [
  ['graphql_http', 'PROXY_GRAPHQL_PORT', 'GRAPHQL_PORT'],
  ['graphql_tls', 'PROXY_GRAPHQL_TLS_PORT', 'GRAPHQL_TLS_PORT'],
  ['graphql_tls_h1', 'PROXY_GRAPHQL_TLS_H1_PORT', 'GRAPHQL_TLS_H1_PORT'],
  ['grpc', 'PROXY_GRPC_PORT', 'GRPC_PORT'],
  ['grpc_tls', 'PROXY_GRPC_TLS_PORT', 'GRPC_TLS_PORT'],
  ['grpc_keepalive', 'PROXY_GRPC_KEEPALIVE_PORT', 'GRPC_KEEPALIVE_PORT'],
  ['connect', 'PROXY_CONNECT_PORT', 'CONNECT_PORT'],
  ['connect_h2c', 'PROXY_CONNECT_H2C_PORT', 'CONNECT_H2C_PORT'],
  ['connect_tls', 'PROXY_CONNECT_TLS_PORT', 'CONNECT_TLS_PORT'],
];

// The pack's proxies by name (Toxiproxy may hold markers beside them: see hold.js).
export const PROXY_NAMES = PROXY_ROUTES.map(([name]) => name);

// Proxies in Toxiproxy's populate format for a set of ports.
export function proxiesFor(ports = DEFAULT_PORTS, host = DEFAULT_HOST, upstreamHost = host) {
  return PROXY_ROUTES.map(([name, listenVar, upstreamVar]) => ({
    name,
    listen: `${host}:${ports[listenVar]}`,
    upstream: `${upstreamHost}:${ports[upstreamVar]}`,
    enabled: true,
  }));
}

// What k6 scenarios talk to (the proxies, so profiles apply), as the -e variables
// scenarios/lib/config.js reads. The defaults are targetsFor(DEFAULT_PORTS). serverHost:
// where the GraphQL server itself is, when not on the proxies' host (docker compose).
export function targetsFor(ports = DEFAULT_PORTS, host = DEFAULT_HOST, serverHost = host) {
  return {
    TOXIPROXY_URL: `http://${host}:${ports.TOXIPROXY_PORT}`,
    GRAPHQL_HTTP_URL: `http://${host}:${ports.PROXY_GRAPHQL_PORT}${GRAPHQL_PATH}`,
    GRAPHQL_HTTPS_URL: `https://${host}:${ports.PROXY_GRAPHQL_TLS_PORT}${GRAPHQL_PATH}`,
    // HTTP/1.1 kept over TLS: the endpoint whose ALPN offers no h2.
    GRAPHQL_HTTPS_H1_URL: `https://${host}:${ports.PROXY_GRAPHQL_TLS_H1_PORT}${GRAPHQL_PATH}`,
    GRAPHQL_WS_URL: `ws://${host}:${ports.PROXY_GRAPHQL_PORT}${GRAPHQL_PATH}`,
    GRAPHQL_WSS_URL: `wss://${host}:${ports.PROXY_GRAPHQL_TLS_PORT}${GRAPHQL_PATH}`,
    GRPC_ADDR: `${host}:${ports.PROXY_GRPC_PORT}`,
    GRPC_TLS_ADDR: `${host}:${ports.PROXY_GRPC_TLS_PORT}`,
    // gRPC whose server pings every connection (GRPC_KEEPALIVE_MS).
    GRPC_KEEPALIVE_ADDR: `${host}:${ports.PROXY_GRPC_KEEPALIVE_PORT}`,
    // The Connect server: Connect and gRPC-Web over HTTP/1.1, or HTTP/2 over TLS.
    CONNECT_URL: `http://${host}:${ports.PROXY_CONNECT_PORT}`,
    CONNECT_TLS_URL: `https://${host}:${ports.PROXY_CONNECT_TLS_PORT}`,
    // The GraphQL server itself, unshaped: the unstable scenario's publisher writes
    // there, so a link event meets its subscribers and not its writes.
    GRAPHQL_DIRECT_URL: `http://${serverHost}:${ports.GRAPHQL_PORT}${GRAPHQL_PATH}`,
  };
}

export const TARGET_DEFAULTS = targetsFor();

// The proxies in front of a team's own endpoints (the `api` scenario: common/your-api.js),
// each listening on 127.0.0.1 at the port of its variable: [name, listen port var].
// The WebSocket one is used only when --ws names another host:port than --graphql.
export const API_PROXY_PORTS = {
  PROXY_API_GRAPHQL_PORT: 16000, // -> the GraphQL endpoint (cleartext or TLS)
  PROXY_API_WS_PORT: 16001, // -> the WebSocket endpoint, when not the GraphQL one's host:port
  PROXY_API_GRPC_PORT: 16051, // -> the gRPC endpoint (plaintext or TLS)
  PROXY_API_CONNECT_PORT: 16080, // -> the Connect / gRPC-Web endpoint, when not the GraphQL one's host:port
};
export const API_PROXY_ROUTES = [
  ['api_graphql', 'PROXY_API_GRAPHQL_PORT'],
  ['api_ws', 'PROXY_API_WS_PORT'],
  ['api_grpc', 'PROXY_API_GRPC_PORT'],
  ['api_connect', 'PROXY_API_CONNECT_PORT'],
];
export const API_PROXY_NAMES = API_PROXY_ROUTES.map(([name]) => name);

// Every proxy a profile shapes (each where it exists).
export const ALL_PROXY_NAMES = [...PROXY_NAMES, ...API_PROXY_NAMES];

// Pinned tool versions (tools/install is the one place that builds them).
export const K6_VERSION = 'v1.8.1';
export const TOXIPROXY_VERSION = 'v2.5.0';

// Server-side bounds, shared so clients and tests know them.
export const LIMITS = {
  MAX_BOOKS: 500000, // study 002 goes up to 500000 books
  MAX_PAYLOAD_BYTES: 16 * 1024 * 1024, // payload(size) / Payload RPC
  MAX_BODY_BYTES: 1024 * 1024, // request body (HTTP) and WebSocket frame
  MAX_QUERY_DEPTH: 12,
  MAX_EVENTS: 10000, // events per subscription / stream
  MIN_EVENT_INTERVAL_MS: 1,
  MAX_EVENT_INTERVAL_MS: 60000, // so a subscription or stream always ends in bounded time
  MAX_PAGE_SIZE: 500,
  // Study 001's resources are 100 KB (102400 bytes): the largest blurb.
  MAX_BLURB_BYTES: 100 * 1024,
  // Generation time per resource (the x-generate header, common/generation.js):
  // at most this many ms a resource, and a request's resources generated one after
  // another (resolve=serial) may sleep at most MAX_GENERATE_MS in all.
  MAX_GENERATE_DELAY_MS: 1000,
  MAX_GENERATE_MS: 10000,
  // k6's gRPC client refuses messages over 4 MiB by default; ListBooks(500000) is
  // 35,042,049 bytes, so scenarios connect with maxReceiveSize set to this.
  GRPC_MAX_RECEIVE_BYTES: 64 * 1024 * 1024,
  // Fan-out: each server's topic hub (servers/shared/hub.js).
  MAX_TOPICS: 256, // topics a hub keeps; one without subscribers makes room, least recently used first
  MAX_TOPIC_NAME: 128, // characters: letters, digits, . _ : -
  MAX_SUBSCRIBERS: 20000, // live subscriptions per server, all topics together
  MAX_EVENT_PAYLOAD_BYTES: 64 * 1024, // one published event's payload (UTF-8 bytes)
  TOPIC_BACKLOG_EVENTS: 256, // the latest events kept per topic, for polling and resuming
  TOPIC_BACKLOG_BYTES: 256 * 1024, // ... and at most this many payload bytes of them
  MAX_POLL_EVENTS: 100, // events one poll (Query.topic.events) returns
  SUBSCRIBER_QUEUE_EVENTS: 1000, // events a subscriber may fall behind before the hub drops it
  // Client and bidirectional gRPC streams (grpc-vs-graphql: UploadBooks, PayloadStream).
  MAX_UPLOAD_BOOKS: 100000, // books in one UploadBooks call
  // How long the reference GraphQL and Connect servers keep an idle HTTP/1.1 connection
  // or HTTP/2 session before they close it (Node's default of 5 s would silently turn a
  // keep-alive lane with think time into fresh connections; 65 s outlasts the scenarios'
  // pauses, and a load balancer's usual 60 s idle timeout).
  KEEP_ALIVE_MS: 65000,
  STREAM_IDLE_MS: 65000, // a client or bidirectional stream with no message this long is ended (as an idle kept-alive connection)
  // The keepalive PING interval of the gRPC server on GRPC_KEEPALIVE_PORT (grpc-js's
  // grpc.keepalive_time_ms: the next PING this long after the last one's ACK), and how long
  // it waits for that ACK before it drops the connection (grpc.keepalive_timeout_ms; gRPC's
  // default 20 s). 10 s: grpc-go's least client keepalive time, as a phone's gRPC client
  // would set it to keep a carrier's NAT mapping.
  GRPC_KEEPALIVE_MS: 10000,
  GRPC_KEEPALIVE_TIMEOUT_MS: 20000,
};

// The origin of the marker topicEvents(announce: true) sends first: where a
// subscription began (servers/graphql/hub.graphql; scenarios/fanout.js reads it).
export const SUBSCRIBED_ORIGIN = 'subscribed';
