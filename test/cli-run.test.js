// `k6pack run` with the real k6 on tiny scripts: exit codes passed on, the
// stack left as found, and Ctrl-C / SIGTERM leaving no process and no toxics.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROXY_NAMES, targetsFor } from '../common/defaults.js';
import { isAlive } from '../lib/processes.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { cliEnv, portsInUse, processesMatching, runCli, waitFor } from './helpers/cli-env.js';
import { scaled } from './helpers/waits.js';
import { startTestStack } from '../dev/test-stack.js';

const dir = mkdtempSync(join(tmpdir(), 'k6pack-scripts-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function script(name, body) {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
}

const healthz = "__ENV.GRAPHQL_HTTP_URL.replace(/\\/graphql$/, '/healthz')";

// One request through the GraphQL proxy; the checks also see what the CLI passed in.
const ONE_REQUEST = script(
  'one-request.js',
  `import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 1, thresholds: { checks: ['rate==1'] } };
export default function () {
  const res = http.get(${healthz});
  check(res, { 'healthz 200': (r) => r.status === 200 });
  check(__ENV, { 'PROFILE passed': (e) => e.PROFILE === e.EXPECT_PROFILE, 'LOAD passed': (e) => e.LOAD === 'smoke' });
}
`,
);

const UNMEETABLE = script(
  'unmeetable.js',
  `import http from 'k6/http';
export const options = { iterations: 1, thresholds: { http_req_duration: ['max<0'] } };
export default function () { http.get(${healthz}); }
`,
);

// Runs until stopped; says when it is under way and when teardown ran.
const LONG = script(
  'long-running.js',
  `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 1, duration: '120s' };
export function setup() { console.log('LONG-SETUP-DONE'); }
export default function () { http.get(${healthz}); sleep(0.2); }
export function teardown() { console.log('LONG-TEARDOWN-RAN'); }
`,
);

async function toxicNames(ports) {
  const proxies = await new Toxiproxy(targetsFor(ports).TOXIPROXY_URL).proxies();
  return Object.fromEntries(Object.values(proxies).map((p) => [p.name, p.toxics.map((t) => t.name).sort()]));
}

test(
  'run a script path with no stack up: starts it, exits 0, stops it again',
  { timeout: scaled(120000) },
  async (t) => {
    const { env, ports, cleanup } = await cliEnv();
    t.after(cleanup);
    const r = await runCli(
      ['run', ONE_REQUEST, '--profile', 'lan', '--load', 'smoke', '--', '-e', 'EXPECT_PROFILE=lan', '--quiet'],
      { env, timeoutMs: scaled(90000) },
    );
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /starting it for this run/);
    assert.match(r.stdout, /✓ healthz 200/);
    assert.match(r.stdout, /k6 exited 0/);
    assert.deepEqual(await portsInUse(ports), [], 'the stack this run started is gone');
  },
);

test(
  'run on a running stack: each profile applied in turn, the found toxics put back; 99 passed on',
  { timeout: scaled(150000) },
  async (t) => {
    const { env, ports, cleanup } = await cliEnv();
    t.after(cleanup);
    assert.equal((await runCli(['up', '--profile', '3g'], { env })).exitCode, 0);
    const before = await toxicNames(ports);
    assert.ok(before.graphql_http.length > 0);

    // The script checks PROFILE equals EXPECT_PROFILE: passes for lan, fails (99) for 3g.
    const r = await runCli(
      ['run', ONE_REQUEST, '--profile', 'lan,3g', '--load', 'smoke', '--', '-e', 'EXPECT_PROFILE=lan', '--quiet'],
      {
        env,
        timeoutMs: scaled(120000),
      },
    );
    assert.match(r.stdout, /profile lan: k6 exited 0/);
    assert.match(r.stdout, /profile 3g: k6 exited 99/);
    assert.equal(r.exitCode, 99, 'the first non-zero exit code');
    assert.doesNotMatch(r.stdout, /starting it for this run/);
    assert.deepEqual(await toxicNames(ports), before, 'the 3g toxics found before the run are back');
    assert.equal((await runCli(['status'], { env })).exitCode, 0, 'the stack still runs');

    const fail = await runCli(['run', UNMEETABLE, '--profile', 'lan', '--', '--quiet'], {
      env,
      timeoutMs: scaled(60000),
    });
    assert.equal(fail.exitCode, 99, 'a failed threshold is k6 exit 99, passed on');
    assert.deepEqual(await toxicNames(ports), before);
  },
);

test(
  'Ctrl-C during run on a running stack: k6 stops after teardown, toxics removed, exit 130',
  { timeout: scaled(120000) },
  async (t) => {
    const { env, ports, cleanup } = await cliEnv();
    t.after(cleanup);
    assert.equal((await runCli(['up'], { env })).exitCode, 0);
    const child = runCli(['run', LONG, '--profile', '3g'], { env, timeoutMs: scaled(90000) });
    await waitFor(child, 'LONG-SETUP-DONE', scaled(60000));
    assert.ok((await toxicNames(ports)).graphql_http.length > 0, '3g applied while k6 runs');
    child.kill('SIGINT');
    const r = await child;
    assert.equal(r.exitCode, 130, r.stdout + r.stderr);
    assert.match(r.stderr, /LONG-TEARDOWN-RAN/, 'k6 stopped gracefully and ran teardown');
    assert.deepEqual(processesMatching(LONG), [], 'no k6 left');
    assert.deepEqual(Object.values(await toxicNames(ports)).flat(), [], 'no toxics left');
    assert.equal((await runCli(['status'], { env })).exitCode, 0, 'the stack the run found is still up');
  },
);

test(
  'SIGTERM during run with no stack up: exit 143, no k6, server or toxiproxy left',
  { timeout: scaled(120000) },
  async (t) => {
    const { env, ports, cleanup } = await cliEnv();
    t.after(cleanup);
    const child = runCli(['run', LONG, '--profile', '3g'], { env, timeoutMs: scaled(90000) });
    await waitFor(child, 'LONG-SETUP-DONE', scaled(60000));
    child.kill('SIGTERM');
    const r = await child;
    assert.equal(r.exitCode, 143, r.stdout + r.stderr);
    assert.deepEqual(processesMatching(LONG), [], 'no k6 left');
    assert.deepEqual(processesMatching(`-port ${ports.TOXIPROXY_PORT}`), [], 'no toxiproxy left');
    assert.deepEqual(await portsInUse(ports), [], 'no server left');
  },
);

test(
  'run against a stack it did not start and has not recorded (e.g. docker compose): used as is, toxics put back',
  { timeout: scaled(120000) },
  async (t) => {
    const stack = await startTestStack();
    t.after(() => stack.stop());
    const { env: cli, cleanup } = await cliEnv();
    t.after(cleanup);
    const env = { ...cli, ...Object.fromEntries(Object.entries(stack.ports).map(([k, v]) => [k, String(v)])) };
    const slow = [{ name: 'slow', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 100 } }];
    await stack.toxiproxy.applyToxics(slow);

    const r = await runCli(
      ['run', ONE_REQUEST, '--profile', 'lan', '--load', 'smoke', '--', '-e', 'EXPECT_PROFILE=lan', '--quiet'],
      { env, timeoutMs: scaled(90000) },
    );
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /starting it for this run/);
    assert.deepEqual(
      Object.values(await toxicNames(stack.ports)),
      PROXY_NAMES.map(() => ['slow']),
    );
    for (const pid of Object.values(stack.pids)) assert.ok(isAlive(pid), 'still running');
  },
);
