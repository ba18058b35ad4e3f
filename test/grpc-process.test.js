// `node servers/grpc/server.js` as users start it: ports from the environment,
// one line on start, drain on SIGTERM within 5 s even with a stream open, and a
// one-line error naming the port and its variable when a port is taken.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import grpc from '@grpc/grpc-js';
import { SHUTDOWN_GRACE_MS } from '../servers/shared/lifecycle.js';
import { loadTlsMaterial } from '../servers/shared/tls.js';
import { booksClient, collectStream, healthClient, unaryCall } from '../servers/grpc/client.js';
import { freePorts } from '../dev/test-stack.js';

const SERVER = fileURLToPath(new URL('../servers/grpc/server.js', import.meta.url));

// Starts the server with `env`; resolves { child, output(), exited } once it
// printed its first line (or exited). The caller kills it in t.after.
function startServer(env) {
  const child = spawn(process.execPath, [SERVER], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      TLS_CERT_FILE: '',
      TLS_KEY_FILE: '',
      GRPC_VERBOSITY: '',
      GRPC_NODE_VERBOSITY: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }));
  const firstLine = new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('\n')) resolve();
    });
    child.stderr.on('data', (d) => (stderr += d));
    exited.then(resolve);
  });
  return firstLine.then(() => ({ child, exited, output: () => ({ stdout, stderr }) }));
}

function killOnExit(t, child) {
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}

// A TCP listener on 127.0.0.1:port, standing in for whatever holds the port.
async function holdPort(t, port) {
  const holder = createTcpServer();
  holder.listen(port, '127.0.0.1');
  await once(holder, 'listening');
  t.after(() => holder.close());
}

// The server's three ports (0: any free one), so no test binds a default.
const portsEnv = (port, tlsPort, keepalivePort) => ({
  GRPC_PORT: String(port),
  GRPC_TLS_PORT: String(tlsPort),
  GRPC_KEEPALIVE_PORT: String(keepalivePort),
});

const lines = (text) => text.split('\n').filter(Boolean);

describe('node servers/grpc/server.js', { timeout: 60_000 }, () => {
  it('listens on GRPC_PORT / GRPC_TLS_PORT / GRPC_KEEPALIVE_PORT, says so in one line, and is SERVING', async (t) => {
    const [port, tlsPort, keepalivePort] = await freePorts(3);
    const server = await startServer(portsEnv(port, tlsPort, keepalivePort));
    killOnExit(t, server.child);
    const { stdout, stderr } = server.output();
    assert.equal(stderr, '');
    assert.deepEqual(lines(stdout), [
      `gRPC server listening: plaintext 127.0.0.1:${port}, TLS 127.0.0.1:${tlsPort} (self-signed certificate for localhost/127.0.0.1/::1), ` +
        `plaintext with a keepalive ping every 10 s 127.0.0.1:${keepalivePort}`,
    ]);
    for (const p of [port, keepalivePort]) {
      const health = healthClient(`127.0.0.1:${p}`);
      try {
        assert.equal((await unaryCall(health, 'check', { service: '' })).message.status, 'SERVING');
      } finally {
        health.close();
      }
    }
  });

  it('serves TLS with the certificate of TLS_CERT_FILE / TLS_KEY_FILE', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-grpc-tls-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { cert, key } = await loadTlsMaterial({});
    writeFileSync(join(dir, 'cert.pem'), cert);
    writeFileSync(join(dir, 'key.pem'), key);
    const [port, tlsPort, keepalivePort] = await freePorts(3);
    const server = await startServer({
      ...portsEnv(port, tlsPort, keepalivePort),
      TLS_CERT_FILE: join(dir, 'cert.pem'),
      TLS_KEY_FILE: join(dir, 'key.pem'),
    });
    killOnExit(t, server.child);
    assert.match(server.output().stdout, /\(certificate from TLS_CERT_FILE\)/);
    const books = booksClient(`127.0.0.1:${tlsPort}`, { cert });
    try {
      assert.equal((await unaryCall(books, 'GetBook', { id: 'book-3' })).message.id, 'book-3');
    } finally {
      books.close();
    }
  });

  it('SIGTERM with a stream open: the stream ends UNAVAILABLE and the process exits 0 within 5 s', async (t) => {
    const [port, tlsPort, keepalivePort] = await freePorts(3);
    const server = await startServer(portsEnv(port, tlsPort, keepalivePort));
    killOnExit(t, server.child);
    const books = booksClient(`127.0.0.1:${port}`);
    t.after(() => books.close());

    const call = books.StreamEvents({ count: 10_000, interval_ms: 50, size: 10 });
    let received = 0;
    const stream = collectStream(call, () => received++);
    const deadline = Date.now() + 5000;
    while (received < 2 && Date.now() < deadline) await sleep(20);
    assert.ok(received >= 2, 'events are flowing before the signal');

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const { code } = await server.exited;
    const took = Date.now() - signalled;
    assert.equal(code, 0, server.output().stderr);
    assert.ok(took < SHUTDOWN_GRACE_MS, `exited ${took} ms after SIGTERM`);
    assert.match(server.output().stdout, /gRPC server: SIGTERM, draining/);
    const { status } = await stream;
    assert.equal(status.code, grpc.status.UNAVAILABLE, status.details);
  });

  for (const [envVar, label] of [
    ['GRPC_PORT', 'plaintext'],
    ['GRPC_TLS_PORT', 'TLS'],
    ['GRPC_KEEPALIVE_PORT', 'plaintext, keepalive pings'],
  ]) {
    it(`${envVar} in use: one line naming the port and ${envVar}, non-zero exit`, async (t) => {
      const env = portsEnv(...(await freePorts(3)));
      const taken = Number(env[envVar]);
      await holdPort(t, taken);
      const server = await startServer(env);
      killOnExit(t, server.child);
      const { code } = await server.exited;
      assert.notEqual(code, 0);
      const { stdout, stderr } = server.output();
      assert.equal(stdout, '');
      assert.equal(lines(stderr).length, 1, stderr);
      assert.match(
        stderr,
        new RegExp(
          `^gRPC \\(${label}\\): port ${taken} is already in use; stop what holds it or set ${envVar} to a free port\\n$`,
        ),
      );
    });
  }

  it('a HOST that is not an address of this machine: one line naming HOST', async (t) => {
    const server = await startServer({ HOST: '10.255.255.1', ...portsEnv(0, 0, 0) });
    killOnExit(t, server.child);
    const { code } = await server.exited;
    assert.notEqual(code, 0);
    assert.equal(
      server.output().stderr,
      'gRPC (plaintext): cannot bind HOST=10.255.255.1; set HOST to an address of this machine (default 127.0.0.1)\n',
    );
  });

  it('a port that is not a number: one line naming the variable', async (t) => {
    const server = await startServer({ GRPC_PORT: 'fifty' });
    killOnExit(t, server.child);
    const { code } = await server.exited;
    assert.notEqual(code, 0);
    assert.equal(server.output().stderr, 'GRPC_PORT=fifty is not a port number (0-65535)\n');
  });

  it('only one of TLS_CERT_FILE / TLS_KEY_FILE: one line saying to set both', async (t) => {
    const server = await startServer({ ...portsEnv(0, 0, 0), TLS_CERT_FILE: '/nonexistent/cert.pem' });
    killOnExit(t, server.child);
    const { code } = await server.exited;
    assert.notEqual(code, 0);
    const { stderr } = server.output();
    assert.equal(lines(stderr).length, 1, stderr);
    assert.match(stderr, /set both TLS_CERT_FILE and TLS_KEY_FILE/);
  });
});
