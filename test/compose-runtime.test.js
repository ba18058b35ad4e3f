// What the compose containers run, run here for real without Docker: the
// healthcheck commands of docker-compose.yml (docker/healthcheck.js and the
// static probe of the toxiproxy image, built as its Dockerfile builds it)
// against the embedded stack, and the toxiproxy service's command line with
// profiles/proxies.compose.json, remapped from the compose network to
// 127.0.0.1 and free ports (container ports become the stack's ports), and
// the k6 service's scenario run from a copy of exactly what it mounts.
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { DEFAULT_PORTS, PROXY_ROUTES } from '../common/defaults.js';
import { ensureTools, ROOT } from '../lib/tools.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { hostPathFor, loadCompose, parseVolume } from './helpers/compose.js';
import { freePorts, startTestStack } from '../dev/test-stack.js';

const { services } = loadCompose();
const SERVER_SERVICES = ['graphql', 'grpc', 'connect'];

// Replaces each <host>:<default port> in `args` with 127.0.0.1 and the port `ports` gives that variable.
function remap(args, ports, host = '127.0.0.1') {
  const byDefault = new Map(Object.entries(DEFAULT_PORTS).map(([name, port]) => [String(port), ports[name]]));
  const pattern = new RegExp(`\\b${host.replace(/\./g, '\\.')}:(\\d+)`, 'g');
  return args.map((a) => a.replace(pattern, (all, p) => (byDefault.has(p) ? `127.0.0.1:${byDefault.get(p)}` : all)));
}

// A service's healthcheck as a local command: node scripts run from the repo
// (the image's /app mirrors it), /healthcheck is the probe built below.
function healthcheckCommand(service, ports, probeBin) {
  const [, file, ...args] = remap(services[service].healthcheck.test, ports);
  return file === '/healthcheck' ? [probeBin, args] : [file === 'node' ? process.execPath : file, args];
}

const run = (file, args) => execa(file, args, { cwd: ROOT, reject: false, timeout: 20000, stdin: 'ignore' });

