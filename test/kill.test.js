// A reference server killed with SIGKILL in the middle of `k6pack run`: k6
// reports the failed operations and ends, `k6pack run` names the process that
// died and exits 1, and nothing is left behind (the run's own stack stopped,
// every port free; on an `up` stack the toxics are gone and `status` says
// which process died). Real CLI, servers, toxiproxy and k6. About 50 s.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { targetsFor } from '../common/defaults.js';
import { cliEnv, portsInUse, runCli } from './helpers/cli-env.js';
import { GRPC_VS_GRAPHQL_LANES, WS_VS_HTTP_LANES } from './helpers/lanes.js';

// Live processes running `command` (part of the command line) with
// `NAME=value` in their environment (/proc): the stack's processes get their
// port variables that way, so this finds this test's servers and no one else's.
function processesWithEnv(command, name, value) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const vars = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(command) && vars.includes(`${name}=${value}`) && state !== 'Z') found.push(Number(entry));
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found;
}

// Waits until `text` shows in the child's output (bounded); k6's console lines go to stderr.
async function waitForOutput(child, text, ms = 40000) {
  let seen = '';
  const add = (d) => {
    seen += d;
  };
  child.stdout.on('data', add);
  child.stderr.on('data', add);
  const deadline = Date.now() + ms;
  while (!seen.includes(text)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`no "${text}" in the output within ${ms} ms:\n${seen}`);
    await sleep(100);
  }
}

// ws-vs-http under lan: six lanes of 4 s, plenty of time to kill a server mid-run.
const RUN = [
  'run',
  'ws-vs-http',
  '--profile',
  'lan',
  '--load',
  'smoke',
  '--no-samples',
  '--',
  '-e',
  'STEP_SECONDS=4',
  '-e',
  `LANES=${WS_VS_HTTP_LANES}`,
];

test(
  "SIGKILL of the GraphQL server during a run with the run's own stack: named, exit 1, nothing left",
  { timeout: 120000 },
  async (t) => {
    const cli = await cliEnv();
    t.after(cli.cleanup);
    const env = { ...cli.env, K6PACK_RESULTS_DIR: cli.runDir };
    const child = runCli(RUN, { env, timeoutMs: 100000 });
    try {
      // k6 is running once the first step announces itself.
      await waitForOutput(child, 'step 1/');
      await sleep(1500);
      const servers = processesWithEnv('servers/graphql/server.js', 'GRAPHQL_PORT', cli.ports.GRAPHQL_PORT);
      assert.equal(servers.length, 1, `one GraphQL server of this run (found ${servers})`);
      process.kill(servers[0], 'SIGKILL');
      const r = await child;
      const output = `${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`;
      assert.ok(!r.timedOut, `k6pack run did not end\n${output}`);
      assert.equal(r.exitCode, 1, output);
      assert.match(
        r.stderr,
        new RegExp(
          `the GraphQL server \\(pid ${servers[0]}\\) is not running; its log \\(\\S+graphql\\.log\\) ends: .* \\(it died during the run\\)`,
        ),
        output,
      );
      // k6 saw the failures and ended on its own (the failure threshold aborts it).
      assert.match(r.stdout + r.stderr, /operation failed in /, output);
      assert.match(r.stdout, /== ws-vs-http, profile lan: k6 exited \d+/, output);
      // Nothing left: no process of this stack, every port free.
      for (const command of ['servers/graphql/server.js', 'servers/grpc/server.js', 'toxiproxy-server', 'k6']) {
        assert.deepEqual(
          processesWithEnv(command, 'GRAPHQL_PORT', cli.ports.GRAPHQL_PORT),
          [],
          `no ${command} of this run is left`,
        );
      }
      assert.deepEqual(await portsInUse(cli.ports), [], 'every port of the stack is free');
    } finally {
      child.kill('SIGKILL');
    }
  },
);

test(
  'SIGKILL of the gRPC server during a run on an `up` stack: named, exit 1, toxics gone, status says so',
  { timeout: 120000 },
  async (t) => {
    const cli = await cliEnv();
    t.after(cli.cleanup);
    const env = { ...cli.env, K6PACK_RESULTS_DIR: cli.runDir };
    const up = await runCli(['up'], { env, timeoutMs: 60000 });
    assert.equal(up.exitCode, 0, up.stderr);
    const grpcPid = Number(readFileSync(`${cli.runDir}/grpc.pid`, 'utf8'));
    const child = runCli(
      [
        'run',
        'grpc-vs-graphql',
        '--profile',
        'lte',
        '--load',
        'smoke',
        '--no-samples',
        '--',
        '-e',
        'STEP_SECONDS=4',
        '-e',
        'BIG_SIZE=1000',
        '-e',
        `LANES=${GRPC_VS_GRAPHQL_LANES}`,
      ],
      { env, timeoutMs: 100000 },
    );
    try {
      await waitForOutput(child, 'step 1/');
      await sleep(1500);
      process.kill(grpcPid, 'SIGKILL');
      const r = await child;
      const output = `${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`;
      assert.ok(!r.timedOut, `k6pack run did not end\n${output}`);
      assert.equal(r.exitCode, 1, output);
      assert.match(
        r.stderr,
        new RegExp(`the gRPC server \\(pid ${grpcPid}\\) is not running; its log .* \\(it died during the run\\)`),
        output,
      );
      assert.match(r.stderr, /`npx k6pack up` restarts what died/, output);
      // The run's profile is gone from the stack it found without toxics.
      const toxiproxy = new Toxiproxy(targetsFor(cli.ports).TOXIPROXY_URL);
      for (const [name, proxy] of Object.entries(await toxiproxy.proxies()))
        assert.deepEqual(proxy.toxics, [], `${name} has no toxics left`);
      const status = await runCli(['status'], { env, timeoutMs: 30000 });
      assert.equal(status.exitCode, 1, status.stdout + status.stderr);
      assert.match(status.stdout + status.stderr, /grpc/i);
    } finally {
      child.kill('SIGKILL');
    }
  },
);
