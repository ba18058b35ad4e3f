// Fan-out's plan (scenarios/fanout.js runs it): lanes, subscriber steps, the
// step's timeline and what a delivery costs under the model.
import { SETTINGS, setting } from '../../common/settings.js';
import { byLevel, levelName } from '../../common/schedule.js';
import { connectionKbps, linkOf, lossCost, rtoMs } from '../../common/model.js';
import { lane, rttOf } from '../../common/scenario.js';
import { SAMPLE_FLOORS } from '../../common/gates.js';

// A delivered event's bytes around its payload: the graphql-transport-ws `next`
// message with topicEvents { seq id origin publishedAt payload } and the timing
// extension (~230 B); a gRPC TopicEvent is smaller (~60 B).
const EVENT_BYTES = 250;

// The hub's fan-out time, server and k6 together: from the publish being stamped
// to a subscriber's copy being read, for the median subscriber (p50) and the 95th
// percentile one (p95), as baseMs + perSubMs x n for n subscribers (the copies go
// out one after another). Measured under lan on the pack's 2-core machine
// (bench/fanout.js --profiles lan --subscribers 10,100,1000 --events 50: one VU,
// the publisher at 10 events/s, 2026-11-25) and fitted where the machine keeps up:
//   ws    p50 3.0 / 9.6 / 77 ms, p95 8.1 / 33.5 / 174 ms at 10 / 100 / 1000
//   wss   p50 2.6 / 8.6 ms, p95 6.2 / 15.8 ms at 10 / 100 (at 1000: 831 / 1914 ms,
//         each event waiting for the last: past this machine's capacity)
//   grpc  p50 1.3 / 2.9 / 28 ms, p95 2.5 / 7.9 / 76 ms
// A step past the machine's capacity queues and fails its budget, which is the
// verdict's "held up to".
export const FANOUT_COST = {
  // graphql-ws executes the subscription's selection for every subscriber and frames each copy
  ws: { p50: { baseMs: 2, perSubMs: 0.075 }, p95: { baseMs: 6, perSubMs: 0.17 } },
  // ... and encrypts each copy
  wss: { p50: { baseMs: 2, perSubMs: 0.066 }, p95: { baseMs: 5, perSubMs: 0.11 } },
  // one encoded message written to every stream; k6 handles each copy in JavaScript
  'grpc-stream': { p50: { baseMs: 1, perSubMs: 0.027 }, p95: { baseMs: 2, perSubMs: 0.074 } },
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

export const PUBLISH_VIAS = SETTINGS.PUBLISH_VIA.values;

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare(settings) {
  const level = levelName(settings);
  const SUBSCRIBERS = setting(
    settings,
    'SUBSCRIBERS',
    byLevel(level, { smoke: [10], ci: [10, 100], full: [10, 100, 1000] }, [10]),
  );
  const RATE = setting(settings, 'FANOUT_RATE');
  const MIN_EVENTS = setting(settings, 'FANOUT_EVENTS', byLevel(level, { smoke: 5, ci: 6, full: 100 }, 8));
  const SIZE = setting(settings, 'FANOUT_SIZE');
  const POLL_MS = setting(settings, 'POLL_INTERVAL_MS');
  const PER_VU = setting(settings, 'SUBSCRIBERS_PER_VU');
  const PUBLISH_VIA = setting(settings, 'PUBLISH_VIA');
  const maxN = Math.max(...SUBSCRIBERS);

  const fanMs = (transport, n, which) => {
    const c = FANOUT_COST[transport]?.[which];
    return c ? c.baseMs + c.perSubMs * n : 0;
  };
  // A pushed event: R/2 + its bytes/Bd + the fan-out before this subscriber's copy.
  const pushed =
    (transport) =>
    (_dims, _link, step = { n: 1 }) => ({
      p50: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, serverMs: fanMs(transport, step.n, 'p50') },
      p95: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, serverMs: fanMs(transport, step.n, 'p95') },
    });
  // A polled event waits for the next poll to reach the server, (POLL + R)/2 on
  // average and 0.95 (POLL + R) at p95 (a poll runs every POLL + R), then travels R/2.
  const polled = (_dims, link) => ({
    p50: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, waitMs: (POLL_MS + link.R) / 2 },
    p95: { conn: 'warm', oneWay: true, resBytes: SIZE + EVENT_BYTES, waitMs: 0.95 * (POLL_MS + link.R) },
  });
  const steps = { stepTags: (n) => ({ subscribers: String(n) }) };
  // A pushed event's n copies are one piece of work, which FANOUT_COST prices whole
  // (baseMs + perSubMs x n, measured): not n operations each sharing the cores with
  // the others (common/gates.js), which put ws at 100 subscribers at p(50)<1006 ms
  // for a model of 9.5. One event's fan-out at a time (RATE 10/s: 0.1 of a core at 100).
  const pushedStep = { ...steps, atOnce: 1 };
  // Subscribers a VU holds. A VU's gRPC subscribers share its channel, one connection
  // through the profile's link, so a VU holds as many as use at most a quarter of what
  // one connection carries at RATE (common/model.js connectionKbps: the link's
  // down-rate, and under loss the connection's settled window a round trip; lan:
  // PER_VU): sharing it never throttles them. Under 4g+shared+loss3, 50 on a connection
  // (a quarter of the link) took 1.5 s at p50 and missed 3,362 events of 11,400 at 100
  // subscribers, where ws, a connection each, kept 113 ms (2026-11-29).
  // Every other subscriber has a connection of its own.
  const perVu = (laneName, profile) => {
    const kbps = connectionKbps(linkOf(profile));
    if (laneName !== 'grpc_stream' || !kbps) return PER_VU;
    const perSubscriberKbps = (RATE * (SIZE + EVENT_BYTES) * 8) / 1000;
    return Math.max(1, Math.min(PER_VU, Math.floor((0.25 * kbps) / perSubscriberKbps)));
  };
  // What a row's percentiles rest on (common/gates.js rowSamples): a step's planned
  // events. Its n subscribers' copies of one event share its trip and the hub's fan-out,
  // so they are one draw, not n: a step of 10 subscribers and 6 events has 6.
  const deliveries =
    (laneName) =>
    (_dims, { durationMs, vus: n, profile }) =>
      eventsIn(laneName, n, profile, durationMs);
  const lanes = [
    lane('ws', { model: pushed('ws'), ...pushedStep, samples: deliveries('ws') }),
    lane('wss', { model: pushed('wss'), ...pushedStep, samples: deliveries('wss') }),
    lane('grpc_stream', {
      model: pushed('grpc-stream'),
      ...pushedStep,
      samples: deliveries('grpc_stream'),
    }),
    lane('http_poll', { model: polled, ...steps, samples: deliveries('http_poll') }),
  ];
  const costOf = (laneName) => (laneName === 'wss' ? 'wss' : laneName === 'grpc_stream' ? 'grpc-stream' : 'ws');

  // A step of n subscribers, in ms from its start: subscribers open until readyMs
  // at the latest (the publisher starts as soon as the hub counts all of them),
  // the publisher writes at RATE, drainMs is left for the last event to reach
  // every subscriber, and the last closeMs is the step's end. It begins at the
  // deadline, when each VU asks the hub how many events it delivered (a round
  // trip) and waits, tallyMs after the deadline at most, for every subscriber to
  // have them before it counts what each missed: a pushed copy still on its way
  // arrives, and a poller that lacks one polls once more (another round trip; on
  // a slow machine, every poller at once, priced as a step prices opening them).
  // Then it closes its subscribers (a round trip).
  // Under loss each phase also waits out the retransmissions its slowest subscriber
  // meets (lossStalls): without them, under 4g+shared+loss3 a copy stalled past the
  // tally counted as missed (ws_c100 2, wss_c100 7; spread p95 1.1 s).
  function timeline(laneName, n, profile) {
    const R = rttOf(profile);
    const stall = lossStalls(laneName, n, profile);
    const readyMs = SETUP_RTTS[laneName] * R + SLACK_MS + n * OPEN_MS[laneName] + stall.setup;
    const drainMs =
      (laneName === 'http_poll' ? POLL_MS + 2 * R + SLACK_MS : R + fanMs(costOf(laneName), n, 'p95') + SLACK_MS) +
      stall.copy;
    const tallyMs =
      (laneName === 'http_poll' ? 2 * R + SLACK_MS / 2 + n * OPEN_MS.http_poll : R + SLACK_MS / 2) + stall.copy;
    return { readyMs, drainMs, tallyMs, closeMs: tallyMs + R + SLACK_MS / 2 };
  }
  // What loss adds to a step's phases, ms (0 without loss): the model's tail quantile
  // (common/model.js lossCost, TAIL_QUANTILE) of the slowest of n subscribers, for the
  // one-segment messages of its set-up round trips on a new connection (setup), and for
  // one copy of an event, or a poll and its answer, on a kept one (copy). A copy
  // stalled behind a lost one arrives with it, so one draw per subscriber covers both.
  function lossStalls(laneName, n, profile) {
    const link = linkOf(profile);
    if (!link.loss) return { setup: 0, copy: 0 };
    const young = Array.from({ length: 2 * SETUP_RTTS[laneName] }, (_, i) => ({
      bytes: 0,
      rto: rtoMs(link.R, Math.floor(i / 2)),
    }));
    const event = { bytes: SIZE + EVENT_BYTES, rto: rtoMs(link.R) };
    const copy = laneName === 'http_poll' ? [{ bytes: 200, rto: rtoMs(link.R) }, event] : [event];
    return { setup: lossCost(link, young, n).p95, copy: lossCost(link, copy, n).p95 };
  }
  // The events a step of `durationMs` holds at RATE: the publisher writes exactly
  // this many (every VU works it out alike), the last drainMs before the deadline
  // at the latest.
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
    perVu,
    name: 'fanout',
    defaultProfile: 'lan',
    steps: SUBSCRIBERS,
    // A step's subscribers stay for the whole step: arrival rates do not apply.
    open: false,
    lanes,
    // A step of n subscribers runs on one VU per perVu of them.
    laneVus: (laneName, n, profile) => Math.ceil(n / perVu(laneName, profile)),
    // Each lane's step: subscribe, at least MIN_EVENTS at RATE, drain (for the most
    // subscribers). Under loss a step is one such iteration (lossIterations) whose
    // events are the samples: enough for the p95's floor (common/gates.js
    // SAMPLE_FLOORS), not five subscribe-drain cycles (43 s steps under 4g+shared+loss3).
    lossIterations: 1,
    laneSeconds: (laneName, profile) => {
      const t = timeline(laneName, maxN, profile);
      const events = linkOf(profile).loss ? Math.max(MIN_EVENTS, SAMPLE_FLOORS.p95) : MIN_EVENTS;
      return (t.readyMs + ((events - 1) * 1000) / RATE + t.drainMs + t.closeMs) / 1000;
    },
    // Subscribers close themselves before the step ends: gracefulStop is only a safety margin.
    closeSeconds: () => 0.3,
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
    hints: {
      fanout: { rate: RATE, size: SIZE, pollIntervalMs: POLL_MS, publishVia: PUBLISH_VIA, subscribersPerVu: PER_VU },
    },
  };
}
