// `node servers/graphql/server.js` as users and the stack start it (ports and
// switches from the environment, one line on start, SIGTERM drain, one-line
// errors), and createServer().close() leaving nothing behind: no timer, socket
// or server keeps a process alive once close() resolved.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer as createTcpServer } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SHUTDOWN_GRACE_MS } from '../servers/shared/lifecycle.js';
import { h2Connect, h2Request, postGraphQL, runOperation, wsClient } from '../servers/graphql/client.js';
import { DRAIN_GRACE_MS } from '../servers/graphql/server.js';
import { freePorts } from '../dev/test-stack.js';

const SERVER = fileURLToPath(new URL('../servers/graphql/server.js', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const lines = (text) => text.split('\n').filter(Boolean);

// Spawns node with `args`; resolves once it printed a first line or exited.
// The child is killed when the test ends, whatever happened.
async function start(t, args, env = {}) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', TLS_CERT_FILE: '', TLS_KEY_FILE: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const out = { stdout: '', stderr: '', stdoutAt: 0 };
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal, at: Date.now() }));
  await new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      out.stdout += d;
      out.stdoutAt = Date.now();
      if (out.stdout.includes('\n')) resolve();
    });
    child.stderr.on('data', (d) => (out.stderr += d));
    exited.then(resolve);
  });
  return { child, exited, out };
}

async function startServer(t, env = {}) {
  const [port, tlsPort, tlsH1Port] = await freePorts(3);
  const server = await start(t, [SERVER], {
    GRAPHQL_PORT: String(port),
    GRAPHQL_TLS_PORT: String(tlsPort),
    GRAPHQL_TLS_H1_PORT: String(tlsH1Port),
    ...env,
  });
  return { ...server, port, tlsPort, tlsH1Port };
}

async function holdPort(t, port) {
  const holder = createTcpServer().listen(port, '127.0.0.1');
  await once(holder, 'listening');
  t.after(() => holder.close());
}

describe('node servers/graphql/server.js', { timeout: 60_000 }, () => {
  it('listens on GRAPHQL_PORT / GRAPHQL_TLS_PORT / GRAPHQL_TLS_H1_PORT and says so in one line', async (t) => {
    const { out, port, tlsPort, tlsH1Port } = await startServer(t);
    assert.equal(out.stderr, '');
    assert.deepEqual(lines(out.stdout), [
      `graphql: http://127.0.0.1:${port}/graphql ws://127.0.0.1:${port}/graphql https://127.0.0.1:${tlsPort}/graphql (h2, http/1.1) ` +
        `wss://127.0.0.1:${tlsPort}/graphql https://127.0.0.1:${tlsH1Port}/graphql (http/1.1) ` +
        `health http://127.0.0.1:${port}/healthz; response cache off`,
    ]);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
  });

  it('SIGTERM with an open WebSocket subscription and an HTTP/2 session: exits 0 within 5 s, the socket closes 1001', async (t) => {
    const { child, exited, out, port, tlsPort } = await startServer(t);
    const session = await h2Connect(`https://127.0.0.1:${tlsPort}`);
    t.after(() => session.destroy());
    assert.equal((await h2Request(session, { path: '/healthz' })).status, 200);
    const client = wsClient(`ws://127.0.0.1:${port}/graphql`);
    t.after(() => client.dispose());
    let first;
    const firstEvent = new Promise((resolve) => (first = resolve));
    const subscription = runOperation(
      client,
      { query: 'subscription { events(count: 10000, intervalMs: 100) { seq } }' },
      { onNext: () => first() },
    );
    await firstEvent;

    const signalled = Date.now();
    child.kill('SIGTERM');
    const { code, at } = await exited;
    assert.equal(code, 0, out.stderr);
    assert.ok(at - signalled < SHUTDOWN_GRACE_MS, `exited ${at - signalled} ms after SIGTERM`);
    assert.match(out.stdout, /graphql: SIGTERM, draining/);
    const { errors } = await subscription;
    assert.equal(errors?.code, 1001, `close event: ${errors?.code} ${errors?.reason}`);
  });

  it('SIGTERM with clients that do not cooperate (silent TLS socket, WebSocket ignoring the close handshake): exits 0 within 5 s', async (t) => {
    const { child, exited, out, port, tlsPort } = await startServer(t);
    const silentTls = connect(tlsPort, '127.0.0.1'); // never starts the TLS handshake
    const deafWs = connect(port, '127.0.0.1'); // a WebSocket upgrade by hand; never answers a close frame
    t.after(() => [silentTls, deafWs].forEach((s) => s.destroy()));
    for (const s of [silentTls, deafWs]) s.on('error', () => {});
    await once(deafWs, 'connect');
    deafWs.write(
      'GET /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n',
    );
    const [handshake] = await once(deafWs, 'data');
    assert.match(String(handshake), /^HTTP\/1.1 101 /);

    const signalled = Date.now();
    child.kill('SIGTERM');
    const { code, at } = await exited;
    assert.equal(code, 0, out.stderr);
    assert.ok(at - signalled < SHUTDOWN_GRACE_MS, `exited ${at - signalled} ms after SIGTERM`);
  });

  for (const [envVar, label] of [
    ['GRAPHQL_PORT', 'GraphQL HTTP'],
    ['GRAPHQL_TLS_PORT', 'GraphQL TLS'],
    ['GRAPHQL_TLS_H1_PORT', 'GraphQL TLS HTTP/1.1'],
  ]) {
    it(`${envVar} in use: one line naming the port and ${envVar}, non-zero exit`, async (t) => {
      const [port, tlsPort, tlsH1Port] = await freePorts(3);
      const env = {
        GRAPHQL_PORT: String(port),
        GRAPHQL_TLS_PORT: String(tlsPort),
        GRAPHQL_TLS_H1_PORT: String(tlsH1Port),
      };
      const taken = Number(env[envVar]);
      await holdPort(t, taken);
      const { exited, out } = await start(t, [SERVER], env);
      const { code } = await exited;
      assert.notEqual(code, 0);
      assert.equal(out.stdout, '');
      assert.equal(
        out.stderr,
        `${label}: port ${taken} is already in use; stop what holds it or set ${envVar} to a free port\n`,
      );
    });
  }

  it('RESPONSE_CACHE=on caches every query (x-cache MISS, then HIT)', async (t) => {
    const { out, port } = await startServer(t, { RESPONSE_CACHE: 'on' });
    assert.match(out.stdout, /response cache on\n$/);
    const url = `http://127.0.0.1:${port}/graphql`;
    const operation = { query: '{ page(offset: 3, size: 2) { books { id } } }' };
    assert.equal((await postGraphQL(url, operation)).headers['x-cache'], 'MISS');
    assert.equal((await postGraphQL(url, operation)).headers['x-cache'], 'HIT');
  });

  it('RESPONSE_CACHE with another value, or a port that is not a number: one line, non-zero exit', async (t) => {
    const cache = await start(t, [SERVER], {
      GRAPHQL_PORT: '0',
      GRAPHQL_TLS_PORT: '0',
      GRAPHQL_TLS_H1_PORT: '0',
      RESPONSE_CACHE: 'yes',
    });
    assert.notEqual((await cache.exited).code, 0);
    assert.equal(cache.out.stderr, 'RESPONSE_CACHE=yes: use on or off\n');
    const port = await start(t, [SERVER], { GRAPHQL_PORT: 'http' });
    assert.notEqual((await port.exited).code, 0);
    assert.equal(port.out.stderr, 'GRAPHQL_PORT=http is not a port number (0-65535)\n');
  });
});

