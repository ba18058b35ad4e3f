// Your own API's lanes and plan file (common/your-api.js), without an API: the lanes the
// scenario knows, the nominal plan it builds without one, host:port of an endpoint, and
// the plan file checked: a good plan comes back as it is, every bad one is one sentence
// naming the file, and a plan that points k6 beyond loopback is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  API_LANE_NAMES,
  API_LANES,
  API_PLAN_VERSION,
  hostPort,
  NOMINAL_OPERATION,
  nominalPlan,
  parseApiPlan,
} from './your-api.js';

const FILE = '.run/api-plan.json';
const AGAIN = 'write it again with `npx k6pack up --api …` (or let `npx k6pack run api` make it)';
const says = (what) => (err) => {
  assert.equal(err, `API plan ${FILE}: ${what}: ${AGAIN}`);
  return true;
};

// A plan as `k6pack up --api` writes it: GraphQL and a gRPC method behind their proxies.
const PLAN = {
  version: 2,
  toxiproxy: 'http://127.0.0.1:8474',
  proxies: ['api_graphql', 'api_grpc'],
  hosts: { '127.0.0.1:4100': '127.0.0.1:16000', 'localhost:50051': '127.0.0.1:16001' },
  insecure: false,
  graphql: {
    url: 'http://127.0.0.1:4100/graphql',
    wsUrl: 'ws://127.0.0.1:4100/graphql',
    operations: [{ name: 'Books', kind: 'query', query: '{ books { id } }', variables: {}, reqBytes: 60 }],
  },
  grpc: { addr: 'localhost:50051', tls: false, file: 'api.proto', calls: [{ method: 'api.Books/List', name: 'List' }] },
  credentials: { headers: { Authorization: 'Bearer ${API_TOKEN}' }, initPayload: null, metadata: null },
  lanes: [
    { name: 'http_keepalive', transport: 'http-keepalive', tls: false },
    { name: 'ws', transport: 'ws', tls: false },
    { name: 'grpc', transport: 'grpc', tls: false },
  ],
  skipped: [{ lane: 'https_fresh', reason: 'no https:// endpoint' }],
};
const text = (changes) => JSON.stringify({ ...PLAN, ...changes });

test('the lanes: thirteen, names unique, each transport with its kind', () => {
  assert.equal(API_LANES.length, 13);
  assert.equal(new Set(API_LANE_NAMES).size, 13);
  assert.deepEqual(API_LANE_NAMES.slice(0, 3), ['http_fresh', 'http_keepalive', 'https_fresh']);
  const kinds = Object.fromEntries(API_LANES.map((l) => [l.name, l.kind]));
  assert.equal(kinds.http2, 'http');
  assert.equal(kinds.wss, 'ws');
  assert.equal(kinds.grpc_stream, 'grpc');
  assert.deepEqual(
    API_LANES.filter((l) => l.kind === 'connect').map((l) => l.protocol),
    ['connect-json', 'connect-proto', 'grpc-web'],
  );
  // TLS is the lane's for HTTP and WebSocket, the endpoint's for gRPC and Connect.
  const endpoints = new Set(['grpc', 'connect']);
  assert.ok(API_LANES.filter((l) => endpoints.has(l.kind)).every((l) => l.tls === null));
  assert.ok(API_LANES.filter((l) => !endpoints.has(l.kind)).every((l) => typeof l.tls === 'boolean'));
});

test('a plan with Connect lanes needs its URL and calls', () => {
  const plan = {
    ...nominalPlan(),
    nominal: undefined,
    lanes: [{ name: 'connect_json', transport: 'http-keepalive', tls: false }],
  };
  assert.throws(() => parseApiPlan(JSON.stringify(plan), 'p.json'), /Connect lanes but no URL or method/);
  const calls = [{ service: 'books.v1.Books', name: 'GetBook', method: 'books.v1.Books/GetBook' }];
  const ok = { ...plan, connect: { url: 'http://127.0.0.1:6080', calls } };
  assert.equal(parseApiPlan(JSON.stringify(ok), 'p.json').connect.calls[0].name, 'GetBook');
});

test('the nominal plan: valid, five lanes over the nominal operation, nothing proxied', () => {
  const plan = nominalPlan();
  assert.equal(plan.version, API_PLAN_VERSION);
  assert.equal(plan.nominal, true);
  assert.deepEqual(
    plan.lanes.map((l) => [l.name, l.transport, l.tls]),
    [
      ['http_fresh', 'http-fresh', false],
      ['http_keepalive', 'http-keepalive', false],
      ['ws', 'ws', false],
      ['grpc', 'grpc', false],
      ['grpc_fresh', 'grpc-fresh', false],
    ],
  );
  assert.deepEqual(plan.graphql.operations, [
    { ...NOMINAL_OPERATION, query: '{ __typename }', variables: {}, serverFrom: 'nominal' },
  ]);
  assert.deepEqual(
    plan.grpc.calls.map((c) => c.method),
    ['api.Service/Method'],
  );
  // Every lane's kind has what it needs but the .proto file: the nominal API is never run.
  assert.throws(() => parseApiPlan(JSON.stringify(plan), FILE), says('gRPC lanes but no method or .proto file'));
  assert.deepEqual(
    parseApiPlan(JSON.stringify({ ...plan, grpc: { ...plan.grpc, file: 'x.proto' } }), FILE).lanes,
    plan.lanes,
  );
  // A fresh object each time.
  nominalPlan().lanes.pop();
  assert.equal(nominalPlan().lanes.length, 5);
});

