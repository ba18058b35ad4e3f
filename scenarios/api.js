/*
 * Your own API: which transport should carry it, on which network, at which concurrency.
 * Your named GraphQL operations on every lane your endpoint speaks (HTTP/1.1 with a
 * fresh connection per request and keep-alive; over TLS fresh connections, and HTTP/2
 * when ALPN offers h2; graphql-transport-ws when the endpoint accepts it) and your gRPC
 * method (a warm channel, a new channel per call, or server streaming), all through
 * Toxiproxy proxies in front of your endpoints, so every network profile applies.
 * The CLI finds out what the endpoint speaks and measures its server time and bytes
 * under lan at one VU before the run (k6's init context cannot make requests), and hands
 * k6 the result as a plan file (-e API): the gates follow from the same round-trip model
 * as the studies', with your server's own time in it.
 * Look at: the verdict; op_duration p50 per lane and operation; op_failed and the first
 * error of each failing operation (a GraphQL `errors` answer or a gRPC status counts).
 * At LOAD=soak it is your API's soak (`npx k6pack run soak --api …`): every lane at once
 * at SOAK_RATE for SOAK_DURATION, rows split in the first and last quarters, op_drift
 * and the soak's gates (scenarios/specs/api.js).
 *
 *   npx k6pack run api --graphql http://127.0.0.1:4100/graphql --operations ./ops.graphql --profile lan,3g
 *   npx k6pack up --api ./api.json && k6 run -e API=.run/api-plan.json -e PROFILE=3g scenarios/api.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan api --load ci`; dev/plan-headers.js writes it):
 *   (no API=<plan file> given: the gates of a nominal API, one operation of 200 B up, 500 B down and 5 ms of server time)
 *   api under lan (R 0 ms, down ∞ / up ∞ kbit/s), load ci, closed workload: 10 k6 scenarios, 13.0 s in all
 *     k6 scenario        executor      VUs or rate  start  duration  graceful stop
 *     http_fresh_c1      constant-vus  1 VU         0s     1s        0.3s
 *     http_fresh_c4      constant-vus  4 VUs        1.3s   1s        0.3s
 *     http_keepalive_c1  constant-vus  1 VU         2.6s   1s        0.3s
 *     http_keepalive_c4  constant-vus  4 VUs        3.9s   1s        0.3s
 *     ws_c1              constant-vus  1 VU         5.2s   1s        0.3s
 *     ws_c4              constant-vus  4 VUs        6.5s   1s        0.3s
 *     grpc_c1            constant-vus  1 VU         7.8s   1s        0.3s
 *     grpc_c4            constant-vus  4 VUs        9.1s   1s        0.3s
 *     grpc_fresh_c1      constant-vus  1 VU         10.4s  1s        0.3s
 *     grpc_fresh_c4      constant-vus  4 VUs        11.7s  1s        0.3s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (LOAD=ci's steps: 1, 4)
 *     duration: LOAD=ci's shortest step (its 10 s / 10 steps, less the graceful stop, is shorter)
 *     graceful stop: LOAD=ci's
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import { parseApiPlan } from '../common/your-api.js';
import { expandCredentials, redact, secretsOf } from '../common/credentials.js';
import { variableSource } from '../common/variables.js';
import { configError } from '../common/env.js';
import { resolveFrom } from '../common/paths.js';
import { formatMs } from '../common/results.js';
import declare, { apiHints, isSubscription, WS_OPEN_OPS } from './specs/api.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { rpcCall } from './lib/rpc-web.js';
import { partNow, recordDrift } from './lib/drift.js';
import { keepFirstErrors } from './lib/metrics.js';
import { useToxiproxy } from './lib/network.js';
import { defineScenario } from './lib/scenario.js';
import { wsSession } from './lib/sessions.js';
import { rawSetting } from '../common/settings.js';
import { SETTINGS } from './lib/config.js';

// The plan file the CLI wrote (-e API=path, relative to the directory k6 runs in).
function readPlan() {
  const given = rawSetting(__ENV, 'API');
  if (!given) return null;
  const file = resolveFrom(rawSetting(__ENV, 'PWD'), given);
  let text;
  try {
    text = open(file);
  } catch (err) {
    throw configError(
      `API plan ${given}: cannot read it (${String(err.message || err).split('\n')[0]}): give the file \`npx k6pack up --api …\` wrote`,
    );
  }
  return parseApiPlan(text, file, __ENV);
}

const API = readPlan();
if (API) useToxiproxy(API.toxiproxy);
keepFirstErrors();

// The credentials' values, from k6's environment (common/credentials.js). A variable
// that is not set stops the run in setup(), not here: `k6 inspect` sees no environment.
function credentials() {
  if (!API || !API.credentials) return { values: null, error: null };
  try {
    return { values: expandCredentials(API.credentials, __ENV), error: null };
  } catch (err) {
    return { values: null, error: String(err.message || err) };
  }
}
const CREDENTIALS = credentials();
const SECRETS = CREDENTIALS.values ? secretsOf(CREDENTIALS.values) : [];
const given = (obj) => (obj && Object.keys(obj).length ? obj : undefined);
const HEADERS = CREDENTIALS.values ? given(CREDENTIALS.values.headers) : undefined;
const INIT_PAYLOAD = CREDENTIALS.values ? CREDENTIALS.values.initPayload || undefined : undefined;
const METADATA = CREDENTIALS.values ? given(CREDENTIALS.values.metadata) : undefined;

const decl = declare(SETTINGS, API);
if (!API) {
  decl.refuse =
    'scenarios/api.js runs your own API: give -e API=<plan file> (`npx k6pack up --api …` writes one and prints the command), or run `npx k6pack run api --graphql URL --operations FILE` (docs/your-api.md)';
} else if (CREDENTIALS.error) decl.refuse = CREDENTIALS.error;

// Under the table: what the budgets were built on, and what did not run.
function notes() {
  if (!API) return [];
  const h = apiHints(API);
  return [
    ...(h.credentials ? [`credentials: ${h.credentials}`] : []),
    `server time measured before the run (lan, 1 VU, ${(API.measured && API.measured.calls) || '?'} calls each): ${h.serverTime.map((t) => `${t.op} ${formatMs(t.ms)} (${t.from})`).join(', ')}`,
    // Events come when your server sends them: nothing here publishes one and knows when.
    ...(h.streams
      ? [
          `streams (${h.streams.join(', ')}): time to the first event and events/s are measured; delivery latency is not, as it needs a trigger the pack controls (\`k6pack run fanout\` measures it on the reference servers)`,
        ]
      : []),
    // Lanes not run, grouped by reason.
    ...[...new Set(h.skipped.map((sk) => sk.reason))].map(
      (reason) =>
        `not run: ${h.skipped
          .filter((sk) => sk.reason === reason)
          .map((sk) => sk.lane)
          .join(', ')}: ${reason}`,
    ),
  ];
}

const s = defineScenario(decl, { notes });
export const { options, setup, teardown } = s;

// Every file and line the summary writes, with any credential value hidden (an error an
// endpoint echoed may hold one).
export function handleSummary(data) {
  const out = s.handleSummary(data);
  if (!SECRETS.length) return out;
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, typeof v === 'string' ? redact(v, SECRETS) : v]));
}

// ---- GraphQL: the operations take turns, the same on every lane ----
// Each operation's variables: one set, or sets cycled per call from the VU's own offset,
// templates filled per call (common/variables.js; each VU counts its own calls).
// A subscription runs on the WebSocket lanes only, for its events.
const OPS =
  API && API.graphql
    ? API.graphql.operations.map((o) => ({
        query: o.query,
        next: variableSource(o.variables),
        tags: { op: o.name },
        events: isSubscription(o) ? o.events : 0,
      }))
    : [];
const HTTP_OPS = OPS.filter((o) => !o.events);
// A soak (LOAD=soak) tags each operation with the quarter of the run it falls in and
// adds its drift against the VU's own first quarter (scenarios/lib/drift.js).
const SOAK = decl.soak;
const tagsOf = (tags) => (SOAK ? { ...tags, part: partNow() } : tags);
function drifted(tags, r) {
  if (SOAK) recordDrift(`${exec.scenario.name} ${tags.op}`, tags, r);
  return r;
}
const callOf = (op) => ({ query: op.query, variables: op.next(exec.vu.idInTest), tags: tagsOf(op.tags) });
const GRAPHQL_URL = API && API.graphql ? API.graphql.url : null;
const WS_URL = API && API.graphql ? API.graphql.wsUrl : null;

function httpOp({ transport, tls }) {
  const call = callOf(HTTP_OPS[exec.vu.iterationInScenario % HTTP_OPS.length]);
  drifted(call.tags, graphqlHttp({ transport, tls, url: GRAPHQL_URL, ...call, headers: HEADERS }));
}

// One socket per VU for the whole step, operations one after another; under an open
// workload (a soak's mix too) one socket per arrival, for WS_OPEN_OPS operations.
const maxOps = s.plan.workload === 'closed' ? undefined : WS_OPEN_OPS;
function wsLane({ tls }) {
  return wsSession({
    tls,
    url: WS_URL,
    tags: {},
    maxOps,
    headers: HEADERS,
    initPayload: INIT_PAYLOAD,
    op: async (socket, i) => {
      const op = OPS[i % OPS.length];
      const call = callOf(op);
      const r = op.events ? await socket.takeEvents({ ...call, events: op.events }) : await socket.execute(call);
      return drifted(call.tags, r);
    },
  });
}

// ---- gRPC: init context loads the proto, one client per channel kind ----
// The calls take turns: the unary ones on grpc and grpc_fresh, the streaming ones on
// grpc_stream; each request from its set(s) and templates (common/variables.js).
const G = API && API.grpc;
const channel = () => new Channel(newClient(G.importPaths, G.file), { tls: G.tls, addr: G.addr, metadata: METADATA });
const warm = G ? channel() : null;
const fresh = G && API.lanes.some((l) => l.name === 'grpc_fresh') ? channel() : null;
const callsOf = (stream) =>
  (G ? G.calls : [])
    .filter((c) => Boolean(c.stream) === stream)
    .map((c) => ({ method: c.method, next: variableSource(c.request), tags: { op: c.name } }));
const UNARY = callsOf(false);
const STREAMS = callsOf(true);
const turnOf = (calls) => calls[exec.vu.iterationInScenario % calls.length];

function grpcWarm() {
  const c = turnOf(UNARY);
  const tags = tagsOf(c.tags);
  drifted(tags, warm.call(c.method, c.next(exec.vu.idInTest), { tags }));
}
function grpcFresh() {
  const c = turnOf(UNARY);
  const tags = tagsOf(c.tags);
  drifted(tags, fresh.call(c.method, c.next(exec.vu.idInTest), { tags, fresh: true }));
}
// ---- Connect / gRPC-Web: the unary calls take turns, over k6's http ----
const C = API && API.connect;
const CONNECT_CALLS = (C ? C.calls : []).map((c) => ({
  service: c.service,
  method: c.name,
  // The request's wire table (lib/api/proto-method.js fieldTable); the answer is read, not checked.
  methods: { [c.name]: { request: c.fields || {}, response: {} } },
  next: variableSource(c.request),
  tags: { op: c.name },
}));
// The lane's transport (keep-alive, or HTTP/2 where the server's TLS offers h2) is what
// discovery chose (specs/api.js).
function connectOp({ protocol, transport, tls }) {
  const c = turnOf(CONNECT_CALLS);
  const tags = tagsOf(c.tags);
  drifted(
    tags,
    rpcCall({
      protocol,
      transport,
      tls,
      url: C.url,
      service: c.service,
      method: c.method,
      methods: c.methods,
      request: c.next(exec.vu.idInTest),
      tags,
      headers: HEADERS,
    }),
  );
}
async function grpcStream() {
  const c = turnOf(STREAMS);
  const tags = tagsOf(c.tags);
  drifted(tags, await warm.stream(c.method, c.next(exec.vu.idInTest), { tags, events: true }));
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch); the gRPC
// lanes differ by transport (a kept channel's unary calls, a fresh one's, a server stream).
const GRPC_CLIENTS = { grpc: grpcWarm, 'grpc-fresh': grpcFresh, 'grpc-stream': grpcStream };
export const runLane = s.dispatch({
  http: httpOp,
  ws: wsLane,
  grpc: (l) => GRPC_CLIENTS[l.transport](),
  'rpc-web': connectOp,
});
