// Your own API through the CLI, where the assertions are not timings (so this file runs
// beside another in the suite; test/api-lanes.test.js has the timed ones):
//   - bad input: one line naming what is at fault, exit 2, nothing left running;
//   - Ctrl-C, a profile change during the run, a server that dies mid-run;
//   - what a run counts: GraphQL `errors` and gRPC statuses as failures, the first error
//     kept; a threshold override failing the run with exit 99.
//   - the browser's RPC (--connect): connectrpc's Eliza on @connectrpc/connect-node as
//     your API under lan, every lane clean; its bad input (the timed run:
//     test/api-connect.test.js).
// Real servers this project did not write (graphql-yoga, grpc-node's route guide, Eliza on
// connect-node), real Toxiproxy and real k6. Every test runs at once with the others
// (node:test concurrency): each has its own ports and run dir (cliEnv), and checks what
// its own runs left (nothingLeft: no k6 of a plan in its run dir, no toxiproxy on its
// port, every port of its env free, no plan file), so that neither its neighbours here
// nor another file's `run api` beside this one can hide or fake what it left.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PORT_WAIT_MS } from '../lib/ports.js';
import { ROOT } from '../lib/tools.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { targetsFor } from '../common/defaults.js';
import { startTestStack } from '../dev/test-stack.js';
import { cliEnv, runCli, waitFor } from './helpers/cli-env.js';
import { assertDocPassedButLatency } from './helpers/exits.js';
import { scaled } from './helpers/waits.js';
import { OPS, PROTO, startYoga, VARS } from './helpers/api-servers.js';
import { apiArgs, apiServers, GET_FEATURE, nothingLeft, scratch, summaries, TOKEN } from './helpers/api-run.js';
import { API_CONNECT_LANES, BOOKS_PROTO, ELIZA_PROTO, ELIZA_SERVICE, startEliza } from './helpers/connect-servers.js';
import { createServer as createConnectServer } from '../servers/connect/server.js';

const file = scratch();
const servers = apiServers();

// The bad-input cases, split among this many tests (each its own env, its cases one after another).
const BAD_INPUT_PARTS = 3;

