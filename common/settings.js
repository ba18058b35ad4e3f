// Every environment variable the pack reads, in one list: its name, kind, default,
// bounds, who reads it, and one line of doc. k6 reads them as -e NAME=value (__ENV),
// the CLI and the servers from their process's environment.
//   setting(env, NAME[, fallback])  the value, parsed and checked by its kind and
//                                   bounds (a bad one: one sentence, common/env.js);
//                                   fallback: the default where it depends on the
//                                   run (a level's steps), else the registry's.
//   rawSetting(env, NAME)           the text as given, for readers with rules of their
//                                   own (targets, paths).
//   readSettings(env)               a run's settings, read once at its boundary (the k6
//                                   init context, the CLI): every one k6 reads that the
//                                   environment sets, parsed and checked at once; the pure
//                                   code (common/, scenarios/specs/) takes this object
//                                   and setting() looks a value up in it.
// A choice (LOAD, WORKLOAD, METRICS, PUBLISH_VIA) is checked here, against its values, and
// refused in one sentence (choiceHelp): `noun` names what it is, `meanings` what each value
// does. (RESPONSE_CACHE is the server's, read with the rule of its x-response-cache header.)
// `npx k6pack list --env` prints the list; docs/settings.md is generated from it
// (dev/settings-doc.js) and test/settings.test.js keeps both current and checks that
// no code reads a variable this list does not name.
// Plain ES module (k6 and Node).
import { API_PROXY_PORTS, DEFAULT_PORTS, LIMITS, TARGET_DEFAULTS } from './defaults.js';
import { configError, envBool, envInt, envIntList, envNames, envNumber, envSeconds } from './env.js';

// who reads it: k6 (a scenario, -e NAME=value), cli (npx k6pack), server (servers/*.js),
// bench (a bench's or a probe's own k6 script, bench/k6/ and dev/k6/, set by the Node
// side that runs it: not a user's setting)
const K6 = 'k6';
const CLI = 'cli';
const SERVER = 'server';
const BENCH = 'bench';

