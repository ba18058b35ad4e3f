// Where the pack runs GraphQL operations: the WebSocket path hands
// executeOperation and subscribeOperation to graphql-ws, and a per-request choice
// of executor belongs here. HTTP/1.1 and HTTP/2 execute inside Apollo's request
// pipeline. Apollo's one seam for running operations elsewhere is a gateway's
// executor (`gateway: { load: () => ({ executor }) }`, which would call
// executeOperation); measured with bench/server-cost.js it made each 100 KB
// result cost the server 150-200 us more (its strings get promoted to V8's old
// generation, cause not found), so HTTP keeps Apollo's own execute for now.
//
// Each times execution on the operation's record (contextValue.timing, timing.js):
// execStart as it starts, execMs as a query or mutation ends. A subscription's
// event stream marks execStart again as each event leaves it (resolvers.js).
import { performance } from 'node:perf_hooks';
import { execute, subscribe } from 'graphql';

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
