// Every address and port the pack uses, in one place.
//
// Plain ES module with no imports, so k6 scripts (`import ... from './lib/defaults.js'`)
// and the Node side (servers, bin/k6pack.js, tests) read the same numbers.
// The embedded stack and docker compose both publish these ports on 127.0.0.1,
// so a scenario runs unchanged against either; override with `-e NAME=value`.

// The reference servers, reached directly (no network shaping).
export const SERVER_PORTS = {
  GRAPHQL_PORT: 4000, // GraphQL over HTTP/1.1 and ws://, cleartext
  GRAPHQL_TLS_PORT: 4443, // GraphQL over TLS: HTTP/2 (ALPN h2) or HTTP/1.1, and wss://
  GRPC_PORT: 50051, // gRPC, plaintext
  GRPC_TLS_PORT: 50052, // gRPC over TLS
};

// Toxiproxy's API and the proxies in front of each server endpoint.
// Listen ports stay below 32768 so they never collide with Linux's ephemeral range.
export const TOXIPROXY_API_PORT = 8474;
export const PROXIES = [
  { name: 'graphql_http', listenPort: 14000, upstreamPortVar: 'GRAPHQL_PORT' },
  { name: 'graphql_tls', listenPort: 14443, upstreamPortVar: 'GRAPHQL_TLS_PORT' },
  { name: 'grpc', listenPort: 15051, upstreamPortVar: 'GRPC_PORT' },
  { name: 'grpc_tls', listenPort: 15052, upstreamPortVar: 'GRPC_TLS_PORT' },
];

export const DEFAULT_HOST = '127.0.0.1';

// What the scenarios talk to by default: the proxies, so profiles apply.
export const TARGET_DEFAULTS = {
  TOXIPROXY_URL: `http://${DEFAULT_HOST}:${TOXIPROXY_API_PORT}`,
  GRAPHQL_HTTP_URL: `http://${DEFAULT_HOST}:14000/graphql`,
  GRAPHQL_HTTPS_URL: `https://${DEFAULT_HOST}:14443/graphql`,
  GRAPHQL_WS_URL: `ws://${DEFAULT_HOST}:14000/graphql`,
  GRAPHQL_WSS_URL: `wss://${DEFAULT_HOST}:14443/graphql`,
  GRPC_ADDR: `${DEFAULT_HOST}:15051`,
  GRPC_TLS_ADDR: `${DEFAULT_HOST}:15052`,
};

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
  MAX_PAGE_SIZE: 500,
  MAX_BLURB_BYTES: 64 * 1024,
};