// [name, kind, default, bounds/values, readers, doc]
const LIST = [
  // Load shape (common/schedule.js; `npx k6pack plan` shows what they give)
  [
    'LOAD',
    'choice',
    'ci (soak: soak)',
    // common/schedule.js's LEVELS, name for name (test/settings.test.js checks)
    { values: ['smoke', 'ci', 'gate', 'full', 'soak'], noun: 'a load level' },
    [K6, CLI],
    'the load level: steps, step length and graceful stop',
  ],
  [
    'WORKLOAD',
    'choice',
    'closed',
    { values: ['closed', 'open'], noun: 'a workload', meanings: { closed: 'VUs in a loop', open: 'arrival rates' } },
    [K6, CLI],
    'closed: VUs in a loop; open: rising arrival rates from the model',
  ],
  ['STEPS', 'intList', "the level's (ci: 1,4)", { min: 1, max: 5000 }, [K6], 'concurrency steps, e.g. 1,10,50'],
  ['STEP_SECONDS', 'int', "0 (the level's, from the model)", { min: 0, max: 86400 }, [K6], 'every step this long'],
  [
    'STEP_ITERATIONS',
    'int',
    '0 (steps are timed)',
    { min: 0, max: 1000000 },
    [K6],
    'iterations per VU per step (shared-iterations), capped at the step',
  ],
  [
    'OPEN_SHARES',
    'intList',
    "the level's (ci: 50,90)",
    { min: 1, max: 1000 },
    [K6],
    "open workload: each step's share of what the connections do, in %",
  ],
  [
    'OPEN_CONNECTIONS',
    'int',
    "the level's (ci: 4)",
    { min: 1, max: 5000 },
    [K6],
    'open workload: the connections the shares are of',
  ],
  ['SOAK_DURATION', 'seconds', '1h', {}, [K6], 'the soak level: how long the mix runs (90s, 15m, 1h)'],
  ['SOAK_RATE', 'int', "the level's (soak: 2)", { min: 1, max: 10000 }, [K6], 'a mix: iterations per second per lane'],
  [
    'LANES',
    'names',
    'every lane',
    {},
    [K6],
    'run only these lanes, e.g. ws,http2 (mobile: ws is the ws lane at every T, ws_t15 at 15 s only)',
  ],
  [
    'CPU_CORES',
    'int',
    2,
    { min: 1, max: 1024 },
    [K6, CLI],
    "the machine's cores the CPU budgets assume (`k6pack run` measures it)",
  ],
  // A scale past 20 means the machine cannot run a load test at all.
  [
    'CPU_SCALE',
    'number',
    1,
    { min: 1, max: 20 },
    [K6, CLI],
    "how much slower than the reference machine's this CPU is (`k6pack run` measures it)",
  ],
  // What a run records and gates (common/recording.js, common/thresholds.js)
  [
    'METRICS',
    'choice',
    'full',
    {
      values: ['full', 'lean'],
      noun: 'a metrics mode',
      meanings: {
        full: 'every figure the summary reports, the default',
        lean: 'op_duration and op_failed only, for the most load',
      },
    },
    [K6, CLI],
    'lean: op_duration and op_failed only, for the most load',
  ],
  [
    'SERVER_TIMING_EVERY',
    'int',
    "the scenario's, else 8",
    { min: 1, max: 1000000 },
    [K6],
    'server time from one operation in N of each VU per step',
  ],
  ['THRESHOLDS', 'path', 'thresholds.json', {}, [K6, CLI], 'the policy file of margins and overrides'],
  ['PROFILE', 'text', "the scenario's", {}, [K6], 'network profile, +modifiers, +faults, or ./my-network.json'],
  [
    'RESULTS_DIR',
    'path',
    '(none)',
    {},
    [K6],
    "an existing folder for the run's summary.json, junit.xml, summary.md; none: nothing",
  ],
  // Targets (scenarios/lib/config.js): the embedded stack's proxies by default
  ...Object.entries(TARGET_DEFAULTS).map(([name, value]) => [
    name,
    'url',
    value,
    {},
    name === 'TOXIPROXY_URL' ? [K6, CLI] : [K6],
    name === 'TOXIPROXY_URL'
      ? "Toxiproxy's API"
      : name === 'GRAPHQL_DIRECT_URL'
        ? "the GraphQL server itself, not its proxy: unstable's subscription lanes publish there (loopback unless ALLOW_REMOTE_TARGET=1)"
        : 'where the scenarios send this transport (loopback unless ALLOW_REMOTE_TARGET=1)',
  ]),
  ['ALLOW_REMOTE_TARGET', 'flag', '(unset)', {}, [K6, CLI], '1: allow a target that is not 127.0.0.1 or ::1'],
  // Clients (scenarios/lib/)
  ['HTTP_TIMEOUT', 'duration', '30s', {}, [K6], 'an HTTP request times out after this'],
  ['GRPC_TIMEOUT', 'duration', '30s', {}, [K6], 'a gRPC call times out after this'],
  [
    'WS_TIMEOUT_MS',
    'int',
    30000,
    { min: 100, max: 600000 },
    [K6],
    'a WebSocket connect or operation times out after this',
  ],
  [
    'WS_OPS_PER_SOCKET',
    'int',
    10000,
    { min: 1, max: 1000000 },
    [K6],
    'operations on one socket before the session opens a new one',
  ],
  // Scenario settings (scenarios/specs/)
  [
    'BIG_SIZE',
    'int',
    1000000,
    { min: 1, max: LIMITS.MAX_PAYLOAD_BYTES },
    [K6],
    'grpc-vs-graphql: the big message, bytes',
  ],
  [
    'UPLOAD_BOOKS',
    'int',
    1000,
    { min: 1, max: LIMITS.MAX_UPLOAD_BOOKS },
    [K6],
    'grpc-vs-graphql: books in the big client-stream upload',
  ],
  ['TLS', 'bool', false, {}, [K6, BENCH], 'grpc-vs-graphql: gRPC over TLS, HTTP/2 for keep-alive, HTTPS for fresh'],
  [
    'NS',
    'intList',
    "the level's (ci: 100,1000,10000)",
    { min: 1, max: LIMITS.MAX_BOOKS },
    [K6],
    'serialization: the list sizes N',
  ],
  [
    'EXECUTORS',
    'names',
    "the level's (ci: plain,per-item); all",
    {},
    [K6],
    'serialization: the typed executors (plain, per-item, dataloader, instrumented, jit)',
  ],
  [
    'DOC_SIZES',
    'names',
    'small,medium,large',
    {},
    [K6],
    "compound-vs-parallel: document sizes; study: the study's document",
  ],
  ['PAGE_SIZE', 'int', 20, { min: 1, max: 100 }, [K6], 'compound-vs-parallel: books a document'],
  [
    'UNSTABLE_EVENTS',
    'int',
    1,
    { min: 1, max: 100 },
    [K6],
    "unstable: the link events each lane meets (its step lasts as many of the events' periods)",
  ],
  [
    'INTERACTION_SECONDS',
    'intList',
    [1, 5, 15, 60],
    { min: 1, max: 3600 },
    [K6],
    'mobile: one operation every T seconds, each T in turn (the gap the radio and the NAT see)',
  ],
  ['MOBILE_OPS', 'int', 4, { min: 2, max: 1000 }, [K6], 'mobile: operations after a gap, per lane and T'],
  [
    'MOBILE_ANSWER_BYTES',
    'int',
    0,
    { min: 0, max: 10000 },
    [K6],
    "mobile: 0, each operation is the book query or rating (answers of ~170 B); N, each asks for a payload of N bytes (GraphQL payload(size), gRPC Payload): an app's larger answer, which 3G's FACH promotes to DCH past its 475 B buffer (at most 10000: within TCP's first window)",
  ],
  [
    'CLIENT_IDLE_SECONDS',
    'int',
    300,
    { min: 1, max: 86400 },
    [K6],
    "mobile: the client's own idle timeout on a kept HTTP connection (default OkHttp's 5 minutes): past it the next operation opens a new one",
  ],
  [
    'BATTERY_MAH',
    'int',
    3000,
    { min: 100, max: 100000 },
    [K6],
    "mobile: the phone battery's capacity (mAh at 3.85 V) the energy's share is of",
  ],
  ['PUSH_INTERVAL_MS', 'int', 100, { min: LIMITS.MIN_EVENT_INTERVAL_MS, max: 60000 }, [K6], 'push: ms between events'],
  ['PUSH_SIZE', 'int', 100, { min: 0, max: 1024 * 1024 }, [K6], "push: an event's bytes"],
  [
    'POLL_INTERVAL_MS',
    'int',
    500,
    { min: 10, max: 60000 },
    [K6],
    'push, fanout: the polling lane asks every this many ms',
  ],
  [
    'SUBSCRIBERS',
    'intList',
    "the level's (ci: 10,100)",
    { min: 1, max: LIMITS.MAX_SUBSCRIBERS },
    [K6],
    "fanout: each step's subscribers",
  ],
  [
    'SUBSCRIBERS_PER_VU',
    'int',
    1000,
    { min: 1, max: LIMITS.MAX_SUBSCRIBERS },
    [K6],
    'fanout: subscribers one VU holds',
  ],
  ['FANOUT_RATE', 'int', 10, { min: 1, max: 1000 }, [K6], 'fanout: events published a second'],
  [
    'FANOUT_EVENTS',
    'int',
    "the level's (ci: 6)",
    { min: 1, max: 100000 },
    [K6],
    'fanout: at least this many events a step',
  ],
  [
    'FANOUT_SIZE',
    'int',
    100,
    { min: 0, max: LIMITS.MAX_EVENT_PAYLOAD_BYTES },
    [K6],
    "fanout: an event's payload bytes",
  ],
  [
    'PUBLISH_VIA',
    'choice',
    'own',
    {
      values: ['own', 'http', 'grpc'],
      noun: 'a publisher',
      meanings: {
        own: "each lane's own server",
        http: 'GraphQL over HTTP keep-alive',
        grpc: 'gRPC Publish',
      },
    },
    [K6],
    "fanout: publish through each lane's own server, or one for all",
  ],
  ['FANOUT_RUN_ID', 'text', '(random)', {}, [K6], "fanout: the run's topic prefix (segments of one run share it)"],
  ['FAULT_TIMEOUT_MS', 'int', 5000, { min: 100, max: 600000 }, [K6], "faults: the clients' timeout"],
  ['CONN_OPS', 'int', 5, { min: 1, max: 10000 }, [K6], 'faults: operations a connection'],
  ['WS_SOAK_OPS', 'int', 5, { min: 1, max: 1000 }, [K6], 'soak: operations a WebSocket session'],
  [
    'SAMPLE_SECONDS',
    'int',
    "the level's (soak: 30)",
    { min: 1, max: 3600 },
    [K6],
    "soak: seconds between the servers' memory samples",
  ],
  ['API', 'path', '(none)', {}, [K6, CLI], 'api: the plan file `k6pack up --api` wrote'],
  [
    'SUB_EVENTS',
    'int',
    5,
    { min: 1, max: 10000 },
    [CLI],
    'api: the events a GraphQL subscription runs for (then it is completed); discovery writes it in the plan',
  ],
  // Set by the CLI for the k6 runs it starts
  ['K6PACK_HOLD', 'text', '(set by the CLI)', {}, [K6], "the CLI's hold token: the run proceeds under its hold"],
  ['K6PACK_RUN_DIR', 'path', '.run', {}, [K6, CLI], "the stack's logs and pid files"],
  ['K6PACK_RESULTS_DIR', 'path', 'results', {}, [CLI], 'where run folders go'],
  [
    'K6PACK_TOOLS_DIR',
    'path',
    '$XDG_CACHE_HOME/k6pack, else ~/.cache/k6pack',
    {},
    [CLI],
    'where `k6pack tools` builds k6 and Toxiproxy, once per machine (k6-v1.8.1/, toxiproxy-v2.5.0-HASH/)',
  ],
  [
    'K6_PROMETHEUS_RW_PUSH_INTERVAL',
    'text',
    '5s',
    {},
    [CLI],
    "with --out prometheus=URL: how often k6 pushes (k6's own variable; the CLI keeps yours, else sets 5s)",
  ],
  ['K6PACK_SAMPLES', 'path', '(set by the CLI)', {}, [K6, CLI], "the run folder's raw samples file"],
  ['K6PACK_HISTOGRAMS', 'path', '(set by the CLI)', {}, [K6], "the run folder's histograms file"],
  ['K6PACK_K6_VERSION', 'text', '(set by the CLI)', {}, [K6], "k6's version, for summary.json"],
  [
    'K6PACK_GIT_COMMIT',
    'text',
    '(set by the CLI)',
    {},
    [K6],
    'the commit, for summary.json (else GITHUB_SHA, GIT_COMMIT)',
  ],
  ['K6PACK_DEBUG', 'flag', '(unset)', {}, [CLI], "1: an error's stack trace instead of its one line"],
  // Ports and the servers (common/defaults.js, servers/shared/)
  ...Object.entries(DEFAULT_PORTS).map(([name, port]) => [
    name,
    'port',
    port,
    { min: 0, max: 65535 },
    [CLI, SERVER],
    'a port of the embedded stack',
  ]),
  ...Object.entries(API_PROXY_PORTS).map(([name, port]) => [
    name,
    'port',
    port,
    { min: 1, max: 65535 },
    [CLI],
    "a proxy in front of your API's endpoint (`k6pack run api`, `up --api`)",
  ]),
  ['HOST', 'text', '127.0.0.1', {}, [CLI, SERVER], 'the address the servers listen on'],
  [
    'TLS_CERT_FILE',
    'path',
    '(a self-signed certificate)',
    {},
    [SERVER],
    "the servers' TLS certificate (with TLS_KEY_FILE)",
  ],
  ['TLS_KEY_FILE', 'path', '(a self-signed certificate)', {}, [SERVER], "the servers' TLS key (with TLS_CERT_FILE)"],
  [
    'RESPONSE_CACHE',
    'choice',
    'off',
    { values: ['on', 'off'], noun: 'a cache switch' },
    [SERVER],
    "the GraphQL server's response cache",
  ],
  [
    'HUB_PEER',
    'text',
    '(the stack sets it)',
    {},
    [SERVER],
    "the gRPC server's host:port the GraphQL server's fan-out hub relays with",
  ],
  [
    'STREAM_IDLE_MS',
    'int',
    LIMITS.STREAM_IDLE_MS,
    { min: 1, max: 3600000 },
    [SERVER],
    'the gRPC server ends a client or bidirectional stream silent this long',
  ],
  // From the environment the pack runs in
  ['PWD', 'path', "(the shell's)", {}, [K6], 'relative paths in -e values are resolved from it'],
  ['GITHUB_SHA', 'text', '(CI)', {}, [K6], 'the commit, for summary.json, when K6PACK_GIT_COMMIT is not set'],
  ['GIT_COMMIT', 'text', '(CI)', {}, [K6], 'the same, after GITHUB_SHA'],
  ['PATH', 'text', "(the shell's)", {}, [CLI], 'where `k6pack tools` looks for a k6 v1.8.1'],
  // A bench's or a probe's own k6 script (bench/k6/, dev/k6/): its Node side sets them.
  ['URL', 'url', '(the bench sets it)', {}, [BENCH], 'the endpoint a bench script loads'],
  ['ADDR', 'text', '(the bench sets it)', {}, [BENCH], 'the gRPC host:port a bench script loads'],
  ['SECONDS', 'number', "(the script's)", { min: 0.1, max: 86400 }, [BENCH], 'how long a bench script runs'],
  ['VUS', 'int', "(the script's)", { min: 1, max: 100000 }, [BENCH], "a bench script's VUs"],
  ['RATE', 'number', "(the bench's)", { min: 0.1, max: 1000000 }, [BENCH], "bench/k6/knee.js's arrivals a second"],
  ['TRANSPORT', 'text', "(the bench's)", {}, [BENCH], 'the transport bench/k6/knee.js loads'],
  ['WS_SOCKETS', 'int', 8, { min: 1, max: 100000 }, [BENCH], 'the sockets bench/k6/knee.js spreads ws over'],
  ['WS_OPS', 'int', 50, { min: 1, max: 1000000 }, [BENCH], 'operations per socket in bench/k6/ab.js'],
  ['PLAN', 'text', "(the bench's)", {}, [BENCH], "bench/k6/ab.js's plan (JSON)"],
  ['LANE', 'text', "(the bench's)", {}, [BENCH], 'the lane bench/k6/server-cost.js loads'],
  ['OP', 'text', "(the bench's)", {}, [BENCH], 'the operation bench/k6/server-cost.js sends'],
  [
    'MODES',
    'names',
    'fresh,warm,idle',
    {},
    [BENCH],
    "dev/k6/tcp-probe.js's modes: fresh, warm, idle (IDLE_MS apart), batch (BATCH at once)",
  ],
  [
    'SIZES',
    'intList',
    '10000,100000,1000000',
    { min: 1, max: 100000000 },
    [BENCH],
    "dev/k6/tcp-probe.js's answer sizes in bytes",
  ],
  ['BATCH', 'int', 6, { min: 1, max: 100 }, [BENCH], "dev/k6/tcp-probe.js's answers at once, each on its connection"],
  ['BATCH_SIZE', 'int', 100000, { min: 1, max: 100000000 }, [BENCH], 'the size of each of them'],
  ['SAMPLES', 'int', 3, { min: 1, max: 10000 }, [BENCH], "dev/k6/tcp-probe.js's samples of each mode and size"],
  ['IDLE_MS', 'int', 2000, { min: 0, max: 600000 }, [BENCH], "dev/k6/tcp-probe.js's idle gap before an idle sample"],
  ['IDLE_SIZE', 'int', 100000, { min: 1, max: 100000000 }, [BENCH], 'the size of an idle sample'],
  // The benches' and the tests' own (bench/lib/, dev/: preloads and the results file).
  ['BENCH_RESULTS', 'path', 'bench/results.jsonl', {}, [BENCH], 'where a bench appends its figures'],
  [
    'CPU_PROFILE_DIR',
    'path',
    '(unset)',
    {},
    [BENCH],
    'bench/lib/cpu-profile-preload.js: where a profiled server writes its profile',
  ],
  ['CPU_PROFILE_INTERVAL_US', 'int', 250, { min: 10, max: 100000 }, [BENCH], "the profiler's sampling interval"],
  [
    'K6PACK_MAX_RSS_FILE',
    'path',
    '(unset)',
    {},
    [BENCH],
    'bench/lib/max-rss.js: where a process writes its peak RSS at exit',
  ],
  [
    'K6PACK_BENCH_ULIMIT',
    'flag',
    '(unset)',
    {},
    [BENCH],
    'bench/scale.js: set once it has raised its own open-files limit',
  ],
  [
    'LEAK_TEST_BYTES_PER_REQUEST',
    'int',
    0,
    { min: 0, max: 100000000 },
    [BENCH],
    'dev/leak-preload.js: bytes a server keeps per request (a leak, for the soak tests)',
  ],
  ['LEAK_TEST_HEAP_BYTES_PER_REQUEST', 'int', 0, { min: 0, max: 100000000 }, [BENCH], 'the same, on the JS heap'],
  [
    'K6PACK_TEST_DELAY_MS',
    'number',
    0,
    { min: 0, max: 600000 },
    [BENCH],
    'dev/server-delay.js: ms a server waits before each answer',
  ],
  [
    'K6PACK_TEST_DELAY_PER_INFLIGHT_MS',
    'number',
    0,
    { min: 0, max: 600000 },
    [BENCH],
    'the same, per request in flight (a server that slows with load)',
  ],
  ['KEEP_TOXICS', 'flag', '(unset)', {}, [BENCH], "1: dev/k6/tcp-probe.js leaves Toxiproxy's toxics as they are"],
  ['XDG_CACHE_HOME', 'path', '~/.cache', {}, [CLI], 'the user cache the tools go to when K6PACK_TOOLS_DIR is not set'],
  ['GIT_DIR', 'path', '(unset)', {}, [CLI], "cleared when `k6pack tools` applies Toxiproxy's patches with git"],
  ['GIT_WORK_TREE', 'path', '(unset)', {}, [CLI], 'the same'],
];

