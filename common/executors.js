// How the GraphQL server runs an operation (study 002), chosen per request with
// the request's `extensions` (HTTP POST body, GET `extensions` parameter, a
// WebSocket `subscribe` payload): { "extensions": { "executor": "per-item" } }.
// Every executor answers the same data; they differ in what each book costs.
// In one place for the server (servers/graphql/execution.js) and the scenarios
// (EXECUTORS=plain,jit). Plain ES module with no k6 or Node imports.
export const EXECUTORS = {
  plain: 'graphql-js; books come with their authors, read as plain properties (the default)',
  'per-item':
    "each book's author resolved through its own async resolver call, unbatched, as Spring's @SchemaMapping per book",
  dataloader: "each book's author loaded through a per-request DataLoader (the dataloader package): one batch per tick",
  instrumented: 'Apollo Server as it ships: its cache-control plugin on, a hook on every field (willResolveField)',
  jit: 'graphql-jit compiles the operation once per document and runs it, same schema and resolvers',
};
export const EXECUTOR_NAMES = Object.keys(EXECUTORS);
export const DEFAULT_EXECUTOR = 'plain';

// A request's `extensions` -> { value: name } or { error: sentence }.
export function executorOf(extensions) {
  const name = extensions && typeof extensions === 'object' ? extensions.executor : undefined;
  if (name === undefined || name === null) return { value: DEFAULT_EXECUTOR };
  if (typeof name === 'string' && Object.prototype.hasOwnProperty.call(EXECUTORS, name)) return { value: name };
  return { error: `extensions.executor must be one of ${EXECUTOR_NAMES.join(', ')} (got ${JSON.stringify(name)})` };
}
