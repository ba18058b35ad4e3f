/*
 * Study 001: one compound document vs parallel atomic documents (Vulcain).
 * A page of PAGE_SIZE books (default 20) with their authors and a blurb per
 * book, fetched as one GraphQL document page(offset, size), or as PAGE_SIZE
 * atomic book(id) documents in parallel:
 *   over HTTP/1.1 keep-alive with at most 6 connections, as a browser (http.batch, batchPerHost: 6),
 *   over one HTTP/2 connection (TLS; every request at once with http.asyncRequest).
 * Blurbs make small, medium and large documents (DOC_SIZES=small,medium,large;
 * 100 B, 2 KB, 16 KB per book); each is fetched with the server's response
 * cache off and on (x-response-cache, answered x-cache: BYPASS|MISS|HIT), then
 * revalidated with If-None-Match (expect 304: client-side caching). Connections
 * are not reused between iterations (noVUConnectionReuse), so each iteration's
 * first document is fetched on a cold connection (conn:cold) and the rest warm.
 *
 * The study's own document (DOC_SIZES=study, or beside the others): its form's
 * defaults, 50 books of 100 KB, 20 ms to generate each, 15 of them server cache
 * hits (the x-generate header, common/generation.js), cache off, and two more lanes:
 *   compound_serial_h2  the compound document's books generated one after another,
 *                       as the study's handler (resolve:serial; the other compound
 *                       lanes are resolve:parallel, as graphql-js runs async resolvers)
 *   vulcain_h2          Vulcain's flow: the page's links asked for with a Preload
 *                       header, answered with Link rel=preload headers, then every
 *                       linked document at once (variant:vulcain): what a client can
 *                       do without HTTP/2 Server Push, one round trip more.
 * The notes under the table split the study's document into the generation time
 * each lane asked for and the rest, beside the published 894.74 / 214.34 ms.
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
 *   k6 run -e PROFILE=lan -e DOC_SIZES=study scenarios/compound-vs-parallel.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan compound-vs-parallel --load ci`; dev/plan-headers.js writes it):
 *   compound-vs-parallel under 4g (R 170 ms, down 9000 / up 9000 kbit/s), load ci, closed workload: 4 k6 scenarios, 19.8 s in all
 *     k6 scenario     executor      VUs or rate  start  duration  graceful stop
 *     compound_h1_c1  constant-vus  1 VU         0s     3s        0.7s
 *     atomic_h1_c1    constant-vus  1 VU         3.7s   7.5s      0.7s
 *     compound_h2_c1  constant-vus  1 VU         11.9s  3.2s      0.7s
 *     atomic_h2_c1    constant-vus  1 VU         15.8s  3.3s      0.7s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (the spec's steps: 1)
 *     duration, compound_h1: 1 iteration of the model's 2.921 s
 *     duration, atomic_h1: 1 iteration of the model's 7.492 s
 *     duration, compound_h2: 1 iteration of the model's 3.108 s
 *     duration, atomic_h2: 1 iteration of the model's 3.258 s
 *     graceful stop: the spec's time to close
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import { formatGenerate } from '../common/generation.js';
import declare, { BLURBS, STUDY, STUDY_PUBLISHED, generationMs } from './specs/compound-vs-parallel.js';
import { wholeIterations } from './lib/fit.js';
import { graphqlHttp, graphqlParallel, graphqlPreload } from './lib/http.js';
import {
  ATOMIC_BOOK_QUERY,
  PAGE_LINKS_PRELOAD,
  PAGE_LINKS_QUERY,
  PAGE_QUERY,
  bookId,
  validateAtomicBook,
  validatePage,
  validatePageLinks,
} from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';
import { SETTINGS } from './lib/config.js';

const decl = declare(SETTINGS);
const { SIZES, COLD_SIZE, pageSizeOf } = decl;
const s = defineScenario(decl, { notes: (data) => [...factorNotes(data), ...studyNotes(data)] });
export const { options, setup, teardown, handleSummary } = s;

// A VU's page: the same books every iteration, so the server cache can hit.
const pageOffset = () => ((exec.vu.idInTest - 1) * 100) % 100000;

const CACHE_HEADER = { on: { 'x-response-cache': 'on' }, off: { 'x-response-cache': 'off' } };
const X_CACHE = { off: ['BYPASS'], on: ['HIT', 'MISS'] };
const GENERATION = { delay: STUDY.delay, hits: STUDY.hits };

// Request headers: the cache switch, and for the study's document its generation
// time (x-generate): the compound document's resources with their hits and
// strategy, an atomic one as a hit or not (the study's client: hits=1 for i < hits).
function headersOf(size, cache, generate) {
  if (size !== 'study') return CACHE_HEADER[cache];
  return { ...CACHE_HEADER[cache], 'x-generate': formatGenerate(generate) };
}
const atomicGeneration = (i) => ({ delay: STUDY.delay, hits: i < STUDY.hits ? 1 : 0 });

// Wraps a validator with the x-cache check of the response cache.
const withCache = (cache, validate) => (data, res, i) => {
  const got = res.headers['X-Cache'];
  if (X_CACHE[cache] && !X_CACHE[cache].includes(got))
    return `x-cache is ${got}, expected ${X_CACHE[cache].join(' or ')}`;
  return validate(data, res, i);
};

// etags: the ETags of an earlier fetch, to revalidate with (If-None-Match); each op
// returns its documents' ETags, one per document (a compound page has one).
function compoundOp(transport, size, cache, etags, resolve = 'parallel') {
  const offset = pageOffset();
  const n = pageSizeOf(size);
  const blurb = BLURBS[size];
  const etag = etags && etags[0];
  const headers = etag ? { 'If-None-Match': etag } : headersOf(size, cache, { ...GENERATION, resolve });
  const r = graphqlHttp({
    transport,
    tls: transport === 'http2',
    method: 'GET',
    query: PAGE_QUERY,
    variables: { offset, size: n, blurb },
    headers,
    expectStatus: etag ? 304 : 200,
    validate: etag ? null : withCache(cache, validatePage(offset, n, blurb)),
    tags: { size, cache: etag ? 'etag' : cache },
  });
  return [r.res.headers.Etag];
}

async function atomicOp(transport, size, cache, etags) {
  const offset = pageOffset();
  const blurb = BLURBS[size];
  const requests = [];
  for (let i = 0; i < pageSizeOf(size); i++) {
    const headers = etags ? { 'If-None-Match': etags[i] } : headersOf(size, cache, atomicGeneration(i));
    requests.push({
      method: 'GET',
      tls: transport === 'http2',
      query: ATOMIC_BOOK_QUERY,
      variables: { id: bookId(offset + i + 1), blurb },
      headers,
    });
  }
  const r = await graphqlParallel(requests, {
    transport,
    expectStatus: etags ? 304 : 200,
    validate: etags ? null : withCache(cache, validateAtomicBook(offset, blurb)),
    tags: { size, cache: etags ? 'etag' : cache },
  });
  return r.responses.map((res) => res.headers.Etag);
}

// Vulcain: the page's links with a Preload header, then every linked document at
// once, each with its generation time. No revalidation: it returns no ETags.
async function vulcainOp(transport, size, cache) {
  const offset = pageOffset();
  const n = pageSizeOf(size);
  const blurb = BLURBS[size];
  await graphqlPreload(
    { query: PAGE_LINKS_QUERY, variables: { offset, size: n, blurb }, headers: CACHE_HEADER[cache] },
    {
      transport,
      preload: PAGE_LINKS_PRELOAD,
      linkHeaders: (i) => headersOf(size, cache, atomicGeneration(i)),
      validate: validatePageLinks(offset, n, blurb),
      validateLink: withCache(cache, validateAtomicBook(offset, blurb)),
      tags: { size, cache },
    },
  );
  return [];
}

// One iteration: a cold first fetch, then per size: cache off, cache on,
// revalidate; the study's document once, cache off (its hits are the server cache).
async function iteration(op, transport, sizes = SIZES) {
  await op(transport, COLD_SIZE, 'off');
  for (const size of sizes) {
    const etags = await op(transport, size, 'off');
    if (size === 'study') continue;
    await op(transport, size, 'on');
    if (etags.length && etags.every(Boolean)) await op(transport, size, 'off', etags);
  }
}

const serial = (transport, size, cache, etags) => compoundOp(transport, size, cache, etags, 'serial');
// Each lane's operation, and its sizes (the study's document alone for two of them).
const LANE_OPS = {
  compound_h1: [compoundOp],
  atomic_h1: [atomicOp],
  compound_h2: [compoundOp],
  compound_serial_h2: [serial, ['study']],
  atomic_h2: [atomicOp],
  vulcain_h2: [vulcainOp, ['study']],
};
// Every lane's exec (scenarios/lib/scenario.js dispatch): an iteration over the lane's
// transport, started only when it fits in its step (fit.js wholeIterations).
const byName = Object.fromEntries(
  Object.entries(LANE_OPS).map(([name, [op, sizes]]) => [
    name,
    wholeIterations(s, name, (l) => iteration(op, l.transport, sizes)),
  ]),
);
export const runLane = s.dispatch({ http: (l) => byName[l.name](l) });

const WARM_OFF = 'cache:off,conn:warm';
const lanesOf = (prefix) => Object.keys(s.plan.scenarios).filter((k) => k.startsWith(prefix));
const stepOf = (name) => name.slice(name.lastIndexOf('_') + 1);

// compound / atomic p50 per size (warm, cache off), per protocol and step.
function factorNotes(data) {
  const p50 = (key) => p50Of(data, key);
  const sizes = SIZES.filter((size) => size !== 'study');
  if (!sizes.length) return [];
  const lines = ['', 'compound / atomic p50, warm, cache off (>1: the atomic documents were faster):'];
  for (const name of lanesOf('compound_h')) {
    const atomic = name.replace('compound_', 'atomic_');
    const parts = sizes.map((size) => {
      const c = p50(`op_duration{scenario:${name},size:${size},${WARM_OFF}}`);
      const a = p50(`op_duration{scenario:${atomic},size:${size},${WARM_OFF}}`);
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
  const lines = [
    '',
    `under ${s.profile.name}, atomic documents, warm, cache off, p50 / p95 ms (model p95 loss stall): one HTTP/2 connection holds every answer behind a lost segment (head-of-line blocking); six HTTP/1.1 connections hold only their own:`,
  ];
  for (const size of SIZES) {
    const parts = ['atomic_h2', 'atomic_h1', 'compound_h2'].map((lane) => {
      const g = s.gates.find(
        (x) =>
          x.which === 'op' &&
          x.lane === lane &&
          x.step === `c${s.plan.steps[0]}` &&
          x.dims.size === size &&
          x.dims.cache === 'off' &&
          x.dims.conn === 'warm',
      );
      if (!g) return null;
      return `${lane} ${ms(stat(g.key, 'med'))} / ${ms(stat(g.key, 'p(95)'))} (${ms(g.expected.p95.tailMs || 0)})`;
    });
    lines.push(`  ${size}: ${parts.filter(Boolean).join('   ')}`);
  }
  return lines;
}

// The study's document: each lane's p50 split into the generation time it asked
// for and the rest, the server's own time, the factor the study published, what
// it becomes with the study's transfer, and Vulcain's extra round trip.
// A row's p50 under the model (its gate carries it).
const modelP50 = (scenario) => {
  const g = s.gates.find(
    (x) => x.metric === 'op_duration' && x.key === `op_duration{scenario:${scenario},size:study,${WARM_OFF}}`,
  );
  return g ? g.expected.p50.ms : null;
};
const STUDY_LANES = ['compound_serial_h2', 'compound_h2', 'atomic_h2', 'atomic_h1', 'vulcain_h2', 'compound_h1'];
const SPREAD = new Set(['atomic_h2', 'atomic_h1', 'vulcain_h2']);
function studyNotes(data) {
  if (!SIZES.includes('study')) return [];
  const { nb, bytes, delay, hits } = STUDY;
  const published = STUDY_PUBLISHED.compound / STUDY_PUBLISHED.push;
  const transfer = { compound: STUDY_PUBLISHED.compound - (nb - hits) * delay, push: STUDY_PUBLISHED.push - delay };
  const R = s.profile.network.rttMs || 0;
  const fmt = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : `${Math.round(x)}`);
  const ratio = (a, b) => (a !== null && b ? (a / b).toFixed(2) : '-');
  const lines = [
    '',
    `study 001's document: ${nb} books of ${bytes} bytes, ${delay} ms to generate each, ${hits} server cache hits. Published: compound ${STUDY_PUBLISHED.compound} ms, push ${STUDY_PUBLISHED.push} ms (${published.toFixed(2)}x); without the sleeps ${transfer.compound.toFixed(2)} and ${transfer.push.toFixed(2)} ms of transfer.`,
  ];
  for (const serialLane of lanesOf('compound_serial_h2_')) {
    const step = stepOf(serialLane);
    const key = (metric, lane, more = '') => `${metric}{scenario:${lane}_${step},size:study,${WARM_OFF}${more}}`;
    const p50 = (lane) => p50Of(data, key('op_duration', lane));
    // The server's time of an operation: the compound document's, or the slowest of
    // the documents generated at once (p95 over their responses).
    const server = (lane) => {
      const m = data.metrics[key('server_duration', lane, ',part:total')];
      return m ? (SPREAD.has(lane) ? m.values['p(95)'] : m.values.med) : null;
    };
    const names = STUDY_LANES.filter((l) => s.plan.scenarios[`${l}_${step}`]);
    const named = (list) => list.join('; ');
    lines.push(
      `  ${step} p50 ms = generation asked for + the rest (transfer, round trips, k6): ${named(names.map((l) => `${l.replace(/_/g, ' ')} ${fmt(p50(l))} = ${generationMs(l, 'study')} + ${fmt(p50(l) - generationMs(l, 'study'))}`))}`,
    );
    lines.push(
      `  ${step} the server's time, ms (Server-Timing total; the atomic documents' slowest, p95): ${named(names.filter((l) => l !== 'atomic_h1').map((l) => `${l.replace(/_/g, ' ')} ${fmt(server(l))}`))}`,
    );
    const [cs, cp, a2, v] = ['compound_serial_h2', 'compound_h2', 'atomic_h2', 'vulcain_h2'].map(p50);
    if (cs !== null && a2) {
      const withStudyTransfer =
        (server('compound_serial_h2') + transfer.compound) / (server('atomic_h2') + transfer.push);
      lines.push(
        `  ${step}: compound serial / atomic h2 = ${ratio(cs, a2)} (published ${published.toFixed(2)}); with the study's ${Math.round(transfer.push)} ms of transfer in place of this link's: (${fmt(server('compound_serial_h2'))} + ${transfer.compound.toFixed(2)}) / (${fmt(server('atomic_h2'))} + ${transfer.push.toFixed(2)}) = ${withStudyTransfer.toFixed(2)}`,
      );
      lines.push(
        `  ${step}: compound parallel / atomic h2 = ${ratio(cp, a2)}; serial - parallel = ${fmt(cs - cp)} ms (the sleeps one after another instead of at once: (nb - hits - 1) x delay = ${(nb - hits - 1) * delay} ms)`,
      );
    }
    if (v !== null && a2 !== null && cp !== null) {
      const extra = modelP50(`vulcain_h2_${step}`) - modelP50(`atomic_h2_${step}`);
      lines.push(
        `  ${step}: vulcain - atomic h2 = ${fmt(v - a2)} ms (the same documents after one more round trip: the model says ${fmt(extra)} ms, R = ${R} ms and the links' bytes); vulcain - compound parallel = ${fmt(v - cp)} ms (the atomic documents that are cache hits stream while the others are generated, which one compound document cannot: on a slow link that hides part of the extra round trip)`,
      );
    }
  }
  return lines;
}
