// Fan-out's plan (scenarios/fanout.js runs it): lanes, subscriber steps, the
// step's timeline and what a delivery costs under the model.
import { LIMITS } from '../../common/defaults.js';
import { configError, envInt, envIntList } from '../../common/env.js';
import { byLevel } from '../../common/plan.js';
import { lane, rttOf } from '../../common/scenario.js';

// A delivered event's bytes around its payload: the graphql-transport-ws `next`
// message with topicEvents { seq id origin publishedAt payload } and the timing
// extension (~230 B); a gRPC TopicEvent is smaller (~60 B).
const EVENT_BYTES = 250;

// The hub's fan-out time, server and k6 together: from the publish being stamped
// to a subscriber's copy being read, for the median subscriber (p50) and the 95th
// percentile one (p95), as baseMs + perSubMs x n for n subscribers (the copies go
// out one after another). Measured under lan on the pack's 2-core machine
// (bench/fanout.js --profile lan: delivery p50 and p95 at 10, 100 and 1000
// subscribers, one VU, the publisher at 10 events/s), fitted where the machine
// keeps up: a step past its capacity queues (each event waits for the last) and
// fails its budget, which is the verdict's "held up to".
export const FANOUT_COST = {
  // graphql-ws executes the subscription's selection for every subscriber and frames each copy
  ws: { p50: { baseMs: 2, perSubMs: 0.08 }, p95: { baseMs: 5, perSubMs: 0.28 } },
  // ... and encrypts each copy
  wss: { p50: { baseMs: 2, perSubMs: 0.1 }, p95: { baseMs: 5, perSubMs: 0.3 } },
  // one encoded message written to every stream; k6 handles each copy in JavaScript
  'grpc-stream': { p50: { baseMs: 1, perSubMs: 0.036 }, p95: { baseMs: 3, perSubMs: 0.2 } },
};

// Round trips before a subscriber is subscribed: TCP (+ TLS), the WebSocket upgrade
// and init/ack, the subscribe message; a gRPC channel's TCP and SETTINGS, then the
// call; a poller's first poll on a new connection.
const SETUP_RTTS = { ws: 4, wss: 5, grpc_stream: 4, http_poll: 2 };
// Time to open one more subscriber, ms, k6 and the server together: a socket (a
// TLS one costs both sides a handshake's CPU, ~5 ms: common/model.js), a stream
// on an open channel, a poll loop.
const OPEN_MS = { ws: 2, wss: 8, grpc_stream: 1, http_poll: 2 };
// Slack on each phase of a step for what the model leaves out.
const SLACK_MS = 300;

export const PUBLISH_VIAS = ['own', 'http', 'grpc'];