describe('compose healthchecks and toxiproxy -config, run for real', { timeout: 180000 }, () => {
  let stack;
  let probeBin;
  let workDir;

  before(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'k6pack-compose-'));
    // The toxiproxy image's probe: same source, same flags, outside any module.
    const built = await execa(
      'go',
      ['build', '-trimpath', '-o', join(workDir, 'healthcheck'), join(ROOT, 'docker', 'toxiproxy-healthcheck.go')],
      {
        cwd: workDir,
        env: { CGO_ENABLED: '0' },
        reject: false,
        timeout: 120000,
      },
    );
    assert.equal(
      built.exitCode,
      0,
      `building docker/toxiproxy-healthcheck.go failed (Go is needed, as for 'npx k6pack tools'): ${built.stderr}`,
    );
    probeBin = join(workDir, 'healthcheck');
    stack = await startTestStack();
  });

  after(async () => {
    await stack?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('each service healthcheck passes against a live server', async () => {
    for (const service of [...SERVER_SERVICES, 'toxiproxy']) {
      const [file, args] = healthcheckCommand(service, stack.ports, probeBin);
      const r = await run(file, args);
      assert.equal(r.exitCode, 0, `${service}: ${file} ${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout.trim(), 'healthy');
    }
  });

  test('each service healthcheck fails, in one line, when nothing listens', async () => {
    const names = Object.keys(DEFAULT_PORTS);
    const free = await freePorts(names.length);
    const closed = Object.fromEntries(names.map((name, i) => [name, free[i]]));
    for (const service of [...SERVER_SERVICES, 'toxiproxy']) {
      const [file, args] = healthcheckCommand(service, closed, probeBin);
      const r = await run(file, args);
      assert.equal(r.exitCode, 1, `${service}: ${r.stdout}`);
      assert.match(r.stderr.trim(), /^unhealthy: [^\n]+$/, service);
    }
  });

  test('the checks fail on a live but unhealthy server: HTTP 500, gRPC NOT_SERVING', async (t) => {
    const http = createHttpServer((req, res) => res.writeHead(500).end());
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    t.after(() => http.close());
    const url = `http://127.0.0.1:${http.address().port}/healthz`;

    const grpcServer = new grpc.Server();
    new HealthImplementation({ '': 'NOT_SERVING' }).addToServer(grpcServer);
    const grpcPort = await new Promise((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(err) : resolve(port),
      ),
    );
    t.after(() => grpcServer.forceShutdown());

    const node = (target) => run(process.execPath, ['docker/healthcheck.js', target]);
    let r = await node(url);
    assert.equal(r.exitCode, 1);
    assert.match(r.stderr, /answered 500/);
    r = await run(probeBin, [url]);
    assert.equal(r.exitCode, 1);
    assert.match(r.stderr, /answered 500/);
    r = await node(`grpc://127.0.0.1:${grpcPort}`);
    assert.equal(r.exitCode, 1);
    assert.match(r.stderr, /health status NOT_SERVING/);
    r = await node('ftp://127.0.0.1:21');
    assert.equal(r.exitCode, 1);
    assert.match(r.stderr, /use http\(s\):\/\/host:port\/path, grpc:\/\/host:port or tcp:\/\/host:port/);
  });

  test("toxiproxy's compose command creates the proxies of profiles/proxies.compose.json, which reach the servers", async (t) => {
    const svc = services.toxiproxy;
    const cmd = [...svc.command];
    const configFile = hostPathFor(svc, cmd[cmd.indexOf('-config') + 1]);
    const proxies = JSON.parse(readFileSync(join(ROOT, configFile), 'utf8'));

    // Compose network -> this machine: listen on 127.0.0.1 at free ports,
    // upstream service:port -> the stack server holding that container port.
    const [apiPort, ...listenPorts] = await freePorts(1 + proxies.length);
    const stackPortOf = (containerPort) =>
      stack.ports[Object.keys(DEFAULT_PORTS).find((n) => String(DEFAULT_PORTS[n]) === containerPort)];
    const local = proxies.map((p, i) => ({
      ...p,
      listen: `127.0.0.1:${listenPorts[i]}`,
      upstream: `127.0.0.1:${stackPortOf(p.upstream.split(':')[1])}`,
    }));
    const localConfig = join(workDir, 'proxies.json');
    writeFileSync(localConfig, JSON.stringify(local));
    cmd[cmd.indexOf('-host') + 1] = '127.0.0.1';
    cmd[cmd.indexOf('-port') + 1] = String(apiPort);
    cmd[cmd.indexOf('-config') + 1] = localConfig;

    const proc = execa(ensureTools({ log: () => {} }).toxiproxy, cmd, {
      reject: false,
      stdin: 'ignore',
      forceKillAfterDelay: 3000,
    });
    let exited = null;
    proc.then((r) => (exited = r));
    t.after(async () => {
      proc.kill();
      await proc;
    });
    // Healthy within 10 s, as the compose healthcheck sees it.
    const probe = remap(svc.healthcheck.test.slice(2), { ...DEFAULT_PORTS, TOXIPROXY_PORT: apiPort });
    let healthy = false;
    for (let i = 0; i < 50 && !healthy && !exited; i++) {
      healthy = (await run(probeBin, probe)).exitCode === 0;
      if (!healthy) await sleep(200);
    }
    const why = exited
      ? `it exited (${exited.exitCode}): ${exited.stdout.trim().split('\n').at(-1)}`
      : 'no answer within 10 s';
    assert.ok(healthy, `toxiproxy-server ${cmd.join(' ')} did not become healthy: ${why}`);

    const listed = await new Toxiproxy(`http://127.0.0.1:${apiPort}`).request('GET', '/proxies');
    assert.deepEqual(Object.keys(listed).sort(), PROXY_ROUTES.map(([name]) => name).sort());
    for (const p of local) {
      assert.equal(listed[p.name].listen, p.listen, p.name);
      assert.equal(listed[p.name].upstream, p.upstream, p.name);
      assert.equal(listed[p.name].enabled, true, p.name);
    }

    // Through the proxies to the servers, with the compose healthchecks' own probes.
    const byName = Object.fromEntries(local.map((p) => [p.name, p.listen]));
    const r = await run(process.execPath, [
      'docker/healthcheck.js',
      `http://${byName.graphql_http}/healthz`,
      `https://${byName.graphql_tls}/healthz`,
      `grpc://${byName.grpc}`,
      `tcp://${byName.grpc_tls}`,
      `http://${byName.connect}/healthz`,
      `grpc://${byName.connect_h2c}`,
      `https://${byName.connect_tls}/healthz`,
    ]);
    assert.equal(r.exitCode, 0, r.stderr);
  });

  test(
    "the k6 service's default scenario runs from exactly what compose mounts, its run's files landing in ./results",
    { timeout: 150000 },
    async () => {
      // /pack as the k6 container sees it: a copy of each bind mount, nothing else.
      const pack = join(workDir, 'pack');
      const k6 = services.k6;
      for (const v of k6.volumes.map(parseVolume)) {
        const inPack = join(pack, posix.relative(k6.working_dir, v.target));
        if (v.source === 'results') mkdirSync(inPack, { recursive: true });
        else cpSync(join(ROOT, v.source), inPack, { recursive: true });
      }
      // Service names -> 127.0.0.1, container ports -> the stack's; quick settings for a test.
      const env = Object.fromEntries(
        Object.entries(k6.environment).map(([name, value]) => [
          name,
          remap(remap([value], stack.ports, 'toxiproxy'), stack.ports, 'graphql')[0],
        ]),
      );
      assert.deepEqual(
        Object.fromEntries(Object.keys(stack.env).map((n) => [n, env[n]])),
        stack.env,
        'remapped targets are the stack targets',
      );
      Object.assign(env, { PROFILE: 'lan', LOAD: 'smoke' });

      const r = await execa(
        ensureTools({ log: () => {} }).k6,
        [...k6.command, '--address', '', '--quiet', '--no-color'],
        {
          cwd: pack,
          env,
          reject: false,
          timeout: 140000,
          forceKillAfterDelay: 5000,
          stdin: 'ignore',
        },
      );
      // 99 is a crossed threshold: the run itself worked. Anything else is a broken run.
      assert.ok([0, 99].includes(r.exitCode), `k6 exited ${r.exitCode}: ${r.stderr.split('\n').slice(-5).join('\n')}`);
      // RESULTS_DIR and K6_OUT point into the ./results mount: the run's files land there.
      const script = posix.basename(k6.command[1], '.js');
      const results = join(pack, 'results');
      assert.deepEqual(readdirSync(results).sort(), ['junit.xml', 'samples.json.gz', 'summary.json', 'summary.md']);
      const summary = JSON.parse(readFileSync(join(results, 'summary.json'), 'utf8'));
      assert.deepEqual([summary.run.scenario, summary.run.profile, summary.run.load], [script, 'lan', 'smoke']);
      assert.ok(
        summary.rows.some((row) => row.latency.count > 0),
        'the summary in results/ has operations',
      );
      assert.equal(summary.run.samples, 'samples.json.gz');
    },
  );
});
