// Hostile-input testing: the reference servers as real processes (a crash is seen
// as a crash, a log line as a log line), raw clients for what well-behaved
// clients cannot send (bytes on a socket, WebSocket frames, HTTP/2 frames, gRPC
// messages), the checks every case makes (a clear error; the server still
// serves) and the memory the server holds before and after a suite.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { postGraphQL } from '../../servers/graphql/client.js';
import { ROOT } from '../../lib/tools.js';
import { scaled } from './waits.js';
import { freePorts } from '../../dev/test-stack.js';

// ---- the servers as processes ----

const SERVERS = {
  graphql: {
    script: 'servers/graphql/server.js',
    portVars: ['GRAPHQL_PORT', 'GRAPHQL_TLS_PORT', 'GRAPHQL_TLS_H1_PORT'],
  },
  grpc: { script: 'servers/grpc/server.js', portVars: ['GRPC_PORT', 'GRPC_TLS_PORT', 'GRPC_KEEPALIVE_PORT'] },
  // A third port: HTTP/2 cleartext (server.h2cPort).
  connect: { script: 'servers/connect/server.js', portVars: ['CONNECT_PORT', 'CONNECT_TLS_PORT', 'CONNECT_H2C_PORT'] },
};

// `node --expose-gc servers/<kind>/server.js` on free ports (so memory can be
// measured after a full GC); resolves once it printed its start line. Always
// stop() it (t.after / after()); `exited` resolves { code, signal } once it is
// gone. assertHealthy() fails if it exited or wrote anything to stderr since the
// last call: the servers log only on internal errors.
export async function spawnServer(kind, { env = {}, nodeArgs = ['--expose-gc'] } = {}) {
  const { script, portVars } = SERVERS[kind];
  for (let attempt = 1; ; attempt++) {
    const [port, tlsPort, h2cPort] = await freePorts(portVars.length);
    const child = spawn(process.execPath, [...nodeArgs, script], {
      cwd: ROOT,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        TLS_CERT_FILE: '',
        TLS_KEY_FILE: '',
        [portVars[0]]: String(port),
        [portVars[1]]: String(tlsPort),
        ...(h2cPort && { [portVars[2]]: String(h2cPort) }),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '', stderrSeen: 0 };
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }));
    const started = await Promise.race([
      new Promise((resolve) => child.stdout.on('data', () => out.stdout.includes('\n') && resolve(true))),
      exited.then(() => false),
    ]);
    if (!started) {
      if (/already in use/.test(out.stderr) && attempt < 3) continue; // a parallel test took the port
      throw new Error(`${script} did not start: ${out.stderr}`);
    }
    const server = {
      kind,
      port,
      tlsPort,
      h2cPort,
      child,
      exited,
      output: () => ({ stdout: out.stdout, stderr: out.stderr }),
      assertHealthy() {
        assert.equal(child.exitCode ?? child.signalCode, null, `the ${kind} server died: ${out.stderr.slice(-2000)}`);
        const fresh = out.stderr.slice(out.stderrSeen);
        out.stderrSeen = out.stderr.length;
        assert.equal(fresh, '', `the ${kind} server logged an internal error`);
      },
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        // Unref'd: a pending 7 s timer would keep the test file's process alive after its last test.
        const done = await Promise.race([exited, sleep(7000, null, { ref: false })]);
        if (!done) child.kill('SIGKILL');
      },
    };
    return server;
  }
}

// ---- GraphQL over HTTP ----

export const graphqlUrl = (server, { tls: secure = false } = {}) =>
  secure ? `https://127.0.0.1:${server.tlsPort}/graphql` : `http://127.0.0.1:${server.port}/graphql`;

// A response (text or parsed) is the GraphQL error shape with this status, code and message.
export function expectGraphQLError(res, status, code, pattern) {
  assert.equal(res.status, status, res.text);
  const body = JSON.parse(res.text);
  assert.equal(body.errors?.[0]?.extensions?.code, code, res.text);
  assert.match(body.errors[0].message, pattern);
  assert.equal(body.errors[0].extensions.stacktrace, undefined, 'no stack trace is sent');
}

export async function graphqlStillServes(server) {
  const res = await postGraphQL(graphqlUrl(server), { query: '{ book(id: "book-7") { id } }' });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { data: { book: { id: 'book-7' } } });
}

// ---- raw sockets ----