export default function declare(env) {
  const level = env.LOAD || 'ci';
  const SUBSCRIBERS = envIntList(env, 'SUBSCRIBERS', byLevel(level, { smoke: [10], ci: [10, 100], full: [10, 100, 1000] }, [10]), { min: 1, max: LIMITS.MAX_SUBSCRIBERS });
  const RATE = envInt(env, 'FANOUT_RATE', 10, { min: 1, max: 1000 });
  const MIN_EVENTS = envInt(env, 'FANOUT_EVENTS', byLevel(level, { smoke: 5, ci: 8, full: 100 }, 8), { min: 1, max: 100000 });
  const SIZE = envInt(env, 'FANOUT_SIZE', 100, { min: 0, max: LIMITS.MAX_EVENT_PAYLOAD_BYTES });
  const POLL_MS = envInt(env, 'POLL_INTERVAL_MS', 500, { min: 10, max: 60000 });
  const PER_VU = envInt(env, 'SUBSCRIBERS_PER_VU', 1000, { min: 1, max: LIMITS.MAX_SUBSCRIBERS });
  const PUBLISH_VIA = env.PUBLISH_VIA || 'own';
  if (!PUBLISH_VIAS.includes(PUBLISH_VIA)) throw configError(`PUBLISH_VIA=${PUBLISH_VIA} is not a publisher: use own (each lane's own server), http (GraphQL over HTTP keep-alive) or grpc (gRPC Publish)`);
  const maxN = Math.max(...SUBSCRIBERS);

  const fanMs = (transport, n, which) => {
    const c = FANOUT_COST[transport]?.[which];
    return c ? c.baseMs + c.perSubMs * n : 0;
  };
  // A pushed event: R/2 + its bytes/Bd + the fan-out before this subscriber's copy.
  const pushed = (transport) => (_dims, _link, step = { n: 1 }) => ({
    p50: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, serverMs: fanMs(transport, step.n, 'p50') },
    p95: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, serverMs: fanMs(transport, step.n, 'p95') },
  });
  // A polled event waits for the next poll to reach the server, (POLL + R)/2 on
  // average and 0.95 (POLL + R) at p95 (a poll runs every POLL + R), then travels R/2.
  const polled = (_dims, link) => ({
    p50: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, waitMs: (POLL_MS + link.R) / 2 },
    p95: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, waitMs: 0.95 * (POLL_MS + link.R) },
  });
  const steps = {
    vus: (n) => Math.ceil(n / PER_VU),
    stepTags: (n) => ({ subscribers: String(n) }),
  };
  const lanes = [
    lane('ws', 'ws', false, { model: pushed('ws'), ...steps }),
    lane('wss', 'ws', true, { model: pushed('wss'), ...steps }),
    lane('grpc_stream', 'grpc-stream', false, { model: pushed('grpc-stream'), ...steps }),
    lane('http_poll', 'http-poll', false, { model: polled, ...steps }),
  ];
  const costOf = (laneName) => (laneName === 'wss' ? 'wss' : laneName === 'grpc_stream' ? 'grpc-stream' : 'ws');

  // A step of n subscribers, in ms from its start: subscribers open until readyMs
  // at the latest (the publisher starts as soon as the hub counts all of them),
  // the publisher writes at RATE, drainMs is left for the last event to reach
  // every subscriber, and in the last closeMs each VU asks the hub how many events
  // it delivered (one round trip) and closes its subscribers (another).
  function timeline(laneName, n, profile) {
    const R = rttOf(profile);
    const readyMs = SETUP_RTTS[laneName] * R + SLACK_MS + n * OPEN_MS[laneName];
    const drainMs = laneName === 'http_poll' ? POLL_MS + 2 * R + SLACK_MS : R + fanMs(costOf(laneName), n, 'p95') + SLACK_MS;
    return { readyMs, drainMs, closeMs: 2 * R + SLACK_MS };
  }
  // The events a step of `durationMs` holds at RATE (the publisher's count; every VU works it out alike).
  const eventsIn = (laneName, n, profile, durationMs) => {
    const t = timeline(laneName, n, profile);
    return Math.max(1, Math.floor(((durationMs - t.readyMs - t.drainMs - t.closeMs) * RATE) / 1000) + 1);
  };

  return {
    SUBSCRIBERS,
    RATE,
    MIN_EVENTS,
    SIZE,
    POLL_MS,
    PER_VU,
    PUBLISH_VIA,
    timeline,
    eventsIn,
    name: 'fanout',
    defaultProfile: 'lan',
    steps: SUBSCRIBERS,
    // A step's subscribers stay for the whole step: arrival rates do not apply.
    open: false,
    lanes,
    // Each lane's step: subscribe, at least MIN_EVENTS at RATE, drain (for the most subscribers).
    laneSeconds: (laneName, profile) => {
      const t = timeline(laneName, maxN, profile);
      return (t.readyMs + ((MIN_EVENTS - 1) * 1000) / RATE + t.drainMs + t.closeMs) / 1000;
    },
    // Subscribers close themselves before the step ends: gracefulStop is only a safety margin.
    closeSeconds: () => 0.5,
    columns: [
      { title: 'delivery p50', metric: 'delivery_latency', stat: 'med', unit: 'ms' },
      { title: 'delivery p95', metric: 'delivery_latency', stat: 'p(95)', unit: 'ms' },
      { title: 'spread p95', metric: 'delivery_spread', stat: 'p(95)', unit: 'ms' },
      { title: 'deliveries', metric: 'delivery_latency', stat: 'count', unit: '' },
      { title: 'missed', metric: 'delivery_missed', stat: 'count', unit: '' },
      { title: 'duplicates', metric: 'delivery_duplicates', stat: 'count', unit: '' },
      { title: 'failed', metric: 'op_failed', stat: 'rate', unit: '%' },
    ],
    verdict: { unit: 'subscribers' },
    hints: { fanout: { rate: RATE, size: SIZE, pollIntervalMs: POLL_MS, publishVia: PUBLISH_VIA, subscribersPerVu: PER_VU } },
  };
}
