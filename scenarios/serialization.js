/*
 * Study 002: GraphQL serialization cost for large results.
 * allBooks(nrOfBooks: N) as typed GraphQL vs allBooksAsJSON(nrOfBooks: N), the
 * same books as one JSON string, for N = 100, 1000, 10000, 100000 (smoke stops
 * at 10000; full adds 500000; -e NS=100,1000 picks your own), plus gRPC
 * ListBooks (one message) and StreamBooks (one message per book) for the same N.
 * Servers: the GraphQL server (HTTP/1.1 keep-alive) and the gRPC server.
 * Default profile: lan: this is a server-cost study.
 * Look at: op_duration{n:...} p50 per lane and the typed/JSON ratio printed
 * under the table (the study: 1.5x at 100 growing to ~15x at 10000+);
 * server_duration{part:exec|ser|total} (Server-Timing, gRPC trailer) splits the
 * server's time from the transfer, which dominates under a slow profile.
 * gRPC ListBooks is timed without converting the reply to JavaScript (k6's
 * conversion is client cost the study does not measure); its count is checked
 * once per VU. k6 exposes no trailers on streams, so StreamBooks has no server time.
 *
 *   npx k6pack up && k6 run scenarios/serialization.js
 *   k6 run -e LOAD=full scenarios/serialization.js
 */
import { envIntList } from './lib/config.js';
import { LIMITS } from '../common/defaults.js';
import { Channel, newClient, serverStream } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { byLevel } from './lib/load.js';
import { recordOp } from './lib/metrics.js';
import { ALL_BOOKS, ALL_BOOKS_JSON, validateAllBooksBody, validateGrpcBooks } from './lib/queries.js';
import { defineScenario, lane, rttOf, transferSeconds } from './lib/scenario.js';
import { DEFAULT_COLUMNS, p50Of } from './lib/summary.js';

// ci (the PR gate) stops at 10000: 100000 books are ~16 MB a request, 11 s each
// under lte, which made this scenario two thirds of the gate (bench/gate.js).
const NS = envIntList('NS', byLevel({ smoke: [100, 1000, 10000], ci: [100, 1000, 10000], full: [100, 1000, 10000, 100000, 500000] }, [100, 1000, 10000, 100000]), {
  min: 1,
  max: LIMITS.MAX_BOOKS,
});
const dims = NS.map((n) => ({ n: String(n) }));

const lanes = [
  lane('typed', 'http-keepalive', false, { tags: { variant: 'typed' }, dims }),
  lane('json', 'http-keepalive', false, { tags: { variant: 'json' }, dims }),
  lane('grpc_list', 'grpc', false, { tags: { variant: 'list' }, dims }),
  lane('grpc_stream', 'grpc-stream', false, { tags: { variant: 'stream' }, dims }),
];

// Rough cost per book on this kind of machine, measured at N = 500000 (typed
// GraphQL ~11 us, the JSON string ~5, ListBooks ~8, StreamBooks ~33 with k6
// handling every message), and ~160 bytes per book on the wire: only sizes the steps.
const US_PER_BOOK = { typed: 15, json: 7, grpc_list: 10, grpc_stream: 40 };
const laneSeconds = (lane, profile) =>
  NS.reduce((sum, n) => sum + n * US_PER_BOOK[lane] * 1e-6 + transferSeconds(profile, n * 160) + rttOf(profile) / 1000, 0.2);

const s = defineScenario('serialization', {
  defaultProfile: 'lan',
  lanes,
  // Each request may hold N books several times over in memory: modest
  // concurrency. The study's variable is N, not concurrency: the PR gate (ci)
  // runs one VU per lane to stay in its 5 minutes.
  steps: byLevel({ ci: [1], full: [1, 2, 4, 8] }, undefined),
  laneSeconds,
  columns: [
    ...DEFAULT_COLUMNS,
    { title: 'server exec p50', metric: 'server_duration', tags: { part: 'exec' }, stat: 'med', unit: 'ms' },
    { title: 'server ser p50', metric: 'server_duration', tags: { part: 'ser' }, stat: 'med', unit: 'ms' },
  ],
  notes: ratioNotes,
  // k6pack report: latency vs N, and the typed / JSON-string factor vs N against the study's.
  hints: {
    sizes: { dim: 'n', label: 'N books', unit: 'books (N)' },
    ratio: { dim: 'n', numerator: 'typed', denominator: 'json', label: 'typed / JSON-string factor', unit: 'books (N)', study: { 100: 1.5, 1000: 8.1, 10000: 15.7, 100000: 17.3 }, studyLabel: 'study 002' },
  },
});
export const { options, setup, teardown, handleSummary } = s;

function typedOrJson(field, query) {
  for (const n of NS) {
    // The body is checked as text (start and book count), not parsed: megabytes of JSON.
    graphqlHttp({ transport: 'http-keepalive', query, variables: { n }, rawBody: true, validate: validateAllBooksBody(field, n), tags: { n: String(n) } });
  }
}

export function typed() {
  typedOrJson('allBooks', ALL_BOOKS);
}
export function json() {
  typedOrJson('allBooksAsJSON', ALL_BOOKS_JSON);
}

const channel = new Channel(newClient());
let listChecked = false;

export function grpcList() {
  if (!listChecked) {
    // Once per VU, untimed: the reply converted and its books counted.
    listChecked = true;
    const n = Math.min(...NS);
    channel.call('ListBooks', { n }, { validate: validateGrpcBooks(n), record: false });
  }
  for (const n of NS) channel.call('ListBooks', { n }, { discard: true, tags: { n: String(n) } });
}

export async function grpcStream() {
  for (const n of NS) {
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

// The study's comparison factor, typed / JSON string, per N and step.
function ratioNotes(data) {
  const p50 = (key) => p50Of(data, key);
  const lines = ['', 'typed / JSON-string factor (study 002: 1.5 at N=100, 8.1 at 1000, 15.7 at 10000, 17.3 at 100000):'];
  for (const name of Object.keys(s.plan.scenarios).filter((k) => k.startsWith('typed_'))) {
    const step = name.slice('typed_'.length);
    const parts = NS.map((n) => {
      const t = p50(`op_duration{scenario:${name},n:${n}}`);
      const j = p50(`op_duration{scenario:json_${step},n:${n}}`);
      const ts = p50(`server_duration{scenario:${name},n:${n},part:total}`);
      const js = p50(`server_duration{scenario:json_${step},n:${n},part:total}`);
      const f = (a, b) => (a !== null && b ? (a / b).toFixed(1) : '-');
      return `N=${n}: ${f(t, j)} (server ${f(ts, js)})`;
    });
    lines.push(`  ${step}: ${parts.join('   ')}`);
  }
  return lines;
}
