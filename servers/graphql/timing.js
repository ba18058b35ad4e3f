// Server-side timing, so a client can split server time from network time (study 002).
//
// exec: GraphQL execution, resolvers included (parsing and validation are not).
// ser:  serializing the result to JSON.
//
// HTTP: one record per request lives in an AsyncLocalStorage, so Apollo's hooks
// reach it without threading it through: the plugin times execution from
// executionDidStart to executionDidEnd, and `stringifyResult` (Apollo's hook for
// turning the result into the body) times JSON.stringify itself. The handler then
// writes `Server-Timing: exec;dur=..., ser;dur=..., total;dur=...` (total: from the
// request body being read to the response being ready to write).
//
// WebSocket: the numbers travel inside the message (extensions.timing), but the
// message cannot contain the time it takes to serialize itself. So onNext puts a
// placeholder carrying its own start time in serMs, graphql-ws serializes the
// message, and the socket's send (wrapped in ws.js) swaps the placeholder for the
// elapsed time: the data is serialized once, and serMs is that serialization.
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { GraphQLError } from 'graphql';
import { formatServerTiming, roundMs as round } from '../../common/server-timing.js';

const requestTiming = new AsyncLocalStorage();


// A fresh record; `operation` (query | mutation | subscription) and `hasErrors` let
// the HTTP layer decide what may be cached.
export function newRequestTiming() {
  return { start: performance.now(), execMs: 0, serMs: 0, operation: null, hasErrors: false };
}

export function runWithTiming(timing, fn) {
  return requestTiming.run(timing, fn);
}

// Apollo's `stringifyResult`, timed; same output as Apollo's default.
export function timedStringifyResult(result) {
  const t0 = performance.now();
  const body = JSON.stringify(result) + '\n';
  const timing = requestTiming.getStore();
  if (timing) {
    timing.serMs += performance.now() - t0;
    timing.hasErrors = Boolean(result.errors?.length);
  }
  return body;
}

// Apollo plugin: records the operation type and the execution time. Subscriptions
// are refused here with a sentence pointing at the WebSocket endpoint.
export const timingPlugin = {
  async requestDidStart() {
    const timing = requestTiming.getStore();
    if (!timing) return undefined;
    return {
      async didResolveOperation({ operation }) {
        // No operation: the document has none by that operationName (or several
        // and no operationName); Apollo answers that itself.
        timing.operation = operation?.operation ?? null;
        if (timing.operation === 'subscription') {
          throw new GraphQLError('subscriptions are served over WebSocket (graphql-transport-ws subprotocol) at /graphql, not over HTTP', {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        }
      },
      async executionDidStart() {
        const t0 = performance.now();
        return {
          async executionDidEnd() {
            timing.execMs = performance.now() - t0;
          },
        };
      },
    };
  },
};

export function serverTimingHeader(timing) {
  return formatServerTiming({ exec: timing.execMs, ser: timing.serMs, total: performance.now() - timing.start });
}

// --- WebSocket ---

const SER_MARK = '__k6pack_serMs_since_';

// { execMs, serMs placeholder } for a result whose execution started at execStart.
export function wsTimingExtension(execStart) {
  return { execMs: round(performance.now() - execStart), serMs: SER_MARK + performance.now() };
}

// Replace the placeholder in a serialized message with the milliseconds since it
// was made. The placeholder is the message's last value (extensions come last), so
// lastIndexOf finds it within a few bytes of the end; slicing keeps it O(1) in V8.
export function fillSerPlaceholder(message) {
  const at = message.lastIndexOf(`"${SER_MARK}`);
  if (at === -1) return message;
  const end = message.indexOf('"', at + 1);
  const since = Number(message.slice(at + 1 + SER_MARK.length, end));
  return message.slice(0, at) + round(performance.now() - since) + message.slice(end + 1);
}
