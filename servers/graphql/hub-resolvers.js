// The fan-out part of the schema (hub.graphql) over the server's topic hub
// (servers/shared/hub.js): publish, topic (state and kept events, for polling) and
// the topicEvents subscription. Hub bounds come back as errors with the hub's
// sentence: BAD_USER_INPUT for bad input, LIMIT_EXCEEDED for a bound of the hub.
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { GraphQLError } from 'graphql';
import { LIMITS, SUBSCRIBED_ORIGIN } from '../../common/defaults.js';
import { HubError } from '../shared/hub.js';

export const hubTypeDefs = readFileSync(new URL('./hub.graphql', import.meta.url), 'utf8');

function hubCall(fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof HubError)
      throw new GraphQLError(err.message, {
        extensions: { code: err.kind === 'limit' ? 'LIMIT_EXCEEDED' : 'BAD_USER_INPUT' },
      });
    throw err;
  }
}

// Stands in the queue for the events a subscriber that fell too far behind lost.
const BEHIND = Symbol('behind');
const done = () => ({ value: undefined, done: true });

// A subscriber's events as an async iterator. graphql-ws pulls the next event
// once the last one is written to the socket, so a slow client lets events wait
// here; once SUBSCRIBER_QUEUE_EVENTS wait, the subscription is dropped: its last
// result is an error saying so, then it completes. return() (complete, or the
// socket closing) ends it at once. `timing.execStart` marks when an event left
// the queue, for the execMs the WebSocket layer reports (ws.js). announce: the
// first value is a marker of where the subscription began (hub.graphql).
function topicStream(hub, topic, timing, announce) {
  const queue = [];
  let waiting = null;
  let closed = false;
  const give = (value) => {
    if (timing) timing.execStart = performance.now();
    return { value, done: false };
  };
  const sub = hubCall(() =>
    hub.subscribe(topic, {
      onEvent(event) {
        if (closed) return;
        if (waiting) {
          const resolve = waiting;
          waiting = null;
          resolve(give(event));
        } else if (queue.length >= LIMITS.SUBSCRIBER_QUEUE_EVENTS) {
          sub.close();
          queue.length = 0;
          queue.push(BEHIND);
        } else queue.push(event);
      },
    }),
  );
  if (announce)
    queue.push({
      topic,
      seq: sub.lastSeq,
      id: `subscribed-${sub.lastSeq}`,
      origin: SUBSCRIBED_ORIGIN,
      publishedAt: hub.clock(),
      payload: '',
    });
  const stop = () => {
    closed = true;
    sub.close();
    queue.length = 0;
    waiting?.(done());
    waiting = null;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      if (queue.length) {
        const value = queue.shift();
        if (value === BEHIND) closed = true;
        return Promise.resolve(give(value));
      }
      if (closed) return Promise.resolve(done());
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    return() {
      stop();
      return Promise.resolve(done());
    },
    throw(err) {
      stop();
      return Promise.reject(err);
    },
  };
}

export function createHubResolvers(hub) {
  return {
    Query: {
      topic: (_, { name }) => hubCall(() => hub.info(name)),
    },
    TopicState: {
      events: (state, { afterSeq, limit }) => hubCall(() => hub.events(state.topic, afterSeq, limit)),
    },
    Mutation: {
      publish: (_, { topic, payload }) => {
        const { event, subscribers } = hubCall(() => hub.publish(topic, payload));
        return { ...event, subscribers };
      },
    },
    Subscription: {
      topicEvents: {
        subscribe: (_, { topic, announce }, context) => topicStream(hub, topic, context?.timing, announce === true),
        resolve: (event) => {
          if (event === BEHIND) {
            throw new GraphQLError(
              `this subscriber fell ${LIMITS.SUBSCRIBER_QUEUE_EVENTS} events behind and was dropped: read faster, or subscribe again`,
              { extensions: { code: 'LIMIT_EXCEEDED' } },
            );
          }
          return event;
        },
      },
    },
  };
}
