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
const H1 = { req: 260, res: 330 }; // HTTP/1.1 request line + headers; status line + headers
const H2 = { req: 90, res: 140 }; // HPACK-compressed headers after the first request
export const HTTP_TRANSPORTS = {
  'http-fresh': { phases: [], fresh: true, framing: H1 },
  'http-keepalive': { phases: [], framing: H1 },
  'http-poll': { phases: [], framing: H1 },
  http2: { phases: [], tls: 'always', framing: H2 },
};

// k6 cannot speak HTTP/1.1 over TLS to a server that offers h2 (no per-request ALPN):
// a kept connection over TLS to such a server is HTTP/2 (overTls).
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
  // HTTP/1.1 kept over TLS: what a browser uses when the server offers no h2. The pack's
  // servers offer h2, so only `run api` against such a server runs it.
  { name: 'https_keepalive', transport: 'http-keepalive', tls: true, policy: 'http-keepalive', api: 'http', client },
  { name: 'http2', transport: 'http2', tls: true, policy: 'http2', api: 'http', client },
  // A poll loop for events (push, fanout: their own loops over graphqlHttp).
  { name: 'http_poll', transport: 'http-poll', tls: false, client: 'scenarios/push.js, scenarios/fanout.js' },
];
