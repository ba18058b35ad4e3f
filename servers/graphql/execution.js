// Where GraphQL operations run, on every transport: the WebSocket path hands
// executeOperation and subscribeOperation to graphql-ws, and Apollo (HTTP/1.1,
// HTTP/2) calls executeOperation through executionGateway. A per-request choice
// of executor belongs here, in one place.
//
// Each times execution on the operation's record (contextValue.timing, timing.js):
// execStart as it starts, execMs as a query or mutation ends. A subscription's
// event stream marks execStart again as each event leaves it (resolvers.js).
import { performance } from 'node:perf_hooks';
import { execute, printSchema, subscribe } from 'graphql';

export function executeOperation(args) {
  const timing = args.contextValue?.timing;
  if (!timing) return execute(args);
  timing.execStart = performance.now();
  const result = execute(args);
  if (typeof result?.then === 'function') {
    return result.then((value) => {
      timing.execMs = performance.now() - timing.execStart;
      return value;
    });
  }
  timing.execMs = performance.now() - timing.execStart;
  return result;
}

export function subscribeOperation(args) {
  const timing = args.contextValue?.timing;
  if (timing) timing.execStart = performance.now();
  return subscribe(args);
}

// Apollo hands execution to a gateway's executor: its documented seam
// (@apollo/server-gateway-interface) for running operations somewhere else. This
// gateway serves the one schema and runs each operation through executeOperation
// with what Apollo resolved (document, operation name, variables, context), so
// HTTP and WebSocket run operations the same way. Apollo still parses, validates,
// formats errors and calls its plugins' hooks around it.
export function executionGateway(schema) {
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    async load() {
      return {
        executor: (requestContext) =>
          executeOperation({
            schema: requestContext.schema,
            document: requestContext.document,
            operationName: requestContext.request.operationName,
            variableValues: requestContext.request.variables,
            contextValue: requestContext.context,
          }),
      };
    },
    async stop() {},
  };
}
