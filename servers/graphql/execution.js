// Where GraphQL operations run. The WebSocket path hands these to graphql-ws
// (execute, subscribe); a per-request choice of executor belongs here, in one
// place. Each marks when execution starts on the operation's timing record
// (contextValue.timing, timing.js); a subscription's event stream marks it again
// as each event leaves it (resolvers.js).
import { performance } from 'node:perf_hooks';
import { execute, subscribe } from 'graphql';

function markStart(args) {
  const timing = args.contextValue?.timing;
  if (timing) timing.execStart = performance.now();
}

export function executeOperation(args) {
  markStart(args);
  return execute(args);
}

export function subscribeOperation(args) {
  markStart(args);
  return subscribe(args);
}