export const SETTINGS = Object.fromEntries(
  LIST.map(([name, kind, fallback, bounds, readers, doc]) => [
    name,
    { name, kind, default: fallback, ...bounds, readers, doc },
  ]),
);

function entry(name) {
  const s = SETTINGS[name];
  if (!s) throw new Error(`${name} is not a setting (common/settings.js lists them)`);
  return s;
}

// The entry of a setting read from `env`: a run's settings (readSettings) hold only those k6 reads.
function entryIn(env, name) {
  const s = entry(name);
  if (isSettings(env) && !s.readers.includes(K6))
    throw new Error(`${name} is not read by k6: a run's settings do not hold it`);
  return s;
}

export function rawSetting(env, name) {
  entryIn(env, name);
  return env[name];
}

const K6_DURATION = /^\d+(\.\d+)?(ms|s|m|h)$/;

// A run's settings: the variables k6 reads (the scenarios, their specs and the model),
// those the environment sets, each parsed and checked by its kind and bounds, at once: a
// bad value stops the run at its boundary, in one sentence, whichever code would read it.
// Unset ones are absent, so setting(settings, NAME, fallback) still gives the registry's
// default or the run's fallback. Lists of names (LANES, EXECUTORS, DOC_SIZES) and flags
// stay text: a list's known names are the run's (settingNames). Frozen; made once by
// scenarios/lib/scenario.js (k6: __ENV) and lib/specs.js (the CLI: its environment, with
// --load and --workload on top); an object already read passes through.
const READ = Symbol('settings read');
const TEXT_KINDS = new Set(['names', 'flag', 'text', 'path', 'url']);
const SAMPLE_FALLBACK = { int: 0, port: 0, number: 0, intList: [], seconds: 0, bool: false, duration: '1s' };
export const isSettings = (env) => Boolean(env && env[READ]);
export function readSettings(env) {
  if (isSettings(env)) return env;
  const out = {};
  for (const s of Object.values(SETTINGS)) {
    if (!s.readers.includes(K6)) continue;
    const raw = env[s.name];
    if (raw === undefined || raw === '') continue;
    // Given, so the fallback is never the answer; setting() wants one of its kind.
    out[s.name] = TEXT_KINDS.has(s.kind)
      ? String(raw)
      : setting(env, s.name, s.kind === 'choice' ? s.values[0] : SAMPLE_FALLBACK[s.kind]);
  }
  Object.defineProperty(out, READ, { value: true });
  return Object.freeze(out);
}
const NOTHING = Object.freeze({});

