// Study 002's plan (scenarios/serialization.js runs it).
// The study: github.com/itd-jt/gs-graphql-server-serialization-performance (Spring
// Boot 3.0.1, Spring for GraphQL, graphql-java): allBooks(nrOfBooks) typed vs
// allBooksAsJSON(nrOfBooks), the same books as one Jackson-made JSON string, timed
// with curl; its README's table gives the factors in STUDY_FACTORS. Its
// BookController resolves every book's author with a @SchemaMapping method, one
// call per book, unbatched: the `per-item` executor here.
import { rawSetting, setting, settingNames } from '../../common/settings.js';
import { EXECUTOR_NAMES } from '../../common/executors.js';
import { byLevel, levelName } from '../../common/schedule.js';
import { DEFAULT_COLUMNS, lane, laneModelSeconds, laneSetupSeconds, rttOf } from '../../common/scenario.js';

// What one book costs on this kind of machine (2 cores), server and k6 together,
// measured at N = 500000 (typed GraphQL ~11 us, the JSON string ~5, ListBooks ~8 to
// 27 with k6 decoding the reply, StreamBooks ~33 with k6 handling every message),
// and its bytes on the wire (typed JSON ~135 B; as one JSON string, escaped, ~160 B;
// protobuf ~65 B, ~80 B as a stream message with its frame). Rounded up: they size the steps and feed
// the model's server term.
export const US_PER_BOOK = { typed: 15, json: 7, grpc_list: 15, grpc_stream: 40 };
export const BYTES_PER_BOOK = { typed: 135, json: 160, grpc_list: 65, grpc_stream: 80 };
// The typed list per executor (common/executors.js), measured the same way at
// N = 500000 on this machine (plain ~11, per-item ~31, dataloader ~31,
// instrumented ~17, jit ~4 us a book), rounded up.
export const US_PER_BOOK_BY_EXECUTOR = {
  plain: US_PER_BOOK.typed,
  'per-item': 40,
  dataloader: 40,
  instrumented: 25,
  jit: 5,
};

// The study's factor, typed / JSON-string request time, per N (its README).
export const STUDY_FACTORS = { 100: 1.5, 1000: 8.1, 10000: 15.7, 100000: 17.3, 500000: 16.6 };

// The typed lane of an executor: plain keeps the name `typed`.
export const typedLaneOf = (executor) => (executor === 'plain' ? 'typed' : `typed_${executor.replace(/-/g, '_')}`);

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare(settings) {
  const level = levelName(settings, 'ci');
  // ci (the PR gate) stops at 10000: 100000 books are ~16 MB a request, 11 s each
  // under lte, which made this scenario two thirds of the gate (bench/gate.js).
  const NS = setting(
    settings,
    'NS',
    byLevel(
      level,
      { smoke: [100, 1000, 10000], ci: [100, 1000, 10000], full: [100, 1000, 10000, 100000, 500000] },
      [100, 1000, 10000, 100000],
    ),
  );
  // The typed list's executors: EXECUTORS=plain,per-item (or all). The PR gate (ci)
  // runs plain and per-item, whose factor grows with N; the study's row (full,
  // smoke) runs all five.
  const EXECUTORS =
    rawSetting(settings, 'EXECUTORS') === 'all'
      ? EXECUTOR_NAMES
      : settingNames(
          settings,
          'EXECUTORS',
          byLevel(level, { ci: ['plain', 'per-item'] }, EXECUTOR_NAMES),
          EXECUTOR_NAMES,
        );
  const dims = NS.map((n) => ({ n: String(n) }));
  const usPerBook = {
    ...US_PER_BOOK,
    ...Object.fromEntries(EXECUTOR_NAMES.map((e) => [typedLaneOf(e), US_PER_BOOK_BY_EXECUTOR[e]])),
  };
  const bytesPerBook = (name) => BYTES_PER_BOOK[name] ?? BYTES_PER_BOOK.typed;
  const model = (name) => (d) => ({
    reqBytes: 120,
    resBytes: Number(d.n) * bytesPerBook(name),
    serverMs: (Number(d.n) * usPerBook[name]) / 1000,
  });
  // The study's lanes run on the catalogue's (common/lanes/): its own names on HTTP/1.1
  // keep-alive and a unary gRPC call, and the server stream.
  const laneOf = (name, on, tags) => lane(name, { on, tags, dims, model: model(name) });
  const typedLanes = EXECUTORS.map((e) => laneOf(typedLaneOf(e), 'http_keepalive', { variant: 'typed', executor: e }));
  const lanes = [
    ...typedLanes,
    laneOf('json', 'http_keepalive', { variant: 'json', executor: 'plain' }),
    laneOf('grpc_list', 'grpc', { variant: 'list' }),
    laneOf('grpc_stream', 'grpc_stream', { variant: 'stream' }),
  ];
  return {
    NS,
    EXECUTORS,
    name: 'serialization',
    defaultProfile: 'lan',
    lanes,
    // Each request may hold N books several times over in memory: modest
    // concurrency. The study's variable is N, not concurrency: the PR gate (ci)
    // runs one VU per lane to stay in its 5 minutes.
    steps: byLevel(level, { ci: [1], full: [1, 2, 4, 8] }, undefined),
    // One iteration: a request per N, by the model (the server's time per book, the
    // transfer, slow start and loss included). A step's first iteration also opens its
    // connection, and grpc_list's first checks one reply at the smallest N, untimed
    // (scenarios/serialization.js grpcList): a step of one iteration holds them too.
    laneSeconds: (name, profile) => {
      const l = lanes.find((x) => x.name === name);
      const check =
        name === 'grpc_list' ? laneModelSeconds({ ...l, dims: [{ n: String(Math.min(...NS)) }] }, profile) : 0;
      return laneModelSeconds(l, profile) + laneSetupSeconds(l, profile) + check + 0.2;
    },
    // An iteration starts only if it fits in its step (scenarios/lib/fit.js
    // wholeIterations): the step's end waits only for connections to close.
    closeSeconds: (profile) => (2 * rttOf(profile)) / 1000 + 0.3,
    // Under lan an iteration is still tens to hundreds of ms: the ci level's shorter
    // no-delay budget would leave a p95 of a handful (common/schedule.js).
    noDelayBudget: false,
    columns: [
      ...DEFAULT_COLUMNS,
      { title: 'server exec p50', metric: 'server_duration', tags: { part: 'exec' }, stat: 'med', unit: 'ms' },
      { title: 'server ser p50', metric: 'server_duration', tags: { part: 'ser' }, stat: 'med', unit: 'ms' },
      // The GraphQL server's CPU time over the request (servers/graphql/timing.js): what
      // a busy machine does not lengthen, so test/scenarios-smoke.test.js compares it.
      { title: 'server cpu p50', metric: 'server_duration', tags: { part: 'cpu' }, stat: 'med', unit: 'ms' },
    ],
    verdict: { where: { n: String(NS.at(-1)) } },
    // Server time is this study's question (exec vs ser per N), and its operations are
    // few and long (a step holds tens of them): every one's is recorded.
    serverTimingEvery: 1,
    // k6pack report: latency vs N, and the typed / JSON-string factor vs N per
    // executor against the study's.
    hints: {
      sizes: { dim: 'n', label: 'N books', unit: 'books (N)' },
      ratio: {
        dim: 'n',
        numerators: Object.fromEntries(EXECUTORS.map((e) => [typedLaneOf(e), e])),
        denominator: 'json',
        label: 'typed / JSON-string factor',
        unit: 'books (N)',
        study: STUDY_FACTORS,
        studyLabel: 'study 002 (graphql-java)',
      },
    },
  };
}
