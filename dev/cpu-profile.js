// Splits a V8 CPU profile (`node --cpu-prof`, a .cpuprofile file) of the
// GraphQL server into the phases of an operation, for bench/server-cost.js --profile.
//
// Each sample is charged to one phase:
// 1. the outermost frame on its stack that belongs to a phase (PHASES, from the
//    root down): so a resolver's JSON.stringify counts as execution, and graphql's
//    parse called from graphql-ws's message handler counts as parse;
// 2. otherwise the innermost JavaScript frame with a script (the code that did
//    the work or called the builtin that did), by where that script lives (OWNERS);
// 3. otherwise V8's own entries: (garbage collector), (program); (idle) is left out.
import { readFileSync } from 'node:fs';

const inGraphql = (dir) => (f) => f.url.includes(`/node_modules/graphql/${dir}`);
const fn =
  (...names) =>
  (f) =>
    names.includes(f.functionName);
const inPack =
  (file, ...names) =>
  (f) =>
    f.url.endsWith(`/servers/graphql/${file}`) && (names.length === 0 || names.includes(f.functionName));

// [phase, test(callFrame)], tried in this order on each frame.
export const PHASES = [
  [
    'decode',
    (f) =>
      fn('parseJsonBody', 'operationParams', 'parseMessage', 'jsonMessageReviver')(f) ||
      (f.functionName === 'parse' && f.url === ''),
  ],
  ['shape checks', inPack('rules.js', 'documentSizeError', 'nestingError', 'stringEnd')],
  ['parse', (f) => inGraphql('language/')(f)],
  [
    'validate',
    (f) =>
      inGraphql('validation/')(f) ||
      inPack('rules.js', 'QueryDepthLimit', 'OperationDefinition', 'selectionDepth', 'fragmentDepth')(f),
  ],
  ['cost', inPack('cost.js')],
  [
    'execute',
    (f) =>
      inGraphql('execution/')(f) ||
      inPack('resolvers.js')(f) ||
      inPack('execution.js', 'executeOperation', 'subscribeOperation')(f) ||
      f.url.includes('/servers/shared/data.js'),
  ],
  ['serialize', (f) => fn('stringify', 'toJSON', 'timedStringifyResult', 'stringifyMessage')(f)],
  [
    'timing',
    (f) =>
      inPack(
        'timing.js',
        'fillSerPlaceholder',
        'wsTimingExtension',
        'serverTimingHeader',
        'newRequestTiming',
        'executionDidStart',
        'executionDidEnd',
        'newOperationTiming',
        'wsTiming',
        'WsTiming',
      )(f) ||
      inPack('execution.js', 'markStart')(f) ||
      f.url.endsWith('/common/server-timing.js'),
  ],
  ['documents', inPack('documents.js')],
];

// [category, test(url)] for the innermost frame with a url.
export const OWNERS = [
  [
    'AsyncLocalStorage',
    (u) => u.includes('async_hooks') || u.includes('async_local_storage') || u.includes('async_context'),
  ],
  ['graphql-ws', (u) => u.includes('/node_modules/graphql-ws/')],
  ['ws framing', (u) => u.includes('/node_modules/ws/')],
  ['Apollo pipeline', (u) => u.includes('/node_modules/@apollo/') || u.includes('/node_modules/negotiator/')],
  [
    'pack HTTP handler',
    (u) => u.endsWith('/servers/graphql/http.js') || u.endsWith('/servers/graphql/responseCache.js'),
  ],
  ['pack WS hooks', (u) => u.endsWith('/servers/graphql/ws.js')],
  ['pack other', (u) => u.includes('/servers/')],
  ['HTTP/2 framing', (u) => u.includes('http2')],
  ['HTTP/1.1 framing', (u) => u.startsWith('node:_http') || u.includes('internal/http') || u.startsWith('node:http')],
  ['TLS', (u) => u.includes('tls')],
  ['promises, ticks', (u) => u.includes('process/task_queues')],
  ['timers', (u) => u.includes('internal/timers') || u === 'node:timers'],
  ['socket I/O', (u) => u.startsWith('node:net') || u.includes('stream')],
  ['node other', (u) => u.startsWith('node:')],
  ['other JS', () => true],
];

// Profile time is V8's monotonic clock in microseconds, the clock of
// process.hrtime() in every process of this machine (Linux: CLOCK_MONOTONIC).
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

// { phase or category: ms } of the samples taken in [from, to) (monotonic µs,
// default the whole profile), with `total` (all but idle).
export function splitProfile(profile, { from = -Infinity, to = Infinity } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map(); // node id -> category
  const categoryOf = (id) => {
    if (memo.has(id)) return memo.get(id);
    const stack = [];
    for (let at = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at).callFrame);
    stack.reverse(); // root first
    let category = null;
    for (const frame of stack) {
      const phase = PHASES.find(([, test]) => test(frame));
      if (phase) {
        category = phase[0];
        break;
      }
    }
    if (!category) {
      const owner = stack.findLast((f) => f.url);
      if (owner) category = OWNERS.find(([, test]) => test(owner.url))[0];
      else {
        const leaf = stack.at(-1).functionName;
        category = leaf === '(idle)' ? null : leaf === '(garbage collector)' ? 'GC' : 'native (program, root)';
      }
    }
    memo.set(id, category);
    return category;
  };
  const out = { total: 0 };
  // timeDeltas[i] is the time between sample i-1 and sample i: charge it to sample i.
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from || at >= to) continue;
    const category = categoryOf(profile.samples[i]);
    if (!category) continue;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    out[category] = (out[category] ?? 0) + ms;
    out.total += ms;
  }
  return out;
}

export const readProfile = (file) => JSON.parse(readFileSync(file, 'utf8'));
