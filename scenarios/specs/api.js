// Your own API's plan (scenarios/api.js runs it): the lanes discovery found for the
// endpoints (common/your-api.js), each operation a row of every lane that applies, and
// each row's model from what was measured before the run: the bodies' bytes and the
// API's own server time under lan at one VU. So the same derived gates
// (common/gates.js) fit any API. Plain ES module: k6 and Node read it.
//
// declare(settings, api): api is the plan file's content (common/your-api.js parseApiPlan);
// without one, the nominal API (common/your-api.js nominalPlan), so the plan builds for
// `k6 inspect`, `k6pack thresholds api` and the tests over every plan.
import { describeCredentials } from '../../common/credentials.js';
import { API_LANES, nominalPlan } from '../../common/your-api.js';
import { linkOf, operation } from '../../common/model.js';
import { levelName } from '../../common/schedule.js';
import { DEFAULT_COLUMNS, lane, setupColumn } from '../../common/scenario.js';
import { WS_OPEN_OPS } from './ws-vs-http.js';

// Under an open workload a WebSocket lane's arrival is a client that connects, runs
// WS_OPEN_OPS operations (the same as study 000's) and leaves.
export { WS_OPEN_OPS };

const kindOf = (name) => API_LANES.find((l) => l.name === name).kind;
// A subscription runs for its events on ws and wss (scenarios/api.js).
export const isSubscription = (op) => op.kind === 'subscription';

// The model of one operation: its bodies and the API's server time.
const bytesOf = (o) => ({ reqBytes: o.reqBytes, resBytes: o.resBytes, serverMs: o.serverMs });

// A soak's rows: each operation in the first and the last quarter of the run.
const PARTS = ['first', 'last'];

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: false, why: 'it runs your own API: `npx k6pack gate --api …`' };

export default function declare(settings, api = null) {
  const plan = api || nominalPlan();
  const soak = levelName(settings, 'ci') === 'soak';
  // The rows of each lane: one per operation (and, in a soak, per part).
  const dimsOf = (names) => names.flatMap((op) => (soak ? PARTS.map((part) => ({ op, part })) : [{ op }]));
  const per = soak ? PARTS.length : 1;
  // At a soak's arrival rates a kept connection sits idle longer than TCP's
  // retransmission timeout between operations: each starts on a restarted window.
  const idle = soak ? { idle: true } : {};
  const ops = plan.graphql ? plan.graphql.operations : [];
  const byName = Object.fromEntries(ops.map((o) => [o.name, o]));
  const calls = plan.grpc ? plan.grpc.calls : [];
  const callByName = Object.fromEntries(calls.map((c) => [c.name, c]));
  const connectCalls = plan.connect ? plan.connect.calls : [];
  const connectByName = Object.fromEntries(connectCalls.map((c) => [c.name, c]));
  // Does anything stream: a subscription that runs, or the gRPC stream lane?
  const streams = Boolean(streamsOf(plan));
  const lanes = plan.lanes.map((l) => {
    const kind = kindOf(l.name);
    // The transport and TLS discovery chose for your endpoint (the plan file's).
    const at = { transport: l.transport, tls: l.tls };
    if (kind === 'connect') {
      // The unary calls take turns; each row's model is the call's bytes over Connect.
      const protocol = API_LANES.find((x) => x.name === l.name).protocol;
      return lane(l.name, {
        ...at,
        dims: dimsOf(connectCalls.map((c) => c.name)),
        opsPerIteration: 1 / (connectCalls.length * per),
        model: (dims) => ({ ...bytesOf(connectByName[dims.op]), protocol, ...idle }),
      });
    }
    if (kind === 'grpc') {
      // The unary calls take turns on grpc and grpc_fresh, the streaming ones on grpc_stream.
      const stream = l.name === 'grpc_stream';
      const mine = calls.filter((c) => Boolean(c.stream) === stream);
      return lane(l.name, {
        ...at,
        dims: dimsOf(mine.map((c) => c.name)),
        opsPerIteration: 1 / (mine.length * per),
        model: (dims) => {
          const c = callByName[dims.op];
          return { ...bytesOf(c), ...idle, ...(stream ? { messages: Math.max(1, c.messages) } : {}) };
        },
        setups: true,
      });
    }
    // An operation on an open socket: its set-up is measured apart (setup_duration).
    // Subscriptions run on the WebSocket lanes only.
    const ws = kind === 'ws';
    const mine = ws ? ops : ops.filter((o) => !isSubscription(o));
    return lane(l.name, {
      ...at,
      dims: dimsOf(mine.map((o) => o.name)),
      // An iteration runs one of the operations: they take turns.
      opsPerIteration: 1 / (mine.length * per),
      model: (dims) => ({ ...bytesOf(byName[dims.op]), ...idle, ...(ws ? { conn: 'warm' } : {}) }),
      ...(ws ? { setups: true, session: { ops: WS_OPEN_OPS } } : {}),
    });
  });
  // The longest iteration of a lane: its slowest operation on a new connection.
  const laneSeconds = (name, profile) => {
    const l = lanes.find((x) => x.name === name);
    const link = linkOf(profile);
    const tls = l.tags.tls === 'true';
    const worst = Math.max(
      ...l.dims.map((d) => operation(link, { transport: l.tags.transport, tls, ...l.model(d), conn: 'cold' }).ms),
    );
    // A soak's WebSocket arrival opens a socket for WS_OPEN_OPS operations.
    const ops = soak && kindOf(name) === 'ws' ? WS_OPEN_OPS + 2 : 1;
    return (ops * worst) / 1000 + 0.1;
  };
  return {
    name: 'api',
    soak,
    defaultProfile: soak ? 'lte' : 'lan',
    ...(soak
      ? {
          policy: 'soak',
          unrecorded: ['server_rss_growth'],
          verdict: { where: { part: 'first' } },
        }
      : {}),
    api: plan,
    lanes,
    laneSeconds,
    iterationSeconds: (profile) => Math.max(...lanes.map((l) => laneSeconds(l.name, profile))),
    // An iteration is one operation (the operations, and the calls, take turns) and a lane's first
    // one pays the connection set-up: every step holds each operation at least three
    // times, so the first operation's median is a warm one.
    minIterations: Math.max(
      4,
      3 *
        Math.max(
          ops.length,
          connectCalls.length,
          ...[true, false].map((s) => calls.filter((c) => Boolean(c.stream) === s).length),
        ),
    ),
    columns: [
      // A soak's rows are split by part (first/last), the tag server time uses for its
      // parts (ser, exec, total): its column goes, as in scenarios/soak.js.
      ...DEFAULT_COLUMNS.filter((c) => !soak || c.metric !== 'server_duration'),
      ...(soak ? [{ title: 'drift p50', metric: 'op_drift', stat: 'med', unit: 'x' }] : []),
      // Subscriptions and server streams: the time to their first event, events a second.
      ...(streams
        ? [
            { title: 'first event p50', metric: 'first_event', stat: 'med', unit: 'ms' },
            { title: 'events/s p50', metric: 'event_rate', stat: 'med', unit: '/s' },
          ]
        : []),
      setupColumn('ws upgrade p50', 'ws_upgrade'),
      setupColumn('ws init p50', 'ws_init'),
      setupColumn('grpc connect p50', 'grpc_connect'),
    ],
    // The network profile shapes this API's proxies only (the reference servers' are left alone).
    proxies: plan.proxies,
    // k6 reaches every endpoint through its proxy; an untrusted certificate only with --insecure.
    options: { hosts: { ...plan.hosts }, insecureSkipTLSVerify: Boolean(plan.insecure) },
    hints: { api: apiHints(plan) },
  };
}