test("hostPort: a URL's host:port, with the scheme's default port; anything else as it is", () => {
  assert.equal(hostPort('http://localhost/graphql'), 'localhost:80');
  assert.equal(hostPort('https://api.example.com/graphql'), 'api.example.com:443');
  assert.equal(hostPort('wss://api.example.com'), 'api.example.com:443');
  assert.equal(hostPort('ws://127.0.0.1:4100/graphql?x=1'), '127.0.0.1:4100');
  assert.equal(hostPort('HTTPS://Example.com'), 'Example.com:443');
  assert.equal(hostPort('http://user:pw@127.0.0.1:4100/graphql'), '127.0.0.1:4100');
  assert.equal(hostPort('http://[::1]/graphql'), '[::1]:80');
  assert.equal(hostPort('http://[::1]:8080/graphql'), '[::1]:8080');
  assert.equal(hostPort('localhost:50051'), 'localhost:50051');
});

test('a good plan comes back as written', () => {
  assert.deepEqual(parseApiPlan(JSON.stringify(PLAN), FILE), PLAN);
  // GraphQL lanes only: no gRPC needed.
  const graphqlOnly = text({ grpc: null, lanes: [{ name: 'http_fresh' }, { name: 'wss' }] });
  assert.equal(parseApiPlan(graphqlOnly, FILE).lanes.length, 2);
  // gRPC only: no GraphQL needed.
  assert.equal(parseApiPlan(text({ graphql: null, lanes: [{ name: 'grpc_stream' }] }), FILE).lanes.length, 1);
});

test('a plan file that is no plan: one sentence each, naming the file', () => {
  assert.throws(
    () => parseApiPlan('{"version": 1,', FILE),
    (err) => {
      assert.match(err, /^API plan \.run\/api-plan\.json: not valid JSON \([^\n]+\): write it again with/);
      return true;
    },
  );
  assert.throws(() => parseApiPlan('[1]', FILE), says('not a JSON object'));
  assert.throws(() => parseApiPlan('null', FILE), says('not a JSON object'));
  assert.throws(() => parseApiPlan(text({ version: 1 }), FILE), says('version 1 is not 2'));
  assert.throws(() => parseApiPlan(text({ version: undefined }), FILE), says('version undefined is not 2'));
  assert.throws(() => parseApiPlan(text({ lanes: [] }), FILE), says('no lanes to run'));
  assert.throws(() => parseApiPlan(text({ lanes: 'ws' }), FILE), says('no lanes to run'));
  assert.throws(
    () => parseApiPlan(text({ lanes: [{ name: 'ws' }, { name: 'quic' }] }), FILE),
    says('unknown lane "quic"'),
  );
  assert.throws(() => parseApiPlan(text({ lanes: ['ws'] }), FILE), says('unknown lane undefined'));
  assert.throws(() => parseApiPlan(text({ lanes: [null] }), FILE), says('unknown lane null'));
  assert.throws(
    () => parseApiPlan(text({ graphql: { url: 'http://127.0.0.1:4100/graphql', operations: [] } }), FILE),
    says('GraphQL lanes but no operations'),
  );
  assert.throws(
    () => parseApiPlan(text({ graphql: null, lanes: [{ name: 'ws' }] }), FILE),
    says('GraphQL lanes but no operations'),
  );
  assert.throws(
    () => parseApiPlan(text({ grpc: { ...PLAN.grpc, file: undefined } }), FILE),
    says('gRPC lanes but no method or .proto file'),
  );
  assert.throws(
    () => parseApiPlan(text({ grpc: { ...PLAN.grpc, calls: [] } }), FILE),
    says('gRPC lanes but no method or .proto file'),
  );
  assert.throws(
    () => parseApiPlan(text({ credentials: { headers: { 'a b': 'x' } } }), FILE),
    says('"credentials.headers": "a b" is not a header name'),
  );
  assert.throws(
    () => parseApiPlan(text({ credentials: { headers: {}, initPayload: 'x' } }), FILE),
    says('"credentials.initPayload" is not an object'),
  );
  assert.throws(() => parseApiPlan(text({ hosts: undefined }), FILE), says('no hosts or proxies'));
  assert.throws(() => parseApiPlan(text({ proxies: {} }), FILE), says('no hosts or proxies'));
});

test('every proxy on loopback; an endpoint beyond it only with ALLOW_REMOTE_TARGET=1', () => {
  assert.throws(
    () => parseApiPlan(text({ hosts: { '127.0.0.1:4100': '10.0.0.5:16000' } }), FILE),
    says('the proxy for 127.0.0.1:4100 is at 10.0.0.5:16000, not on loopback'),
  );
  const remote = text({ hosts: { 'api.example.com:443': '127.0.0.1:16000' } });
  assert.throws(
    () => parseApiPlan(remote, FILE),
    (err) => {
      assert.equal(
        err,
        `API plan ${FILE}: the endpoint api.example.com:443 is not a loopback address: the pack only loads 127.0.0.1/::1 unless you set -e ALLOW_REMOTE_TARGET=1 on purpose`,
      );
      return true;
    },
  );
  assert.throws(() => parseApiPlan(remote, FILE, { ALLOW_REMOTE_TARGET: 'true' }), /is not a loopback address/);
  assert.deepEqual(parseApiPlan(remote, FILE, { ALLOW_REMOTE_TARGET: '1' }).hosts, {
    'api.example.com:443': '127.0.0.1:16000',
  });
  // Even allowed, the proxy itself must be local.
  assert.throws(
    () => parseApiPlan(text({ hosts: { 'api.example.com:443': '10.0.0.5:1' } }), FILE, { ALLOW_REMOTE_TARGET: '1' }),
    says('the proxy for api.example.com:443 is at 10.0.0.5:1, not on loopback'),
  );
});
