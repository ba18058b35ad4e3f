// The link between the two reference servers' topic hubs (servers/shared/hub.js):
// the GraphQL server dials the gRPC server's books.v1.Books/Relay, one
// bidirectional stream over loopback, and each side writes the events its own hub
// accepts; the other side delivers them to its subscribers (hub.accept), under its
// own numbering, keeping each event's publish time, origin and id. So a write
// through either server reaches the subscribers of both, the other server's a
// loopback hop later.
//
// Best effort: an event accepted while the link is down (the gRPC server not up
// yet, or restarting) never reaches the other server; `state.dropped` counts
// them. The link redials with back-off (250 ms doubling to 5 s) until close().
import { LIMITS } from '../../common/defaults.js';
import { booksClient } from '../grpc/client.js';
import { fromProtoEvent, toProtoEvent } from '../grpc/hub-service.js';

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;

// -> { state: { up, sent, received, dropped, dials }, close() }
export function startRelay(hub, address) {
  const state = { up: false, sent: 0, received: 0, dropped: 0, dials: 0 };
  let client = null;
  let call = null;
  let timer = null;
  let closed = false;
  let backoff = FIRST_BACKOFF_MS;

  const off = hub.onPublished((event) => {
    // Only once the gRPC server answered the link: a write before that could be lost unseen.
    if (call && state.up && call.writableLength < LIMITS.SUBSCRIBER_QUEUE_EVENTS) {
      call.write(toProtoEvent(event));
      state.sent += 1;
    } else state.dropped += 1;
  });

  function dial() {
    timer = null;
    if (closed) return;
    client ??= booksClient(address);
    state.dials += 1;
    const c = client.Relay();
    call = c;
    c.on('metadata', () => {
      state.up = true;
      backoff = FIRST_BACKOFF_MS;
    });
    c.on('data', (message) => {
      state.received += 1;
      hub.accept(fromProtoEvent(message));
    });
    c.on('error', () => {}); // the status says the same
    c.on('status', () => {
      if (call === c) call = null;
      state.up = false;
      if (closed) return;
      timer = setTimeout(dial, backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    });
  }
  dial();

  return {
    state,
    close() {
      if (closed) return;
      closed = true;
      off();
      clearTimeout(timer);
      call?.cancel();
      client?.close();
    },
  };
}
