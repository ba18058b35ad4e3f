// Study 001's plan (scenarios/compound-vs-parallel.js runs it).
// The study: github.com/dunglas/api-parallelism-benchmark (main.go, static/index.html).
// Its form's defaults: nb = 50 resources of bytes = 102400, delay = 20 ms to
// generate each, hits = 15 of them server cache hits, which skip the delay. Its
// compound handler sleeps (nb - hits) x delay = 700 ms, then sends nb x bytes
// (5 MB); with push (and standalone atomic requests) every resource has a handler
// of its own, each sleeping 20 ms, all at once. Published (its README, Chrome):
// push 214.34 ms, compound 894.74 ms. Without the sleeps both are ~194 ms of
// transfer: the 4x is the compound document's parts generated one after another.
import { bookResourceUrl } from '../../common/book-resource.js';
import { LIMITS } from '../../common/defaults.js';
import { setting, settingNames } from '../../common/settings.js';
import { byLevel, levelName } from '../../common/schedule.js';
import { K6_BYTE_MS, windowAfter } from '../../common/model.js';
import { DEFAULT_COLUMNS, lane, laneModelSeconds, rttOf } from '../../common/scenario.js';

export const BLURBS = { small: 100, medium: 2000, large: 16000, study: 102400 };
// The `study` document: the study's defaults (static/index.html's form).
export const STUDY = { nb: 50, bytes: 102400, delay: 20, hits: 15 };
// Published (the study's README): ms to fetch everything, warm connection.
export const STUDY_PUBLISHED = { push: 214.34, compound: 894.74 };
// What a browser allows per host on HTTP/1.1 (options.batchPerHost).
export const H1_CONNECTIONS = 6;
// A book with its author and the JSON around it, besides its blurb.
const BOOK_BYTES = 150;
// The Vulcain flow's root list: per book an href in the body and a Link header.
const LINK_BYTES = 2 * bookResourceUrl('book-500000', STUDY.bytes).length + 40;
// The server's time for one document: a request's fixed cost (parse, validate,
// answer: ~0.5 ms) and each book's (~0.05 ms). The atomic documents arrive at
// once, but one Node process serves them one after another. Generation time
// (x-generate) comes on top.
const REQUEST_MS = 0.5;
const BOOK_MS = 0.05;
// Per byte, for documents of a megabyte or more (the study's 5 MB; below that
// these are under a millisecond, left to the policy's 20 ms): the server making
// the filler and its JSON (~2 ms a MB), and k6 reading the body and decoding its
// TLS records (~15 ms a MB here, common/model.js K6_BYTE_MS), which under lan
// is most of what the operation costs.
const BIG_BYTES = 1e6;
const BYTE_MS = 2e-6;

// Lanes that only run the study's document (they differ from their neighbours
// only by generation time, which the other documents do not have).
const STUDY_ONLY = new Set(['compound_serial_h2', 'vulcain_h2']);

