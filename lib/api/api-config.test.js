// The API to test, checked before anything starts (api-config.js): flags and a config
// file (its paths relative to it, flags overriding it) -> one checked config, and every
// problem one UsageError line naming the flag, field or file. Small files in a temp folder.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Command } from 'commander';
import { UsageError } from '../cli-support.js';
import { addApiOptions, API_FIELDS, apiConfig, apiFlagsIn, flagOf, readJsonFile } from './api-config.js';

const tmp = mkdtempSync(join(tmpdir(), 'k6pack-api-config-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name, text) => {
  const path = join(tmp, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
};
const OPS = file('ops.graphql', 'query GetBook($id: ID!) { book(id: $id) { id } }\n');
const PROTO = file('svc.proto', 'syntax = "proto3";\n');
const VARS = file('vars.json', '{"GetBook": {"id": "1"}}');
const REQ = file('req.json', '{"id": 7}');
const REQS = file('reqs.json', '[{"id": 1}, {"id": 2}]');
// A config file in a folder of its own, its paths relative to it.
file('conf/ops.graphql', 'query Q { a }\n');
file('conf/svc.proto', 'syntax = "proto3";\n');
file('conf/r.json', '{"name": "x"}');

const GQL = 'http://127.0.0.1:4000/graphql';
const config = (opts, env = {}) => apiConfig(opts, { cwd: tmp, env });
// The one line apiConfig throws, as a UsageError.
const usage = (opts, env = {}) => {
  try {
    config(opts, env);
  } catch (err) {
    assert.ok(err instanceof UsageError, `not a UsageError: ${err.stack}`);
    assert.ok(!err.message.includes('\n'), err.message);
    return err.message;
  }
  assert.fail(`no error for ${JSON.stringify(opts)}`);
};
const conf = (name, doc) => file(name, typeof doc === 'string' ? doc : JSON.stringify(doc));

test('flags: a GraphQL endpoint with its operations and variables, paths from the working directory', () => {
  assert.deepEqual(config({ graphql: GQL, operations: 'ops.graphql', variables: 'vars.json' }), {
    source: null,
    tls: false,
    insecure: false,
    graphql: GQL,
    ws: null,
    operations: OPS,
    variables: VARS,
    grpc: null,
    connect: null,
    proto: null,
    calls: [],
    credentials: { headers: {}, initPayload: null, metadata: null },
    serverPids: null,
    expanded: { headers: {}, initPayload: null, metadata: {} },
    remote: [],
  });
  const ws = config({ graphql: GQL, ws: 'ws://localhost:4000/ws', operations: OPS });
  assert.equal(ws.ws, 'ws://localhost:4000/ws');
  assert.equal(ws.variables, null);
});

test('flags: gRPC and Connect calls, one request per --call, from JSON text or a file', () => {
  const one = config({
    grpc: '127.0.0.1:9090',
    tls: true,
    proto: 'svc.proto',
    call: ['pkg.S/Get'],
    request: ['{"id": 1}'],
  });
  assert.equal(one.grpc, '127.0.0.1:9090');
  assert.equal(one.tls, true);
  assert.equal(one.proto, PROTO);
  assert.deepEqual(one.calls, [{ call: 'pkg.S/Get', request: { id: 1 } }]);
  // No request: an empty message.
  assert.deepEqual(config({ grpc: '[::1]:9090', proto: PROTO, call: ['pkg.S/Get'] }).calls, [
    { call: 'pkg.S/Get', request: {} },
  ]);
  const two = config({
    connect: 'http://127.0.0.1:8080/api//',
    proto: PROTO,
    call: ['pkg.S/Get', 'pkg.S/List'],
    requestFile: ['req.json', 'reqs.json'],
  });
  assert.equal(two.connect, 'http://127.0.0.1:8080/api');
  assert.deepEqual(two.calls, [
    { call: 'pkg.S/Get', request: { id: 7 } },
    { call: 'pkg.S/List', request: [{ id: 1 }, { id: 2 }] },
  ]);
  // A call without its own request among several: an empty message.
  assert.deepEqual(
    config({ grpc: '127.0.0.1:9090', proto: PROTO, call: ['pkg.S/A', 'pkg.S/B'] }).calls.map((c) => c.request),
    [{}, {}],
  );
});

test('credentials: headers and the init payload, a --header replacing one of the same name, values expanded', () => {
  const api = conf('creds.json', {
    graphql: GQL,
    operations: 'ops.graphql',
    grpc: '127.0.0.1:9090',
    proto: 'svc.proto',
    call: 'pkg.S/Get',
    request: { id: 1 },
    headers: { Authorization: 'Bearer ${TOKEN}', 'X-Team': 'a' },
    initPayload: { token: '${TOKEN}' },
  });
  const c = config({ api, header: ['authorization: Basic eA==', 'X-Other:  b '] }, { TOKEN: 'secret-1' });
  assert.deepEqual(c.credentials, {
    headers: { 'X-Team': 'a', authorization: 'Basic eA==', 'X-Other': 'b' },
    initPayload: { token: '${TOKEN}' },
    metadata: null,
  });
  assert.deepEqual(c.expanded, {
    headers: { 'X-Team': 'a', authorization: 'Basic eA==', 'X-Other': 'b' },
    initPayload: { token: 'secret-1' },
    metadata: { 'x-team': 'a', authorization: 'Basic eA==', 'x-other': 'b' },
  });
  // The flag's payload replaces the file's.
  assert.deepEqual(config({ api, initPayload: '{"k": "${TOKEN}"}' }, { TOKEN: 't' }).expanded.initPayload, { k: 't' });
  assert.equal(
    usage({ api }),
    'header Authorization: ${TOKEN} is not set: export TOKEN before running (its value is never printed)',
  );
  assert.equal(
    usage({ graphql: GQL, operations: OPS, initPayload: '{"a": {"b": "${NOPE}"}}' }),
    'the init payload.a.b: ${NOPE} is not set: export NOPE before running (its value is never printed)',
  );
});

test('a config file: its paths relative to it, its fields checked, flags overriding them', () => {
  const api = conf('conf/api.json', {
    $schema: 'ignored',
    _note: 'ignored too',
    graphql: GQL,
    operations: 'ops.graphql',
    variables: { Q: {} },
    connect: 'https://localhost:8443',
    insecure: true,
    proto: 'svc.proto',
    calls: [
      { call: 'pkg.S/A', requestFile: 'r.json' },
      { call: 'pkg.S/B', request: '{"n": 2}' },
    ],
    metadata: { 'x-key': 'k' },
    grpc: '127.0.0.1:9090',
  });
  const c = config({ api: 'conf/api.json' });
  assert.equal(c.source, api);
  assert.equal(c.operations, join(tmp, 'conf', 'ops.graphql'));
  assert.deepEqual(c.variables, { Q: {} });
  assert.equal(c.proto, join(tmp, 'conf', 'svc.proto'));
  assert.equal(c.connect, 'https://localhost:8443');
  assert.equal(c.insecure, true);
  assert.deepEqual(c.calls, [
    { call: 'pkg.S/A', request: { name: 'x' } },
    { call: 'pkg.S/B', request: { n: 2 } },
  ]);
  assert.deepEqual(c.expanded.metadata, { 'x-key': 'k' });
  // A flag wins over the file's field; a lone --request replaces the file's one call's.
  const one = conf('conf/one.json', { grpc: '127.0.0.1:9090', proto: 'svc.proto', call: 'pkg.S/A', request: { a: 1 } });
  assert.equal(config({ api: one, grpc: 'localhost:7000' }).grpc, 'localhost:7000');
  assert.deepEqual(config({ api: one, request: ['{"b": 2}'] }).calls, [{ call: 'pkg.S/A', request: { b: 2 } }]);
  assert.deepEqual(config({ api: one, call: ['pkg.S/C'] }).calls, [{ call: 'pkg.S/C', request: {} }]);
});

test("a config file's one-line errors", () => {
  const bad = (doc) => usage({ api: conf('bad.json', doc) });
  const at = join(tmp, 'bad.json');
  assert.equal(usage({ api: 'none.json' }), `API config ${join(tmp, 'none.json')}: cannot read it (ENOENT)`);
  assert.match(bad('{"graphql": '), new RegExp(`^API config ${at}: not valid JSON \\(.+\\)$`));
  assert.equal(bad([1]), `API config ${at}: must be a JSON object with graphql, operations, grpc, proto, call, …`);
  assert.equal(bad({ graphq: GQL }), `API config ${at}: unknown field "graphq" (fields: ${API_FIELDS.join(', ')})`);
  assert.equal(bad({ graphql: '' }), `API config ${at}: "graphql" must be a non-empty string`);
  assert.equal(bad({ grpc: 9090 }), `API config ${at}: "grpc" must be a non-empty string`);
  assert.equal(bad({ tls: 'yes' }), `API config ${at}: "tls" must be true or false`);
  assert.equal(bad({ initPayload: [] }), `API config ${at}: "initPayload" must be a JSON object`);
  assert.equal(bad({ headers: { 'a b': 'x' } }), `API config ${at}: "headers": "a b" is not a header name`);
  assert.equal(bad({ metadata: { k: 1 } }), `API config ${at}: "metadata": the value of k must be a string`);
  assert.equal(
    bad({ variables: 3 }),
    `API config ${at}: "variables" must be a file path or an object keyed by operation name`,
  );
  assert.equal(
    bad({ request: 3 }),
    `API config ${at}: "request" must be the request as a JSON object, or an array of them`,
  );
  const callsLine = `API config ${at}: "calls" must be a non-empty array of {"call": "pkg.Service/Method", "request": {…}} (or "requestFile")`;
  assert.equal(bad({ calls: [] }), callsLine);
  assert.equal(bad({ calls: [{ request: {} }] }), callsLine);
  assert.equal(
    bad({ calls: [{ call: 'a.B/C', body: {} }] }),
    `API config ${at}: "calls": unknown field "body" (fields: call, request, requestFile)`,
  );
  assert.equal(
    bad({ grpc: '127.0.0.1:1', proto: PROTO, calls: [{ call: 'a.B/C' }], call: 'a.B/D' }),
    'the API config gives "calls" and "call"/"request": give the calls one way',
  );
});

test("the flags' one-line errors", () => {
  const grpc = { grpc: '127.0.0.1:9090', proto: PROTO };
  const cases = [
    [
      {},
      'give --graphql URL, --grpc ADDR, --connect URL or several (or --api ./api.json with those fields): `npx k6pack run api --help`',
    ],
    [{ graphql: 'nope', operations: OPS }, '--graphql nope: not a URL; give e.g. http://127.0.0.1:8080/graphql'],
    [{ graphql: 'ftp://127.0.0.1/', operations: OPS }, '--graphql ftp://127.0.0.1/: must be http:// or https://'],
    [{ graphql: GQL, ws: GQL, operations: OPS }, `--ws ${GQL}: must be ws:// or wss://`],
    [
      { connect: 'ws://127.0.0.1:1', proto: PROTO, call: ['a.B/C'] },
      '--connect ws://127.0.0.1:1: must be http:// or https://',
    ],
    [
      { graphql: GQL },
      '--graphql needs --operations FILE: a .graphql file of named operations (query GetBook($id: ID!) { … })',
    ],
    [{ graphql: GQL, operations: 'missing.graphql' }, `--operations ${join(tmp, 'missing.graphql')}: no such file`],
    [{ graphql: GQL, operations: OPS, variables: 'no.json' }, `--variables ${join(tmp, 'no.json')}: no such file`],
    [{ grpc: '127.0.0.1:9090', operations: OPS }, '--operations needs --graphql'],
    [{ grpc: '127.0.0.1:9090', ws: 'ws://127.0.0.1:1' }, '--ws needs --graphql'],
    [{ graphql: GQL, operations: OPS, proto: PROTO }, '--proto needs --grpc or --connect'],
    [{ graphql: GQL, operations: OPS, call: ['a.B/C'] }, '--call needs --grpc or --connect'],
    [{ connect: 'http://127.0.0.1:1', proto: PROTO, call: ['a.B/C'], tls: true }, '--tls needs --grpc'],
    [{ grpc: 'localhost' }, '--grpc localhost: give host:port, e.g. 127.0.0.1:9090'],
    [
      { ...grpc, grpc: '127.0.0.1:70000', call: ['a.B/C'] },
      '--grpc 127.0.0.1:70000: give host:port, e.g. 127.0.0.1:9090',
    ],
    [{ grpc: '127.0.0.1:9090' }, "--grpc needs --proto FILE (the service's .proto) and --call package.Service/Method"],
    [
      { connect: 'http://127.0.0.1:1' },
      "--connect needs --proto FILE (the service's .proto) and --call package.Service/Method",
    ],
    [{ ...grpc, proto: 'no.proto' }, `--proto ${join(tmp, 'no.proto')}: no such file`],
    [grpc, '--grpc needs --call package.Service/Method (the method to call)'],
    [{ ...grpc, request: ['{}'] }, '--request and --request-file need --call (one per --call)'],
    [
      { ...grpc, call: ['a.B/C'], request: ['{}'], requestFile: [REQ] },
      'give the gRPC requests one way: --request JSON or --request-file FILE, not both',
    ],
    [
      { ...grpc, call: ['a.B/C'], request: ['{}', '{}'] },
      "one --call and several requests: give them as one JSON array (--request '[{…}, {…}]'), cycled per call",
    ],
    [
      { ...grpc, call: ['a.B/C', 'a.B/D', 'a.B/E'], request: ['{}', '{}'] },
      '3 --call and 2 requests: give one --request (or --request-file) per --call, in the same order, or none',
    ],
    [
      { ...grpc, call: ['a.B/C', 'a.B/C'] },
      '--call a.B/C is given twice: give its requests as one JSON array, cycled per call',
    ],
    [
      { ...grpc, call: ['a.B/C'], request: ['{id: 1}'] },
      /^--request \{id: 1\}: not valid JSON \(.+\): give the request message as a JSON object, e\.g\. '\{"id": 1\}'$/,
    ],
    [
      { ...grpc, call: ['a.B/C'], request: ['[]'] },
      "the gRPC request must be a JSON object (the message's fields), or a non-empty array of them, not []",
    ],
    [
      { ...grpc, call: ['a.B/C'], request: ['[{"a": 1}, 2]'] },
      'the gRPC request must be a JSON object (the message\'s fields), or a non-empty array of them, not [{"a":1},2]',
    ],
    [
      { ...grpc, call: ['a.B/C'], requestFile: ['none.json'] },
      `--request-file ${join(tmp, 'none.json')}: no such file`,
    ],
    [{ ...grpc, metadata: { a: 'b' }, grpc: undefined, graphql: GQL, operations: OPS }, '"metadata" needs --grpc'],
    [
      { graphql: GQL, operations: OPS, header: ['NoColon'] },
      `--header "NoColon": give 'Name: value', e.g. 'Authorization: Bearer \${API_TOKEN}'`,
    ],
    [
      { graphql: GQL, operations: OPS, initPayload: '{bad' },
      /^--init-payload \{bad: not valid JSON \(.+\): give an object, e\.g\. '\{"authorization": "Bearer \$\{API_TOKEN\}"\}'$/,
    ],
    [
      { graphql: GQL, operations: OPS, initPayload: '[1]' },
      '--init-payload must be a JSON object (the connection_init payload), not [1]',
    ],
    [{ ...grpc, call: ['a.B/C'], initPayload: '{}' }, '--init-payload needs --graphql'],
    [
      { graphql: GQL, operations: OPS, serverPid: 'abc' },
      "--server-pid abc: give your server's process id(s), e.g. --server-pid $(pgrep -f my-server)",
    ],
    [
      { graphql: 'http://10.0.0.5/graphql', grpc: 'example.com:443', proto: PROTO, call: ['a.B/C'], operations: OPS },
      '10.0.0.5, example.com is not a loopback address: the pack only loads 127.0.0.1/::1 unless you set ALLOW_REMOTE_TARGET=1 on purpose',
    ],
  ];
  for (const [opts, line] of cases) {
    if (line instanceof RegExp) assert.match(usage(opts), line);
    else assert.equal(usage(opts), line, JSON.stringify(opts));
  }
});

test('a remote host only with ALLOW_REMOTE_TARGET=1; server pids of this machine', () => {
  const remote = { graphql: 'https://api.example.com/graphql', operations: OPS };
  const c = config(remote, { ALLOW_REMOTE_TARGET: '1' });
  assert.deepEqual(c.remote, ['api.example.com']);
  assert.deepEqual(config({ graphql: GQL, operations: OPS, serverPid: `${process.pid},${process.pid}` }).serverPids, [
    process.pid,
  ]);
});

test('readJsonFile: the parsed file, or one line naming it', () => {
  assert.deepEqual(readJsonFile(REQS, 'requests'), [{ id: 1 }, { id: 2 }]);
  const broken = file('broken.json', '{"a": 1,}');
  assert.throws(
    () => readJsonFile(broken, 'the thing'),
    (err) => {
      assert.ok(err instanceof UsageError);
      assert.match(err.message, new RegExp(`^the thing ${broken}: not valid JSON \\([^\\n]+\\)$`));
      return true;
    },
  );
  assert.throws(() => readJsonFile(tmp, 'a folder'), {
    name: 'Error',
    message: `a folder ${tmp}: cannot read it (EISDIR)`,
  });
});

test('flagOf, apiFlagsIn and addApiOptions: the flags as the CLI names them', () => {
  assert.equal(flagOf('graphql'), '--graphql');
  assert.equal(flagOf('requestFile'), '--request-file');
  assert.equal(flagOf('initPayload'), '--init-payload');
  assert.equal(flagOf('metadata'), '"metadata"');
  assert.equal(flagOf('serverPid'), '--server-pid');
  assert.deepEqual(
    apiFlagsIn({ api: 'a.json', grpc: 'x', headers: {}, header: ['a: b'], serverPid: '1', tls: false }),
    ['--api', '--grpc', '--tls', '--header', '--server-pid'],
  );
  assert.deepEqual(apiFlagsIn({ profile: 'lte' }), []);
  const cmd = addApiOptions(new Command('run'));
  cmd.parse(
    [
      '--graphql',
      GQL,
      '--call',
      'a.B/C',
      '--call',
      'a.B/D',
      '--request',
      '{}',
      '--request-file',
      'r.json',
      '--header',
      'A: 1',
      '--header',
      'B: 2',
      '--tls',
      '--server-pid',
      '12',
    ],
    { from: 'user' },
  );
  assert.deepEqual(cmd.opts(), {
    graphql: GQL,
    call: ['a.B/C', 'a.B/D'],
    request: ['{}'],
    requestFile: ['r.json'],
    header: ['A: 1', 'B: 2'],
    tls: true,
    serverPid: '12',
  });
});
