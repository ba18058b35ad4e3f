/*
 * Fan-out: from a write until every subscriber has it, as subscribers grow.
 * Live updates over GraphQL subscriptions, gRPC server streams or polling.
 *   ws           a graphql-transport-ws subscription topicEvents(topic) per subscriber, one socket each
 *   wss          the same over TLS
 *   grpc-stream  books.v1.Books/Subscribe, a server stream per subscriber (a VU's
 *                subscribers share its one channel: k6's connect blocks for a channel's
 *                set-up, so a VU cannot open hundreds of them in a step)
 *   http-poll    GraphQL over HTTP keep-alive: each subscriber polls topic.events
 *                every POLL_INTERVAL_MS (default 500) for what came after its last seq
 * Each step has SUBSCRIBERS subscribers (10, 100, 1000 at full; SUBSCRIBERS_PER_VU per
 * VU, default 1000) on a topic of its own. The step's first VU also publishes: it waits
 * until the hub counts every subscriber (polling: until they had time for a first
 * poll), then writes FANOUT_RATE events/s (default 10) of FANOUT_SIZE bytes (default
 * 100) for the rest of the step, over HTTP keep-alive to the GraphQL server (GraphQL
 * lanes) or gRPC Publish (the gRPC lane); PUBLISH_VIA=http|grpc sends them through
 * the other server instead, across the hubs' relay (servers/shared/hub.js).
 * Servers: both reference servers behind Toxiproxy, each with a topic hub. Default profile: lan.
 *
 * delivery_latency = receipt - publish time: the hub stamps each write with its
 * own clock (publishedAt), which setup() sets against k6's clock for each server
 * as push does (lib/clock.js: the shortest of five round trips, taken midway). A
 * WebSocket message's receipt is when k6's reader got the frame; a gRPC stream
 * message's and a poll's when the VU's JavaScript handles it (k6 gives stream
 * messages a whole-second timestamp only), so those include k6's own queue.
 * delivery_spread: first to last receipt of one event over a VU's subscribers (all
 * of a step's up to SUBSCRIBERS_PER_VU). delivery_missed: events a subscriber never
 * got or got out of order, against the number its server's hub delivered, asked at
 * the step's deadline; before counting, the VU waits (the timeline's tallyMs at
 * most) for every subscriber to have them: a copy on its way arrives, a poller
 * that lacks one polls once more. delivery_duplicates. A subscription that breaks
 * (+flaky, +stall) reconnects: gRPC resumes after its last seq from the hub's kept
 * events (after_seq), graphql-ws has no resume, so a ws subscriber loses what was
 * published meanwhile, and a poller asks for what came after its last seq anyway.
 * Look at: delivery_latency p50/p95 per lane and subscriber count, spread, missed;
 * the verdict names, per transport, the most subscribers it held the budget for
 * with nothing missed.
 *
 *   npx k6pack run fanout --profile lan,lte
 *   k6 run -e LOAD=full -e SUBSCRIBERS=10,100,1000,5000 scenarios/fanout.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan fanout --load ci`; dev/plan-headers.js writes it):
 *   fanout under lan (R 0 ms, down ∞ / up ∞ kbit/s), load ci, closed workload: 8 k6 scenarios, 18.2 s in all
 *     k6 scenario       executor      VUs or rate  start  duration  graceful stop
 *     ws_c10            constant-vus  1 VU         0s     1.7s      0.3s
 *     ws_c100           constant-vus  1 VU         2s     1.7s      0.3s
 *     wss_c10           constant-vus  1 VU         4s     2.3s      0.3s
 *     wss_c100          constant-vus  1 VU         6.6s   2.3s      0.3s
 *     grpc_stream_c10   constant-vus  1 VU         9.2s   1.6s      0.3s
 *     grpc_stream_c100  constant-vus  1 VU         11.1s  1.6s      0.3s
 *     http_poll_c10     constant-vus  1 VU         13s    2.3s      0.3s
 *     http_poll_c100    constant-vus  1 VU         15.6s  2.3s      0.3s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (the spec's steps: 10, 100), on the VUs the spec's lane needs for it
 *     duration, ws: 1 iteration of the model's 1.623 s
 *     duration, wss: 1 iteration of the model's 2.216 s
 *     duration, grpc_stream: 1 iteration of the model's 1.509 s
 *     duration, http_poll: 1 iteration of the model's 2.300 s
 *     graceful stop: LOAD=ci's
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import { sleep } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { SUBSCRIBED_ORIGIN } from '../common/defaults.js';
import { rttOf } from '../common/scenario.js';
import declare from './specs/fanout.js';
import { calibrate } from './lib/clock.js';
import { Channel, newClient, SERVICE } from './lib/grpc.js';
import { graphqlUrl, judge, opMs } from './lib/http.js';
import { remainingMs } from './lib/load.js';
import {
  deliveryDuplicates,
  deliveryLatency,
  deliveryMissed,
  deliverySpread,
  reconnects,
  recordOp,
} from './lib/metrics.js';
import { fatal } from './lib/network.js';
import { PUBLISH_MUTATION, TOPIC_POLL, TOPIC_STATE, TOPIC_SUBSCRIPTION } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { pause } from './lib/sessions.js';
import { Spread, Tally } from './lib/tally.js';
import { GraphqlWs, wsUrl } from './lib/ws.js';
import { rawSetting } from '../common/settings.js';
import { SETTINGS } from './lib/config.js';

const decl = declare(SETTINGS);
const { PER_VU, PUBLISH_VIA, POLL_MS, RATE, SIZE } = decl;
// (PER_VU: subscribers a VU holds at most; a VU's gRPC subscribers fewer on slow links: decl.perVu.)
const s = defineScenario(decl, { notes, setup: setupFanout });
export const { options, setup, teardown, handleSummary } = s;

// A subscriber reconnects at most this often in a step, after a pause that doubles
// from 100 ms to 1 s (as clients back off): about 5 s of outage in all.
const MAX_RECONNECTS = 8;
const reconnectPause = (attempt) => Math.min(1000, 100 * 2 ** (attempt - 1));
const PAYLOAD = 'x'.repeat(SIZE);
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const PUBLISH_TAGS = { op: 'publish' };
const POLL_TAGS = { op: 'poll' };
const SUBSCRIBE_TAGS = { op: 'subscribe' };

// Init context: a VU's subscribers share one gRPC channel; the publisher has its own.
const subChannel = new Channel(newClient());
const pubChannel = new Channel(newClient());

// ---- set-up: a run id (a topic per step and run) and each server's clock ----

function graphqlPost(query, variables, { name, timeoutMs = 5000 } = {}) {
  return http.post(graphqlUrl(false), JSON.stringify({ query, variables }), {
    headers: JSON_HEADERS,
    tags: { name },
    timeout: `${timeoutMs}ms`,
  });
}

function setupFanout() {
  const graphql = calibrate(() => {
    const t0 = Date.now();
    const res = graphqlPost(TOPIC_STATE, { topic: 'fanout.clock' }, { name: 'clock' });
    const t1 = Date.now();
    const now = res.status === 200 ? res.json('data.topic.now') : null;
    if (typeof now !== 'number')
      fatal(
        `the GraphQL server has no topic hub (Query.topic answered ${res.status}: ${String(res.body).slice(0, 160)}): restart the stack with \`npx k6pack down && npx k6pack up\``,
      );
    return { t0, t1, serverMs: now };
  });
  const grpcClock = calibrate(() => {
    if (!pubChannel.connected) pubChannel.connect();
    const t0 = Date.now();
    const res = pubChannel.client.invoke(`${SERVICE}/TopicInfo`, { topic: 'fanout.clock' }, { timeout: '5s' });
    const t1 = Date.now();
    if (res.status !== grpc.StatusOK)
      fatal(
        `the gRPC server has no topic hub (TopicInfo: status ${res.status}${res.error ? `, ${res.error.message}` : ''}): restart the stack with \`npx k6pack down && npx k6pack up\``,
      );
    return { t0, t1, serverMs: res.message.now };
  });
  pubChannel.close();
  console.log(
    `fanout clocks, k6 - server: graphql ${graphql.offsetMs.toFixed(1)} ms (shortest round trip ${graphql.rttMs} ms), grpc ${grpcClock.offsetMs.toFixed(1)} ms (${grpcClock.rttMs} ms)`,
  );
  // Topics are fanout.<run id>.<k6 scenario>: a fresh one per step and run (FANOUT_RUN_ID names the run).
  const runId =
    rawSetting(__ENV, 'FANOUT_RUN_ID') || `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(runId)) fatal(`FANOUT_RUN_ID=${runId}: use 1 to 40 letters, digits, _ or -`);
  return { runId, clocks: { graphql: graphql.offsetMs, grpc: grpcClock.offsetMs } };
}

// ---- one step ----

// One run of a step per VU: it lasts the step; later iterations only wait it out.
const started = {};
function firstInStep(name) {
  if (started[name]) return false;
  started[name] = true;
  return true;
}
function idle() {
  sleep(Math.max(0, Math.min(remainingMs(), 5000)) / 1000 + 0.05);
}
const until = (at) => pause(Math.max(0, at - Date.now()));

// What every VU of a step works out alike: its subscribers, the topic, the times.
function stepOf(data, laneName) {
  const sc = exec.scenario;
  const k6sc = s.plan.scenarios[sc.name];
  const n = Number(k6sc.tags.subscribers) || decl.SUBSCRIBERS[0];
  const durationMs = s.plan.durations[sc.name];
  const stepEnd = Date.now() + remainingMs();
  const t = decl.timeline(laneName, n, s.profile);
  const perVu = decl.perVu(laneName, s.profile);
  const from = sc.iterationInTest * perVu;
  return {
    name: sc.name,
    n,
    publisher: sc.iterationInTest === 0,
    count: Math.max(0, Math.min(n, from + perVu) - from),
    topic: `fanout.${data.runId}.${sc.name}`,
    events: decl.eventsIn(laneName, n, s.profile, durationMs),
    readyBy: stepEnd - durationMs + t.readyMs,
    publishEnd: stepEnd - t.closeMs - t.drainMs,
    deadline: stepEnd - t.closeMs,
    tallyBy: stepEnd - t.closeMs + t.tallyMs,
    stepEnd,
    clocks: data.clocks,
    spread: new Spread(),
    // What the hub delivered (set once, after the deadline) and a promise of it.
    expected: null,
    ...settable('known'),
    stopped: false,
  };
}

// { [name]: a promise, [name + 'Resolve']: its resolve }.
function settable(name) {
  let resolve;
  const promise = new Promise((r) => {
    resolve = r;
  });
  return { [name]: promise, [`${name}Resolve`]: resolve };
}

// One event at one subscriber (or the marker of where its subscription began).
function receive(step, tally, e, at) {
  if (step.stopped) return;
  if (e.origin === SUBSCRIBED_ORIGIN) {
    tally.begin(e.seq);
    return;
  }
  if (tally.take(e.seq) === 'duplicate') return;
  deliveryLatency.add(at - (e.publishedAt + (step.clocks[e.origin] ?? step.clocks.graphql)));
  step.spread.add(e.seq, at);
}

// settled: it will get nothing more (a poller that polled after the hub's answer).
const newSubscriber = () => ({
  tally: new Tally(),
  breaks: 0,
  subscribed: false,
  error: null,
  done: null,
  settled: false,
});

async function runStep(data, laneName, kind) {
  if (!firstInStep(exec.scenario.name)) return idle();
  const step = stepOf(data, laneName);
  if (step.count < 1 || step.deadline - Date.now() < 200) return idle();
  const subs = [];
  for (let i = 0; i < step.count; i++) subs.push(kind.open(step));
  const publishing = step.publisher ? publish(step, kind) : null;
  await until(step.deadline);
  // What the subscribers' server delivered (missed counts against it): asked at
  // the deadline and waited for until tallyBy at most (the timeline's tallyMs), so
  // the tallies are recorded and the subscribers closed before the step ends,
  // however slow the server is; with no answer by then, what the publisher wrote
  // (exactly step.events). Until tallyBy a copy still on its way counts, with its
  // latency, not as missed, and a poller that lacks an event polls for it
  // (pollKind). Everything still in flight ends by the step's end (timeouts).
  const asked = hubState(step, kind.server);
  const state = await Promise.race([asked, until(step.tallyBy).then(() => null)]);
  step.expected = state ? state.lastSeq : step.events;
  step.knownResolve(step.expected);
  const waiting = (sub) => !sub.settled && (sub.tally.lastSeq < step.expected || sub.tally.gaps.size);
  while (Date.now() < step.tallyBy && subs.some(waiting)) await pause(Math.min(10, step.tallyBy - Date.now()));
  step.stopped = true;
  for (const sub of subs) {
    const { missed, duplicates } = sub.tally.finish(step.expected);
    deliveryMissed.add(missed);
    deliveryDuplicates.add(duplicates);
    if (kind.session) {
      const ok = sub.subscribed && sub.breaks === 0;
      recordOp({
        ok,
        tags: SUBSCRIBE_TAGS,
        checks: { 'subscription held for the step': ok },
        reason: sub.error || 'never subscribed',
      });
    }
  }
  for (const ms of step.spread.spreads()) deliverySpread.add(ms);
  await kind.close(step, subs);
  await Promise.all([asked, publishing]);
  return undefined;
}

// ---- the hub: its state, and the publisher ----

// The topic on the subscribers' server: { lastSeq, subscribers } or null.
async function hubState(step, server) {
  const left = Math.max(1, step.stepEnd - Date.now());
  if (server === 'grpc') {
    try {
      if (!subChannel.connected) subChannel.connect();
      const res = await subChannel.client.asyncInvoke(
        `${SERVICE}/TopicInfo`,
        { topic: step.topic },
        { timeout: `${left}ms` },
      );
      return res.status === grpc.StatusOK ? res.message : null;
    } catch {
      return null;
    }
  }
  const res = await http.asyncRequest(
    'POST',
    graphqlUrl(false),
    JSON.stringify({ query: TOPIC_STATE, variables: { topic: step.topic } }),
    { headers: JSON_HEADERS, tags: { name: 'topic' }, timeout: `${left}ms` },
  );
  const v = judge(res, { transport: 'http-keepalive' });
  return v.ok && v.data && v.data.topic ? v.data.topic : null;
}

async function publishOnce(step, via) {
  const timeout = `${Math.max(1, step.stepEnd - Date.now())}ms`;
  if (via === 'grpc') {
    const t0 = Date.now();
    let res = null;
    let reason = null;
    try {
      res = await pubChannel.client.asyncInvoke(
        `${SERVICE}/Publish`,
        { topic: step.topic, payload: PAYLOAD },
        { timeout },
      );
    } catch (err) {
      reason = String(err.message || err);
    }
    const ok = Boolean(res) && res.status === grpc.StatusOK;
    if (res && !ok) reason = `status ${res.status}: ${res.error ? res.error.message : ''}`;
    recordOp({ ok, ms: Date.now() - t0, tags: PUBLISH_TAGS, checks: { published: ok }, reason });
    return;
  }
  const res = await http.asyncRequest(
    'POST',
    graphqlUrl(false),
    JSON.stringify({ query: PUBLISH_MUTATION, variables: { topic: step.topic, payload: PAYLOAD } }),
    { headers: JSON_HEADERS, tags: { name: 'publish' }, timeout },
  );
  const v = judge(res, {
    transport: 'http-keepalive',
    validate: (d) => (d && d.publish && d.publish.seq >= 1 ? null : 'no publish answer'),
  });
  recordOp({ ok: v.ok, ms: opMs(res), tags: PUBLISH_TAGS, checks: v.checks, reason: v.reason });
}

// Waits for the subscribers (the hub's count, or the time a first poll takes),
// then writes step.events events, one every 1/RATE s, without waiting for one
// answer before the next write. Every VU counts on that many (when the hub does
// not answer at the deadline), so none is dropped: a window that began late (a
// timer's lateness, a slow count) writes its last ones at the window's end.
async function publish(step, kind) {
  const via = PUBLISH_VIA === 'own' ? (kind.server === 'grpc' ? 'grpc' : 'http') : PUBLISH_VIA;
  if (via === 'grpc' && !pubChannel.connected) pubChannel.connect();
  if (kind.counted) {
    const every = Math.max(20, rttOf(s.profile));
    let counted = 0;
    for (let i = 0; i < 10000 && Date.now() < step.readyBy; i++) {
      const state = await hubState(step, kind.server);
      counted = state ? state.subscribers : counted;
      if (counted >= step.n) break;
      await until(Math.min(step.readyBy, Date.now() + every));
    }
    // A subscriber still opening gets events from when it subscribes: a ws one's
    // marker says where that was, so the events before it are not missed; a gRPC
    // one (no marker) misses them. Either way, say so.
    if (counted < step.n)
      console.warn(
        `fanout ${step.name}: the hub counted ${counted} of ${step.n} subscribers ${Math.round(step.readyBy - step.stepEnd + s.plan.durations[step.name])} ms into the step; publishing anyway`,
      );
  } else await until(step.readyBy);
  const t0 = Date.now();
  const inflight = [];
  for (let k = 0; k < step.events; k++) {
    await until(Math.min(t0 + (k * 1000) / RATE, step.publishEnd));
    inflight.push(publishOnce(step, via));
  }
  await Promise.all(inflight);
}

// ---- the subscribers ----

// Longer than the step: the socket's deadline (the step's) ends the subscription, as abandoned.
const subscriptionTimeout = (step) => Math.max(1, step.stepEnd - Date.now()) + 60000;

// graphql-transport-ws: a socket per subscriber; no resume (a new subscription
// gets events from then on).
const wsKind = (tls) => ({
  server: 'graphql',
  counted: true,
  session: true,
  open(step) {
    const sub = newSubscriber();
    sub.done = (async () => {
      for (let attempt = 0; attempt <= MAX_RECONNECTS && !step.stopped; attempt++) {
        if (attempt > 0) {
          if (Date.now() >= step.deadline) break;
          reconnects.add(1);
          await pause(Math.min(reconnectPause(attempt), Math.max(0, step.deadline - Date.now())));
          if (step.stopped || Date.now() >= step.deadline) break;
        }
        const ws = new GraphqlWs(wsUrl(tls));
        // The subscription lasts until the tally: a copy on its way at the deadline still counts.
        ws.deadline = step.tallyBy;
        sub.ws = ws;
        try {
          await ws.open();
        } catch (err) {
          if (err.abandoned || step.stopped) break;
          sub.breaks += 1;
          sub.error = `connect: ${err.message || err}`;
          continue;
        }
        sub.subscribed = true;
        try {
          await ws.subscribe({
            query: TOPIC_SUBSCRIPTION,
            // The first subscription learns where it began (a marker first): events
            // before it were published before this subscriber was there, which
            // the publisher allows for once readyBy passes. A re-subscription does
            // not: what it lost while reconnecting counts as missed.
            variables: { topic: step.topic, announce: attempt === 0 },
            keep: false,
            timeoutMs: subscriptionTimeout(step),
            onNext: (payload, at) => {
              if (payload.errors) sub.error = `GraphQL errors: ${JSON.stringify(payload.errors).slice(0, 200)}`;
              else receive(step, sub.tally, payload.data.topicEvents, at);
            },
          });
          if (step.stopped) break;
          sub.breaks += 1; // the server completed it
          sub.error = sub.error || 'the server completed the subscription';
        } catch (err) {
          if (err.abandoned || step.stopped) break; // the step's deadline: its normal end
          sub.breaks += 1;
          sub.error = String(err.message || err);
        }
        await ws.close({ timeoutMs: Math.max(0, step.stepEnd - Date.now()) });
      }
    })();
    return sub;
  },
  async close(step, subs) {
    await Promise.all(
      subs.map((sub) => (sub.ws ? sub.ws.close({ timeoutMs: Math.max(0, step.stepEnd - Date.now()) }) : null)),
    );
    await Promise.all(subs.map((sub) => sub.done));
  },
});

// gRPC: a server stream per subscriber on the VU's channel; one that breaks
// resumes after its last seq (after_seq) from the hub's kept events.
const grpcKind = {
  server: 'grpc',
  counted: true,
  session: true,
  open(step) {
    const sub = newSubscriber();
    let finish;
    sub.done = new Promise((resolve) => {
      finish = resolve;
    });
    const start = (afterSeq) => {
      if (step.stopped) return finish();
      let stream;
      try {
        if (!subChannel.connected) subChannel.connect();
        stream = new grpc.Stream(subChannel.client, `${SERVICE}/Subscribe`, {
          timeout: `${Math.max(1, step.stepEnd - Date.now())}ms`,
        });
      } catch (err) {
        return ended(`subscribe: ${err.message || err}`);
      }
      sub.subscribed = true;
      let why = null;
      stream.on('data', (e) => receive(step, sub.tally, e, Date.now()));
      stream.on('error', (err) => {
        why = `status ${err.code}: ${err.message}`;
      });
      stream.on('end', () => ended(why || 'the server ended the stream'));
      stream.write({ topic: step.topic, afterSeq });
      stream.end();
      return undefined;
    };
    function ended(why) {
      if (step.stopped) return finish();
      sub.breaks += 1;
      sub.error = why;
      const wait = reconnectPause(sub.breaks);
      if (sub.breaks > MAX_RECONNECTS || step.deadline - Date.now() < wait) return finish();
      reconnects.add(1);
      setTimeout(() => start(sub.tally.lastSeq), wait);
      return undefined;
    }
    start(0);
    return sub;
  },
  async close(step, subs) {
    subChannel.close(); // ends every stream on it
    await Promise.race([Promise.all(subs.map((sub) => sub.done)), until(step.stepEnd)]);
  },
};

// One poll: the events after the subscriber's last seq. -> true if it answered,
// false if it failed, null once the step stopped (its answer not counted).
async function pollOnce(step, sub) {
  const body = JSON.stringify({ query: TOPIC_POLL, variables: { topic: step.topic, after: sub.tally.lastSeq } });
  const res = await http.asyncRequest('POST', graphqlUrl(false), body, {
    headers: JSON_HEADERS,
    tags: { name: 'poll' },
    timeout: `${Math.max(1, step.stepEnd - Date.now())}ms`,
  });
  const at = Date.now();
  if (step.stopped) return null;
  const v = judge(res, {
    transport: 'http-keepalive',
    validate: (d) => (d && d.topic && Array.isArray(d.topic.events) ? null : 'no topic events'),
  });
  recordOp({ ok: v.ok, ms: opMs(res), tags: POLL_TAGS, checks: v.checks, reason: v.reason });
  if (v.ok) for (const e of v.data.topic.events) receive(step, sub.tally, e, at);
  else sub.breaks += 1;
  return v.ok;
}

// Polling: each subscriber asks for the events after its last seq every POLL_MS
// until the deadline. Then, if it lacks one the publisher wrote (step.events), it
// waits for what the hub delivered (step.expected, asked at the deadline) and, if
// it lacks one of those, polls once more (a failed poll again after a pause, not
// at once): that poll, sent after the last publish reached the hub, is its last,
// and what it lacks then is missed. All of it ends by tallyBy.
const pollKind = {
  server: 'graphql',
  counted: false,
  session: false,
  open(step) {
    const sub = newSubscriber();
    sub.subscribed = true;
    sub.done = (async () => {
      for (let i = 0; i < 100000 && !step.stopped; i++) {
        if (Date.now() >= step.deadline) {
          if (sub.tally.lastSeq >= step.events) break;
          if (step.expected === null) await Promise.race([step.known, until(step.tallyBy)]);
          if (step.stopped || sub.tally.lastSeq >= step.expected) break;
        }
        const afterAnswer = step.expected !== null;
        const ok = await pollOnce(step, sub);
        if (ok === null || (ok && afterAnswer)) break;
        if (Date.now() < step.deadline) await until(Math.min(step.deadline, Date.now() + POLL_MS));
        else if (!ok) await until(Math.min(step.tallyBy, Date.now() + reconnectPause(1)));
      }
      sub.settled = true;
    })();
    return sub;
  },
  async close(_step, subs) {
    await Promise.all(subs.map((sub) => sub.done));
  },
};

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch) runs the step.
export const runLane = s.dispatch({
  ws: (l, data) => runStep(data, l.name, wsKind(l.tls)),
  grpc: (l, data) => runStep(data, l.name, grpcKind),
  http: (l, data) => runStep(data, l.name, pollKind),
});

// Under the table: what the publisher wrote.
function notes() {
  return [
    '',
    `fanout: ${RATE} events/s of ${SIZE} B per step, published ${PUBLISH_VIA === 'own' ? "through each lane's own server" : `over ${PUBLISH_VIA}`}; polling every ${POLL_MS} ms; up to ${PER_VU} subscribers per VU`,
  ];
}