// Generation time an operation of `laneName` waits for (x-generate), in ms.
export function generationMs(laneName, size) {
  if (size !== 'study') return 0;
  const { nb, delay, hits } = STUDY;
  if (nb <= hits) return 0;
  if (laneName === 'compound_serial_h2') return (nb - hits) * delay; // one after another
  if (laneName === 'atomic_h1') {
    // 6 at a time: every round with a miss waits one delay.
    return (Math.ceil(nb / H1_CONNECTIONS) - Math.floor(hits / H1_CONNECTIONS)) * delay;
  }
  return delay; // all at once: one delay
}

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare(settings) {
  const level = levelName(settings, 'ci');
  const PAGE_SIZE = setting(settings, 'PAGE_SIZE');
  // DOC_SIZES=study runs the study's document (and its two lanes of its own).
  const SIZES = settingNames(
    settings,
    'DOC_SIZES',
    ['small', 'medium', 'large'],
    Object.keys(BLURBS).filter((k) => BLURBS[k] <= LIMITS.MAX_BLURB_BYTES),
  );
  const withStudy = SIZES.includes('study');
  // The first fetch of an iteration opens the connections: a small document.
  const COLD_SIZE = SIZES.find((s) => s !== 'study') || 'small';
  const pageSizeOf = (size) => (size === 'study' ? STUDY.nb : PAGE_SIZE);
  // Bytes of one book's document and of a whole page.
  const bookBytes = (size) => BLURBS[size] + BOOK_BYTES;
  const docBytes = (size) => pageSizeOf(size) * bookBytes(size);
  // Round trips per document: HTTP/1.1 atomic spreads the page's requests over 6
  // connections; the Vulcain flow asks for the list, then for what it links;
  // everything else is one round trip (HTTP/2 multiplexes the atomic requests on
  // one connection).
  const roundsOf = (laneName, size) => {
    if (laneName === 'atomic_h1') return Math.ceil(pageSizeOf(size) / H1_CONNECTIONS);
    return laneName === 'vulcain_h2' ? 2 : 1;
  };
  const isAtomic = (laneName) => laneName.startsWith('atomic') || laneName === 'vulcain_h2';
  // A revalidation (If-None-Match) answers 304 with no body. Toxiproxy limits each
  // connection's bandwidth: HTTP/1.1 atomic moves one connection's share.
  const resBytes = (laneName, d) => {
    if (d.cache === 'etag') return 0;
    if (laneName === 'atomic_h1') return roundsOf(laneName, d.size) * bookBytes(d.size);
    return docBytes(d.size) + (laneName === 'vulcain_h2' ? pageSizeOf(d.size) * LINK_BYTES : 0);
  };
  const big = (size) => docBytes(size) >= BIG_BYTES;
  const serverMs = (laneName, d) => {
    const n = pageSizeOf(d.size);
    const bytes = d.cache === 'etag' || !big(d.size) ? 0 : docBytes(d.size) * BYTE_MS;
    const documents = isAtomic(laneName)
      ? n * (REQUEST_MS + BOOK_MS) + (laneName === 'vulcain_h2' ? REQUEST_MS + n * BOOK_MS : 0)
      : REQUEST_MS + n * BOOK_MS;
    return documents + bytes + (d.cache === 'off' ? generationMs(laneName, d.size) : 0);
  };
  // What one operation sends (without its window).
  const op = (laneName, d) => {
    const n = pageSizeOf(d.size);
    const rounds = roundsOf(laneName, d.size);
    // HTTP/2's atomic requests go as n streams in one round trip.
    const messages = laneName === 'atomic_h2' ? n : laneName === 'vulcain_h2' ? n + 1 : rounds;
    return {
      transport: laneName.endsWith('h2') ? 'http2' : 'http-keepalive',
      tls: laneName.endsWith('h2'),
      conn: d.conn,
      rounds,
      messages,
      // HTTP/1.1's atomic requests spread over the connections: each carries `rounds` of
      // them one after another (on a shared link the page's bytes share its bandwidth).
      connections: laneName === 'atomic_h1' ? n / rounds : 1,
      reqBytes: 150 * (isAtomic(laneName) ? (laneName === 'atomic_h1' ? rounds : messages) : 1),
      resBytes: resBytes(laneName, d),
      serverMs: serverMs(laneName, d),
      clientMs: big(d.size) && d.cache !== 'etag' ? docBytes(d.size) * K6_BYTE_MS : 0,
    };
  };
  const cold = { size: COLD_SIZE, cache: 'off', conn: 'cold' };
  // The study's document is fetched with the cache off only: its hits stand for the server cache.
  const dimsOf = (sizes) => [
    cold,
    ...sizes.flatMap((size) =>
      size === 'study'
        ? [{ size, cache: 'off', conn: 'warm' }]
        : [
            { size, cache: 'off', conn: 'warm' },
            { size, cache: 'on', conn: 'warm' },
            { size, cache: 'etag', conn: 'warm' },
          ],
    ),
  ];
  const dimsFor = (laneName) => dimsOf(STUDY_ONLY.has(laneName) ? ['study'] : SIZES);
  const same = (a, b) => a.size === b.size && a.cache === b.cache && a.conn === b.conn;
  // TCP's window when an operation starts: what the iteration's operations before it
  // on the same connections left (a larger document than before waits for slow start
  // again; the same one again does not).
  const windowBefore = (laneName, d, link) => {
    let w;
    for (const prev of dimsFor(laneName)) {
      if (same(prev, d)) return w;
      w = windowAfter(link, { ...op(laneName, prev), window: w });
    }
    return w;
  };
  // The connections are an iteration old: a round trip per operation before this one
  // (their retransmission timeout is still coming down from 3R).
  const ageOf = (laneName, d) => {
    const dims = dimsFor(laneName);
    return dims
      .slice(
        0,
        dims.findIndex((x) => same(x, d)),
      )
      .reduce((sum, x) => sum + roundsOf(laneName, x.size), 0);
  };
  const model = (laneName) => (d, link) => ({
    ...op(laneName, d),
    window: windowBefore(laneName, d, link),
    age: ageOf(laneName, d),
  });
  // Its lanes run on HTTP/1.1 keep-alive (_h1) or HTTP/2 (_h2) (common/lanes/http.js).
  const laneOf = (name, on, tags) =>
    lane(name, {
      on,
      tags,
      dims: dimsFor(name),
      model: model(name),
      coldEachIteration: true,
    });
  const lanes = [
    laneOf('compound_h1', 'http_keepalive', { variant: 'compound', resolve: 'parallel' }),
    laneOf('atomic_h1', 'http_keepalive', { variant: 'atomic' }),
    laneOf('compound_h2', 'http2', { variant: 'compound', resolve: 'parallel' }),
    ...(withStudy ? [laneOf('compound_serial_h2', 'http2', { variant: 'compound', resolve: 'serial' })] : []),
    laneOf('atomic_h2', 'http2', { variant: 'atomic' }),
    ...(withStudy ? [laneOf('vulcain_h2', 'http2', { variant: 'vulcain' })] : []),
  ];
  // One iteration of a lane: a cold fetch, then per size off + on + revalidate:
  // the model's time for each (slow start and loss included).
  const laneSeconds = (name, profile) =>
    laneModelSeconds(
      lanes.find((l) => l.name === name),
      profile,
    ) + 0.1;
  return {
    PAGE_SIZE,
    SIZES,
    COLD_SIZE,
    pageSizeOf,
    name: 'compound-vs-parallel',
    defaultProfile: '4g',
    lanes,
    iterationSeconds: (profile) => Math.max(...lanes.map((l) => laneSeconds(l.name, profile))),
    laneSeconds,
    // An iteration starts only if it fits in its step (scenarios/lib/fit.js
    // wholeIterations): the step's end waits only for connections to close.
    closeSeconds: (profile) => (2 * rttOf(profile)) / 1000 + 0.3,
    // Under lan an iteration is still tens to hundreds of ms: the ci level's shorter
    // no-delay budget would leave a p95 of a handful (common/schedule.js).
    noDelayBudget: false,
    // The study's variables are the document's shape and the protocol, not
    // concurrency: the PR gate (ci) runs one VU per lane, which keeps the gate in
    // its 5 minutes (an iteration is ~3.6 s under lte); the other levels rise, the
    // study's 5 MB documents to 8 VUs at most.
    steps: byLevel(level, { ci: [1], full: withStudy ? [1, 2, 4, 8] : undefined }, undefined),
    // The study's document: a p50 of at least five fetches per lane.
    minIterations: withStudy ? 5 : undefined,
    columns: DEFAULT_COLUMNS,
    // batchPerHost: what a browser allows per host on HTTP/1.1 (HTTP/2's atomic
    // requests go at once with http.asyncRequest, which batchPerHost does not cap).
    // noVUConnectionReuse: every iteration starts on cold connections.
    options: { batchPerHost: H1_CONNECTIONS, noVUConnectionReuse: true },
    verdict: { where: { size: SIZES.at(-1), cache: 'off', conn: 'warm' } },
    // Server time is study 001's split (generation time vs the rest), and its documents
    // are few per step (the study's take a second each): every one's is recorded.
    serverTimingEvery: 1,
    hints: {
      // k6pack report: latency vs document size, warm, server cache off.
      sizes: {
        dim: 'size',
        label: 'document size',
        unit: 'document bytes',
        bytes: Object.fromEntries(SIZES.map((sz) => [sz, docBytes(sz)])),
        where: { cache: 'off', conn: 'warm' },
      },
      // ... and the study's document split into the generation time each lane
      // asked for and the rest (transfer, round trips), beside the published numbers.
      ...(withStudy
        ? {
            split: {
              title: 'study 001: the generation time asked for and the rest (transfer, round trips)',
              where: { size: 'study', cache: 'off', conn: 'warm' },
              knownLabel: 'generation (x-generate: serial (nb - hits) x delay, else one delay a round)',
              restLabel: 'the rest: p50 minus generation',
              known: Object.fromEntries(lanes.map((l) => [l.name, generationMs(l.name, 'study')])),
              reference: [
                {
                  label: 'study compound (published)',
                  known: (STUDY.nb - STUDY.hits) * STUDY.delay,
                  total: STUDY_PUBLISHED.compound,
                },
                { label: 'study push (published)', known: STUDY.delay, total: STUDY_PUBLISHED.push },
              ],
            },
          }
        : {}),
    },
  };
}
