// Your own API: the lanes the `api` scenario can run, and the plan file that hands
// what the CLI found out (lib/api/: discovery, measured server time and bytes) to k6,
// whose init context cannot make network requests.
//
// The plan file (`k6pack run api` and `k6pack up --api` write it; `-e API=<file>`):
// {
//   version: 1,
//   toxiproxy: 'http://127.0.0.1:8474',            the stack the proxies live on
//   proxies: ['api_graphql', 'api_grpc'],           the proxies a profile shapes for this API
//   hosts: { '127.0.0.1:4100': '127.0.0.1:16000' }, k6's `hosts` option: every connection to
//                                                   an endpoint goes to its proxy instead, so
//                                                   URLs, Host headers, TLS names stay the user's
//   insecure: false,                                accept an untrusted certificate (--insecure)
//   graphql: { url, wsUrl, operations: [{ name, kind, query, variables,
//              reqBytes, resBytes, serverMs, serverFrom,
//              and a subscription (kind 'subscription', ws and wss only): events (it runs
//              for, then completes), firstEventMs, eventsPerSecond (measured under lan) }] } | null,
//   grpc: { addr, tls, importPaths, file, calls: [{ method ('pkg.Service/Method'), service,
//           name, stream (server streaming), request (a set or sets: common/variables.js),
//           reqBytes, resBytes, messages, serverMs, serverFrom }] } | null,
//   connect: { url, h2, calls: [{ method, service, name, request, fields (the request's
//              wire table: scenarios/lib/protowire.js) | null (JSON only), reqBytes, resBytes,
//              serverMs, serverFrom }] } | null,
//   lanes: [{ name, transport, tls }], skipped: [{ lane, reason }],
//   measured: { calls, profile: 'lan', vus: 1 }, source: where the API was given,
//   credentials: { headers, initPayload, metadata } (common/credentials.js: every value
//                a ${VAR} reference, never a secret) | absent
// }
// Plain ES module with no k6 or Node imports.
import { checkHeaders } from './credentials.js';
import { configError } from './env.js';
import { LANES } from './lanes/catalogue.js';
import { isLoopback } from './loopback.js';
import { rawSetting } from './settings.js';

export const API_PLAN_VERSION = 2; // 2: grpc.calls (several methods), credentials

// Every lane the scenario knows, in the order they run: the catalogue's lanes with an
// `api` kind (common/lanes/). kind: what the lane needs (a GraphQL endpoint over http://
// or https://, graphql-transport-ws, a gRPC method, a Connect endpoint: --connect, whose
// unary calls go over k6's http on HTTP/1.1 keep-alive, or HTTP/2 where h2 is offered).
// A gRPC or Connect lane's TLS is its endpoint's (tls null: its URL or address says).
const ENDPOINT_TLS = new Set(['grpc', 'connect']);
export const API_LANES = LANES.filter((l) => l.api).map((l) => ({
  name: l.name,
  transport: l.transport,
  tls: ENDPOINT_TLS.has(l.api) ? null : l.tls,
  kind: l.api,
  ...(l.protocol ? { protocol: l.protocol } : {}),
}));
export const API_LANE_NAMES = API_LANES.map((l) => l.name);

