// The executable schema: schema.graphql (the contract) + resolvers.js, and the
// fan-out part (hub.graphql + hub-resolvers.js) over the server's topic hub. One
// instance per server, shared by Apollo (HTTP/1.1, HTTP/2) and graphql-ws (WebSocket).
import { readFileSync } from 'node:fs';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { Hub } from '../shared/hub.js';
import { createHubResolvers, hubTypeDefs } from './hub-resolvers.js';
import { createResolvers } from './resolvers.js';

export { createResolvers };
import { depthLimitRule } from './rules.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

// `resolvers`: to build a second schema over the same resolvers (and their state:
// the ratings), as server.js does for the instrumented Apollo server; `hub`: the
// server's topic hub (a private one when none is given).
export function createSchema({ resolvers = createResolvers(), hub = new Hub({ origin: 'graphql' }) } = {}) {
  return makeExecutableSchema({ typeDefs: [typeDefs, hubTypeDefs], resolvers: [resolvers, createHubResolvers(hub)] });
}

// Rules added to GraphQL's standard ones, on every transport.
export const extraValidationRules = [depthLimitRule()];
