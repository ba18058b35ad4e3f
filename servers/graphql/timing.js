// Server-side timing, so a client can split server time from network time (study 002).
// The same parts on every transport (the format: common/server-timing.js):
//
// exec:  GraphQL execution, resolvers included.
// ser:   serializing the result to JSON.
// total: from the request being in (an HTTP request's body read, a WebSocket
//        message received) to its answer being serialized: decoding the request,
//        the document's shape checks, parsing, validation and the cost check
//        (or their cache hits, documents.js), exec and ser, and what lies between.
// cpu:   HTTP only, to a request that asks (common/server-timing.js CPU_ASK): the server
//        process's CPU time (user + system, all its threads, so the garbage collector's
//        too) over the same span as total. On a busy machine total grows with each wait
//        for a core and cpu does not, so a test comparing the server's costs reads cpu.
//        It is the request's own only while it is alone in flight (one VU, as study 002
//        runs): under concurrency it holds the others' too.
//
// One record per operation, the same on both transports, travels as
// contextValue.timing.
//
// HTTP: Apollo gets the record in its context, so its hooks reach it: the plugin
// notes the operation type, times execution from executionDidStart to
// executionDidEnd and, as the response is about to be serialized, tags
// the result's data (or its errors, when it has no data) with the record, so that
// `stringifyResult` (Apollo's hook for turning the result into the body, which is
// given nothing else) can time JSON.stringify itself. The handler then writes
// `Server-Timing: exec;dur=..., ser;dur=..., total;dur=...` as the response is
// about to be written. (No AsyncLocalStorage: on Node 20 it hooks every promise
// in the process, on every transport.)
//
// WebSocket: execution.js times execution on the record. The numbers travel
// inside the result, extensions.timing {execMs, serMs, totalMs}, which cannot
// contain the time it takes to serialize itself.
// So the timing goes last in the message as an object whose toJSON JSON.stringify
// calls when it gets there, after the data: serMs runs from the result being
// handed over (onNext) to that moment, and totalMs ends there too. The message is
// serialized once and sent as serialized. For a subscription, each event's
// execMs and totalMs run from the event leaving its stream.
import { performance } from 'node:perf_hooks';
import { GraphQLError } from 'graphql';
import { CPU_ASK, formatServerTiming, roundMs as round } from '../../common/server-timing.js';

// A fresh record for an operation whose request was in at `start` (default: now); execStart
// and execMs are set as it executes. `operation` (query | mutation | subscription) and
// `hasErrors` let the HTTP layer decide what may be cached. cpu: time the CPU too.
export function newTiming({ start = performance.now(), operation = null, cpu = false } = {}) {
  const cpuStart = cpu ? process.cpuUsage() : null;
  return { start, cpuStart, execStart: start, execMs: null, serMs: 0, operation, hasErrors: false };
}

// --- HTTP ---

// JSON.stringify leaves symbol keys out: the tag never reaches the body.
const RECORD = Symbol('k6pack.timing');
const carrierOf = (result) => result.data ?? result.errors;

// Apollo's `stringifyResult`, timed; same output as Apollo's default.
export function timedStringifyResult(result) {
  const t0 = performance.now();
  const body = JSON.stringify(result) + '\n';
  const timing = carrierOf(result)?.[RECORD];
  if (timing) timing.serMs += performance.now() - t0;
  return body;
}

// Apollo plugin: records the operation type, the execution time and whether the
// answer has errors, and tags the result for timedStringifyResult. Subscriptions are refused here
// with a sentence pointing at the WebSocket endpoint.
export const timingPlugin = {
  async requestDidStart({ contextValue }) {
    const timing = contextValue?.timing;
    if (!timing) return undefined;
    return {
      async didResolveOperation({ operation }) {
        // No operation: the document has none by that operationName (or several
        // and no operationName); Apollo answers that itself.
        timing.operation = operation?.operation ?? null;
        if (timing.operation === 'subscription') {
          throw new GraphQLError(
            'subscriptions are served over WebSocket (graphql-transport-ws subprotocol) at /graphql, not over HTTP',
            {
              extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
            },
          );
        }
      },
      async executionDidStart() {
        timing.execStart = performance.now();
        return {
          async executionDidEnd() {
            timing.execMs = performance.now() - timing.execStart;
          },
        };
      },
      async willSendResponse({ response }) {
        if (response.body.kind !== 'single') return;
        const result = response.body.singleResult;
        timing.hasErrors = Boolean(result.errors?.length);
        const carrier = carrierOf(result);
        if (carrier && typeof carrier === 'object') carrier[RECORD] = timing;
      },
    };
  },
};

// Whether a request asks for the server's CPU time (common/server-timing.js CPU_ASK).
export const asksCpu = (headers) => headers[CPU_ASK.header] === CPU_ASK.value;

export function serverTimingHeader(timing) {
  const total = performance.now() - timing.start;
  const used = timing.cpuStart && process.cpuUsage(timing.cpuStart);
  const cpu = used ? (used.user + used.system) / 1000 : undefined;
  return formatServerTiming({ exec: timing.execMs ?? 0, ser: timing.serMs, total, cpu });
}

// --- WebSocket ---

class WsTiming {
  constructor(record) {
    this.serStart = performance.now();
    // A query's or mutation's execution was timed as it ended; a subscription
    // event's runs from leaving the stream to here.
    this.execMs =
      record.operation === 'subscription' || record.execMs === null ? this.serStart - record.execStart : record.execMs;
    this.start = record.operation === 'subscription' ? record.execStart : record.start;
  }

  toJSON() {
    const now = performance.now();
    return { execMs: round(this.execMs), serMs: round(now - this.serStart), totalMs: round(now - this.start) };
  }
}

// extensions.timing for a result of the operation `record` times, made as the
// result is handed over for sending; it must be the message's last value.
export const wsTiming = (record) => new WsTiming(record);
