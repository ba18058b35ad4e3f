/*
 * Study 002: GraphQL serialization cost for large results.
 * allBooks(nrOfBooks: N) as typed GraphQL vs allBooksAsJSON(nrOfBooks: N), the
 * same books as one JSON string, for N = 100, 1000, 10000, 100000 (smoke and ci
 * stop at 10000; full adds 500000; -e NS=100,1000 picks your own), plus gRPC
 * ListBooks (one message) and StreamBooks (one message per book) for the same N.
 * The typed list runs once per executor (-e EXECUTORS=plain,per-item or all;
 * common/executors.js), each its own lane tagged executor:<name>: plain (books with
 * their authors), per-item (each author through its own async call, as the
 * study's Spring controller), dataloader, instrumented (Apollo's cache-control
 * plugin, a hook per field) and jit (graphql-jit). ci runs plain and per-item.
 * Servers: the GraphQL server (HTTP/1.1 keep-alive) and the gRPC server.
 * Default profile: lan: this is a server-cost study.
 * Look at: the typed / JSON-string factor per executor printed under the table
 * (the study: 1.5 at 100 growing to ~16 at 10000+), and which executor's curve
 * comes within 30 % of the study's; server_duration{part:exec|ser|total}
 * (Server-Timing, gRPC trailer) splits the server's execution from its
 * serialization and from the transfer, which dominates under a slow profile.
 * gRPC ListBooks is timed without converting the reply to JavaScript (k6's
 * conversion is client cost the study does not measure); its count is checked
 * once per VU. k6 exposes no trailers on streams, so StreamBooks has no server time.
 *
 *   npx k6pack up && k6 run scenarios/serialization.js
 *   k6 run -e EXECUTORS=all -e NS=100,1000,10000,100000 scenarios/serialization.js
 *   k6 run -e LOAD=full scenarios/serialization.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan serialization --load ci`; dev/plan-headers.js writes it):
 *   serialization under lan (R 0 ms, down ∞ / up ∞ kbit/s), load ci, closed workload: 5 k6 scenarios, 14.0 s in all
 *     k6 scenario        executor      VUs or rate  start  duration  graceful stop
 *     typed_c1           constant-vus  1 VU         0s     2.5s      0.3s
 *     typed_per_item_c1  constant-vus  1 VU         2.8s   2.5s      0.3s
 *     json_c1            constant-vus  1 VU         5.6s   2.5s      0.3s
 *     grpc_list_c1       constant-vus  1 VU         8.4s   2.5s      0.3s
 *     grpc_stream_c1     constant-vus  1 VU         11.2s  2.5s      0.3s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (the spec's steps: 1)
 *     duration: LOAD=ci's 14 s / (5 lanes x 1 step), less the graceful stop
 *     graceful stop: LOAD=ci's
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import { EXECUTOR_NAMES } from '../common/executors.js';
import { CPU_ASK } from '../common/server-timing.js';
import declare, { STUDY_FACTORS, typedLaneOf } from './specs/serialization.js';
import { wholeIterations } from './lib/fit.js';
import { Channel, newClient, serverStream } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { recordOp } from './lib/metrics.js';
import { ALL_BOOKS, ALL_BOOKS_JSON, validateAllBooksBody, validateGrpcBooks } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';
import { SETTINGS } from './lib/config.js';

const decl = declare(SETTINGS);
const { NS, EXECUTORS } = decl;
// Each iteration asks for the largest N first: the garbage a large answer leaves
// is collected during the next request, and the next one is then the next largest,
// where a collection weighs least (in ascending order the 500000 books' garbage
// landed in the next iteration's N = 100 and 1000, doubling their time).
const LARGEST_FIRST = [...NS].sort((a, b) => b - a);
const s = defineScenario(decl, { notes: ratioNotes });
export const { options, setup, teardown, handleSummary } = s;

// Every answer carries the server's CPU time too (server_duration{part:cpu}).
const ASK_CPU = { [CPU_ASK.header]: CPU_ASK.value };

function typedOrJson(field, query, executor) {
  const extensions = { executor };
  for (const n of LARGEST_FIRST) {
    // The body is checked as text (start and book count), not parsed: megabytes of JSON.
    graphqlHttp({
      transport: 'http-keepalive',
      query,
      variables: { n },
      extensions,
      headers: ASK_CPU,
      rawBody: true,
      validate: validateAllBooksBody(field, n),
      tags: { n: String(n) },
    });
  }
}

// One lane per executor (the plan's typed lanes): typed, typed_per_item, ...
const typedLanes = Object.fromEntries(
  EXECUTOR_NAMES.map((e) => [typedLaneOf(e), () => typedOrJson('allBooks', ALL_BOOKS, e)]),
);
const json = () => typedOrJson('allBooksAsJSON', ALL_BOOKS_JSON, 'plain');

const channel = new Channel(newClient());
let listChecked = false;

function grpcList() {
  if (!listChecked) {
    // Once per VU, untimed: the reply converted and its books counted.
    listChecked = true;
    const n = Math.min(...NS);
    channel.call('ListBooks', { n }, { validate: validateGrpcBooks(n), record: false });
  }
  for (const n of LARGEST_FIRST) channel.call('ListBooks', { n }, { discard: true, tags: { n: String(n) } });
}

async function grpcStream() {
  for (const n of LARGEST_FIRST) {
    const t0 = Date.now();
    const r = await serverStream(channel, 'StreamBooks', { n });
    const tags = { n: String(n) };
    recordOp({
      ok: !r.error && r.count === n,
      ms: r.endedAt - t0,
      tags,
      checks: { 'stream ended without error': !r.error, 'right shape and count': r.count === n },
      reason: r.error || `expected ${n} books, got ${r.count}`,
    });
    if (r.error) channel.reset();
  }
}

// Every lane's exec (scenarios/lib/scenario.js dispatch): the study's lanes differ by
// name within a family; each iteration starts only when it fits in its step (fit.js
// wholeIterations).
const byName = Object.fromEntries(
  Object.entries({ ...typedLanes, json, grpc_list: grpcList, grpc_stream: grpcStream }).map(([name, fn]) => [
    name,
    wholeIterations(s, name, fn),
  ]),
);
const study = (l) => byName[l.name]();
export const runLane = s.dispatch({ http: study, grpc: study });

// The study's comparison factor, typed / JSON string, per executor, N and step,
// with the server's own share (Server-Timing total) and what it spent executing
// and serializing; then which executor comes within 30 % of the study for N >= 1000.
const WITHIN = 0.3;
function ratioNotes(data) {
  const p50 = (key) => p50Of(data, key);
  const f = (a, b) => (a !== null && b ? a / b : null);
  const fmt = (x) => (x === null ? '-' : x.toFixed(1));
  const studyText = Object.entries(STUDY_FACTORS)
    .map(([n, x]) => `${x} at ${n}`)
    .join(', ');
  const lines = [
    '',
    `typed / JSON-string factor, p50 (study 002, graphql-java: ${studyText}); server: the same over Server-Timing total; exec / ser: the typed list's server execution and serialization, ms:`,
  ];
  const verdicts = [];
  for (const step of [
    ...new Set(
      Object.keys(s.plan.scenarios)
        .filter((k) => k.startsWith('json_'))
        .map((k) => k.slice('json_'.length)),
    ),
  ]) {
    const best = [];
    for (const executor of EXECUTORS) {
      const lane = `${typedLaneOf(executor)}_${step}`;
      const ratios = [];
      const parts = NS.map((n) => {
        const t = p50(`op_duration{scenario:${lane},n:${n}}`);
        const j = p50(`op_duration{scenario:json_${step},n:${n}}`);
        const server = f(
          p50(`server_duration{scenario:${lane},n:${n},part:total}`),
          p50(`server_duration{scenario:json_${step},n:${n},part:total}`),
        );
        const exec = p50(`server_duration{scenario:${lane},n:${n},part:exec}`);
        const ser = p50(`server_duration{scenario:${lane},n:${n},part:ser}`);
        const factor = f(t, j);
        if (factor !== null && n >= 1000 && STUDY_FACTORS[n]) ratios.push({ n, factor, study: STUDY_FACTORS[n] });
        return `N=${n}: ${fmt(factor)} (server ${fmt(server)}; exec ${fmt(exec)}, ser ${fmt(ser)})`;
      });
      lines.push(`  ${step} ${executor}: ${parts.join('   ')}`);
      if (ratios.length) {
        const worst = ratios.reduce((w, r) =>
          Math.abs(r.factor / r.study - 1) > Math.abs(w.factor / w.study - 1) ? r : w,
        );
        best.push({ executor, within: ratios.every((r) => Math.abs(r.factor / r.study - 1) <= WITHIN), worst });
      }
    }
    if (!best.length) continue;
    const matching = best.filter((b) => b.within).map((b) => b.executor);
    const closest = best.reduce((c, b) =>
      Math.abs(b.worst.factor / b.worst.study - 1) < Math.abs(c.worst.factor / c.worst.study - 1) ? b : c,
    );
    verdicts.push(
      matching.length
        ? `  ${step}: within ${WITHIN * 100} % of the study for every N >= 1000 measured: ${matching.join(', ')}`
        : `  ${step}: no executor within ${WITHIN * 100} % of the study for every N >= 1000 measured; closest: ${closest.executor} (furthest at N=${closest.worst.n}: ${closest.worst.factor.toFixed(1)} vs ${closest.worst.study})`,
    );
  }
  return [...lines, ...verdicts];
}