// Runs in a child process, so every timer and socket it counts is its own.
// Prints one JSON line per measurement and never calls process.exit: the
// process must end by itself once close() resolved.
const CHILD = `
import { createServer } from './servers/graphql/server.js';
import { h2Connect, h2Request, httpRequest, wsClient } from './servers/graphql/client.js';
import http from 'node:http';
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function settleTo(target) { for (let i = 0; i < 100 && timers() !== target; i++) await sleep(20); return timers(); }
const firstEvent = (client) => new Promise((resolve) => {
  const off = client.subscribe({ query: 'subscription { events(count: 5, intervalMs: 60000) { seq } }' }, { next: () => resolve(off), error: () => {}, complete: () => {} });
});
const print = (o) => console.log(JSON.stringify(o));

const server = await createServer();
const url = 'ws://127.0.0.1:' + server.httpPort + '/graphql';
// lazy: false keeps the connection open between operations.
const a = wsClient(url, { lazy: false });
await new Promise((resolve) => a.subscribe({ query: '{ book(id: "book-1") { id } }' }, { next() {}, error: resolve, complete: resolve }));
await sleep(3200); // graphql-ws's connection_init wait timer (3 s) lives on until it fires
const base = timers();
const unsubscribe = await firstEvent(a);
await sleep(100);
const during = timers();
unsubscribe();
print({ step: 'unsubscribe', base, during, after: await settleTo(base) });

const b = wsClient(url, { lazy: false });
await firstEvent(b);
await sleep(100);
const withB = timers();
await b.dispose();
print({ step: 'disconnect', base, withB, after: await settleTo(base) });

// Left open for close(): a subscription, an HTTP/2 session, a keep-alive HTTP/1.1 socket.
await firstEvent(wsClient(url));
const session = await h2Connect('https://127.0.0.1:' + server.tlsPort);
await h2Request(session, { path: '/healthz' });
const agent = new http.Agent({ keepAlive: true });
await httpRequest('http://127.0.0.1:' + server.httpPort + '/healthz', { agent });
const started = Date.now();
await server.close();
print({ step: 'close', ms: Date.now() - started });
`;

describe('createServer().close()', { timeout: 60_000 }, () => {
  it('clears subscription timers on unsubscribe and on disconnect, then leaves no handle behind', async (t) => {
    const { exited, out } = await start(t, ['--input-type=module', '-e', CHILD]);
    // ~5 s of steps; a leaked 60 s event timer would keep the child alive far longer.
    const exit = await Promise.race([exited, sleep(20_000).then(() => null)]);
    const steps = Object.fromEntries(
      lines(out.stdout)
        .map((l) => JSON.parse(l))
        .map((s) => [s.step, s]),
    );
    const { unsubscribe, disconnect, close } = steps;
    assert.ok(unsubscribe && disconnect && close, `steps: ${out.stdout} ${out.stderr}`);
    assert.equal(
      unsubscribe.during,
      unsubscribe.base + 1,
      `one pending event timer while subscribed: ${JSON.stringify(unsubscribe)}`,
    );
    assert.equal(unsubscribe.after, unsubscribe.base, `timer cleared on unsubscribe: ${JSON.stringify(unsubscribe)}`);
    assert.ok(disconnect.withB > disconnect.base, JSON.stringify(disconnect));
    assert.equal(disconnect.after, disconnect.base, `timers cleared on disconnect: ${JSON.stringify(disconnect)}`);
    assert.ok(close.ms < DRAIN_GRACE_MS, `close() took ${close.ms} ms with cooperative clients`);
    // The process ended by itself right after close() resolved: nothing was left to keep it alive.
    assert.ok(exit, 'the child is still running 20 s after start');
    assert.equal(exit.code, 0, out.stderr);
    assert.ok(exit.at - out.stdoutAt < 1000, `exited ${exit.at - out.stdoutAt} ms after close() resolved`);
  });
});