// The setting's value; `fallback` stands for a default that depends on the run. `env` is
// the environment or a run's settings (readSettings).
export function setting(env, name, fallback) {
  const s = entryIn(env, name);
  if (isSettings(env)) {
    if (env[name] !== undefined) return env[name];
    env = NOTHING;
  }
  const dflt = fallback !== undefined ? fallback : s.default;
  // A default that depends on the run is a description here: its reader must give it.
  if (typeof dflt === 'string' && ['int', 'port', 'number', 'intList', 'seconds', 'bool'].includes(s.kind))
    throw new Error(`${name}: its default depends on the run (${dflt}): pass it to setting()`);
  const bounds = { min: s.min, max: s.max };
  switch (s.kind) {
    case 'int':
    case 'port':
      return envInt(env, name, dflt, bounds);
    case 'number':
      return envNumber(env, name, dflt, bounds);
    case 'intList':
      return envIntList(env, name, dflt, bounds);
    case 'seconds':
      return envSeconds(env, name, dflt);
    case 'bool':
      return envBool(env, name, dflt);
    case 'names':
      throw new Error(`${name}: read a list of names with settingNames(env, name, fallback, known)`);
    case 'choice': {
      if (!s.values.includes(dflt))
        throw new Error(`${name}: its default depends on the run (${dflt}): pass it to setting()`);
      const raw = env[name];
      if (raw === undefined || raw === '') return dflt;
      const value = String(raw).trim();
      if (!s.values.includes(value)) throw configError(`${name}=${raw} is not ${choiceHelp(s)}`);
      return value;
    }
    case 'duration': {
      const raw = env[name];
      if (raw === undefined || raw === '') return dflt;
      if (!K6_DURATION.test(String(raw).trim()))
        throw configError(`${name}=${raw} must be a duration such as 500ms, 30s or 2m`);
      return String(raw).trim();
    }
    default:
      return env[name] !== undefined && env[name] !== '' ? env[name] : dflt;
  }
}

