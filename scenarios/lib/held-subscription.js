// A subscription held open through a link's events (the unstable scenario's sub_ws and
// sub_grpc lanes). The VU subscribes to a topic of its own through the proxies and
// publishes to it every publishMs straight to the GraphQL server (GRAPHQL_DIRECT_URL: the
// events are the subscriber's link's, not the publisher's; the server's hub relays each
// write to the gRPC server). When the subscription breaks, the client reconnects by its
// policy (common/policies.js): graphql-ws waits its retryWait and starts a new
// subscription (no resume), gRPC opens a new stream at once with after_seq, its last seq.
//
// What it returns: every event received, in order of receipt, with when its publish was
// sent ({ sentAt, at }), the failures, and the tally (scenarios/lib/tally.js: the
// receiving server numbers its events with no gaps, so a gap is an event missed and a
// seq seen twice a duplicate).
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { TARGETS } from './config.js';
import { SERVICE } from './grpc.js';
import { reconnects } from './metrics.js';
import { PUBLISH_MUTATION, TOPIC_SUBSCRIPTION } from './queries.js';
import { pause } from './sessions.js';
import { Tally } from './tally.js';
import { GraphqlWs, wsUrl } from './ws.js';
import { drawReconnectWaitMs, HTTP_TIMEOUT_MS } from '../../common/policies.js';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

// Holds the subscription until `until` (epoch ms), publishing until `publishEnd`.
//   transport  'ws' or 'grpc'; channel: a Channel (scenarios/lib/grpc.js) for grpc
// -> { events: [{ sentAt, at }] (in order of receipt), failures: [reason], missed,
//      duplicates, undelivered }
export async function holdSubscription({ transport, policy, publishMs, publishEnd, until, topic, channel }) {
  const state = { tally: new Tally(), events: [], failures: [], sentAt: new Map() };
  const receive = (e, at) => {
    // The first event names where this subscriber began: those before it are not its
    // (begin() does nothing once an event is taken).
    state.tally.begin(e.seq - 1);
    if (state.tally.take(e.seq) === 'duplicate') return;
    state.events.push({ n: Number(e.payload), at });
  };
  const held =
    transport === 'grpc'
      ? grpcSubscriber(state, policy, until, topic, channel, receive)
      : wsSubscriber(state, policy, until, topic, receive);
  await Promise.all([held, publisher(state, topic, publishMs, publishEnd)]);
  // Missed: the gaps (the events before the first received were not this subscriber's);
  // undelivered: what was published after the last event received.
  const { missed, duplicates } = state.tally.finish(state.tally.lastSeq);
  const lastN = state.events.reduce((n, e) => Math.max(n, e.n), 0);
  const undelivered = [...state.sentAt.keys()].filter((n) => n > lastN).length;
  return {
    events: state.events.map((e) => ({ sentAt: state.sentAt.get(e.n), at: e.at })).filter((e) => e.sentAt),
    failures: state.failures,
    missed,
    duplicates,
    undelivered,
  };
}

// One write every publishMs without waiting for the one before; each write's payload is
// its number, so a receipt finds when it was sent.
async function publisher(state, topic, publishMs, publishEnd) {
  const inflight = [];
  for (let n = 1, due = Date.now(); due < publishEnd; n++, due += publishMs) {
    await pause(Math.max(0, due - Date.now()));
    const sentAt = Date.now();
    const body = JSON.stringify({ query: PUBLISH_MUTATION, variables: { topic, payload: String(n) } });
    inflight.push(
      http
        .asyncRequest('POST', TARGETS.GRAPHQL_DIRECT_URL, body, {
          headers: JSON_HEADERS,
          tags: { name: 'publish' },
          timeout: '5s',
        })
        .then((res) => {
          if (res.status !== 200) {
            state.failures.push(`publish to ${TARGETS.GRAPHQL_DIRECT_URL}: HTTP ${res.status} ${res.error || ''}`);
            return;
          }
          state.sentAt.set(n, sentAt);
        }),
    );
  }
  await Promise.all(inflight);
}

// graphql-transport-ws: keepAlive by the policy, retryWait before each reconnection
// (its attempt count back to 0 once a socket is acknowledged, as graphql-ws's).
async function wsSubscriber(state, policy, until, topic, receive) {
  let attempt = 0;
  let opened = false;
  while (Date.now() < until) {
    if (opened) {
      reconnects.add(1);
      await pause(Math.min(drawReconnectWaitMs(policy.reconnect, attempt), Math.max(0, until - Date.now())));
      if (Date.now() >= until) break;
    }
    opened = true;
    const ws = new GraphqlWs(wsUrl(false), { timeoutMs: HTTP_TIMEOUT_MS });
    ws.deadline = until;
    try {
      await ws.open();
      attempt = 0;
    } catch (err) {
      if (err.abandoned) break;
      attempt += 1;
      state.failures.push(`connect: ${err.message || err}`);
      continue;
    }
    if (policy.keepalive) ws.keepAlive(policy.keepalive);
    try {
      await ws.subscribe({
        query: TOPIC_SUBSCRIPTION,
        variables: { topic },
        keep: false,
        timeoutMs: Math.max(1, until + 60000 - Date.now()), // the deadline (until) ends it first, as abandoned
        onNext: (payload, at) => {
          if (payload.errors) state.failures.push(`GraphQL errors: ${JSON.stringify(payload.errors).slice(0, 200)}`);
          else receive(payload.data.topicEvents, at);
        },
      });
      state.failures.push('the server completed the subscription');
    } catch (err) {
      if (!err.abandoned) state.failures.push(String(err.message || err));
    }
    // A socket that broke is closed already (or closing: the keepalive's abort); only
    // the step's end leaves one open.
    if (ws.isOpen) await ws.close({ timeoutMs: Math.max(0, until + 1000 - Date.now()) });
  }
}

// A gRPC server stream on one channel (scenarios/lib/grpc.js Channel): a broken stream
// is opened again on it, the first time at once, then by grpc-go's backoff (the
// channel reconnects by itself); a resuming lane asks for the events after its last seq.
function grpcSubscriber(state, policy, until, topic, channel, receive) {
  return new Promise((resolve) => {
    let attempt = 0; // breaks since the last event received
    setTimeout(
      () => {
        channel.close(); // ends the stream, whatever its connection's state
        resolve();
      },
      Math.max(0, until - Date.now()),
    );
    const start = () => {
      if (Date.now() >= until) return undefined;
      let stream;
      try {
        if (!channel.connected) channel.connect(`${HTTP_TIMEOUT_MS}ms`);
        stream = new grpc.Stream(channel.client, `${SERVICE}/Subscribe`, {
          timeout: `${Math.max(1, until + 5000 - Date.now())}ms`,
        });
      } catch (err) {
        state.failures.push(`subscribe: ${err.message || err}`);
        return retry();
      }
      let why = null;
      stream.on('data', (e) => {
        attempt = 0;
        receive(e, Date.now());
      });
      stream.on('error', (err) => {
        why = `gRPC status ${err.code}: ${err.message}`;
      });
      stream.on('end', () => {
        if (Date.now() >= until) return;
        state.failures.push(why || 'the server ended the stream');
        retry();
      });
      stream.write({ topic, afterSeq: policy.resumes ? state.tally.lastSeq : 0 });
      stream.end();
      return undefined;
    };
    const retry = () => {
      if (Date.now() >= until) return;
      reconnects.add(1);
      const wait = drawReconnectWaitMs(policy.reconnect, attempt++);
      setTimeout(start, Math.min(wait, Math.max(0, until - Date.now())));
    };
    start();
  });
}
