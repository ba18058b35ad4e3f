// Your own API (`k6pack run api`, `k6pack up --api`) through the CLI as a user runs it, where
// the assertions are not timings (so this file runs beside another in the suite): real
// servers this project did not write (graphql-yoga with and without graphql-ws, over TLS;
// grpc-js serving grpc-node's route_guide.proto), real Toxiproxy and real k6.
//   - discovery runs every lane that applies and says why the others do not, with
//     credentials, each call its own row, the server's CPU per operation;
//   - TLS: an untrusted certificate is refused without --insecure;
//   - `up --api`, then plain `k6 run -e API=… scenarios/api.js`, then `down`.
// A run's exit is 0, or 99 when only latency thresholds failed (test/helpers/exits.js): on a
// busy machine a lan budget may not hold, and that is test/api-lanes.test.js's to judge
// (timed: every lane pays the model's round trips; the gate on your API; the soak).
// Moved here from test/api-lanes.test.js on 2026-11-29 (issue 38: 69 s of the timed phase,
// now beside another file).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { cliEnv, portsInUse, runCli } from './helpers/cli-env.js';
import { assertDocPassedButLatency, assertPassedButLatency, crossedInStderr } from './helpers/exits.js';
import { OPS, PROTO, startRouteGuide, startYoga, VARS } from './helpers/api-servers.js';
import {
  apiArgs,
  apiServers,
  CREDENTIALS,
  filesHolding,
  GET_FEATURE,
  LIST_FEATURES,
  lanesOf,
  nothingLeft,
  scratch,
  summaries,
  TOKEN,
  BURN_US,
} from './helpers/api-run.js';

const file = scratch();
const servers = apiServers();
const SCRIPT = join(ROOT, 'scenarios', 'api.js');

// Every lane of an API that speaks cleartext GraphQL with graphql-ws and plaintext gRPC.
const LANES = ['grpc', 'grpc_fresh', 'grpc_stream', 'http_fresh', 'http_keepalive', 'ws'];

