// Your own API (`k6pack gate --api`, `k6pack run soak` with an API), timed: real servers this
// project did not write (graphql-yoga without graphql-ws; grpc-js serving grpc-node's
// route_guide.proto), real Toxiproxy and real k6, through the CLI as a user runs it.
//   - the gate on your API under lte: every lane goes through the proxies and pays the
//     model's round trips, and the gate passes;
//   - `run soak` with an API: 40 s, every lane at once, drift and the server's memory gated.
// Discovery, credentials, TLS and `up --api` (no timings): test/api-discovery.test.js. Bad
// input, what happens while a run holds the stack, errors counted as failures and a
// threshold override: test/api-cli.test.js.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cliEnv, runCli } from './helpers/cli-env.js';
import { OPS, PROTO, VARS } from './helpers/api-servers.js';
import {
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

// Every lane of an API that speaks cleartext GraphQL with graphql-ws and plaintext gRPC.
const LANES = ['grpc', 'grpc_fresh', 'grpc_stream', 'http_fresh', 'http_keepalive', 'ws'];
// How long the soak test runs (SOAK_DURATION). Issue 23's 2-minute soak is a figure of its
// closing note; here 40 s hold everything the test checks (2 arrivals a second: 20 in each
// quarter of every lane, the memory gate's samples after an 8 s warm-up) and save 80 s of
// the timed phase (issue 38: the suite in 20 minutes).
const SOAK_SECONDS = 40;
// A subscription on the example server: an event at once, then one every 20 ms.
const TICKS = 'subscription Ticks { ticks(count: 1000, everyMs: 20) { n book { id title } } }\n';
const p50 = (doc, lane) =>
  Math.min(...doc.rows.filter((r) => r.lane === lane && r.step === 'c1' && r.latency.count).map((r) => r.latency.p50));

describe('your API under a shaped profile: every lane pays the network', () => {
  test(
    'the gate on your API: a server without graphql-ws and a server-streaming method, from a config file, under lte: ws skipped with its reason; every lane pays the network; the gate files',
    { timeout: 180000 },
    async (t) => {
      const { env, runDir, cleanup } = await cliEnv({ api: true });
      t.after(cleanup);
      const config = file('api.json', {
        graphql: servers.yogaNoWs.url,
        operations: OPS,
        variables: VARS,
        grpc: servers.routeGuide.addr,
        proto: PROTO,
        call: 'routeguide.RouteGuide/ListFeatures',
        request: JSON.parse(LIST_FEATURES.at(-1)),
      });
      const gateDir = join(runDir, 'results');
      const r = await runCli(['gate', '--api', config, '--profile', 'lte', '--load', 'smoke', '--results', gateDir], {
        env,
        timeoutMs: 150000,
      });
      assert.equal(r.exitCode, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /== gate: 1 scenario \(api\) × lte, load smoke/);
      assert.match(readFileSync(join(gateDir, 'gate.md'), 'utf8'), /\| api \| lte \| 0 \| .* \| ✅ \d+ passed \|/);
      assert.match(readFileSync(join(gateDir, 'junit.xml'), 'utf8'), /<testsuite name="api \(lte\)/);
      assert.ok(existsSync(join(gateDir, 'report.html')));
      assert.match(r.stdout, /== lanes: http_fresh, http_keepalive, grpc_stream\n/);
      assert.match(
        r.stdout,
        /== not run: ws: the endpoint (refused the graphql-transport-ws subprotocol \(HTTP \d+\)|does not upgrade to WebSocket \(.+\))\n/,
      );
      assert.match(r.stdout, /== not run: grpc: routeguide\.RouteGuide\/ListFeatures streams its answer/);
      const doc = summaries(runDir).lte;
      assert.deepEqual(lanesOf(doc).sort(), ['grpc_stream', 'http_fresh', 'http_keepalive']);
      assert.ok(
        doc.steps.every((s) => s.tls === false),
        'plaintext gRPC and cleartext HTTP: no TLS lane',
      );
      // Through the proxies every lane pays lte's round trips (R = 70 ms): kept connections
      // and the stream R, a fresh connection 2R.
      const R = 70;
      for (const lane of ['http_keepalive', 'grpc_stream'])
        assert.ok(p50(doc, lane) >= R && p50(doc, lane) < 2 * R, `${lane}: p50 ${p50(doc, lane)}`);
      assert.ok(p50(doc, 'http_fresh') >= 2 * R, `http_fresh: p50 ${p50(doc, 'http_fresh')}`);
      assert.match(doc.verdict.lines[1], /Against http fresh: .* save/);
    },
  );

  test(
    "your API's soak: 40 s under lte, every lane at once at a constant rate, with credentials, changing data and a subscription; drift, dropped iterations and the server's memory gated; streams report their first event and events/s",
    { timeout: 300000 },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv({ api: true });
      t.after(cleanup);
      const pids = [servers.yogaAuth.pid, servers.routeGuideAuth.pid];
      // The example operations and a subscription: it runs on ws only, for SUB_EVENTS (5) events.
      const ops = file('soak.graphql', `${readFileSync(OPS, 'utf8')}\n${TICKS}`);
      const r = await runCli(
        [
          'run',
          'soak',
          '--graphql',
          servers.yogaAuth.url,
          '--operations',
          ops,
          '--variables',
          VARS,
          '--grpc',
          servers.routeGuideAuth.addr,
          ...GET_FEATURE,
          ...LIST_FEATURES.slice(2),
          ...CREDENTIALS,
          '--server-pid',
          pids.join(','),
        ],
        { env: { ...env, API_TOKEN: TOKEN, SOAK_DURATION: `${SOAK_SECONDS}s` }, timeoutMs: 270000 },
      );
      assert.equal(r.exitCode, 0, r.stdout + r.stderr);
      // No --profile: the soak's own, lte.
      const doc = summaries(runDir).lte;
      assert.equal(doc.run.load, 'soak');
      assert.equal(doc.run.workload, 'open (mix)');
      assert.deepEqual(lanesOf(doc).sort(), LANES);
      // Every lane ran for the whole soak at SOAK_RATE (2 arrivals a second; a WebSocket
      // arrival runs 5 operations), every operation in both quarters, none failed.
      for (const s of doc.steps) {
        const arrivals = 2 * SOAK_SECONDS * (s.lane === 'ws' ? 5 : 1);
        assert.ok(s.latency.count >= 0.9 * arrivals, `${s.lane}: ${s.latency.count} operations`);
      }
      for (const lane of LANES)
        for (const part of ['first', 'last']) {
          const rows = doc.rows.filter((x) => x.lane === lane && x.dims.part === part && x.latency.count);
          assert.ok(rows.length >= 1, `${lane} ${part}`);
        }
      assert.ok(
        doc.rows.every((x) => !x.failures || x.failures.rate === 0),
        'no failures',
      );
      const gate = (key) => doc.thresholds.find((x) => x.key === key);
      assert.equal(gate('op_drift').threshold, 'p(50)<1.5');
      assert.ok(gate('op_drift').ok && gate('op_drift').observed > 0.5, JSON.stringify(gate('op_drift')));
      assert.ok(gate('dropped_iterations').ok, JSON.stringify(gate('dropped_iterations')));
      // The memory gate, from each pid's /proc: in the run's thresholds, the terminal and summary.md.
      for (const pid of pids) {
        const g = gate(`server_rss_growth{pid:${pid}}`);
        assert.equal(g.threshold, 'max<0.5');
        assert.ok(g.ok, JSON.stringify(g));
      }
      assert.match(
        r.stdout,
        /server memory \(VmRSS from the first sample after the warm-up, \d+(\.\d)? s in; gate server_rss_growth max<0\.5\):\n {2}pid \d+: .* ok\n {2}pid \d+: .* ok(\n|$)/,
      );
      assert.match(readFileSync(join(doc.dir, 'summary.md'), 'utf8'), /server_rss_growth\{pid:\d+\}/);
      // The lanes ran at once: the server's CPU is one row over all their operations, each of
      // which burns BURN_US (the floor the measure must find, as under run api).
      const [cost] = doc.serverCost.rows;
      assert.equal(doc.serverCost.rows.length, 1);
      assert.deepEqual([...cost.lanes].sort(), LANES);
      assert.ok(cost.cpuUsPerOp >= 0.8 * BURN_US, `${cost.cpuUsPerOp} us an operation`);
      assert.match(r.stdout, /The lanes ran at once \(a soak\): /);
      assert.match(doc.verdict.lines[0], /^lte \(R 70 ms\) p50 at mix: /);
      // The subscription on ws only; it and the server stream report the time to their
      // first event (a round trip: R, the server sends the first at once) and events a
      // second (Ticks sends one every 20 ms: 50/s; lte's jitter may bunch a few). Measured
      // (2026-11-27, two runs): first event p50 71.6-71.7 ms, 48.2-48.9 events/s.
      assert.ok(
        doc.rows.every((x) => x.dims.op !== 'Ticks' || x.lane === 'ws'),
        'a subscription runs on ws only',
      );
      const R = 70;
      const streamRow = (lane, op) =>
        doc.rows.find((x) => x.lane === lane && x.dims.op === op && x.dims.part === 'first');
      const ticks = streamRow('ws', 'Ticks');
      assert.ok(ticks.latency.count > 10, JSON.stringify(ticks.latency));
      assert.ok(
        ticks.metrics.first_event.p50 >= 0.97 * R && ticks.metrics.first_event.p50 < R + 60,
        `Ticks: first event ${ticks.metrics.first_event.p50} ms`,
      );
      assert.ok(
        ticks.metrics.event_rate.p50 > 20 && ticks.metrics.event_rate.p50 < 100,
        `Ticks: ${ticks.metrics.event_rate.p50} events/s`,
      );
      const features = streamRow('grpc_stream', 'ListFeatures');
      assert.ok(
        features.metrics.first_event.p50 >= 0.97 * R,
        `ListFeatures: first event ${features.metrics.first_event.p50} ms`,
      );
      assert.ok(features.metrics.event_rate.p50 > 0, JSON.stringify(features.metrics.event_rate));
      assert.match(
        r.stdout,
        /Ticks [\d.]+ ms \(5 events, median of \d+ subscriptions; first event [\d.]+ ms, [\d.]+ events\/s; \d+ B up, \d+ B down\)/,
      );
      assert.match(
        r.stdout,
        /streams \(Ticks, ListFeatures\): time to the first event and events\/s are measured; delivery latency is not/,
      );
      assert.deepEqual(filesHolding(join(runDir, 'results'), TOKEN), []);
      assert.ok(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN));
      await nothingLeft(env, ports);
    },
  );
});
