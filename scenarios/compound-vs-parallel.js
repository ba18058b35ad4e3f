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
 * on h1 and h2 (the factor is printed under the table). Toxiproxy limits
 * bandwidth per connection, so 6 HTTP/1.1 connections get 6x the bandwidth of
 * one HTTP/2 connection; a real link shares it.
 *
 *   npx k6pack up && k6 run scenarios/compound-vs-parallel.js
 *   k6 run -e PROFILE=dsl -e DOC_SIZES=large scenarios/compound-vs-parallel.js
 */
import exec from 'k6/execution';
import { configError, envInt } from './lib/config.js';
import { LIMITS } from '../common/defaults.js';
import { graphqlHttp, graphqlParallel } from './lib/http.js';
import { byLevel } from './lib/load.js';
import { ATOMIC_BOOK_QUERY, PAGE_QUERY, bookId, validateAtomicBook, validatePage } from './lib/queries.js';
import { defineScenario, lane, rttOf, transferSeconds } from './lib/scenario.js';
import { DEFAULT_COLUMNS, p50Of } from './lib/summary.js';

const PAGE_SIZE = envInt('PAGE_SIZE', 20, { min: 1, max: 100 });
const BLURBS = { small: 100, medium: 2000, large: 16000 };
const SIZES = (__ENV.DOC_SIZES || 'small,medium,large').split(',').map((x) => x.trim());
for (const size of SIZES) {
  if (!(size in BLURBS)) throw configError(`DOC_SIZES=${__ENV.DOC_SIZES}: "${size}" is not one of ${Object.keys(BLURBS).join(', ')}`);
  if (BLURBS[size] > LIMITS.MAX_BLURB_BYTES) throw configError(`blurb of ${BLURBS[size]} bytes exceeds the server's ${LIMITS.MAX_BLURB_BYTES}`);
}

const dims = [
  { size: SIZES[0], cache: 'off', conn: 'cold' },
  ...SIZES.flatMap((size) => [
    { size, cache: 'off', conn: 'warm' },
    { size, cache: 'on', conn: 'warm' },
    { size, cache: 'etag', conn: 'warm' },
  ]),
];
const lanes = [
  lane('compound_h1', 'http-keepalive', false, { tags: { variant: 'compound' }, dims }),
  lane('atomic_h1', 'http-keepalive', false, { tags: { variant: 'atomic' }, dims }),
  lane('compound_h2', 'http2', true, { tags: { variant: 'compound' }, dims }),
  lane('atomic_h2', 'http2', true, { tags: { variant: 'atomic' }, dims }),
];

// Bytes of one document of a size (books, authors, JSON overhead ~150 B per book).
const docBytes = (size) => PAGE_SIZE * (BLURBS[size] + 150);

// Round trips per document: HTTP/1.1 atomic spreads PAGE_SIZE requests over 6
// connections; everything else is one round trip.
const ROUNDS = { compound_h1: 1, atomic_h1: Math.ceil(PAGE_SIZE / 6), compound_h2: 1, atomic_h2: 1 };

// One iteration of a lane: a cold fetch (+2 RTT: TCP, TLS), then per size
// off + on + revalidate; two of them carry the document.
function laneSeconds(lane, profile) {
  const r = rttOf(profile) / 1000;
  const cold = (ROUNDS[lane] + 2) * r + transferSeconds(profile, docBytes(SIZES[0]));
  return SIZES.reduce((sum, size) => sum + 3 * ROUNDS[lane] * r + 2 * transferSeconds(profile, docBytes(size)), cold + 0.1);
}

const s = defineScenario('compound-vs-parallel', {
  defaultProfile: '4g',
  lanes,
  iterationSeconds: (profile) => Math.max(...lanes.map((l) => laneSeconds(l.name, profile))),
  laneSeconds,
  // The study's variables are the document's shape and the protocol, not
  // concurrency: the PR gate (ci) runs one VU per lane, which keeps the gate in
  // its 5 minutes (an iteration is ~3.6 s under lte); the other levels rise.
  steps: byLevel({ ci: [1] }, undefined),
  columns: DEFAULT_COLUMNS,
  notes: factorNotes,
  // batchPerHost: what a browser allows per host on HTTP/1.1.
  // noVUConnectionReuse: every iteration starts on cold connections.
  options: { batchPerHost: 6, noVUConnectionReuse: true },
  // k6pack report: latency vs document size, warm, server cache off.
  hints: { sizes: { dim: 'size', label: 'document size', unit: 'document bytes', bytes: Object.fromEntries(SIZES.map((sz) => [sz, docBytes(sz)])), where: { cache: 'off', conn: 'warm' } } },
});
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

function compoundOp(transport, size, cache, etag) {
  const offset = pageOffset();
  const blurb = BLURBS[size];
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
    if (etags.every(Boolean)) await op(transport, size, 'off', etags.length === 1 ? etags[0] : etags);
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
  return lines;
}
