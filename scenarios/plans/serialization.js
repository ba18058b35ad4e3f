// Study 002's plan (scenarios/serialization.js runs it).
import { LIMITS } from '../../common/defaults.js';
import { envIntList } from '../../common/env.js';
import { byLevel, levelName } from '../../common/plan.js';
import { DEFAULT_COLUMNS, lane, laneModelSeconds } from '../../common/scenario.js';

// What one book costs on this kind of machine (2 cores), server and k6 together,
// measured at N = 500000 (typed GraphQL ~11 us, the JSON string ~5, ListBooks ~8 to
// 27 with k6 decoding the reply, StreamBooks ~33 with k6 handling every message),
// and its bytes on the wire (typed JSON ~135 B; as one JSON string, escaped, ~160 B;
// protobuf ~65 B, ~80 B as a stream message with its frame). Rounded up: they size the steps and feed
// the model's server term.
export const US_PER_BOOK = { typed: 15, json: 7, grpc_list: 15, grpc_stream: 40 };
export const BYTES_PER_BOOK = { typed: 135, json: 160, grpc_list: 65, grpc_stream: 80 };

export default function declare(env) {
  const level = levelName(env, 'ci');
  // ci (the PR gate) stops at 10000: 100000 books are ~16 MB a request, 11 s each
  // under lte, which made this scenario two thirds of the gate (bench/gate.js).
  const NS = envIntList(env, 'NS', byLevel(level, { smoke: [100, 1000, 10000], ci: [100, 1000, 10000], full: [100, 1000, 10000, 100000, 500000] }, [100, 1000, 10000, 100000]), {
    min: 1,
    max: LIMITS.MAX_BOOKS,
  });
  const dims = NS.map((n) => ({ n: String(n) }));
  const model = (name) => (d) => ({ reqBytes: 120, resBytes: Number(d.n) * BYTES_PER_BOOK[name], serverMs: (Number(d.n) * US_PER_BOOK[name]) / 1000 });
  const laneOf = (name, transport, variant) => lane(name, transport, false, { tags: { variant }, dims, model: model(name) });
  const lanes = [laneOf('typed', 'http-keepalive', 'typed'), laneOf('json', 'http-keepalive', 'json'), laneOf('grpc_list', 'grpc', 'list'), laneOf('grpc_stream', 'grpc-stream', 'stream')];
  return {
    NS,
    name: 'serialization',
    defaultProfile: 'lan',
    lanes,
    // Each request may hold N books several times over in memory: modest
    // concurrency. The study's variable is N, not concurrency: the PR gate (ci)
    // runs one VU per lane to stay in its 5 minutes.
    steps: byLevel(level, { ci: [1], full: [1, 2, 4, 8] }, undefined),
    // One iteration: a request per N, by the model (the server's time per book, the
    // transfer, slow start and loss included).
    laneSeconds: (name, profile) => laneModelSeconds(lanes.find((l) => l.name === name), profile) + 0.2,
    columns: [
      ...DEFAULT_COLUMNS,
      { title: 'server exec p50', metric: 'server_duration', tags: { part: 'exec' }, stat: 'med', unit: 'ms' },
      { title: 'server ser p50', metric: 'server_duration', tags: { part: 'ser' }, stat: 'med', unit: 'ms' },
    ],
    verdict: { where: { n: String(NS.at(-1)) } },
    // k6pack report: latency vs N, and the typed / JSON-string factor vs N against the study's.
    hints: {
      sizes: { dim: 'n', label: 'N books', unit: 'books (N)' },
      ratio: { dim: 'n', numerator: 'typed', denominator: 'json', label: 'typed / JSON-string factor', unit: 'books (N)', study: { 100: 1.5, 1000: 8.1, 10000: 15.7, 100000: 17.3 }, studyLabel: 'study 002' },
    },
  };
}
