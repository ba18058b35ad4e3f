// Connect servers the browser-RPC tests run against: connectrpc's Eliza on
// @connectrpc/connect-node (a server this project did not write; test/fixtures/
// eliza.proto), and the pack's own Connect server in this process.
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import protoLoader from '@grpc/proto-loader';
import { Code, ConnectError } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { registryOf } from '../../servers/connect/proto.js';
import { API_LANES } from '../../common/your-api.js';
import declareGrpcVsGraphql from '../../scenarios/specs/grpc-vs-graphql.js';

export const BOOKS_PROTO = fileURLToPath(new URL('../../servers/proto/books.proto', import.meta.url));
export const ELIZA_PROTO = fileURLToPath(new URL('../fixtures/eliza.proto', import.meta.url));
export const ELIZA_SERVICE = 'connectrpc.eliza.v1.ElizaService';
// grpc-vs-graphql's browser-RPC lanes (the rpc-web family's, common/lanes/rpc-web.js).
export const GRPC_VS_GRAPHQL_RPC_LANES = declareGrpcVsGraphql({})
  .lanes.filter((l) => l.family === 'rpc-web')
  .map((l) => l.name);
// The lanes `run api --connect` runs where every protocol goes through.
export const API_CONNECT_LANES = API_LANES.filter((l) => l.kind === 'connect').map((l) => l.name);

// Say answers `Why do you say "<sentence>"?`; an empty sentence is invalid_argument
// "say something". -> { url, close() }
export async function startEliza() {
  const ElizaService = registryOf(protoLoader.loadSync(ELIZA_PROTO)).getService(ELIZA_SERVICE);
  const server = http.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(ElizaService, {
          say: ({ sentence }) => {
            if (!sentence) throw new ConnectError('say something', Code.InvalidArgument);
            return { sentence: `Why do you say "${sentence}"?` };
          },
        }),
    }),
  );
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}