describe('your API: discovery, credentials, TLS', () => {
  test(
    'GraphQL with graphql-ws, and two gRPC calls (unary, server streaming), that ask for a bearer token, under lan: every lane that applies runs with the credentials and changing data, each call its own row, the others say why; no token in any output; report draws it',
    { timeout: 180000 },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv({ api: true });
      t.after(cleanup);
      const r = await runCli(
        apiArgs(
          servers.yogaAuth.url,
          '--grpc',
          servers.routeGuideAuth.addr,
          ...GET_FEATURE,
          ...LIST_FEATURES.slice(2), // its --call and --request (the same --proto)
          ...CREDENTIALS,
          '--server-pid',
          `${servers.yogaAuth.pid},${servers.routeGuideAuth.pid}`,
          '--profile',
          'lan',
          '--load',
          'smoke',
        ),
        { env: { ...env, API_TOKEN: TOKEN }, timeoutMs: 150000 },
      );
      const doc = summaries(runDir).lan;
      assertDocPassedButLatency(r.exitCode, doc, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /== credentials: header Authorization, an init payload \(authorization\) \(values hidden\)\n/,
      );
      assert.match(r.stdout, /== lanes: http_fresh, http_keepalive, ws, grpc, grpc_fresh, grpc_stream\n/);
      assert.match(r.stdout, /== not run: https_fresh: the GraphQL endpoint is cleartext/);
      assert.match(r.stdout, /== not run: http2: the GraphQL endpoint is cleartext/);
      assert.doesNotMatch(r.stdout, /== not run: grpc(_fresh|_stream)?:/);
      assert.match(
        r.stdout,
        /== your API: .*introspection on.*3 operations: GetBook, FirstBooks, Review; gRPC 127\.0\.0\.1:\d+ \(plaintext, no TLS\): routeguide\.RouteGuide\/GetFeature \(unary\), routeguide\.RouteGuide\/ListFeatures \(server streaming\)\n/,
      );
      assert.match(
        r.stdout,
        /== server time under lan at 1 VU .*GetBook \d+(\.\d+)? ms \(round trip; \d+ B up, \d+ B down\)/,
      );
      assert.match(r.stdout, /starting toxiproxy for this run/, 'the reference servers are not needed');
      assert.deepEqual(lanesOf(doc).sort(), LANES);
      // Each gRPC call is a row of the lanes of its kind.
      const opsOf = (lane) => [
        ...new Set(doc.rows.filter((x) => x.lane === lane && x.latency.count).map((x) => x.dims.op)),
      ];
      assert.deepEqual(opsOf('grpc'), ['GetFeature']);
      assert.deepEqual(opsOf('grpc_fresh'), ['GetFeature']);
      assert.deepEqual(opsOf('grpc_stream'), ['ListFeatures']);
      // Each operation is a row of every GraphQL lane.
      for (const lane of ['http_fresh', 'http_keepalive', 'ws']) {
        assert.deepEqual(
          doc.rows
            .filter((x) => x.lane === lane && x.latency.count)
            .map((x) => x.dims.op)
            .sort(),
          ['FirstBooks', 'GetBook', 'Review'],
          lane,
        );
      }
      assert.ok(
        doc.rows.every((x) => !x.failures || x.failures.rate === 0),
        'no failures',
      );
      assert.match(doc.verdict.lines[0], /^lan p50 at c1: /);
      assert.ok(doc.run.hints.api.skipped.some((s) => s.lane === 'wss'));
      assert.ok(
        doc.run.hints.api.serverTime.every((s) => s.from === 'round trip' && s.ms > 0),
        JSON.stringify(doc.run.hints.api.serverTime),
      );
      assert.match(readFileSync(join(doc.dir, 'summary.md'), 'utf8'), /> lan p50 at c1: /);
      assert.equal(
        doc.run.hints.api.credentials,
        'header Authorization, an init payload (authorization) (values hidden)',
      );
      // --server-pid: every lane and step costed; each request burns BURN_US of CPU, a floor
      // the measure must find (its errors: a 10 ms clock tick and the operations in flight at
      // a step's bounds, under 2 % of a step of a few hundred 2 ms operations).
      const cost = doc.serverCost;
      assert.deepEqual([...new Set(cost.rows.map((x) => x.lane))].sort(), LANES);
      assert.equal(cost.rows.length, doc.steps.length);
      for (const row of cost.rows) {
        assert.ok(row.cpuUsPerOp >= 0.8 * BURN_US, `${row.scenario}: ${row.cpuUsPerOp} us an operation`);
        assert.ok(row.rssBytes > 10 * 1048576, `${row.scenario}: rss ${row.rssBytes}`);
      }
      assert.match(r.stdout, /server cost \(pid \d+, \d+; CPU per operation from /);
      assert.match(
        r.stdout,
        /Cheapest for the server: .+ \(\d+ us of CPU an operation at c1\); fastest for the client: /,
      );
      assert.match(readFileSync(join(doc.dir, 'summary.md'), 'utf8'), /Cheapest for the server: /);
      const report = await runCli(['report', doc.dir], { env });
      assert.equal(report.exitCode, 0, report.stderr);
      assert.ok(existsSync(join(doc.dir, 'report.html')));
      // The token (given literally, and through API_TOKEN) is in no output and no file of the run.
      for (const [what, text] of Object.entries({ stdout: r.stdout, stderr: r.stderr, report: report.stdout }))
        assert.ok(!text.includes(TOKEN), `${what} holds the token`);
      assert.deepEqual(filesHolding(join(runDir, 'results'), TOKEN), []);
      assert.deepEqual(filesHolding(runDir, TOKEN), []);
      await nothingLeft(env, ports);
    },
  );

  test(
    'TLS: an untrusted certificate is refused without --insecure; with it, https fresh and keep-alive (no h2 offered), wss and gRPC over TLS run',
    { timeout: 180000 },
    async (t) => {
      const [tls, grpcTls] = await Promise.all([startYoga({ TLS: 'on' }), startRouteGuide({ TLS: 'on' })]);
      t.after(() => Promise.all([tls.stop(), grpcTls.stop()]));
      const { env, runDir, cleanup } = await cliEnv({ api: true });
      t.after(cleanup);
      const graphql = ['--graphql', tls.url, '--operations', OPS, '--variables', VARS];
      const grpc = ['--grpc', grpcTls.addr, '--tls', ...GET_FEATURE];
      const common = ['--profile', 'lan', '--load', 'smoke'];
      const refused = await runCli(['run', 'api', ...graphql, ...common], { env });
      assert.equal(refused.exitCode, 2, refused.stderr);
      assert.match(
        refused.stderr,
        /^k6pack: GraphQL endpoint https:\/\/127\.0\.0\.1:\d+\/graphql: the server's certificate is not trusted \(\w+\): add --insecure to accept it/,
      );
      const refusedGrpc = await runCli(['run', 'api', ...grpc, ...common], { env });
      assert.equal(refusedGrpc.exitCode, 2, refusedGrpc.stderr);
      assert.match(
        refusedGrpc.stderr,
        /^k6pack: gRPC endpoint 127\.0\.0\.1:\d+: the server's certificate is not trusted \(\w+\): add --insecure to accept it/,
      );
      const r = await runCli(['run', 'api', ...graphql, ...grpc, ...common, '--insecure'], { env, timeoutMs: 150000 });
      const doc = summaries(runDir).lan;
      assertDocPassedButLatency(r.exitCode, doc, r.stdout + r.stderr);
      assert.match(r.stdout, /== lanes: https_fresh, https_keepalive, wss, grpc, grpc_fresh\n/);
      assert.match(r.stdout, /== not run: http2: the endpoint's TLS does not offer h2 by ALPN \(it chose http\/1\.1\)/);
      assert.deepEqual(lanesOf(doc).sort(), ['grpc', 'grpc_fresh', 'https_fresh', 'https_keepalive', 'wss']);
      assert.ok(doc.steps.every((s) => s.tls === true));
    },
  );
});

test('up --api, then plain k6 with the plan file, then down', { timeout: 150000 }, async (t) => {
  const { env, ports, runDir, cleanup } = await cliEnv({ api: true });
  t.after(cleanup);
  // Credentials from the config file, naming API_TOKEN: plain k6 reads it from its environment.
  const config = file('up.json', {
    graphql: servers.yogaAuth.url,
    operations: OPS,
    variables: VARS,
    grpc: servers.routeGuideAuth.addr,
    proto: PROTO,
    call: 'routeguide.RouteGuide/GetFeature',
    request: { latitude: 1, longitude: 2 },
    headers: { Authorization: 'Bearer ${API_TOKEN}' },
    initPayload: { authorization: 'Bearer ${API_TOKEN}' },
  });
  const up = await runCli(['up', '--api', config, '--profile', '3g'], {
    env: { ...env, API_TOKEN: TOKEN },
    timeoutMs: 60000,
  });
  assert.equal(up.exitCode, 0, up.stdout + up.stderr);
  const plan = join(runDir, 'api-plan.json');
  assert.ok(up.stdout.includes(`-e API=${plan}`), up.stdout);
  const status = await runCli(['status'], { env });
  assert.match(
    status.stdout,
    new RegExp(
      `api_graphql 127\\.0\\.0\\.1:${ports.PROXY_API_GRAPHQL_PORT} -> 127\\.0\\.0\\.1:${servers.yogaAuth.port}`,
    ),
  );
  assert.match(status.stdout, /api_grpc .*\n\s+link_upstream: link upstream handshake=300 /);
  assert.ok(!readFileSync(plan, 'utf8').includes(TOKEN), 'the plan file holds no token');
  const k6 = await runK6(SCRIPT, {
    env: { API: plan, PROFILE: 'lte', LOAD: 'smoke' },
    processEnv: { API_TOKEN: TOKEN },
    timeoutMs: 120000,
  });
  assertPassedButLatency(k6.code, crossedInStderr(k6.stderr), k6.stdout + k6.stderr.slice(-3000));
  assert.match(k6.stdout, /lte \(R 70 ms\) p50 at c1: /);
  assert.ok(!k6.stdout.includes(TOKEN) && !k6.stderr.includes(TOKEN), 'no token in k6 output');
  // teardown put back what up applied (3g)
  assert.match(
    (await runCli(['status'], { env })).stdout,
    /api_graphql .*\n\s+link_upstream: link upstream handshake=300 /,
  );
  const down = await runCli(['down'], { env });
  assert.equal(down.exitCode, 0, down.stderr);
  assert.ok(!existsSync(plan), 'down removes the plan file');
  assert.deepEqual(await portsInUse(ports), []);
});
