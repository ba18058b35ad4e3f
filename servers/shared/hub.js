// A topic hub: what the fan-out scenario (scenarios/fanout.js) writes to and
// subscribes to. Each reference server runs one (the GraphQL server's serves the
// publish mutation, the topicEvents subscription over graphql-transport-ws and the
// topic query for polling; the gRPC server's serves Publish, Subscribe and
// TopicInfo), and relay.js links the two over loopback, so a write through either
// server reaches the subscribers of both:
//
//   - a write is stamped (publishedAt, the server's wall clock in epoch ms) and
//     numbered by the hub that accepts it, delivered to its own subscribers at
//     once, and handed to the relay (onPublished);
//   - a relayed event is delivered by the other hub as it arrives, keeping its
//     publish time, origin and id (`<origin>-<n>`, the origin's own number);
//   - every hub numbers a topic's events (seq 1, 2, ...) in the order it delivers
//     them, its own writes and relayed ones alike: a subscriber sees one unbroken
//     sequence per topic on its server, and a gap or a repeat is the transport's.
//
// Bounds (LIMITS in common/defaults.js), each refused with one sentence: topic
// names, payload bytes, topics per hub (one without subscribers is dropped to make
// room, least recently used first), subscribers per server. Each topic keeps its
// latest events (TOPIC_BACKLOG_EVENTS, TOPIC_BACKLOG_BYTES) for polling and for
// a subscriber that resumes after `afterSeq`. Slow subscribers are the
// transport's to bound (SUBSCRIBER_QUEUE_EVENTS): the hub calls onEvent and
// never waits.
import { performance } from 'node:perf_hooks';
import { LIMITS } from '../../common/defaults.js';

export const ORIGINS = ['graphql', 'grpc'];

// kind: 'invalid' (the input is wrong) or 'limit' (a bound of the hub is reached).
export class HubError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const TOPIC_NAME = /^[A-Za-z0-9._:-]+$/;
const quoted = (text, max = 40) =>
  JSON.stringify(String(text).length > max ? `${String(text).slice(0, max)}...` : String(text));

// null when `name` is a topic name, else the sentence that says why not.
export function topicProblem(name) {
  if (typeof name !== 'string' || name.length < 1 || name.length > LIMITS.MAX_TOPIC_NAME || !TOPIC_NAME.test(name)) {
    return `topic must be 1 to ${LIMITS.MAX_TOPIC_NAME} characters of letters, digits, '.', '_', ':' or '-' (got ${quoted(name)})`;
  }
  return null;
}

export const payloadBytes = (payload) => Buffer.byteLength(payload ?? '', 'utf8');

export function payloadProblem(payload) {
  if (payload !== undefined && payload !== null && typeof payload !== 'string') return 'payload must be a string';
  const bytes = payloadBytes(payload);
  return bytes > LIMITS.MAX_EVENT_PAYLOAD_BYTES
    ? `payload is ${bytes} bytes; the limit is ${LIMITS.MAX_EVENT_PAYLOAD_BYTES} per event: publish less`
    : null;
}

const check = (problem) => {
  if (problem) throw new HubError('invalid', problem);
};

// The server's wall clock, epoch ms (fractional), as the push scenario's events carry it.
export const nowMs = () => performance.timeOrigin + performance.now();

export class Hub {
  constructor({ origin, clock = nowMs } = {}) {
    if (!ORIGINS.includes(origin)) throw new Error(`Hub: origin must be one of ${ORIGINS.join(', ')}`);
    this.origin = origin;
    this.clock = clock;
    this.topics = new Map(); // name -> topic; Map order = least recently used first
    this.subscribers = 0;
    this.written = 0; // this hub's own writes: ids `${origin}-${written}`
    this.listeners = new Set();
    this.counts = { published: 0, relayedIn: 0, delivered: 0 };
  }

  // The topic, made (and made most recently used) when `create`; null when absent.
  topic(name, create = false) {
    let t = this.topics.get(name);
    if (t) {
      this.topics.delete(name);
      this.topics.set(name, t);
      return t;
    }
    if (!create) return null;
    if (this.topics.size >= LIMITS.MAX_TOPICS) this.evict();
    t = { name, seq: 0, subscribers: new Set(), backlog: [], backlogBytes: 0 };
    this.topics.set(name, t);
    return t;
  }

  evict() {
    for (const [name, t] of this.topics) {
      if (t.subscribers.size === 0) {
        this.topics.delete(name);
        return;
      }
    }
    throw new HubError(
      'limit',
      `the hub keeps ${LIMITS.MAX_TOPICS} topics and every one has subscribers: end some subscriptions or use fewer topics`,
    );
  }

