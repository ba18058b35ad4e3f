/*
 * Study 001: one compound document vs parallel atomic documents (Vulcain).
 * A page of PAGE_SIZE books (default 20) with their authors and a blurb per
 * book, fetched as one GraphQL document page(offset, size), or as PAGE_SIZE
 * atomic book(id) documents in parallel (http.batch):
 *   over HTTP/1.1 keep-alive with at most 6 connections, as a browser (batchPerHost: 6),
 *   over one HTTP/2 connection (TLS).
 * Blurbs make small, medium and large documents (DOC_SIZES=small,medium,large;
 * 100 B, 2 KB, 16 KB per book); each is fetched with the server's response
 * cache off and on (x-response-cache, answered x-cache: BYPASS|MISS|HIT), then
 * revalidated with If-None-Match (expect 304: client-side caching). Connections
 * are not reused between iterations (noVUConnectionReuse), so each iteration's
 * first document is fetched on a cold connection (conn:cold) and the rest warm.
 * Servers: the GraphQL server (GET, ETag) behind Toxiproxy.
 * Default profile: 4g (170 ms RTT, 9 Mbit/s).
 * Look at: op_duration{size:large,cache:off,conn:warm} p50, compound vs atomic,
 * on h1 and h2 (the factor is printed under the table). The pack's link limits
 * bandwidth per connection, so 6 HTTP/1.1 connections get 6x the bandwidth of
 * one HTTP/2 connection; a real link shares it: add +shared (--profile 4g+shared).
 * Under loss (--profile 3g+loss3) a note under the table sets the atomic documents
 * over HTTP/2 (head-of-line blocking on one connection) beside HTTP/1.1.
 *
 *   npx k6pack up && k6 run scenarios/compound-vs-parallel.js
 *   k6 run -e PROFILE=dsl -e DOC_SIZES=large scenarios/compound-vs-parallel.js
 */
import exec from 'k6/execution';
import declare, { BLURBS } from './plans/compound-vs-parallel.js';
import { graphqlHttp, graphqlParallel } from './lib/http.js';
import { ATOMIC_BOOK_QUERY, PAGE_QUERY, bookId, validateAtomicBook, validatePage } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';

const plan = declare(__ENV);
const { PAGE_SIZE, SIZES } = plan;
const s = defineScenario(plan, { notes: factorNotes });
export const { options, setup, teardown, handleSummary } = s;

// A VU's page: the same books every iteration, so the server cache can hit.
const pageOffset = () => ((exec.vu.idInTest - 1) * PAGE_SIZE) % 100000;

const cacheHeader = (cache) => (cache === 'on' ? { 'x-response-cache': 'on' } : { 'x-response-cache': 'off' });
const X_CACHE = { off: ['BYPASS'], on: ['HIT', 'MISS'] };

// Wraps a validator with the x-cache check of the response cache.
const withCache = (cache, validate) => (data, res, i) => {
  const got = res.headers['X-Cache'];
  if (X_CACHE[cache] && !X_CACHE[cache].includes(got)) return `x-cache is ${got}, expected ${X_CACHE[cache].join(' or ')}`;
  return validate(data, res, i);
};

// etags: the ETags of an earlier fetch, to revalidate with (If-None-Match); each op
// returns its documents' ETags, one per document (a compound page has one).
function compoundOp(transport, size, cache, etags) {
  const offset = pageOffset();
  const blurb = BLURBS[size];
  const etag = etags && etags[0];
  const headers = etag ? { 'If-None-Match': etag } : cacheHeader(cache);
  const r = graphqlHttp({
    transport,
    tls: transport === 'http2',
    method: 'GET',
    query: PAGE_QUERY,
    variables: { offset, size: PAGE_SIZE, blurb },
    headers,
    expectStatus: etag ? 304 : 200,
    validate: etag ? null : withCache(cache, validatePage(offset, PAGE_SIZE, blurb)),
    tags: { size, cache: etag ? 'etag' : cache },
  });
  return [r.res.headers.Etag];
}

