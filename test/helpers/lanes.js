// The lanes ws-vs-http and grpc-vs-graphql had before the browser's RPC (Connect,
// gRPC-Web) joined them. Tests whose subject is not the lanes (the CLI, the hold, the
// run folder, reports, a server killed mid-run) run these, as `-e LANES=…`, so they
// stay as long as they were; the browser-RPC lanes have tests of their own
// (connect-lanes, api-connect, connect-foreign).
// (the lanes of every family but rpc-web's, common/lanes/).
import declareWsVsHttp from '../../scenarios/specs/ws-vs-http.js';
import declareGrpcVsGraphql from '../../scenarios/specs/grpc-vs-graphql.js';

const studyLanes = (decl) =>
  decl.lanes
    .filter((l) => l.family !== 'rpc-web')
    .map((l) => l.name)
    .join(',');
export const WS_VS_HTTP_LANES = studyLanes(declareWsVsHttp({}));
export const GRPC_VS_GRAPHQL_LANES = studyLanes(declareGrpcVsGraphql({}));
