// The embedded stack from lib/stack.js with the real servers and toxiproxy:
// healthy and proxied, a toxic that shows, and start-up failures that name
// their cause in one line and leave nothing running.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROXY_NAMES, proxiesFor } from '../common/defaults.js';
import { PORT_WAIT_MS, portIsFree, stillHeldMessage, stopReleasing } from '../lib/ports.js';
import { isAlive } from '../lib/processes.js';
import { resolvePorts, StackError, startStack } from '../lib/stack.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { portsInUse } from './helpers/cli-env.js';
import { startPortHolder } from './helpers/port-holder.js';
import { freePortMap, freePorts, startTestStack } from '../dev/test-stack.js';
import { scaled } from './helpers/waits.js';

const healthz = (env) => env.GRAPHQL_HTTP_URL.replace(/\/graphql$/, '/healthz');

async function timedGet(url) {
  const t0 = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(10000), headers: { connection: 'close' } });
  await res.text();
  return { status: res.status, ms: performance.now() - t0 };
}

const tcpAccepts = (addr) =>
  new Promise((resolve) => {
    const [host, port] = addr.split(':');
    const sock = connect({ host, port: Number(port) }, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });

test(
  'startTestStack: servers and toxiproxy answer through populated proxies; toxics apply and reset',
  { timeout: 90000 },
  async (t) => {
    const stack = await startTestStack();
    t.after(() => stack.stop());

    assert.deepEqual(Object.keys(stack.pids).sort(), ['connect', 'graphql', 'grpc', 'toxiproxy']);
    for (const pid of Object.values(stack.pids)) assert.ok(isAlive(pid), `pid ${pid} alive`);
    assert.match(await stack.toxiproxy.version(), /^v2\.5\.0/);

    const proxies = await stack.toxiproxy.proxies();
    for (const want of proxiesFor(stack.ports)) {
      assert.equal(proxies[want.name]?.listen, want.listen, `${want.name} listens where defaults.js says`);
      assert.equal(proxies[want.name].upstream, want.upstream);
      assert.deepEqual(proxies[want.name].toxics, []);
    }
    assert.equal((await timedGet(healthz(stack.env))).status, 200);
    assert.ok(await tcpAccepts(stack.env.GRPC_ADDR), 'gRPC proxy accepts');
    assert.ok(await tcpAccepts(stack.env.GRPC_TLS_ADDR), 'gRPC TLS proxy accepts');
    assert.equal((await timedGet(`${stack.env.CONNECT_URL}/healthz`)).status, 200);

    // 100 ms each way: a request through the proxy takes at least one 200 ms round trip.
    const applied = await stack.toxiproxy.applyToxics([
      { name: 'lat_up', type: 'latency', stream: 'upstream', toxicity: 1, attributes: { latency: 100 } },
      { name: 'lat_down', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 100 } },
    ]);
    assert.deepEqual(Object.keys(applied).sort(), [...PROXY_NAMES].sort());
    const slow = await timedGet(healthz(stack.env));
    assert.equal(slow.status, 200);
    assert.ok(slow.ms >= 195, `with 100 ms each way the request took ${slow.ms.toFixed(0)} ms`);
    for (const p of Object.values(await stack.toxiproxy.proxies()))
      assert.deepEqual(
        p.toxics.map((x) => x.name),
        ['lat_up', 'lat_down'],
      );

    await stack.toxiproxy.reset();
    for (const p of Object.values(await stack.toxiproxy.proxies())) assert.deepEqual(p.toxics, []);

    await stack.stop();
    for (const pid of Object.values(stack.pids)) assert.ok(!isAlive(pid), `pid ${pid} gone after stop()`);
    assert.deepEqual(await portsInUse(stack.ports), []);
  },
);

test(
  'startStack: a port in use fails before anything starts, after the bounded wait, naming the port, its variable and its holder',
  { timeout: 30000 },
  async (t) => {
    const ports = await freePortMap();
    const holder = createServer().listen(ports.GRPC_TLS_PORT, '127.0.0.1');
    await new Promise((r) => holder.once('listening', r));
    const runDir = mkdtempSync(join(tmpdir(), 'k6pack-stack-'));
    t.after(() => {
      holder.close();
      rmSync(runDir, { recursive: true, force: true });
    });
    const t0 = Date.now();
    await assert.rejects(startStack({ ports, runDir }), (err) => {
      assert.ok(err instanceof StackError);
      assert.match(
        err.message,
        new RegExp(
          `^port ${ports.GRPC_TLS_PORT} \\(GRPC_TLS_PORT\\) is already in use \\(waited ${PORT_WAIT_MS / 1000} s; held by pid ${process.pid} \\(.+, listening\\)\\): stop what holds it or set GRPC_TLS_PORT to a free port$`,
        ),
      );
      return true;
    });
    const waited = Date.now() - t0;
    // The margin: finding the port's holder in /proc, which a busy machine stretches (as cli-stack's).
    assert.ok(waited >= PORT_WAIT_MS && waited < PORT_WAIT_MS + scaled(5000), `refused after ${waited} ms`);
    assert.deepEqual(readdirSync(runDir), [], 'no process was started (no logs)');
  },
);

