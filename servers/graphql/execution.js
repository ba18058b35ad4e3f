// Where the pack runs GraphQL operations, and the executor each request asks for
// (study 002: `extensions.executor`, common/executors.js):
//
//   plain, per-item, dataloader  graphql-js's execute; per-item and dataloader
//                                differ only in the books allBooks returns
//                                (resolvers.js), so the context carries the name
//   jit                          graphql-jit: the operation compiled once per
//                                document and operation name, kept with the document
//                                (a WeakMap on the shared document cache's AST)
//   instrumented                 Apollo Server's own pipeline with its cache-control
//                                plugin (server.js): a hook on every field
//
// Over WebSocket graphql-ws hands every query and mutation to executeOperation, which
// picks the executor (instrumented goes through that Apollo server's
// executeOperation, the same pipeline an HTTP request takes). Over HTTP the
// operation runs inside Apollo's request pipeline: http.js sends an instrumented
// request to the instrumented Apollo server, and jitPlugin's responseForOperation
// (Apollo's documented hook for answering an operation in place of its own
// execution) runs jit requests here. Plain, per-item and dataloader requests keep
// Apollo's own execute. (Apollo's other seam, a gateway's executor, which would call
// executeOperation for every request, made each 100 KB result cost the server
// 150-200 us more, measured with bench/server-cost.js: its strings get promoted to
// V8's old generation, cause not found.) Subscriptions always run on graphql-js.
//
// Each times execution on the operation's record (contextValue.timing, timing.js):
// execStart as it starts, execMs as a query or mutation ends. A subscription's
// event stream marks execStart again as each event leaves it (resolvers.js).
import { performance } from 'node:perf_hooks';
import { HeaderMap } from '@apollo/server';
import { execute, getVariableValues, subscribe } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';

const isPromise = (x) => typeof x?.then === 'function';

// What Apollo makes of an error it sends (its normalizeAndFormatErrors): the
// error's JSON with a code, INTERNAL_SERVER_ERROR when it has none.
function apolloShaped(error) {
  const json = error.toJSON ? error.toJSON() : { message: String(error.message ?? error) };
  return { ...json, extensions: { ...error.extensions, code: error.extensions?.code ?? 'INTERNAL_SERVER_ERROR' } };
}

// schema: the executable schema every executor runs.
export function createExecution(schema) {
  // document -> Map(operationName -> graphql-jit's compiled query, or its errors)
  const compiled = new WeakMap();
  // (args) -> a promise of the result, through the instrumented Apollo server
  // (server.js sets it once that server has started).
  let instrumented = null;

  function compiledOf(document, operationName) {
    let byName = compiled.get(document);
    if (!byName) compiled.set(document, (byName = new Map()));
    const key = operationName ?? '';
    let query = byName.get(key);
    if (!query) byName.set(key, (query = compileQuery(schema, document, operationName ?? undefined)));
    return query;
  }

  // Variables that do not coerce are answered by graphql-js (it runs nothing), so
  // every executor refuses them in the same words.
  function runJit(args) {
    const { document, operationName, variableValues, contextValue, rootValue } = args;
    const query = compiledOf(document, operationName);
    if (!isCompiledQuery(query)) return query; // { errors }: it could not compile
    const operation = document.definitions.find(
      (d) => d.kind === 'OperationDefinition' && (operationName == null || d.name?.value === operationName),
    );
    if (
      operation &&
      getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 }).errors
    )
      return execute(args);
    return query.query(rootValue, contextValue, variableValues ?? {});
  }

  function run(args) {
    switch (args.contextValue?.executor) {
      case 'jit':
        return runJit(args);
      case 'instrumented':
        return instrumented ? instrumented(args) : execute(args);
      default:
        return execute(args);
    }
  }

  function executeOperation(args) {
    const timing = args.contextValue?.timing;
    if (!timing) return run(args);
    timing.execStart = performance.now();
    const result = run(args);
    if (isPromise(result)) {
      return result.then((value) => {
        timing.execMs = performance.now() - timing.execStart;
        return value;
      });
    }
    timing.execMs = performance.now() - timing.execStart;
    return result;
  }

  function subscribeOperation(args) {
    const timing = args.contextValue?.timing;
    if (timing) timing.execStart = performance.now();
    return subscribe(args);
  }

  // Apollo plugin (the plain Apollo server): answers a jit request's operation by
  // running it here; Apollo does the rest (timing, serialization, headers).
  const jitPlugin = {
    async requestDidStart({ contextValue }) {
      if (contextValue?.executor !== 'jit') return undefined;
      return {
        async responseForOperation({ document, operation, request }) {
          if (operation.operation === 'subscription') return null; // refused over HTTP by timing.js
          const vars = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, {
            maxErrors: 1,
          });
          if (vars.errors) return null; // Apollo answers them as for every executor (400)
          const result = await executeOperation({
            schema,
            document,
            operationName: request.operationName,
            variableValues: request.variables,
            contextValue,
          });
          const singleResult = result.errors ? { ...result, errors: result.errors.map(apolloShaped) } : result;
          return { http: { status: undefined, headers: new HeaderMap() }, body: { kind: 'single', singleResult } };
        },
      };
    },
  };

  // apollo: the instrumented Apollo server. Its executeOperation takes the
  // document's text (onSubscribe keeps it in the context as `source`); the result
  // comes back with its errors formatted, as Apollo sends them over HTTP.
  function useInstrumented(apollo) {
    instrumented = async ({ variableValues, operationName, contextValue }) => {
      const response = await apollo.executeOperation(
        { query: contextValue.source, variables: variableValues, operationName },
        { contextValue },
      );
      return response.body.kind === 'single' ? response.body.singleResult : response.body.initialResult;
    };
  }

  return { executeOperation, subscribeOperation, jitPlugin, useInstrumented };
}
