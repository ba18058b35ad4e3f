// What test/api-lanes.test.js (timed: every lane pays the model's round trips),
// test/api-discovery.test.js (discovery, credentials, TLS, up --api) and test/api-cli.test.js
// (bad input, and what happens while a run holds the stack) share:
// the API servers this project did not write, a scratch folder, the run folders' summaries
// and the check that a CLI run left nothing behind.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { portsInUse, processesMatching } from './cli-env.js';
import { OPS, PROTO, startRouteGuide, startYoga, VARS } from './api-servers.js';

// A scratch folder for the test file's inputs, removed after it.
export function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-api-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return (name, text) => {
    const p = join(dir, name);
    writeFileSync(p, typeof text === 'string' ? text : JSON.stringify(text));
    return p;
  };
}

// `run api` against a GraphQL endpoint with the test operations and their variables,
// then `more` (e.g. ['--grpc', addr, ...GET_FEATURE, '--profile', 'lan']).
export const apiArgs = (graphqlUrl, ...more) => [
  'run',
  'api',
  '--graphql',
  graphqlUrl,
  '--operations',
  OPS,
  '--variables',
  VARS,
  ...more,
];

export const GET_FEATURE = [
  '--proto',
  PROTO,
  '--call',
  'routeguide.RouteGuide/GetFeature',
  '--request',
  '{"latitude": 401000000, "longitude": -741000000}',
];
export const LIST_FEATURES = [
  '--proto',
  PROTO,
  '--call',
  'routeguide.RouteGuide/ListFeatures',
  '--request',
  '{"lo": {"latitude": 400000000, "longitude": -750000000}, "hi": {"latitude": 405000000, "longitude": -740000000}}',
];

// The summary.json of the run folders a run wrote, by profile.
export function summaries(runDir) {
  const root = join(runDir, 'results');
  return Object.fromEntries(
    readdirSync(root)
      .filter((d) => d.startsWith('api-'))
      .map((d) => {
        const doc = JSON.parse(readFileSync(join(root, d, 'summary.json'), 'utf8'));
        return [doc.run.profile, { ...doc, dir: join(root, d) }];
      }),
  );
}

// The lanes of a run's summary that recorded operations.
export const lanesOf = (doc) => [...new Set(doc.rows.filter((r) => r.latency && r.latency.count).map((r) => r.lane))];

// Nothing a CLI run left behind: no toxiproxy on its port, no k6 of a plan in its run dir
// (lib/api/run-api.js writes <run dir>/api-plan-<pid>.json and names it on k6's command
// line), every port of its env free, no plan file. Each of these is the run's own (cliEnv gives every test
// its ports and run dir), so a `run api` of another test or file beside it neither hides nor
// fakes what this one left.
export async function nothingLeft(env, ports) {
  assert.deepEqual(processesMatching(`-port ${ports.TOXIPROXY_PORT}`), [], 'no toxiproxy left');
  assert.deepEqual(processesMatching(join(env.K6PACK_RUN_DIR, 'api-plan-')), [], 'no k6 of an api run left');
  assert.deepEqual(await portsInUse(ports), [], 'every port free');
  assert.deepEqual(
    existsSync(env.K6PACK_RUN_DIR) ? readdirSync(env.K6PACK_RUN_DIR).filter((f) => f.startsWith('api-plan')) : [],
    [],
    'no plan file left',
  );
}

// The bearer token yogaAuth and routeGuideAuth ask for (the servers' TOKEN).
export const TOKEN = 'k6pack-test-token-7f3a9c2e';
// The CPU time yogaAuth and routeGuideAuth burn per request (their BURN_US): a known
// floor under the server cost --server-pid measures.
export const BURN_US = 2000;
// What sends it: a literal header (the run moves it to k6's environment) and an init
// payload naming API_TOKEN (k6 and the CLI read it from their environment).
export const CREDENTIALS = [
  '--header',
  `Authorization: Bearer ${TOKEN}`,
  '--init-payload',
  '{"authorization": "Bearer ${API_TOKEN}"}',
];

// Every file under dir whose text holds `needle`.
export function filesHolding(dir, needle) {
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) found.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

// graphql-yoga with and without graphql-ws, and grpc-node's route guide, each also asking
// for TOKEN and burning BURN_US a request (yogaAuth, routeGuideAuth), for the whole test file: the returned object's
// fields are set before its first test.
export function apiServers() {
  const s = {};
  before(async () => {
    [s.yoga, s.yogaNoWs, s.routeGuide, s.yogaAuth, s.routeGuideAuth] = await Promise.all([
      startYoga(),
      startYoga({ WS: 'off' }),
      startRouteGuide(),
      startYoga({ TOKEN, BURN_US: String(BURN_US) }),
      startRouteGuide({ TOKEN, BURN_US: String(BURN_US) }),
    ]);
  });
  after(async () => {
    await Promise.all(
      [s.yoga, s.yogaNoWs, s.routeGuide, s.yogaAuth, s.routeGuideAuth].filter(Boolean).map((x) => x.stop()),
    );
  });
  return s;
}
