// The lanes ws-vs-http and grpc-vs-graphql had before the browser's RPC (Connect,
// gRPC-Web) joined them. Tests whose subject is not the lanes (the CLI, the hold, the
// run folder, reports, a server killed mid-run) run these, as `-e LANES=…`, so they
// stay as long as they were; the browser-RPC lanes have tests of their own
// (connect-lanes, api-connect, connect-foreign).
export const WS_VS_HTTP_LANES = 'http_fresh,http_keepalive,ws,https_fresh,http2,wss';
export const GRPC_VS_GRAPHQL_LANES = 'grpc,grpc_fresh,http_keepalive,http_fresh,grpc_bidi,grpc_client_stream';
