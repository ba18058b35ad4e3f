// The browser's RPC family: Connect (JSON, protobuf) and gRPC-Web from k6's http to a
// Connect server (scenarios/lib/rpc-web.js rpcCall), on the HTTP family's transports.
// Plain ES module with no imports.
//
// Per protocol, its bytes in one place:
//   framing  what it adds around a request and a response over HTTP/1.1 (h1) and HTTP/2
//            (h2), TLS records apart: k6's data_sent/data_received over 201 calls of
//            Payload(100) to servers/connect (Connect-Protocol-Version or X-Grpc-Web,
//            connect-node's answer headers, Server-Timing; gRPC-Web's answer is chunked
//            on HTTP/1.1) less the messages (2026-11-27)
//   getBook  GetBook's messages: {"id":"book-123"} up and the book's JSON (~122 B) or
//            protobuf (~54 B; names vary) down; gRPC-Web adds its two frame prefixes
//            and the trailer frame (ws-vs-http)
//   payload  Payload's messages beyond its `size` of data: the request ({"size":1000000}
//            or its 5 B of protobuf) and the answer ({"size":N,"data":""} is 20 B of
//            JSON; protobuf's field headers 8 B; gRPC-Web adds its two 5-byte frame
//            prefixes and the trailer frame's "grpc-status: 0" line) (grpc-vs-graphql)
export const RPC_WEB_PROTOCOLS = {
  'connect-json': {
    framing: { h1: { req: 180, res: 210 }, h2: { req: 50, res: 60 } },
    getBook: { reqBytes: 20, resBytes: 130 },
    payload: { req: 16, res: 20 },
  },
  'connect-proto': {
    framing: { h1: { req: 180, res: 210 }, h2: { req: 50, res: 60 } },
    getBook: { reqBytes: 12, resBytes: 65 },
    payload: { req: 5, res: 8 },
  },
  'grpc-web': {
    framing: { h1: { req: 170, res: 240 }, h2: { req: 50, res: 90 } },
    getBook: { reqBytes: 17, resBytes: 96 },
    payload: { req: 10, res: 34 },
  },
};

// The framing a protocol adds on an HTTP transport.
export const rpcWebFraming = (protocol, transport) =>
  RPC_WEB_PROTOCOLS[protocol].framing[transport === 'http2' ? 'h2' : 'h1'];

// Each protocol kept on HTTP/1.1 (HTTP/2 over TLS: k6 takes h2 wherever TLS offers it), a
// fresh connection per call, and HTTP/2 over TLS. `run api --connect` runs the kept
// lanes: TLS and h2 as the endpoint offers them.
const client = 'scenarios/lib/rpc-web.js rpcCall';
const lanesOf = (protocol, name, { more = true } = {}) => {
  const of = { protocol, variant: protocol, client };
  return [
    { name, transport: 'http-keepalive', tls: false, overTls: 'http2', api: 'connect', ...of },
    ...(more
      ? [
          { name: `${name}_fresh`, transport: 'http-fresh', tls: false, ...of },
          { name: `${name}_h2`, transport: 'http2', tls: true, ...of },
        ]
      : []),
  ];
};
export const RPC_WEB_LANES = [
  ...lanesOf('connect-json', 'connect_json'),
  ...lanesOf('connect-proto', 'connect_proto'),
  ...lanesOf('grpc-web', 'grpc_web', { more: false }),
];
