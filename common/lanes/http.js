// The HTTP family: GraphQL over HTTP from k6's http (scenarios/lib/http.js graphqlHttp),
// its transports and its lanes. Plain ES module with no imports (common/lanes/catalogue.js
// assembles the families).
//
// A transport: what the round-trip model (common/model.js) needs to know of it:
//   phases   set-up round trips beyond TCP's (and TLS's, where the lane has it)
//   tls      'always' where the transport runs over TLS whatever the lane (h2 by ALPN)
//   fresh    a new connection for every operation
//   framing  the bytes it adds around a request and a response (headers, frames, length
//            prefixes), measured on the wire through the proxies with the pack's k6
//            clients (k6's default headers, Apollo's answer headers), rounded up; they
//            matter only on slow links (2g: 400 B up is 12 ms)
//   requestCpuMs  the CPU one request costs the load generator, the proxy and the server
//            beyond an HTTP/1.1 keep-alive request's: bench/scale.js's knees on the
//            reference machine (2 cores; 2026-11-25): HTTP/1.1 keep-alive still kept up
//            at 2,688/s (< 0.74 ms of the box's CPU a request), HTTP/2 topped out near
//            1,050/s (1.9 ms: +1.1 ms; the server's own part of that is ~0.1 ms,
//            bench/server-cost.js: Go's HTTP/2 client in k6 and TLS records), gRPC near
//            1,660/s (1.2 ms: +0.45 ms). A new TCP connection per request (k6's dial, the
//            proxy's accept and its own dial upstream, the server's accept and close): 4
//            VUs in a closed loop under lan did 897 fresh requests a second against 2,250
//            kept-alive ones (2.23 against 0.89 ms of the box's CPU: +1.3 ms; 2026-11-26).
//            CPU, so it shares the cores at c4 (common/model.js contentionMs) and caps an
//            open step's rate (common/schedule.js openStep). 0 where not given.
//   messageSegments  the least segments a message travels in, on transports that write
//            headers and data apart (HTTP/2 frames, gRPC messages): 1 where not given
//   wholeMs  k6 times its operations in whole milliseconds (scenarios/lib/grpc.js, ws.js)
// HTTP/1.1's request line and headers; its status line and headers. Measured through a relay
// between k6 and the reference server (2026-11-30, k6 v1.8.1): a POST's head is 132 B (k6's
// User-Agent, Host with a 5-digit port, Content-Length, Content-Type), 151 with http-fresh's
// Connection: close; an answer's 245-281 B (Apollo's content-type, x-cache, Server-Timing,
// cache-control, Date, the connection's headers). Rounded up. A cacheable GET's answer adds
// its ETag and a longer Cache-Control (322-327 B), which study 001's documents carry:
// 30 B short there, 1 ms at 2g. The earlier 260 / 330 put a book's answer over 3G FACH's
// 475 B buffer (170 + 330), which the link's 427 B never reached (docs/known-limits.md).
const H1 = { req: 160, res: 300 };
const H2 = { req: 90, res: 140 }; // HPACK-compressed headers after the first request
export const HTTP_TRANSPORTS = {
  'http-fresh': { phases: [], fresh: true, framing: H1, requestCpuMs: 1.3 },
  'http-keepalive': { phases: [], framing: H1 },
  'http-poll': { phases: [], framing: H1 },
  http2: { phases: [], tls: 'always', framing: H2, requestCpuMs: 1.1, messageSegments: 2 },
};

// k6 cannot speak HTTP/1.1 over TLS to a server that offers h2 (no per-request ALPN):
// a kept connection over TLS to such a server is HTTP/2 (overTls). A lane that keeps
// HTTP/1.1 over TLS goes to an endpoint whose ALPN offers no h2 (scenarios/lib/http.js
// graphqlUrl: the reference server's GRAPHQL_TLS_H1_PORT).
const client = 'scenarios/lib/http.js graphqlHttp';
export const HTTP_LANES = [
  { name: 'http_fresh', transport: 'http-fresh', tls: false, policy: 'http-fresh', api: 'http', client },
  {
    name: 'http_keepalive',
    transport: 'http-keepalive',
    tls: false,
    overTls: 'http2',
    policy: 'http-keepalive',
    api: 'http',
    client,
  },
  { name: 'https_fresh', transport: 'http-fresh', tls: true, policy: 'http-fresh', api: 'http', client },
  // HTTP/1.1 kept over TLS: what a browser uses when the server offers no h2.
  { name: 'https_keepalive', transport: 'http-keepalive', tls: true, policy: 'http-keepalive', api: 'http', client },
  { name: 'http2', transport: 'http2', tls: true, policy: 'http2', api: 'http', client },
  // A poll loop for events (push, fanout: their own loops over graphqlHttp).
  { name: 'http_poll', transport: 'http-poll', tls: false, client: 'scenarios/push.js, scenarios/fanout.js' },
];