async function atomicOp(transport, size, cache, etags) {
  const offset = pageOffset();
  const blurb = BLURBS[size];
  const requests = [];
  for (let i = 0; i < PAGE_SIZE; i++) {
    const headers = etags ? { 'If-None-Match': etags[i] } : cacheHeader(cache);
    requests.push({ method: 'GET', tls: transport === 'http2', query: ATOMIC_BOOK_QUERY, variables: { id: bookId(offset + i + 1), blurb }, headers });
  }
  const r = await graphqlParallel(requests, {
    transport,
    expectStatus: etags ? 304 : 200,
    validate: etags ? null : withCache(cache, validateAtomicBook(offset, blurb)),
    tags: { size, cache: etags ? 'etag' : cache },
  });
  return r.responses.map((res) => res.headers.Etag);
}

// One iteration: cold first fetch, then per size: cache off, cache on, revalidate.
async function iteration(op, transport) {
  await op(transport, SIZES[0], 'off');
  for (const size of SIZES) {
    const etags = await op(transport, size, 'off');
    await op(transport, size, 'on');
    if (etags.every(Boolean)) await op(transport, size, 'off', etags);
  }
}

export const compoundH1 = () => iteration(compoundOp, 'http-keepalive');
export const atomicH1 = () => iteration(atomicOp, 'http-keepalive');
export const compoundH2 = () => iteration(compoundOp, 'http2');
export const atomicH2 = () => iteration(atomicOp, 'http2');

// compound / atomic p50 per size (warm, cache off), per protocol and step.
function factorNotes(data) {
  const p50 = (key) => p50Of(data, key);
  const lines = ['', 'compound / atomic p50, warm, cache off (>1: the atomic documents were faster; study 001: 894.74 / 214.34 = 4.2 with server push):'];
  for (const name of Object.keys(s.plan.scenarios).filter((k) => k.startsWith('compound_'))) {
    const atomic = name.replace('compound_', 'atomic_');
    const parts = SIZES.map((size) => {
      const tags = `size:${size},cache:off,conn:warm`;
      const c = p50(`op_duration{scenario:${name},${tags}}`);
      const a = p50(`op_duration{scenario:${atomic},${tags}}`);
      return `${size} ${c !== null && a ? (c / a).toFixed(2) : '-'}`;
    });
    lines.push(`  ${name.replace('compound_', '')}: ${parts.join('   ')}`);
  }
  return [...lines, ...lossNotes(data)];
}

// Under a loss modifier: the atomic documents over one HTTP/2 connection wait for
// every segment lost on it (head-of-line blocking), over six HTTP/1.1 connections each
// answer waits only for its own connection's; the model's p95 stall for each.
function lossNotes(data) {
  if (!s.profile.network.loss) return [];
  const stat = (key, name) => {
    const m = data.metrics[key];
    return m && m.values.count ? m.values[name] : null;
  };
  const ms = (v) => (v === null ? '-' : `${v.toFixed(0)}`);
  const lines = ['', `under ${s.profile.name}, atomic documents, warm, cache off, p50 / p95 ms (model p95 loss stall): one HTTP/2 connection holds every answer behind a lost segment (head-of-line blocking); six HTTP/1.1 connections hold only their own:`];
  for (const size of SIZES) {
    const parts = ['atomic_h2', 'atomic_h1', 'compound_h2'].map((lane) => {
      const g = s.gates.find((x) => x.which === 'op' && x.lane === lane && x.step === `c${s.plan.steps[0]}` && x.dims.size === size && x.dims.cache === 'off' && x.dims.conn === 'warm');
      if (!g) return null;
      return `${lane} ${ms(stat(g.key, 'med'))} / ${ms(stat(g.key, 'p(95)'))} (${ms(g.expected.p95.tailMs || 0)})`;
    });
    lines.push(`  ${size}: ${parts.filter(Boolean).join('   ')}`);
  }
  return lines;
}