// The names of the operations that stream and run, or null.
function streamsOf(plan) {
  const names = plan.lanes.map((l) => l.name);
  const subs =
    names.some((n) => kindOf(n) === 'ws') && plan.graphql ? plan.graphql.operations.filter(isSubscription) : [];
  const streams = names.includes('grpc_stream') && plan.grpc ? plan.grpc.calls.filter((c) => c.stream) : [];
  const all = [...subs, ...streams].map((o) => o.name);
  return all.length ? all : null;
}

// What summary.json keeps about the API (run.hints.api): endpoints, lanes run and
// skipped with the reasons, and the server time the budgets were built on.
export function apiHints(plan) {
  const ops = plan.graphql ? plan.graphql.operations : [];
  return {
    graphql: plan.graphql ? { url: plan.graphql.url, wsUrl: plan.graphql.wsUrl || null } : null,
    connect: plan.connect ? { url: plan.connect.url, calls: plan.connect.calls.map((c) => c.method) } : null,
    grpc: plan.grpc
      ? {
          addr: plan.grpc.addr,
          tls: plan.grpc.tls,
          calls: plan.grpc.calls.map((c) => ({ method: c.method, stream: Boolean(c.stream) })),
        }
      : null,
    lanes: plan.lanes.map((l) => l.name),
    skipped: plan.skipped || [],
    serverTime: [
      ...ops.map((o) => ({
        op: o.name,
        ms: o.serverMs,
        from: o.serverFrom,
        reqBytes: o.reqBytes,
        resBytes: o.resBytes,
      })),
      ...(plan.grpc
        ? plan.grpc.calls.map((c) => ({
            op: c.name,
            ms: c.serverMs,
            from: c.serverFrom,
            reqBytes: c.reqBytes,
            resBytes: c.resBytes,
          }))
        : []),
      ...(plan.connect
        ? plan.connect.calls.map((c) => ({
            op: `${c.name} (Connect)`,
            ms: c.serverMs,
            from: c.serverFrom,
            reqBytes: c.reqBytes,
            resBytes: c.resBytes,
          }))
        : []),
    ],
    // What streams and runs: subscriptions on ws/wss, server-streaming calls on grpc_stream.
    streams: streamsOf(plan),
    nominal: Boolean(plan.nominal),
    // Names only: a value is never written anywhere.
    credentials: plan.credentials ? describeCredentials(plan.credentials) : null,
  };
}
