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
import declare from './plans/serialization.js';
import { Channel, newClient, serverStream } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { recordOp } from './lib/metrics.js';
import { ALL_BOOKS, ALL_BOOKS_JSON, validateAllBooksBody, validateGrpcBooks } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';

const plan = declare(__ENV);
const { NS } = plan;
const s = defineScenario(plan, { notes: ratioNotes });
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
