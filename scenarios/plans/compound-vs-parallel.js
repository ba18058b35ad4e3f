// Study 001's plan (scenarios/compound-vs-parallel.js runs it).
import { LIMITS } from '../../common/defaults.js';
import { envInt, envNames } from '../../common/env.js';
import { byLevel, levelName } from '../../common/plan.js';
import { windowAfter } from '../../common/model.js';
import { DEFAULT_COLUMNS, lane, laneModelSeconds } from '../../common/scenario.js';

export const BLURBS = { small: 100, medium: 2000, large: 16000 };
// What a browser allows per host on HTTP/1.1 (options.batchPerHost).
export const H1_CONNECTIONS = 6;
// A book with its author and the JSON around it, besides its blurb.
const BOOK_BYTES = 150;
// The server's time for one document: a request's fixed cost (parse, validate,
// answer: ~0.5 ms) and each book's (~0.05 ms). The atomic documents arrive at once,
// but one Node process serves them one after another.
const REQUEST_MS = 0.5;
const BOOK_MS = 0.05;

export default function declare(env) {
  const level = levelName(env, 'ci');
  const PAGE_SIZE = envInt(env, 'PAGE_SIZE', 20, { min: 1, max: 100 });
  const SIZES = envNames(env, 'DOC_SIZES', ['small', 'medium', 'large'], Object.keys(BLURBS).filter((k) => BLURBS[k] <= LIMITS.MAX_BLURB_BYTES));
  // Bytes of one book's document and of a whole page.
  const bookBytes = (size) => BLURBS[size] + BOOK_BYTES;
  const docBytes = (size) => PAGE_SIZE * bookBytes(size);
  // Round trips per document: HTTP/1.1 atomic spreads PAGE_SIZE requests over 6
  // connections; everything else is one round trip (HTTP/2 multiplexes the atomic
  // requests on one connection).
  const ROUNDS = { compound_h1: 1, atomic_h1: Math.ceil(PAGE_SIZE / H1_CONNECTIONS), compound_h2: 1, atomic_h2: 1 };
  // A revalidation (If-None-Match) answers 304 with no body.
  const resBytes = (laneName, d) => (d.cache === 'etag' ? 0 : laneName === 'atomic_h1' ? ROUNDS.atomic_h1 * bookBytes(d.size) : docBytes(d.size));
  // What one operation sends (without its window).
  const op = (laneName, d) => ({
    transport: laneName.endsWith('h2') ? 'http2' : 'http-keepalive',
    tls: laneName.endsWith('h2'),
    conn: d.conn,
    rounds: ROUNDS[laneName],
    // HTTP/2's atomic requests go as PAGE_SIZE streams in one round trip.
    messages: laneName === 'atomic_h2' ? PAGE_SIZE : ROUNDS[laneName],
    // HTTP/1.1's atomic requests spread over the connections: each carries ROUNDS of
    // them one after another (on a shared link the page's bytes share its bandwidth).
    connections: laneName === 'atomic_h1' ? PAGE_SIZE / ROUNDS.atomic_h1 : 1,
    reqBytes: 150 * (laneName.startsWith('atomic') ? (laneName === 'atomic_h1' ? ROUNDS.atomic_h1 : PAGE_SIZE) : 1),
    resBytes: resBytes(laneName, d),
    serverMs: laneName.startsWith('atomic') ? PAGE_SIZE * (REQUEST_MS + BOOK_MS) : REQUEST_MS + PAGE_SIZE * BOOK_MS,
  });
  // An iteration's operations in order, on connections it opens (noVUConnectionReuse).
  const dims = [
    { size: SIZES[0], cache: 'off', conn: 'cold' },
    ...SIZES.flatMap((size) => [
      { size, cache: 'off', conn: 'warm' },
      { size, cache: 'on', conn: 'warm' },
      { size, cache: 'etag', conn: 'warm' },
    ]),
  ];
  // TCP's window when an operation starts: what the iteration's operations before it
  // on the same connections left (a larger document than before waits for slow start
  // again; the same one again does not).
  const windowBefore = (laneName, d, link) => {
    let w;
    for (const prev of dims) {
      if (prev === d || (prev.size === d.size && prev.cache === d.cache && prev.conn === d.conn)) return w;
      w = windowAfter(link, { ...op(laneName, prev), window: w });
    }
    return w;
  };
  // The connections are an iteration old: a round trip per operation before this one
  // (their retransmission timeout is still coming down from 3R).
  const ageOf = (laneName, d) => dims.findIndex((x) => x.size === d.size && x.cache === d.cache && x.conn === d.conn) * ROUNDS[laneName];
  const model = (laneName) => (d, link) => ({ ...op(laneName, d), window: windowBefore(laneName, d, link), age: ageOf(laneName, d) });
  const lanes = [
    lane('compound_h1', 'http-keepalive', false, { tags: { variant: 'compound' }, dims, model: model('compound_h1') }),
    lane('atomic_h1', 'http-keepalive', false, { tags: { variant: 'atomic' }, dims, model: model('atomic_h1') }),
    lane('compound_h2', 'http2', true, { tags: { variant: 'compound' }, dims, model: model('compound_h2') }),
    lane('atomic_h2', 'http2', true, { tags: { variant: 'atomic' }, dims, model: model('atomic_h2') }),
  ];
  // One iteration of a lane: a cold fetch, then per size off + on + revalidate:
  // the model's time for each (slow start and loss included).
  const laneSeconds = (name, profile) => laneModelSeconds(lanes.find((l) => l.name === name), profile) + 0.1;
  return {
    PAGE_SIZE,
    SIZES,
    name: 'compound-vs-parallel',
    defaultProfile: '4g',
    lanes,
    iterationSeconds: (profile) => Math.max(...lanes.map((l) => laneSeconds(l.name, profile))),
    laneSeconds,
    // The study's variables are the document's shape and the protocol, not
    // concurrency: the PR gate (ci) runs one VU per lane, which keeps the gate in
    // its 5 minutes (an iteration is ~3.6 s under lte); the other levels rise.
    steps: byLevel(level, { ci: [1] }, undefined),
    columns: DEFAULT_COLUMNS,
    // batchPerHost: what a browser allows per host on HTTP/1.1.
    // noVUConnectionReuse: every iteration starts on cold connections.
    options: { batchPerHost: H1_CONNECTIONS, noVUConnectionReuse: true },
    verdict: { where: { size: SIZES.at(-1), cache: 'off', conn: 'warm' } },
    // k6pack report: latency vs document size, warm, server cache off.
    hints: { sizes: { dim: 'size', label: 'document size', unit: 'document bytes', bytes: Object.fromEntries(SIZES.map((sz) => [sz, docBytes(sz)])), where: { cache: 'off', conn: 'warm' } } },
  };
}