  // A local write: stamped, numbered, delivered, relayed. -> { event, subscribers }:
  // the event and how many subscribers of this server it went to.
  publish(topic, payload = '') {
    check(topicProblem(topic));
    check(payloadProblem(payload));
    this.written += 1;
    const delivered = this.deliver(this.topic(topic, true), {
      id: `${this.origin}-${this.written}`,
      origin: this.origin,
      publishedAt: this.clock(),
      payload: payload ?? '',
    });
    this.counts.published += 1;
    for (const listener of this.listeners) listener(delivered.event);
    return delivered;
  }

  // An event relayed from the other server's hub: delivered here under this hub's
  // numbering, with its publish time, origin and id. -> { event, subscribers }, or
  // null for one that is invalid or has no room (dropped).
  accept({ topic, id, origin, publishedAt, payload }) {
    if (
      topicProblem(topic) ||
      payloadProblem(payload) ||
      !ORIGINS.includes(origin) ||
      origin === this.origin ||
      !Number.isFinite(publishedAt)
    )
      return null;
    const t =
      this.topic(topic, false) ??
      (this.topics.size < LIMITS.MAX_TOPICS || this.canEvict() ? this.topic(topic, true) : null);
    if (!t) return null;
    this.counts.relayedIn += 1;
    return this.deliver(t, { id: String(id).slice(0, 64), origin, publishedAt, payload: payload ?? '' });
  }

  canEvict() {
    for (const t of this.topics.values()) if (t.subscribers.size === 0) return true;
    return false;
  }

  deliver(t, fields) {
    t.seq += 1;
    const event = { topic: t.name, seq: t.seq, ...fields };
    const bytes = payloadBytes(event.payload);
    t.backlog.push(event);
    t.backlogBytes += bytes;
    while (
      t.backlog.length > LIMITS.TOPIC_BACKLOG_EVENTS ||
      (t.backlogBytes > LIMITS.TOPIC_BACKLOG_BYTES && t.backlog.length > 1)
    ) {
      t.backlogBytes -= payloadBytes(t.backlog.shift().payload);
    }
    for (const sub of t.subscribers) sub.onEvent(event);
    this.counts.delivered += t.subscribers.size;
    return { event, subscribers: t.subscribers.size };
  }

  // Subscribes to a topic's events from now on, and with afterSeq > 0 first to
  // those still kept with a higher seq (a subscriber resuming). onEvent(event)
  // is called for each, in order; it must not throw. -> { lastSeq (the topic's
  // when the subscription began: the events after it are this subscriber's),
  // replay: [events], close() } (close is idempotent). Throws a HubError when a
  // bound is reached.
  subscribe(topic, { afterSeq = 0, onEvent }) {
    check(topicProblem(topic));
    if (!Number.isInteger(afterSeq) || afterSeq < 0) check(`afterSeq must be a whole number >= 0 (got ${afterSeq})`);
    if (this.subscribers >= LIMITS.MAX_SUBSCRIBERS) {
      throw new HubError(
        'limit',
        `this server already has ${LIMITS.MAX_SUBSCRIBERS} subscribers, its limit: end some subscriptions first`,
      );
    }
    const t = this.topic(topic, true);
    const sub = { onEvent };
    t.subscribers.add(sub);
    this.subscribers += 1;
    let open = true;
    const replay = afterSeq > 0 ? t.backlog.filter((e) => e.seq > afterSeq) : [];
    return {
      lastSeq: t.seq,
      replay,
      close: () => {
        if (!open) return;
        open = false;
        t.subscribers.delete(sub);
        this.subscribers -= 1;
      },
    };
  }

  // A topic's state without making it: { topic, lastSeq, subscribers, now }.
  info(topic) {
    check(topicProblem(topic));
    const t = this.topics.get(topic);
    return { topic, lastSeq: t ? t.seq : 0, subscribers: t ? t.subscribers.size : 0, now: this.clock() };
  }

  // The kept events with seq > afterSeq, oldest first, at most `limit`.
  events(topic, afterSeq = 0, limit = LIMITS.MAX_POLL_EVENTS) {
    check(topicProblem(topic));
    if (!Number.isInteger(afterSeq) || afterSeq < 0) check(`afterSeq must be a whole number >= 0 (got ${afterSeq})`);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.MAX_POLL_EVENTS)
      check(`limit must be an integer from 1 to ${LIMITS.MAX_POLL_EVENTS} (got ${limit})`);
    const t = this.topics.get(topic);
    if (!t) return [];
    const out = [];
    for (const e of t.backlog) {
      if (e.seq <= afterSeq) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return out;
  }

  // listener(event) for every local write (the relay); returns a function that removes it.
  onPublished(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats() {
    return { origin: this.origin, topics: this.topics.size, subscribers: this.subscribers, ...this.counts };
  }
}