describe('your API through the CLI', { concurrency: true }, () => {
  describe('bad input: one line naming what is at fault, exit 2, nothing left running', { concurrency: true }, () => {
    const cases = () => {
      const g = ['run', 'api', '--graphql', servers.yoga.url];
      const rg = ['run', 'api', '--grpc', servers.routeGuide.addr, '--proto', PROTO];
      return [
        [
          'unreachable GraphQL endpoint',
          apiArgs('http://127.0.0.1:9/graphql'),
          /^k6pack: GraphQL endpoint http:\/\/127\.0\.0\.1:9\/graphql: cannot connect \(ECONNREFUSED\): start your server, or fix --graphql$/,
        ],
        [
          'unreachable gRPC endpoint',
          ['run', 'api', '--grpc', '127.0.0.1:9', ...GET_FEATURE],
          /^k6pack: gRPC endpoint 127\.0\.0\.1:9: cannot connect \(ECONNREFUSED\)/,
        ],
        [
          'a URL that does not answer GraphQL',
          [
            'run',
            'api',
            '--graphql',
            servers.yoga.url.replace('/graphql', '/nope'),
            '--operations',
            OPS,
            '--variables',
            VARS,
          ],
          /^k6pack: GraphQL endpoint http:\/\/127\.0\.0\.1:\d+\/nope: does not answer GraphQL \(POST \{"query":"\{ __typename \}"\} got HTTP 404/,
        ],
        [
          'an operations file with a syntax error',
          [...g, '--operations', file('syntax.graphql', 'query A {\n  book(id: "1") { title }\n')],
          /^k6pack: .*syntax\.graphql:3:1: Syntax Error: Expected Name, found <EOF>\.$/,
        ],
        [
          'an anonymous operation among several',
          [
            ...g,
            '--operations',
            file('anon.graphql', 'query A { books(first: 1) { id } }\n{ books(first: 2) { id } }\n'),
          ],
          /^k6pack: .*anon\.graphql:2: an anonymous operation among 2: give each one a name/,
        ],
        [
          'a required variable not given',
          [
            ...g,
            '--operations',
            OPS,
            '--variables',
            file('partial.json', { GetBook: { id: '1' }, FirstBooks: { first: 2 } }),
          ],
          /^k6pack: .*ops\.graphql:\d+: operation Review needs variable \$bookId \(ID!\): give it in .*partial\.json under "Review"$/,
        ],
        [
          'a variable of the wrong type',
          [
            ...g,
            '--operations',
            OPS,
            '--variables',
            file('wrong.json', {
              GetBook: { id: '1' },
              FirstBooks: { first: 'ten' },
              Review: { bookId: '1', stars: 4 },
            }),
          ],
          /^k6pack: .*wrong\.json: operation FirstBooks: Variable "\$first" got invalid value "ten"; Int cannot represent non-integer value: "ten"$/,
        ],
        [
          'an unknown field (the schema, by introspection)',
          [...g, '--operations', file('unknown.graphql', 'query Nope { shelf { id } }\n')],
          /^k6pack: .*unknown\.graphql:1: operation Nope: Cannot query field "shelf" on type "Query"\./,
        ],
        [
          'a .proto that does not compile',
          [
            'run',
            'api',
            '--grpc',
            servers.routeGuide.addr,
            '--proto',
            file('bad.proto', 'syntax = "proto3";\nmessage A { int32 x = 1 }\n'),
            '--call',
            'a.B/C',
          ],
          /^k6pack: --proto .*bad\.proto: does not compile: illegal token '\}', ';' expected \(line 2\)$/,
        ],
        [
          'an unknown service',
          [...rg, '--call', 'routeguide.Nope/GetFeature'],
          /^k6pack: --call routeguide\.Nope\/GetFeature: .*route_guide\.proto has no service routeguide\.Nope \(it has: routeguide\.RouteGuide\)$/,
        ],
        [
          'an unknown method',
          [...rg, '--call', 'routeguide.RouteGuide/GetFeatures'],
          /^k6pack: --call routeguide\.RouteGuide\/GetFeatures: routeguide\.RouteGuide has no method GetFeatures \(it has: GetFeature, ListFeatures, RecordRoute, RouteChat\)$/,
        ],
        [
          'request JSON with an unknown field',
          [...rg, '--call', 'routeguide.RouteGuide/GetFeature', '--request', '{"lat": 1}'],
          /^k6pack: --request: does not fit routeguide\.Point \(--call routeguide\.RouteGuide\/GetFeature\): lat: Point has no field "lat" \(fields: latitude, longitude\)$/,
        ],
        [
          'request JSON of the wrong type',
          [...rg, '--call', 'routeguide.RouteGuide/ListFeatures', '--request', '{"lo": {"latitude": "north"}}'],
          /^k6pack: --request: does not fit routeguide\.Rectangle .*: lo\.latitude: "north" is not a 32-bit integer \(int32\)$/,
        ],
        [
          'a client-streaming method',
          [...rg, '--call', 'routeguide.RouteGuide/RecordRoute'],
          /^k6pack: --call routeguide\.RouteGuide\/RecordRoute: a client-streaming method: the pack calls unary and server-streaming methods$/,
        ],
        [
          'a remote endpoint without ALLOW_REMOTE_TARGET=1',
          ['run', 'api', '--graphql', 'http://192.0.2.1:4000/graphql', '--operations', OPS],
          /^k6pack: 192\.0\.2\.1 is not a loopback address: the pack only loads 127\.0\.0\.1\/::1 unless you set ALLOW_REMOTE_TARGET=1 on purpose$/,
        ],
        ['no API at all', ['run', 'api'], /^k6pack: give --graphql URL, --grpc ADDR, --connect URL or several/],
        // Changing data (common/variables.js) and several calls: each set, filled, checked.
        [
          'a variable set of an array of the wrong type',
          [
            ...g,
            '--operations',
            OPS,
            '--variables',
            file('sets.json', {
              GetBook: [{ id: '1' }, { id: '2' }],
              FirstBooks: [{ first: 1 }, { first: 'ten' }],
              Review: { bookId: '1', stars: 4, id: 'r-{{uuid}}' },
            }),
          ],
          /^k6pack: .*sets\.json \(set 2 of 2\): operation FirstBooks: Variable "\$first" got invalid value "ten"/,
        ],
        [
          'a request template that does not fit the message',
          [...rg, '--call', 'routeguide.RouteGuide/GetFeature', '--request', '{"latitude": "{{uuid}}"}'],
          /^k6pack: --request: does not fit routeguide\.Point .*: latitude: "00000000-0000-4000-8000-000000000000" is not a 32-bit integer \(int32\)$/,
        ],
        [
          'a --call given twice',
          [...rg, '--call', 'routeguide.RouteGuide/GetFeature', '--call', 'routeguide.RouteGuide/GetFeature'],
          /^k6pack: --call routeguide\.RouteGuide\/GetFeature is given twice: give its requests as one JSON array, cycled per call$/,
        ],
        [
          'two --call and one --request',
          [
            ...rg,
            '--call',
            'routeguide.RouteGuide/GetFeature',
            '--call',
            'routeguide.RouteGuide/ListFeatures',
            '--request',
            '{}',
          ],
          /^k6pack: 2 --call and 1 requests: give one --request \(or --request-file\) per --call, in the same order, or none$/,
        ],
        // Credentials (common/credentials.js): an endpoint that refuses, during discovery.
        [
          'a GraphQL endpoint that wants a token, given none',
          apiArgs(servers.yogaAuth.url),
          /^k6pack: GraphQL endpoint http:\/\/127\.0\.0\.1:\d+\/graphql: HTTP 401 during discovery: it wants credentials: give them with --header 'Authorization: Bearer \$\{API_TOKEN\}' \(or "headers" in the --api file\)$/,
        ],
        [
          'a wrong token',
          apiArgs(servers.yogaAuth.url, '--header', 'Authorization: Bearer wrong-token-0123456789'),
          /^k6pack: GraphQL endpoint http:\/\/127\.0\.0\.1:\d+\/graphql: HTTP 401 during discovery: it refused Authorization: check their values/,
        ],
        [
          'a header naming a variable that is not set',
          apiArgs(servers.yogaAuth.url, '--header', 'Authorization: Bearer ${K6PACK_TEST_UNSET_TOKEN}'),
          /^k6pack: header Authorization: \$\{K6PACK_TEST_UNSET_TOKEN\} is not set: export K6PACK_TEST_UNSET_TOKEN before running/,
        ],
        [
          'graphql-ws that wants the token in connection_init, given none',
          apiArgs(servers.yogaAuth.url, '--header', `Authorization: Bearer ${TOKEN}`),
          /^k6pack: WebSocket endpoint ws:\/\/127\.0\.0\.1:\d+\/graphql: closed 4403 Forbidden during discovery: it wants credentials: give them with --init-payload '\{"authorization": "Bearer \$\{API_TOKEN\}"\}'/,
        ],
        [
          'a gRPC method that wants a token, given none',
          ['run', 'api', '--grpc', servers.routeGuideAuth.addr, ...GET_FEATURE],
          /^k6pack: gRPC endpoint 127\.0\.0\.1:\d+: gRPC status UNAUTHENTICATED \(16\): a bearer token is required during discovery: it wants credentials: give them with --header 'authorization: Bearer \$\{API_TOKEN\}'/,
        ],
        [
          '--server-pid of no process',
          apiArgs(servers.yoga.url, '--server-pid', '999999999'),
          /^k6pack: --server-pid 999999999: no such process on this machine: give the pid of your server/,
        ],
        [
          'a header without a colon',
          apiArgs(servers.yoga.url, '--header', 'Authorization Bearer x'),
          /^k6pack: --header "Authorization Bearer x": give 'Name: value', e\.g\. 'Authorization: Bearer \$\{API_TOKEN\}'$/,
        ],
        [
          'an init payload that is not JSON',
          apiArgs(servers.yoga.url, '--init-payload', '{token: 1}'),
          /^k6pack: --init-payload \{token: 1\}: not valid JSON .*: give an object/,
        ],
        [
          'only subscriptions, and an endpoint without graphql-ws',
          [
            'run',
            'api',
            '--graphql',
            servers.yogaNoWs.url,
            '--operations',
            file('subscriptions.graphql', 'subscription Ticks { ticks(count: 3, everyMs: 10) { n } }\n'),
          ],
          /^k6pack: every operation in .*subscriptions\.graphql is a subscription, which runs on graphql-transport-ws only, and the WebSocket endpoint does not: the endpoint /,
        ],
        [
          'your API soak at another load level',
          ['run', 'soak', '--graphql', servers.yoga.url, '--operations', OPS],
          /^k6pack: run soak --api runs at load soak \(every lane at SOAK_RATE for SOAK_DURATION\): drop --load smoke and set its length with SOAK_DURATION/,
        ],
        [
          'API flags on another scenario',
          ['run', 'ws-vs-http', '--graphql', servers.yoga.url],
          /^k6pack: --graphql belongs to `run api` \(your own API\), not to ws-vs-http$/,
        ],
      ];
    };

    for (let part = 0; part < BAD_INPUT_PARTS; part++)
      test(`each case, part ${part + 1} of ${BAD_INPUT_PARTS}`, { timeout: scaled(240000) }, async (t) => {
        const { env, ports, cleanup } = await cliEnv({ api: true });
        t.after(cleanup);
        for (const [what, args, message] of cases().filter((_, i) => i % BAD_INPUT_PARTS === part)) {
          const r = await runCli([...args, '--profile', 'lan', '--load', 'smoke'], { env, timeoutMs: scaled(60000) });
          assert.equal(r.exitCode, 2, `${what}: ${r.stdout}${r.stderr}`);
          assert.match(r.stderr, message, what);
          assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
          assert.ok(
            !`${r.stdout}${r.stderr}`.includes(TOKEN) && !r.stderr.includes('wrong-token'),
            `${what}: a token shown`,
          );
          await nothingLeft(env, ports);
        }
      });

    test('a port the pack needs already in use', { timeout: scaled(60000) }, async (t) => {
      const { env, ports, cleanup } = await cliEnv({ api: true });
      t.after(cleanup);
      const blocker = createServer();
      await new Promise((resolve) => blocker.listen(ports.PROXY_API_GRAPHQL_PORT, '127.0.0.1', resolve));
      t.after(() => blocker.close());
      const r = await runCli(apiArgs(servers.yoga.url), {
        env,
      });
      assert.equal(r.exitCode, 2, r.stderr);
      // After the bounded wait (lib/ports.js), naming this test's process as the holder.
      assert.match(
        r.stderr,
        new RegExp(
          `^k6pack: port ${ports.PROXY_API_GRAPHQL_PORT} \\(PROXY_API_GRAPHQL_PORT\\) is already in use \\(waited ${PORT_WAIT_MS / 1000} s; held by pid ${process.pid} \\(.+, listening\\)\\): stop what holds it or set PROXY_API_GRAPHQL_PORT to a free port$`,
        ),
      );
      blocker.close();
      await nothingLeft(env, ports);
    });
  });

  describe('while it runs', { concurrency: true }, () => {
    const args = () => apiArgs(servers.yoga.url, '--grpc', servers.routeGuide.addr, ...GET_FEATURE);

    test('Ctrl-C: k6 stops, exit 130, nothing left running', { timeout: scaled(120000) }, async (t) => {
      const { env, ports, cleanup } = await cliEnv({ api: true });
      t.after(cleanup);
      const child = runCli([...args(), '--profile', 'lte', '--load', 'ci'], { env, timeoutMs: scaled(100000) });
      await waitFor(child, 'step 2/', scaled(60000));
      child.kill('SIGINT');
      const r = await child;
      assert.equal(r.exitCode, 130, r.stdout + r.stderr);
      await nothingLeft(env, ports);
    });

    test(
      'a profile change is refused while the run holds the stack; the run keeps its profile',
      { timeout: scaled(150000) },
      async (t) => {
        const { env, ports, runDir, cleanup } = await cliEnv({ api: true });
        t.after(cleanup);
        // One VU (smoke) on its two lanes (http_fresh, http_keepalive: no https URL, no
        // graphql-ws), each one step of STEP_SECONDS: from its first step the run holds the
        // stack for twice that, so the two reads of the toxics and the refused `profile` (a
        // CLI start: seconds on a loaded machine, beside this file's other tests) fall
        // inside it. A run that ended early fails the test (Toxiproxy gone), never passes it.
        const STEP_SECONDS = Math.round(scaled(10000) / 1000);
        const child = runCli(
          [
            ...apiArgs(servers.yogaNoWs.url, '--profile', 'lte', '--load', 'smoke'),
            '--',
            '-e',
            `STEP_SECONDS=${STEP_SECONDS}`,
          ],
          { env, timeoutMs: scaled(120000) },
        );
        await waitFor(child, 'step 1/', scaled(60000));
        // The proxies' toxics (Toxiproxy's API), before and after the refused switch.
        const toxiproxy = new Toxiproxy(targetsFor(ports).TOXIPROXY_URL);
        const toxics = async () =>
          Object.fromEntries(Object.values(await toxiproxy.proxies()).map((p) => [p.name, p.toxics]));
        const before = await toxics();
        assert.ok(
          Object.values(before).some((list) => list.length > 0),
          `lte's toxics on the proxies: ${JSON.stringify(before)}`,
        );
        const refused = await runCli(['profile', '3g'], { env });
        assert.equal(refused.exitCode, 4, refused.stdout + refused.stderr);
        assert.match(refused.stderr, /the stack is in use by k6pack run api under lte/);
        assert.deepEqual(await toxics(), before, 'the toxics changed');
        const r = await child;
        // What this test is about is the profile, not the budgets: 0, or 99 when only a
        // latency gate failed (beside other tests a lan or lte budget can).
        const doc = summaries(runDir).lte;
        assertDocPassedButLatency(r.exitCode, doc, r.stdout + r.stderr);
        assert.equal(doc.run.profile, 'lte');
        assert.equal(doc.run.network.rttMs, 70);
      },
    );

    test(
      'the server dies mid-run: the run says so and ends (exit 1), nothing left running',
      { timeout: scaled(150000) },
      async (t) => {
        const own = await startYoga({ WS: 'off' });
        t.after(() => own.stop());
        const { env, ports, cleanup } = await cliEnv({ api: true });
        t.after(cleanup);
        // A dying server needs one VU (smoke), and a first step that outlasts the kill by far.
        const STEP_SECONDS = 120;
        const child = runCli(
          [...apiArgs(own.url, '--profile', 'lan', '--load', 'smoke'), '--', '-e', `STEP_SECONDS=${STEP_SECONDS}`],
          { env, timeoutMs: scaled(130000) },
        );
        await waitFor(child, 'step 1/', scaled(60000));
        const killed = Date.now();
        own.child.kill('SIGKILL');
        const r = await child;
        assert.equal(r.exitCode, 1, r.stdout + r.stderr);
        assert.match(
          r.stderr,
          new RegExp(
            `your server at 127\\.0\\.0\\.1:${own.port} \\(behind proxy api_graphql\\) no longer accepts connections \\(ECONNREFUSED\\) \\(it stopped during the run`,
          ),
        );
        // Within the step the server died in: a run that went on would have lasted its step.
        assert.ok(Date.now() - killed < STEP_SECONDS * 1000, 'ended before the first step would have');
        await nothingLeft(env, ports);
      },
    );
  });

  describe('what a run counts', { concurrency: true }, () => {
    test(
      "GraphQL errors and gRPC statuses count as failures, each operation's first error kept (the reference servers: Server-Timing)",
      { timeout: scaled(180000) },
      async (t) => {
        const stack = await startTestStack();
        t.after(() => stack.stop());
        const { env, runDir, cleanup } = await cliEnv({ api: true });
        t.after(cleanup);
        const ops = file(
          'ref.graphql',
          'query Book($id: ID!) { book(id: $id) { id name } }\nquery TooMany { allBooks(nrOfBooks: 600000) { id } }\n',
        );
        // op_failed without abortOnFail, so every lane runs to the end despite the failures.
        const policy = JSON.parse(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'));
        policy.gates.op_failed = ['rate<0.01'];
        const r = await runCli(
          [
            'run',
            'api',
            '--graphql',
            `http://127.0.0.1:${stack.ports.GRAPHQL_PORT}/graphql`,
            '--operations',
            ops,
            '--variables',
            file('ref.json', { Book: { id: 'book-3' } }),
            '--grpc',
            `127.0.0.1:${stack.ports.GRPC_PORT}`,
            '--proto',
            join(ROOT, 'servers', 'proto', 'books.proto'),
            '--call',
            'books.v1.Books/GetBook',
            '--request',
            '{"id": "book-999999999"}',
            '--profile',
            'lan',
            '--load',
            'smoke',
          ],
          { env: { ...env, THRESHOLDS: file('no-abort.json', policy) }, timeoutMs: scaled(150000) },
        );
        assert.equal(r.exitCode, 99, r.stdout + r.stderr);
        assert.match(
          r.stderr,
          /TooMany failed before the run \(GraphQL error: nrOfBooks must be an integer from 0 to 500000/,
        );
        assert.match(r.stderr, /books\.v1\.Books\/GetBook failed before the run \(gRPC status NOT_FOUND \(5\)/);
        assert.match(r.stdout, /Book [\d.]+ ms \(Server-Timing;/, 'the reference server sends Server-Timing');
        const doc = summaries(runDir).lan;
        const failed = (lane, op) => doc.rows.find((x) => x.lane === lane && x.dims.op === op).failures;
        assert.equal(failed('http_keepalive', 'TooMany').rate, 1);
        assert.equal(failed('http_keepalive', 'Book').rate, 0);
        assert.equal(failed('grpc', 'GetBook').rate, 1);
        const errors = Object.fromEntries(doc.errors.map((e) => [e.op, e.message]));
        assert.match(errors.TooMany, /^GraphQL error: nrOfBooks must be an integer from 0 to 500000/);
        assert.match(errors.GetBook, /^gRPC status NOT_FOUND \(5\): no book with id/);
        assert.equal(errors.Book, undefined);
        assert.match(
          readFileSync(join(doc.dir, 'summary.md'), 'utf8'),
          /> First error of TooMany: GraphQL error: nrOfBooks/,
        );
        assert.match(r.stdout, /First error of GetBook: gRPC status NOT_FOUND \(5\)/);
      },
    );

    test(
      'a threshold override for api in a thresholds file fails the run: exit 99, junit names the gate',
      { timeout: scaled(150000) },
      async (t) => {
        const { env, runDir, cleanup } = await cliEnv({ api: true });
        t.after(cleanup);
        const policy = JSON.parse(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'));
        policy.scenarios.api = {
          overrides: [
            {
              where: { lane: 'http_keepalive', op: 'GetBook' },
              p50Ms: 0.01,
              reason: 'a budget no server meets: the test sees the gate fail',
            },
          ],
        };
        const thresholds = file('thresholds.json', policy);
        const r = await runCli(apiArgs(servers.yogaNoWs.url, '--profile', 'lan', '--load', 'smoke'), {
          env: { ...env, THRESHOLDS: thresholds },
          timeoutMs: scaled(120000),
        });
        assert.equal(r.exitCode, 99, r.stdout + r.stderr);
        assert.match(r.stdout, /FAIL op_duration\{scenario:http_keepalive_c1,op:GetBook\} p\(50\)<0\.01/);
        // The other operations keep the model's budgets (whether they hold is test/api-lanes.test.js's).
        assert.match(
          r.stdout,
          /(ok {3}|FAIL )op_duration\{scenario:http_keepalive_c1,op:FirstBooks\} p\(50\)<(?!0\.01\b)/,
        );
        const doc = summaries(runDir).lan;
        assert.match(
          readFileSync(join(doc.dir, 'junit.xml'), 'utf8'),
          /<failure message="op_duration\{scenario:http_keepalive_c1,op:GetBook\}: p\(50\)=/,
        );
      },
    );
  });

  describe(
    "the browser's RPC (--connect): a server this project did not write, and bad input",
    { concurrency: true },
    () => {
      let books;
      let eliza;
      before(async () => {
        books = await createConnectServer({ port: 0, h2cPort: 0, tlsPort: 0 });
        eliza = await startEliza();
      });
      after(async () => {
        await books?.close();
        eliza?.close();
      });

      test(
        'Eliza on @connectrpc/connect-node as your API under lan: every lane runs clean',
        { timeout: scaled(120_000) },
        async (t) => {
          const { env, runDir, cleanup } = await cliEnv({ api: true });
          t.after(cleanup);
          const { url } = eliza;
          const args = ['run', 'api', '--connect', url, '--proto', ELIZA_PROTO, '--call', `${ELIZA_SERVICE}/Say`];
          const r = await runCli(
            [...args, '--request', '{"sentence": "hello {{vu}}"}', '--profile', 'lan', '--load', 'smoke'],
            {
              env,
              timeoutMs: scaled(100_000),
            },
          );
          const doc = summaries(runDir).lan;
          // Clean means no failed call; whether a lan budget holds is test/api-connect.test.js's (timed).
          assertDocPassedButLatency(r.exitCode, doc, `${r.stdout.slice(-3000)}${r.stderr}`);
          for (const lane of API_CONNECT_LANES) {
            const rows = doc.rows.filter((x) => x.lane === lane);
            assert.ok(
              rows.some((x) => x.latency?.count > 0),
              `${lane} ran`,
            );
            assert.ok(
              rows.every((x) => !x.failures?.count),
              `${lane}: no failed call`,
            );
          }
        },
      );

      describe('bad input: one line naming what is at fault, exit 2, nothing left running', () => {
        test('each case', { timeout: scaled(120_000) }, async (t) => {
          const { env, ports, cleanup } = await cliEnv({ api: true });
          t.after(cleanup);
          const base = `http://127.0.0.1:${books.port}`;
          const cases = [
            [
              'a dead endpoint',
              [
                'run',
                'api',
                '--connect',
                'http://127.0.0.1:9',
                '--proto',
                BOOKS_PROTO,
                '--call',
                'books.v1.Books/GetBook',
              ],
              /^k6pack: Connect endpoint http:\/\/127\.0\.0\.1:9: cannot connect \(ECONNREFUSED\)/,
            ],
            ['no --proto', ['run', 'api', '--connect', base], /^k6pack: --connect needs --proto FILE/],
            [
              'not a URL',
              ['run', 'api', '--connect', '127.0.0.1:6080'],
              /^k6pack: --connect 127\.0\.0\.1:6080: not a URL/,
            ],
            [
              'a method the server does not serve',
              ['run', 'api', '--connect', base, '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/TopicInfo'],
              /^k6pack: Connect endpoint .*\/books\.v1\.Books\/TopicInfo: does not serve books\.v1\.Books\/TopicInfo over the Connect protocol \(unimplemented/,
            ],
            [
              'a URL where no Connect server is',
              ['run', 'api', '--connect', `${base}/nope`, '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/GetBook'],
              /^k6pack: Connect endpoint .*\/nope\/books\.v1\.Books\/GetBook: does not serve books\.v1\.Books\/GetBook over the Connect protocol \(HTTP 404/,
            ],
            [
              '--tls without --grpc',
              ['run', 'api', '--connect', base, '--tls', '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/GetBook'],
              /^k6pack: --tls needs --grpc$/,
            ],
          ];
          for (const [what, args, message] of cases) {
            const r = await runCli([...args, '--profile', 'lan', '--load', 'smoke'], {
              env,
              timeoutMs: scaled(60000),
            });
            assert.equal(r.exitCode, 2, `${what}: ${r.stdout}${r.stderr}`);
            assert.match(r.stderr, message, what);
            assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
            await nothingLeft(env, ports);
          }
        });
      });
    },
  );
});