// 'a workload: use closed (VUs in a loop) or open (arrival rates)': what a choice is and its
// values, for the sentence that refuses one (the environment's here, a CLI flag's too).
export function choiceHelp(name) {
  const s = typeof name === 'string' ? entry(name) : name;
  if (!s.meanings) return `${s.noun}: use one of ${s.values.join(', ')}`;
  const each = s.values.map((v) => `${v} (${s.meanings[v]})`);
  return `${s.noun}: use ${each.slice(0, -1).join(', ')} or ${each[each.length - 1]}`;
}

// A list of names, each one of `known` (LANES, EXECUTORS, DOC_SIZES).
export function settingNames(env, name, fallback, known) {
  entryIn(env, name);
  return envNames(env, name, fallback, known);
}

// The list as `k6pack list --env` prints it and docs/settings.md shows it.
export function describeSettings() {
  return Object.values(SETTINGS).map((s) => {
    const bounds =
      s.values !== undefined
        ? s.values.join(' | ')
        : s.min !== undefined
          ? `${s.min} to ${s.max}`
          : { seconds: '90s, 15m, 1h', duration: '500ms, 30s, 2m', bool: 'true | false', flag: '1' }[s.kind] || '';
    return {
      name: s.name,
      kind: s.kind,
      default: String(s.default),
      bounds,
      readers: s.readers.join(', '),
      doc: s.doc,
    };
  });
}