// What the scenario builds when no API is given (`k6 inspect`, `k6pack thresholds api`,
// the tests over every plan): a nominal API with GraphQL over http:// (with
// graphql-transport-ws) and a unary gRPC method, one operation each. k6 refuses to
// run it (setup() says to give -e API).
export const NOMINAL_OPERATION = { name: 'operation', kind: 'query', reqBytes: 200, resBytes: 500, serverMs: 5 };
export function nominalPlan() {
  const op = { ...NOMINAL_OPERATION, query: '{ __typename }', variables: {}, serverFrom: 'nominal' };
  const lane = (name) => {
    const l = API_LANES.find((x) => x.name === name);
    return { name, transport: l.transport, tls: Boolean(l.tls) };
  };
  return {
    version: API_PLAN_VERSION,
    nominal: true,
    proxies: [],
    hosts: {},
    insecure: false,
    graphql: { url: 'http://127.0.0.1:1/graphql', wsUrl: 'ws://127.0.0.1:1/graphql', operations: [op] },
    grpc: {
      addr: '127.0.0.1:1',
      tls: false,
      calls: [
        {
          method: 'api.Service/Method',
          service: 'api.Service',
          name: 'Method',
          stream: false,
          request: {},
          reqBytes: 20,
          resBytes: 200,
          messages: 1,
          serverMs: 5,
          serverFrom: 'nominal',
        },
      ],
    },
    lanes: ['http_fresh', 'http_keepalive', 'ws', 'grpc', 'grpc_fresh'].map(lane),
    skipped: [],
  };
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// host:port of a URL ('http://localhost/graphql' -> 'localhost:80') or an address.
export function hostPort(target) {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(String(target));
  if (!m) return String(target);
  const authority = m[2].slice(m[2].lastIndexOf('@') + 1);
  if (/:\d+$/.test(authority)) return authority;
  return `${authority}:${/^(https|wss)$/i.test(m[1]) ? 443 : 80}`;
}

// The plan file, parsed and checked (k6's init and `k6pack thresholds api` read it):
// any problem is one sentence naming the file. env: ALLOW_REMOTE_TARGET.
export function parseApiPlan(text, file, env = {}) {
  const fail = (what) => {
    throw configError(
      `API plan ${file}: ${what}: write it again with \`npx k6pack up --api …\` (or let \`npx k6pack run api\` make it)`,
    );
  };
  let plan;
  try {
    plan = JSON.parse(text);
  } catch (err) {
    fail(`not valid JSON (${String(err.message || err).split('\n')[0]})`);
  }
  if (!isObject(plan)) fail('not a JSON object');
  if (plan.version !== API_PLAN_VERSION) fail(`version ${JSON.stringify(plan.version)} is not ${API_PLAN_VERSION}`);
  if (!Array.isArray(plan.lanes) || !plan.lanes.length) fail('no lanes to run');
  for (const l of plan.lanes)
    if (!isObject(l) || !API_LANE_NAMES.includes(l.name)) fail(`unknown lane ${JSON.stringify(l && l.name)}`);
  const kinds = new Set(plan.lanes.map((l) => API_LANES.find((x) => x.name === l.name).kind));
  if (
    (kinds.has('http') || kinds.has('ws')) &&
    !(isObject(plan.graphql) && Array.isArray(plan.graphql.operations) && plan.graphql.operations.length)
  )
    fail('GraphQL lanes but no operations');
  if (
    kinds.has('grpc') &&
    !(
      isObject(plan.grpc) &&
      plan.grpc.file &&
      Array.isArray(plan.grpc.calls) &&
      plan.grpc.calls.length &&
      plan.grpc.calls.every((c) => isObject(c) && c.method && c.name)
    )
  )
    fail('gRPC lanes but no method or .proto file');
  if (
    kinds.has('connect') &&
    !(
      isObject(plan.connect) &&
      plan.connect.url &&
      Array.isArray(plan.connect.calls) &&
      plan.connect.calls.length &&
      plan.connect.calls.every((c) => isObject(c) && c.service && c.name)
    )
  )
    fail('Connect lanes but no URL or method');
  if (!isObject(plan.hosts) || !Array.isArray(plan.proxies)) fail('no hosts or proxies');
  if (plan.credentials !== undefined && plan.credentials !== null) {
    const c = plan.credentials;
    if (!isObject(c)) fail('"credentials" is not an object');
    try {
      checkHeaders(c.headers || {}, '"credentials.headers"');
      if (c.metadata) checkHeaders(c.metadata, '"credentials.metadata"');
    } catch (err) {
      fail(String(err.message || err));
    }
    if (c.initPayload !== undefined && c.initPayload !== null && !isObject(c.initPayload))
      fail('"credentials.initPayload" is not an object');
  }
  for (const [from, to] of Object.entries(plan.hosts)) {
    if (!isLoopback(to)) fail(`the proxy for ${from} is at ${to}, not on loopback`);
    if (rawSetting(env, 'ALLOW_REMOTE_TARGET') !== '1' && !isLoopback(from)) {
      throw configError(
        `API plan ${file}: the endpoint ${from} is not a loopback address: the pack only loads 127.0.0.1/::1 unless you set -e ALLOW_REMOTE_TARGET=1 on purpose`,
      );
    }
  }
  return plan;
}
