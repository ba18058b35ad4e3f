// The executable schema: schema.graphql (the contract) + resolvers.js. One instance
// per server, shared by Apollo (HTTP/1.1, HTTP/2) and graphql-ws (WebSocket).
import { readFileSync } from 'node:fs';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { createResolvers } from './resolvers.js';

export { createResolvers };
import { depthLimitRule } from './rules.js';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

// `resolvers`: to build a second schema over the same resolvers (and their state:
// the ratings), as server.js does for the instrumented Apollo server.
export function createSchema(resolvers = createResolvers()) {
  return makeExecutableSchema({ typeDefs, resolvers });
}

// Rules added to GraphQL's standard ones, on every transport.
export const extraValidationRules = [depthLimitRule()];
