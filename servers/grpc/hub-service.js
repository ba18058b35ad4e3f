// books.v1.Books's fan-out methods over the server's topic hub (servers/shared/hub.js):
//   Publish      a write: stamped, numbered, delivered here and relayed
//   TopicInfo    a topic's last seq, its subscribers here, the server's clock
//   Subscribe    a topic's events as a server stream (after_seq > 0 resumes)
//   Relay        the hubs' link: the GraphQL server dials it (graphql/hub-relay.js);
//                each side writes the events it accepts, the other delivers them
// Hub bounds come back as INVALID_ARGUMENT (bad input) or RESOURCE_EXHAUSTED (a
// limit), each with the hub's sentence. A subscriber that falls
// SUBSCRIBER_QUEUE_EVENTS behind (its messages wait in the server's buffer) is
// ended with RESOURCE_EXHAUSTED: it may subscribe again with after_seq.
import grpc from '@grpc/grpc-js';
import { LIMITS } from '../../common/defaults.js';
import { HubError } from '../shared/hub.js';
import { checkMessage, checkMetadata, Outbound, RpcError, unary } from './books-service.js';
import { encodeResponse } from './proto.js';

const { status } = grpc;

// Relay links one server accepts (the stack runs one: the GraphQL server's).
export const MAX_RELAY_PEERS = 4;

export const toProtoEvent = (e) => ({
  topic: e.topic,
  seq: e.seq,
  id: e.id,
  origin: e.origin,
  published_at: e.publishedAt,
  payload: e.payload,
});
export const fromProtoEvent = (m) => ({
  topic: m.topic,
  seq: m.seq,
  id: m.id,
  origin: m.origin,
  publishedAt: m.published_at,
  payload: m.payload,
});

// A hub call with its HubError as a gRPC status.
function hubCall(fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof HubError)
      throw new RpcError(err.kind === 'limit' ? status.RESOURCE_EXHAUSTED : status.INVALID_ARGUMENT, err.message);
    throw err;
  }
}

// An event's wire bytes, encoded once for every stream that sends it (Subscribe
// and Relay send the same message type).
const encoded = new WeakMap();
export function eventBytes(event) {
  let bytes = encoded.get(event);
  if (!bytes) {
    bytes = encodeResponse('Subscribe', toProtoEvent(event));
    encoded.set(event, bytes);
  }
  return bytes;
}

const behind = (call) => call.writableLength >= LIMITS.SUBSCRIBER_QUEUE_EVENTS;

function subscribe(hub, active) {
  return (call) => {
    const out = new Outbound('Subscribe', call, active);
    const send = (event) => {
      if (!out.open) return;
      if (behind(call)) {
        out.fail(
          new RpcError(
            status.RESOURCE_EXHAUSTED,
            `this subscriber fell ${call.writableLength} events behind; the limit is ${LIMITS.SUBSCRIBER_QUEUE_EVENTS}: read faster, or subscribe again with after_seq to resume`,
          ),
        );
        return;
      }
      call.write(eventBytes(event));
    };
    let sub;
    try {
      checkMetadata(call);
      const { topic, after_seq: afterSeq } = checkMessage(call.request);
      sub = hubCall(() => hub.subscribe(topic, { afterSeq, onEvent: send }));
    } catch (err) {
      out.fail(err);
      return;
    }
    out.onFinish(() => sub.close());
    for (const event of sub.replay) send(event);
  };
}

function relay(hub, active, peers) {
  return (call) => {
    const out = new Outbound('Relay', call, active);
    try {
      checkMetadata(call);
      if (peers.size >= MAX_RELAY_PEERS)
        throw new RpcError(
          status.RESOURCE_EXHAUSTED,
          `this server already relays to ${MAX_RELAY_PEERS} peers, its limit: close one first`,
        );
    } catch (err) {
      out.fail(err);
      return;
    }
    peers.add(out);
    out.dropped = 0;
    call.sendMetadata(new grpc.Metadata()); // the peer knows the link is up
    const off = hub.onPublished((event) => {
      if (!out.open) return;
      // A peer that stops reading loses events rather than this server's memory.
      if (behind(call)) out.dropped += 1;
      else call.write(eventBytes(event));
    });
    out.onFinish(() => {
      off();
      peers.delete(out);
    });
    call.on('data', (message) => {
      if (!out.open) return;
      try {
        hub.accept(fromProtoEvent(checkMessage(message)));
      } catch (err) {
        out.fail(err);
      }
    });
    call.on('end', () => out.end());
    call.on('error', () => out.finish());
  };
}

// Handlers for the hub's methods; `active` as booksHandlers' (the server ends them on shutdown).
export function hubHandlers(hub, active = new Set()) {
  const peers = new Set();
  return {
    Publish: unary('Publish', ({ topic, payload }) => {
      const { event, subscribers } = hubCall(() => hub.publish(topic, payload));
      return { topic: event.topic, seq: event.seq, id: event.id, published_at: event.publishedAt, subscribers };
    }),
    TopicInfo: unary('TopicInfo', ({ topic }) => {
      const info = hubCall(() => hub.info(topic));
      return { topic: info.topic, last_seq: info.lastSeq, subscribers: info.subscribers, now: info.now };
    }),
    Subscribe: subscribe(hub, active),
    Relay: relay(hub, active, peers),
  };
}
