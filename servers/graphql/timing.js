// Server-side timing, so a client can split server time from network time (study 002).
// The same parts on every transport (the format: common/server-timing.js):
//
// exec:  GraphQL execution, resolvers included.
// ser:   serializing the result to JSON.
// total: from the request being in (an HTTP request's body read, a WebSocket
//        message received) to its answer being serialized: decoding the request,
//        the document's shape checks, parsing, validation and the cost check
//        (or their cache hits, documents.js), exec and ser, and what lies between.
//
// HTTP: one record per request lives in an AsyncLocalStorage, so Apollo's hooks
// reach it without threading it through: the plugin times execution from
// executionDidStart to executionDidEnd, and `stringifyResult` (Apollo's hook for
// turning the result into the body) times JSON.stringify itself. The handler then
// writes `Server-Timing: exec;dur=..., ser;dur=..., total;dur=...` as the
// response is about to be written.
//
// WebSocket: the numbers travel inside the result, extensions.timing {execMs,
// serMs, totalMs}, which cannot contain the time it takes to serialize itself.
// So the timing goes last in the message as an object whose toJSON JSON.stringify
// calls when it gets there, after the data: serMs runs from the result being
// handed over (onNext) to that moment, and totalMs ends there too. The message is
// serialized once and sent as serialized. For a subscription, each event's
// totalMs runs from the event leaving its stream (exec start).
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

// The record of one WebSocket operation whose message arrived at `start`
// (performance.now()); execution.js marks execStart.
export function newOperationTiming(start, operationType) {
  return { start, execStart: start, subscription: operationType === 'subscription' };
}

class WsTiming {
  constructor(record) {
    this.serStart = performance.now();
    this.execMs = this.serStart - record.execStart;
    this.start = record.subscription ? record.execStart : record.start;
  }

  toJSON() {
    const now = performance.now();
    return { execMs: round(this.execMs), serMs: round(now - this.serStart), totalMs: round(now - this.start) };
  }
}

// extensions.timing for a result of the operation `record` times, made as the
// result is handed over for sending; it must be the last value of the message.
export const wsTiming = (record) => new WsTiming(record);