// A TCP connection to 127.0.0.1:port (TLS with `alpn` when given, not verified).
// `script(socket)` writes whatever the case needs; resolves once the server
// closed it, or at timeoutMs: { bytes, text, ms, closedByServer }.
export async function rawExchange({ port, alpn, timeoutMs = 10_000 }, script = () => {}) {
  const started = Date.now();
  const socket = alpn
    ? tls.connect({ port, host: '127.0.0.1', ALPNProtocols: alpn, rejectUnauthorized: false, servername: 'localhost' })
    : net.connect(port, '127.0.0.1');
  const chunks = [];
  socket.on('data', (d) => chunks.push(d));
  socket.on('error', () => {}); // a reset is a close here
  const closed = new Promise((resolve) => socket.once('close', () => resolve(true)));
  try {
    await Promise.race([new Promise((resolve) => socket.once(alpn ? 'secureConnect' : 'connect', resolve)), closed]);
    if (!socket.destroyed) await script(socket);
    const byServer = await Promise.race([
      closed,
      sleep(Math.max(0, timeoutMs - (Date.now() - started))).then(() => false),
    ]);
    const bytes = Buffer.concat(chunks);
    return { bytes, text: bytes.toString('latin1'), ms: Date.now() - started, closedByServer: byServer };
  } finally {
    socket.destroy();
  }
}

// Writes `pieces` one at a time, `everyMs` apart, while the socket is open.
export async function trickle(socket, pieces, everyMs) {
  for (const piece of pieces) {
    if (socket.destroyed || !socket.writable) return;
    socket.write(piece);
    await sleep(everyMs);
  }
}

// "HTTP/1.1 408 Request Timeout\r\n...\r\n\r\nbody" -> { status, headers, body }; null if none.
export function parseHttpResponse(text) {
  const end = text.indexOf('\r\n\r\n');
  if (!text.startsWith('HTTP/1.1 ') || end === -1) return null;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, text: text.slice(end + 4) };
}

// ---- HTTP/2 frames ----

// Frames in what a server sent on a raw connection: [{ type, flags, streamId, payload }].
export function h2Frames(bytes) {
  const frames = [];
  for (let at = 0; at + 9 <= bytes.length;) {
    const length = bytes.readUIntBE(at, 3);
    frames.push({
      type: bytes[at + 3],
      flags: bytes[at + 4],
      streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff,
      payload: bytes.subarray(at + 9, at + 9 + length),
    });
    at += 9 + length;
  }
  return frames;
}

// The GOAWAY a server sent: { code, debug } or null.
export function goawayOf(bytes) {
  const frame = h2Frames(bytes).find((f) => f.type === 0x7);
  return frame ? { code: frame.payload.readUInt32BE(4), debug: frame.payload.subarray(8).toString('utf8') } : null;
}

export const H2_PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

// One request on a node:http2 session -> { status, headers, trailers, data, rstCode }.
export function h2Exchange(session, headers, body, { timeoutMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const stream = session.request(headers);
    const result = { status: undefined, headers: {}, trailers: {}, data: Buffer.alloc(0), rstCode: undefined };
    const timers = [];
    const done = () => {
      for (const t of timers) clearTimeout(t);
      resolve({ ...result, rstCode: stream.rstCode, text: result.data.toString('utf8') });
    };
    // From the request, not from the last frame: a body written a byte at a time
    // would keep an inactivity timeout (stream.setTimeout) from ever firing, and
    // Node clears that one when the peer closes the stream.
    timers.push(
      setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        timers.push(setTimeout(done, 1000));
      }, timeoutMs),
    );
    stream.on('response', (h) => {
      result.headers = h;
      result.status = h[':status'];
    });
    stream.on('trailers', (t) => (result.trailers = t));
    stream.on('data', (d) => (result.data = Buffer.concat([result.data, d])));
    // The answer is complete. A server that answers before the request's body
    // has all come resets the stream (NO_ERROR) at once; if our side has not
    // ended its body, Node can then keep the stream open: a second is enough.
    stream.on('end', () => timers.push(setTimeout(done, 1000)));
    stream.on('error', () => {}); // rstCode says it
    stream.on('close', done);
    if (typeof body === 'function') body(stream);
    else stream.end(body);
  });
}

// ---- GraphQL over WebSocket ----

export const PROTOCOL = 'graphql-transport-ws';
export const wsUrl = (server, { tls: secure = false } = {}) =>
  secure ? `wss://127.0.0.1:${server.tlsPort}/graphql` : `ws://127.0.0.1:${server.port}/graphql`;

// A raw socket -> { ws, messages, closed: Promise<{ code, reason }> }, once open.
export async function rawSocket(url, protocols = PROTOCOL) {
  const ws = new WebSocket(url, protocols, { rejectUnauthorized: false });
  const messages = [];
  ws.on('message', (data, isBinary) => messages.push(isBinary ? data : JSON.parse(String(data))));
  ws.on('error', () => {}); // the close code is what the tests look at
  const closed = once(ws, 'close').then(([code, reason]) => ({ code, reason: String(reason) }));
  await once(ws, 'open');
  return { ws, messages, closed };
}

