// `k6pack up / status / profile / down` as a user runs them: a child process
// on free ports with its own run dir; real servers, toxiproxy and its API.
// Every test has its own ports and run dir (cliEnv), so three run at once: most of
// their time is waiting for processes to start and stop.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { execa } from 'execa';
import { PROXY_NAMES, targetsFor } from '../common/defaults.js';
import { k6RunArgs, requireK6 } from '../lib/k6.js';
import { PORT_WAIT_MS } from '../lib/ports.js';
import { isAlive } from '../lib/processes.js';
import { writeState } from '../lib/runstate.js';
import { ROOT } from '../lib/tools.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { cliEnv, portsInUse, recordedPids, runCli } from './helpers/cli-env.js';
import { startPortHolder } from './helpers/port-holder.js';
import { scaled } from './helpers/waits.js';

const oneLine = (text) => text.trim().split('\n').length === 1;

// { proxyName: { toxicName: toxic } } from the API.
async function toxicsByProxy(toxiproxy) {
  const out = {};
  for (const p of Object.values(await toxiproxy.proxies()))
    out[p.name] = Object.fromEntries(p.toxics.map((t) => [t.name, t]));
  return out;
}

const attrsOf = (toxics, type, stream) =>
  Object.values(toxics).find((t) => t.type === type && t.stream === stream)?.attributes;