test(
  'stopReleasing: a child in the process group is stopped with its parent; a port held outside it is named with its pid, bounded',
  { timeout: 30000 },
  async (t) => {
    const [inGroup, outside] = await freePorts(2);
    const a = await startPortHolder(inGroup, 'group');
    t.after(a.cleanup);
    const held = await stopReleasing([
      { pid: a.pid, label: 'test server', ports: [{ name: 'A_PORT', port: inGroup }] },
    ]);
    assert.deepEqual(held, [], 'the port is free once stop returns');
    assert.ok(!isAlive(a.child), "the child in the parent's process group is gone too");
    assert.equal(await portIsFree(inGroup), null);

    const b = await startPortHolder(outside, 'outside');
    t.after(b.cleanup);
    const t0 = Date.now();
    const still = await stopReleasing(
      [{ pid: b.pid, label: 'test server', ports: [{ name: 'B_PORT', port: outside }] }],
      { waitMs: 1000 },
    );
    const took = Date.now() - t0;
    assert.ok(took >= 1000 && took < 1000 + scaled(4000), `gave up after ${took} ms`);
    assert.ok(!isAlive(b.pid), 'the parent is gone');
    assert.equal(still.length, 1);
    const line = stillHeldMessage(still, { waitMs: 1000 });
    assert.match(
      line,
      new RegExp(
        `^port ${outside} \\(B_PORT\\) is still in use 1 s after the test server \\(pid ${b.pid}\\) stopped: held by pid ${b.child} \\(.*port-holder\\.js --child, listening\\)$`,
      ),
    );
  },
);

test(
  'startStack: a server that dies during start-up is named with its last log line; the rest is stopped',
  { timeout: 60000 },
  async (t) => {
    const ports = await freePortMap();
    const runDir = mkdtempSync(join(tmpdir(), 'k6pack-stack-'));
    // Both servers read TLS_CERT_FILE/TLS_KEY_FILE at start: a missing file makes them exit.
    const saved = { cert: process.env.TLS_CERT_FILE, key: process.env.TLS_KEY_FILE };
    process.env.TLS_CERT_FILE = join(runDir, 'missing-cert.pem');
    process.env.TLS_KEY_FILE = join(runDir, 'missing-key.pem');
    t.after(() => {
      for (const [k, v] of [
        ['TLS_CERT_FILE', saved.cert],
        ['TLS_KEY_FILE', saved.key],
      ]) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(runDir, { recursive: true, force: true });
    });
    await assert.rejects(startStack({ ports, runDir }), (err) => {
      assert.ok(err instanceof StackError);
      assert.match(err.message, /^(GraphQL|gRPC) server exited during start-up \(exit code 1\): .*missing-cert\.pem/);
      assert.ok(!err.message.includes('\n'), 'one line');
      return true;
    });
    assert.deepEqual(await portsInUse(ports), [], 'toxiproxy and the other server were stopped');
  },
);

test('resolvePorts: defaults < env < arguments; bad and clashing values are one-line errors', () => {
  const [a, b] = [23001, 23002];
  const ports = resolvePorts({ GRPC_PORT: b }, { GRAPHQL_PORT: String(a), GRPC_PORT: '1' });
  assert.equal(ports.GRAPHQL_PORT, a);
  assert.equal(ports.GRPC_PORT, b);
  assert.equal(ports.TOXIPROXY_PORT, 8474);
  assert.throws(() => resolvePorts({}, { TOXIPROXY_PORT: 'x' }), {
    message: 'TOXIPROXY_PORT=x is not a port number (1-65535)',
  });
  assert.throws(() => resolvePorts({}, { TOXIPROXY_PORT: '70000' }), StackError);
  assert.throws(() => resolvePorts({ GRPC_PORT: 4000 }, {}), {
    message: 'GRAPHQL_PORT and GRPC_PORT are both 4000: give each its own port',
  });
});

test(
  'Toxiproxy client: an API that is not there is a one-line error saying what to start',
  { timeout: 20000 },
  async () => {
    const [port] = await freePorts(1);
    const client = new Toxiproxy(`http://127.0.0.1:${port}`, { timeoutMs: 2000 });
    assert.equal(await client.isReachable(), false);
    await assert.rejects(client.applyToxics([]), {
      message: `Toxiproxy is not reachable at http://127.0.0.1:${port}: start the stack with \`npx k6pack up\``,
    });
  },
);