// Polls check() until it holds; fails after `ms` on the reference machine, scaled to
// this one (./waits.js: at most WAIT_SCALE_MAX times as long).
export async function waitFor(check, what, ms = 5000) {
  const deadline = Date.now() + scaled(ms);
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

// A raw socket past connection_init / connection_ack.
export async function ackedSocket(url) {
  const socket = await rawSocket(url);
  socket.ws.send(JSON.stringify({ type: 'connection_init' }));
  await waitFor(() => socket.messages.some((m) => m.type === 'connection_ack'), 'connection_ack');
  assert.equal(socket.messages[0]?.type, 'connection_ack');
  return socket;
}

// A WebSocket frame as a client sends it: FIN (unless `fin: false`), opcode,
// masked with a fixed key unless `mask: false`.
export function wsFrame(opcode, payload = Buffer.alloc(0), { fin = true, mask = true } = {}) {
  const data = Buffer.from(payload);
  const length =
    data.length < 126 ? [data.length] : data.length < 65536 ? [126, data.length >> 8, data.length & 255] : null;
  if (!length) throw new Error('wsFrame: payloads up to 64 KB');
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const head = Buffer.from([(fin ? 0x80 : 0) | opcode, (mask ? 0x80 : 0) | length[0], ...length.slice(1)]);
  const body = mask ? Buffer.from(data.map((b, i) => b ^ key[i % 4])) : data;
  return Buffer.concat(mask ? [head, key, body] : [head, body]);
}

export const WS_UPGRADE =
  'GET /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${PROTOCOL}\r\n`;

// Upgrades a raw connection, then sends `frames`; resolves once the server
// closed it: { upgraded, close: { code, reason } | null } from the server's close frame.
export async function rawWebSocket(port, frames, { timeoutMs = 5000 } = {}) {
  const r = await rawExchange({ port, timeoutMs }, async (socket) => {
    socket.write(`${WS_UPGRADE}\r\n`);
    await new Promise((resolve) => socket.once('data', resolve));
    for (const frame of frames) socket.write(frame);
  });
  const end = r.bytes.indexOf('\r\n\r\n');
  const upgraded = r.text.startsWith('HTTP/1.1 101');
  let close = null;
  for (let at = end + 4; upgraded && at + 2 <= r.bytes.length;) {
    const opcode = r.bytes[at] & 0x0f;
    let length = r.bytes[at + 1] & 0x7f;
    let start = at + 2;
    if (length === 126) [length, start] = [r.bytes.readUInt16BE(at + 2), at + 4];
    if (opcode === 0x8) {
      const payload = r.bytes.subarray(start, start + length);
      close = {
        code: payload.length >= 2 ? payload.readUInt16BE(0) : null,
        reason: payload.subarray(2).toString('utf8'),
      };
      break;
    }
    at = start + length;
  }
  return { upgraded, close, closedByServer: r.closedByServer };
}

// ---- gRPC ----

export async function expectGrpcError(promise, code, detailsPattern) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, `status ${grpc.status[err.code]} (${err.details}), want ${grpc.status[code]}`);
    if (detailsPattern) assert.match(err.details, detailsPattern);
    return true;
  });
}

// A gRPC message on the wire: flag, 4-byte length (default: the payload's), payload.
export function grpcMessage(payload, { compressed = 0, length = payload.length } = {}) {
  const head = Buffer.alloc(5);
  head[0] = compressed;
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, payload]);
}

// ---- memory ----

// { rssBytes, heapUsedBytes } of a server spawned with --expose-gc, after a full GC.
const MB = 1024 * 1024;
// What a whole hostile suite may leave behind: the heap after a full GC within
// HEAP_GROWTH of where it started, RSS (which V8 and glibc do not hand back at
// once) within RSS_GROWTH. The heap keeps what is cached on purpose: Apollo's
// parsed documents (an LRU of up to 30 MiB counted as JSON), so a leak of a
// request body per case shows, a few bytes per case would not.
export const HEAP_GROWTH = 64 * MB;
export const RSS_GROWTH = 256 * MB;

export function assertMemoryBounded(t, label, before, after) {
  const mb = (n) => `${(n / MB).toFixed(1)} MB`;
  t.diagnostic(
    `${label} memory: heap after GC ${mb(before.heapUsedBytes)} -> ${mb(after.heapUsedBytes)}, RSS ${mb(before.rssBytes)} -> ${mb(after.rssBytes)}`,
  );
  assert.ok(
    after.heapUsedBytes - before.heapUsedBytes < HEAP_GROWTH,
    `${label}: heap grew by ${mb(after.heapUsedBytes - before.heapUsedBytes)}`,
  );
  assert.ok(
    after.rssBytes - before.rssBytes < RSS_GROWTH,
    `${label}: RSS grew by ${mb(after.rssBytes - before.rssBytes)}`,
  );
}