describe('the stack commands', { concurrency: 3 }, () => {
  // The longest (five ups and downs, one after another) first: it sets the file's time.
  test(
    'down then up, back to back, five times: every up starts, every port free as down returns',
    { timeout: scaled(180000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      for (let i = 1; i <= 5; i++) {
        const up = await runCli(['up'], { env });
        assert.equal(up.exitCode, 0, `up #${i}: ${up.stderr}`);
        const pids = recordedPids(runDir);
        assert.equal(pids.length, 4, `up #${i}`);
        const down = await runCli(['down'], { env });
        assert.equal(down.exitCode, 0, `down #${i}: ${down.stderr}`);
        for (const pid of pids) assert.ok(!isAlive(pid), `down #${i}: pid ${pid} gone`);
        assert.deepEqual(await portsInUse(ports), [], `down #${i}: every port free as it returns`);
      }
    },
  );

  test('up -> status -> profile 3g -> profile lan -> down', { timeout: scaled(120000) }, async (t) => {
    const { env, ports, runDir, cleanup } = await cliEnv();
    t.after(cleanup);
    const toxiproxy = new Toxiproxy(targetsFor(ports).TOXIPROXY_URL);

    const up = await runCli(['up'], { env });
    assert.equal(up.exitCode, 0, up.stderr);
    assert.match(up.stdout, /profile lan: no toxics/);
    for (const [k, v] of Object.entries(targetsFor(ports)))
      assert.ok(up.stdout.includes(`${k}=${v}`), `prints ${k}=${v}`);
    const pids = recordedPids(runDir);
    assert.equal(pids.length, 4);
    for (const pid of pids) assert.ok(isAlive(pid), `pid ${pid} runs after up exited`);
    assert.ok(existsSync(join(runDir, 'toxiproxy.log')));

    const status = await runCli(['status'], { env });
    assert.equal(status.exitCode, 0, status.stdout + status.stderr);
    for (const name of ['graphql', 'grpc', 'connect', 'toxiproxy'])
      assert.match(status.stdout, new RegExp(`^  ${name} +pid \\d+ +running;`, 'm'));
    assert.ok(status.stdout.includes(`${ports.PROXY_GRAPHQL_PORT} (PROXY_GRAPHQL_PORT)`));
    assert.match(status.stdout, /graphql_http \S+ -> \S+: none/);

    const p3g = await runCli(['profile', '3g'], { env });
    assert.equal(p3g.exitCode, 0, p3g.stderr);
    assert.match(p3g.stdout, /profile 3g: on every proxy/);
    const toxics = await toxicsByProxy(toxiproxy);
    assert.deepEqual(Object.keys(toxics).sort(), [...PROXY_NAMES].sort());
    for (const [proxy, list] of Object.entries(toxics)) {
      assert.equal(attrsOf(list, 'link', 'upstream')?.latency, 150, `${proxy}: 150 ms up`);
      assert.equal(attrsOf(list, 'link', 'downstream')?.latency, 150, `${proxy}: 150 ms down`);
      assert.equal(attrsOf(list, 'link', 'upstream')?.bitrate, 768000, `${proxy}: upstream bandwidth`);
      assert.equal(attrsOf(list, 'link', 'downstream')?.bitrate, 1600000, `${proxy}: downstream bandwidth`);
      assert.equal(attrsOf(list, 'link', 'upstream')?.handshake, 300, `${proxy}: handshake one 300 ms RTT`);
      assert.equal(attrsOf(list, 'link', 'downstream')?.iw, 14600, `${proxy}: slow start from 10 segments`);
    }
    const status3g = await runCli(['status'], { env });
    assert.match(status3g.stdout, /profile 3g/);
    assert.match(status3g.stdout, /link_upstream: link upstream handshake=300 latency=150 /);

    // A radio's event log, a read-only attribute of the uplink's link toxic, prints as its length.
    assert.equal((await runCli(['profile', '3g+rrc'], { env })).exitCode, 0);
    const statusRrc = await runCli(['status'], { env });
    assert.match(statusRrc.stdout, /link_upstream: link upstream .* radio=2 radio_device=1 .*radio_log=\[\d+ events\]/);
    assert.doesNotMatch(statusRrc.stdout, /\[object Object\]/);

    // Already running: says so, applies the profile it is given, exit 0.
    const again = await runCli(['up', '--profile', 'lan'], { env });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.match(again.stdout, /already running/);
    for (const list of Object.values(await toxicsByProxy(toxiproxy))) assert.deepEqual(list, {});
    assert.deepEqual(recordedPids(runDir).sort(), pids.sort(), 'the same processes');

    const down = await runCli(['down'], { env });
    assert.equal(down.exitCode, 0, down.stderr);
    for (const pid of pids) assert.ok(!isAlive(pid), `pid ${pid} gone after down`);
    assert.deepEqual(recordedPids(runDir), [], 'pid files removed');
    assert.deepEqual(await portsInUse(ports), []);

    const downAgain = await runCli(['down'], { env });
    assert.equal(downAgain.exitCode, 0, 'down is idempotent');
    const statusDown = await runCli(['status'], { env });
    assert.notEqual(statusDown.exitCode, 0);
    assert.match(statusDown.stdout, /not running/);
  });

  test(
    'up and run with a port a live process holds: refused after the bounded wait, one line naming the port, its variable and the pid; nothing left running',
    { timeout: scaled(90000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      const holder = createServer().listen(ports.PROXY_GRAPHQL_PORT, '127.0.0.1');
      await new Promise((r) => holder.once('listening', r));
      t.after(async () => {
        holder.close();
        await cleanup();
      });
      const refusal = new RegExp(
        `^k6pack: port ${ports.PROXY_GRAPHQL_PORT} \\(PROXY_GRAPHQL_PORT\\) is already in use \\(waited ${PORT_WAIT_MS / 1000} s; held by pid ${process.pid} \\(.+, listening\\)\\): stop what holds it or set PROXY_GRAPHQL_PORT to a free port$`,
      );
      for (const args of [['up'], ['run', 'ws-vs-http', '--profile', 'lan', '--load', 'smoke', '--no-samples']]) {
        const t0 = Date.now();
        const r = await runCli(args, { env });
        const took = Date.now() - t0;
        assert.equal(r.exitCode, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
        assert.ok(oneLine(r.stderr), r.stderr);
        assert.match(r.stderr.trim(), refusal);
        // The wait, plus Node's start-up: never a hang.
        assert.ok(took >= PORT_WAIT_MS && took < PORT_WAIT_MS + scaled(15000), `${args[0]} refused after ${took} ms`);
        assert.deepEqual(recordedPids(runDir), []);
        const { PROXY_GRAPHQL_PORT, ...others } = ports;
        assert.deepEqual(await portsInUse(others), []);
      }
    },
  );

  test(
    'up while a port is held by a process that is exiting: waits for it, then starts',
    { timeout: scaled(60000) },
    async (t) => {
      const { env, ports, cleanup } = await cliEnv();
      t.after(cleanup);
      // A listener on GRPC_TLS_PORT that exits 1.5 s after it starts listening.
      const exiting = execa(
        process.execPath,
        [
          '-e',
          `require('net').createServer().listen(${ports.GRPC_TLS_PORT}, '127.0.0.1', () => { console.log('listening'); setTimeout(() => process.exit(0), 1500); })`,
        ],
        { reject: false },
      );
      t.after(() => exiting.kill('SIGKILL'));
      await new Promise((resolve) => exiting.stdout.once('data', resolve));
      const up = await runCli(['up'], { env });
      assert.equal(up.exitCode, 0, up.stderr);
      assert.match(up.stdout, /stack up;/);
      const down = await runCli(['down'], { env });
      assert.equal(down.exitCode, 0, down.stderr);
    },
  );

  test(
    'down when a port of the stack is still held after the stop: one line naming the port and the pid, exit 1, bounded',
    { timeout: scaled(60000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      // A recorded "gRPC server" whose listening socket a child in another session keeps.
      const holder = await startPortHolder(ports.GRPC_PORT, 'outside');
      t.after(holder.cleanup);
      writeState(runDir, {
        ports,
        pids: { grpc: holder.pid },
        markers: { grpc: 'port-holder.js' },
        logs: {},
        startedAt: new Date().toISOString(),
        profile: null,
      });
      const t0 = Date.now();
      const down = await runCli(['down'], { env });
      const took = Date.now() - t0;
      assert.equal(down.exitCode, 1, down.stdout + down.stderr);
      assert.match(down.stdout, new RegExp(`^stopped grpc \\(pid ${holder.pid}\\)$`, 'm'));
      assert.ok(oneLine(down.stderr), down.stderr);
      assert.match(
        down.stderr.trim(),
        new RegExp(
          `^k6pack: port ${ports.GRPC_PORT} \\(GRPC_PORT\\) is still in use ${PORT_WAIT_MS / 1000} s after the gRPC server \\(pid ${holder.pid}\\) stopped: held by pid ${holder.child} \\(.*port-holder\\.js --child, listening\\)$`,
        ),
      );
      assert.ok(took >= PORT_WAIT_MS && took < PORT_WAIT_MS + scaled(15000), `down gave up after ${took} ms`);
      assert.deepEqual(recordedPids(runDir), [], 'pid files removed');
    },
  );

  test(
    'up with a server that will not start: one line naming it, nothing left running',
    { timeout: scaled(60000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      const up = await runCli(['up'], {
        env: { ...env, TLS_CERT_FILE: '/nonexistent/cert.pem', TLS_KEY_FILE: '/nonexistent/key.pem' },
      });
      assert.equal(up.exitCode, 1);
      assert.ok(oneLine(up.stderr), up.stderr);
      assert.match(
        up.stderr,
        /^k6pack: (GraphQL|gRPC|Connect) server exited during start-up .*\/nonexistent\/cert\.pem/,
      );
      assert.ok(!existsSync(join(runDir, 'stack.json')));
      assert.deepEqual(await portsInUse(ports), []);
    },
  );

  test(
    'bad input: unknown profile, unknown scenario, no stack for `profile`; --help everywhere',
    { timeout: scaled(60000) },
    async (t) => {
      const { env, ports, cleanup } = await cliEnv();
      t.after(cleanup);

      // The commands are independent (none starts anything or waits on a timer): all at
      // once. `profile 3g` waits for Toxiproxy's answer for a bounded time: it runs alone,
      // below, so that a dozen processes starting beside it cannot starve it of that time.
      const badProfiles = [
        ['profile', 'nope'],
        ['up', '--profile', 'nope'],
        ['run', 'ws-vs-http', '--profile', 'lan,nope'],
      ];
      const helps = ['up', 'down', 'status', 'profile', 'run', 'list', 'tools'];
      const [bad, [scen, list], help] = await Promise.all([
        Promise.all(badProfiles.map((args) => runCli(args, { env }))),
        Promise.all([['run', 'no-such-scenario'], ['list']].map((args) => runCli(args, { env }))),
        Promise.all(helps.map((cmd) => runCli([cmd, '--help'], { env }))),
      ]);
      badProfiles.forEach((args, i) => {
        const r = bad[i];
        assert.equal(r.exitCode, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.ok(oneLine(r.stderr), r.stderr);
        assert.match(r.stderr, /^k6pack: .*"nope".*\blan\b.*\b3g\b/);
      });
      assert.deepEqual(await portsInUse(ports), [], 'a bad profile starts nothing');

      assert.equal(scen.exitCode, 2);
      assert.ok(oneLine(scen.stderr), scen.stderr);
      assert.match(scen.stderr, /^k6pack: unknown scenario 'no-such-scenario': choose one of .*\bws-vs-http\b/);

      const prof = await runCli(['profile', '3g'], { env });
      assert.equal(prof.exitCode, 1);
      assert.equal(
        prof.stderr.trim(),
        `k6pack: Toxiproxy is not reachable at http://127.0.0.1:${ports.TOXIPROXY_PORT}: start the stack with \`npx k6pack up\``,
      );

      helps.forEach((cmd, i) => {
        assert.equal(help[i].exitCode, 0, `${cmd} --help`);
        assert.match(help[i].stdout, new RegExp(`^Usage: k6pack ${cmd}`), cmd);
      });
      assert.equal(list.exitCode, 0);
      assert.match(list.stdout, /^ {2}ws-vs-http +\S/m);
      assert.match(list.stdout, /^ {2}3g +\S/m);
      assert.match(list.stdout, /^ {2}flaky +\S/m);
    },
  );

  test(
    'a recorded stack with a dead process: status names it, run refuses naming it, up restarts just what died',
    { timeout: scaled(120000) },
    async (t) => {
      const { env, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      assert.equal((await runCli(['up'], { env })).exitCode, 0);
      const grpcPid = Number(readFileSync(join(runDir, 'grpc.pid'), 'utf8'));
      const graphqlPid = Number(readFileSync(join(runDir, 'graphql.pid'), 'utf8'));
      process.kill(grpcPid, 'SIGKILL');
      const deadline = Date.now() + 5000;
      while (isAlive(grpcPid) && Date.now() < deadline) await sleep(50);

      const status = await runCli(['status'], { env });
      assert.equal(status.exitCode, 1);
      assert.match(status.stdout, /^ {2}grpc +pid \d+ +NOT RUNNING/m);

      const run = await runCli(['run', 'ws-vs-http'], { env });
      assert.equal(run.exitCode, 1);
      assert.ok(oneLine(run.stderr), run.stderr);
      assert.match(
        run.stderr,
        /the gRPC server \(pid \d+\) is not running; its log \(.*grpc\.log\) ends: .*`npx k6pack up` restarts what died/,
      );

      const up = await runCli(['up'], { env });
      assert.equal(up.exitCode, 0, up.stderr);
      assert.match(up.stdout, /restarting grpc\n/);
      assert.equal(
        Number(readFileSync(join(runDir, 'graphql.pid'), 'utf8')),
        graphqlPid,
        'the GraphQL server kept running',
      );
      assert.notEqual(Number(readFileSync(join(runDir, 'grpc.pid'), 'utf8')), grpcPid);
      assert.equal((await runCli(['status'], { env })).exitCode, 0);
    },
  );

  // Toxiproxy dies (a Go runtime dump: SIGABRT makes it print one, as a panic does):
  // every command that needs it names it with the end of its log, instead of
  // "not reachable ... start the stack", and `up` restarts just it, with its profile.
  test(
    "a dead toxiproxy is named with the end of its log by profile, status, run, gate and a scenario's setup(); up restarts just it",
    { timeout: scaled(180000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      assert.equal((await runCli(['up', '--profile', 'lte'], { env })).exitCode, 0);
      const pid = Number(readFileSync(join(runDir, 'toxiproxy.pid'), 'utf8'));
      const graphqlPid = Number(readFileSync(join(runDir, 'graphql.pid'), 'utf8'));
      process.kill(pid, 'SIGABRT');
      const deadline = Date.now() + 5000;
      while (isAlive(pid) && Date.now() < deadline) await sleep(50);
      const named = new RegExp(
        `the toxiproxy-server \\(pid ${pid}\\) is not running; its log \\(.*toxiproxy\\.log\\) ends: SIGABRT: abort`,
      );

      for (const args of [
        ['profile', '3g'],
        ['run', 'ws-vs-http', '--load', 'smoke'],
        ['gate', '--scenarios', 'push', '--load', 'smoke', '--results', join(runDir, 'gate')],
      ]) {
        const r = await runCli(args, { env });
        assert.equal(r.exitCode, 1, `${args[0]}: ${r.stderr}`);
        assert.ok(oneLine(r.stderr), r.stderr);
        assert.match(r.stderr, named, args[0]);
        assert.match(r.stderr, /`npx k6pack up` restarts what died/);
      }
      const status = await runCli(['status'], { env });
      assert.equal(status.exitCode, 1);
      assert.match(status.stdout, /^ {2}toxiproxy +pid \d+ +NOT RUNNING/m);
      assert.match(status.stdout, /its log \(.*toxiproxy\.log\) ends: SIGABRT: abort/);

      // plain k6 against the stack: setup() names it too (it reads the stack's record in init)
      const k6 = await execa(
        requireK6(),
        k6RunArgs(join(ROOT, 'scenarios', 'ws-vs-http.js'), {
          env: { ...targetsFor(ports), LOAD: 'smoke' },
          args: ['--quiet', '--address', ''],
        }),
        {
          env: { K6PACK_RUN_DIR: runDir },
          reject: false,
          timeout: scaled(60000),
        },
      );
      assert.notEqual(k6.exitCode, 0);
      assert.match(
        k6.stderr,
        new RegExp(
          `the toxiproxy-server \`npx k6pack up\` started \\(pid ${pid}\\) is not answering; its log ends: SIGABRT: abort`,
        ),
      );

      const up = await runCli(['up'], { env });
      assert.equal(up.exitCode, 0, up.stderr);
      assert.match(up.stdout, /restarting toxiproxy\n/);
      assert.equal(Number(readFileSync(join(runDir, 'graphql.pid'), 'utf8')), graphqlPid, 'the servers kept running');
      const toxics = await toxicsByProxy(new Toxiproxy(targetsFor(ports).TOXIPROXY_URL));
      assert.equal(
        attrsOf(toxics.graphql_http, 'link', 'upstream')?.latency,
        35,
        'the restarted toxiproxy has the recorded profile (lte) again',
      );
      assert.equal((await runCli(['status'], { env })).exitCode, 0);
    },
  );
});
