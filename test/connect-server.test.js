// The Connect reference server (servers/connect/server.js) as a process on free
// ports, met by clients nobody here wrote:
//  - grpcurl (built by dev/devtools.js) on the HTTP/2 cleartext port (-plaintext)
//    and the TLS port (-insecure): reflection lists the services, describes
//    GetBook, a GetBook call and grpc.health.v1.Health/Check through it;
//  - @connectrpc/connect-node's own transports: Connect over HTTP/1.1 (JSON and
//    binary) and over HTTP/2 + TLS (the test's certificate, verified), gRPC-Web
//    over HTTP/1.1, gRPC over h2c: the books of servers/shared/data.js, a payload,
//    a server stream in order, and server-timing in the format common/ parses;
//  - bad input on raw requests (node's fetch: the bytes are ours): a content type
//    no protocol takes, truncated gRPC-Web and Connect envelopes, a message over
//    LIMITS.MAX_BODY_BYTES, malformed JSON, ids that name no book, methods this
//    server leaves unimplemented or does not have. Each is answered with one line
//    saying what is wrong, then /healthz is 200, a good call is served and the
//    server has logged nothing;
//  - SIGTERM: exit 0; a port in use: exit 1 with one line naming its variable.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { toJson } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from '@connectrpc/connect-node';
import { execa } from 'execa';
import { LIMITS } from '../common/defaults.js';
import { parseServerTiming } from '../common/server-timing.js';
import { ensureDevTools } from '../dev/devtools.js';
import { freePorts } from '../dev/test-stack.js';
import { ROOT } from '../lib/tools.js';
import { BooksService } from '../servers/connect/proto.js';
import { BOOK_COUNT, fullBookAt } from '../servers/shared/data.js';
import { loadTlsMaterial } from '../servers/shared/tls.js';
import { spawnServer } from './helpers/hostile.js';

const SERVICES = [
  'books.v1.Books',
  'grpc.health.v1.Health',
  'grpc.reflection.v1.ServerReflection',
  'grpc.reflection.v1alpha.ServerReflection',
];
const BOOK = BooksService.method.getBook.output;

let grpcurl;
let server;
let cert;
let dir;
const sessions = []; // the HTTP/2 clients' sessions, closed at the end
const clients = {};

// A book as servers/shared/data.js has it, from a books.v1.Book message.
const plainBook = (message) => toJson(BOOK, message);

before(async () => {
  ({ grpcurl } = ensureDevTools(['grpcurl']));
  // The server's certificate is the test's, so the HTTP/2 client can verify it (ca).
  dir = mkdtempSync(join(tmpdir(), 'k6pack-connect-'));
  const material = await loadTlsMaterial({});
  cert = material.cert;
  writeFileSync(join(dir, 'cert.pem'), material.cert);
  writeFileSync(join(dir, 'key.pem'), material.key);
  server = await spawnServer('connect', {
    nodeArgs: [],
    env: { TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') },
  });
  const h1 = `http://127.0.0.1:${server.port}`;
  const h2c = `http://127.0.0.1:${server.h2cPort}`;
  const tls = `https://127.0.0.1:${server.tlsPort}`;
  const session = (url, options) => {
    const manager = new Http2SessionManager(url, {}, options);
    sessions.push(manager);
    return manager;
  };
  const client = (transport) => createClient(BooksService, transport);
  Object.assign(clients, {
    'Connect JSON, HTTP/1.1': client(createConnectTransport({ baseUrl: h1, httpVersion: '1.1' })),
    'Connect binary, HTTP/1.1': client(
      createConnectTransport({ baseUrl: h1, httpVersion: '1.1', useBinaryFormat: true }),
    ),
    'Connect binary, HTTP/2 + TLS': client(
      createConnectTransport({
        baseUrl: tls,
        httpVersion: '2',
        useBinaryFormat: true,
        sessionManager: session(tls, { ca: cert }),
      }),
    ),
    'gRPC-Web, HTTP/1.1': client(createGrpcWebTransport({ baseUrl: h1, httpVersion: '1.1' })),
    'gRPC, h2c': client(createGrpcTransport({ baseUrl: h2c, sessionManager: session(h2c) })),
  });
});

after(async () => {
  for (const manager of sessions) manager.abort();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---- grpcurl ----

for (const secure of [false, true]) {
  describe(`grpcurl on the ${secure ? 'TLS port (-insecure)' : 'HTTP/2 cleartext port (-plaintext)'}`, () => {
    const ok = async (rest, flags = []) => {
      const port = secure ? server.tlsPort : server.h2cPort;
      const r = await execa(
        grpcurl,
        [secure ? '-insecure' : '-plaintext', '-max-time', '10', ...flags, `127.0.0.1:${port}`, ...rest],
        { reject: false, timeout: 15000 },
      );
      assert.equal(r.exitCode, 0, `grpcurl ${rest.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };

    test('list, describe, GetBook and Health/Check through reflection', async () => {
      const [list, described, book, health] = await Promise.all([
        ok(['list']),
        ok(['describe', 'books.v1.Books.GetBook']),
        ok(['books.v1.Books/GetBook'], ['-d', '{"id":"book-3"}']),
        ok(['grpc.health.v1.Health/Check']),
      ]);
      assert.deepEqual(list.trim().split('\n').sort(), SERVICES);
      assert.match(described, /^books\.v1\.Books\.GetBook is a method:\n/);
      assert.match(described, /rpc GetBook \( \.books\.v1\.GetBookRequest \) returns \( \.books\.v1\.Book \);/);
      // grpcurl prints the proto's own field names.
      const { id, name, pageCount, author } = fullBookAt(3);
      assert.deepEqual(JSON.parse(book), {
        id,
        name,
        page_count: pageCount,
        author: { id: author.id, first_name: author.firstName, last_name: author.lastName },
      });
      assert.deepEqual(JSON.parse(health), { status: 'SERVING' });
      server.assertHealthy();
    });
  });
}

// ---- @connectrpc/connect-node's clients ----

// The server-timing a call's header (unary) or trailer (stream) carries, parsed.
function assertTiming(headers, where) {
  const text = headers?.get('server-timing');
  assert.ok(text, `server-timing in the ${where}`);
  const timing = parseServerTiming(text);
  assert.equal(typeof timing?.exec, 'number', text);
  assert.equal(typeof timing.total, 'number', text);
  assert.ok(timing.total >= timing.exec, text);
}

describe('@connectrpc/connect-node clients', () => {
  for (const name of [
    'Connect JSON, HTTP/1.1',
    'Connect binary, HTTP/1.1',
    'Connect binary, HTTP/2 + TLS',
    'gRPC-Web, HTTP/1.1',
    'gRPC, h2c',
  ]) {
    test(`${name}: GetBook, Payload, StreamBooks and server-timing`, async () => {
      const books = clients[name];
      let header;
      const book = await books.getBook({ id: 'book-1' }, { onHeader: (h) => (header = h) });
      assert.deepEqual(plainBook(book), fullBookAt(1));
      assertTiming(header, 'header');

      const payload = await books.payload({ size: 1000 });
      assert.equal(payload.size, 1000);
      assert.equal(payload.data.length, 1000);

      let trailer;
      const streamed = [];
      for await (const b of books.streamBooks({ n: 5 }, { onTrailer: (t) => (trailer = t) }))
        streamed.push(plainBook(b));
      assert.deepEqual(
        streamed,
        [1, 2, 3, 4, 5].map((i) => fullBookAt(i)),
      );
      assertTiming(trailer, 'trailer');
      server.assertHealthy();
    });
  }

  test('an error comes to the client as its code and the sentence', async () => {
    await assert.rejects(clients['Connect JSON, HTTP/1.1'].getBook({ id: 'book-999999999' }), (err) => {
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.NotFound);
      assert.equal(err.rawMessage, `no book with id "book-999999999"; ids run from book-1 to book-${BOOK_COUNT}`);
      return true;
    });
    await assert.rejects(
      clients['gRPC, h2c'].uploadBooks((async function* () {})()),
      (err) => err.code === Code.Unimplemented && /UploadBooks is not implemented/.test(err.rawMessage),
    );
  });
});

// ---- bad input ----

const BASE = () => `http://127.0.0.1:${server.port}`;
const post = async (path, contentType, body) => {
  const res = await fetch(`${BASE()}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
};

// An envelope (gRPC-Web, Connect streams): flags, a 4-byte length (the payload's unless given), payload.
function envelope(payload, { flags = 0, length } = {}) {
  const bytes = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(length ?? bytes.length, 1);
  return Buffer.concat([head, bytes]);
}
function envelopes(bytes) {
  const out = [];
  for (let at = 0; at + 5 <= bytes.length; at += 5 + bytes.readUInt32BE(at + 1))
    out.push({ flags: bytes[at], data: bytes.subarray(at + 5, at + 5 + bytes.readUInt32BE(at + 1)) });
  return out;
}

// One line: not empty, no line break inside, no stack trace.
function assertOneLine(text) {
  assert.ok(text.trim(), 'an empty answer');
  assert.doesNotMatch(text.trim(), /\n/, text);
  assert.doesNotMatch(text, /\bat .+:\d+:\d+/, `a stack trace: ${text}`);
}

// A Connect unary error: this status, {"code","message"} with this code, a one-line message.
function connectError(res, status, code, message) {
  assert.equal(res.status, status, res.bytes.toString());
  assert.match(res.headers.get('content-type'), /^application\/json/);
  const body = JSON.parse(res.bytes);
  assert.equal(body.code, code, res.bytes.toString());
  assertOneLine(body.message);
  assert.match(body.message, message);
}

// A plain-text refusal: this status, text/plain, one line.
function textRefusal(res, status, message) {
  assert.equal(res.status, status, res.bytes.toString());
  assert.match(res.headers.get('content-type'), /^text\/plain/);
  const text = res.bytes.toString();
  assertOneLine(text);
  assert.ok(text.endsWith('\n'), 'the line ends with a newline');
  assert.match(text.trimEnd(), message);
}

async function stillServes() {
  const health = await fetch(`${BASE()}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(await health.text(), 'ok\n');
  const book = await clients['Connect JSON, HTTP/1.1'].getBook({ id: 'book-7' });
  assert.equal(book.id, 'book-7');
  server.assertHealthy();
}

const GET_BOOK = '/books.v1.Books/GetBook';
const bookRequest = (id) => Buffer.from([0x0a, id.length, ...Buffer.from(id)]); // GetBookRequest, field 1

describe('bad input: one line saying what is wrong, then the server still serves', () => {
  const cases = {
    'a content type no protocol takes (text/plain): 415 naming the content types it takes': async () => {
      const res = await post(GET_BOOK, 'text/plain', '{"id":"book-1"}');
      textRefusal(res, 415, /^content-type "text\/plain" is not accepted for \/books\.v1\.Books\/GetBook: /);
      assert.match(res.bytes.toString(), /application\/json/);
    },

    'a truncated gRPC-Web frame (prefix says 100 bytes, 3 sent): INVALID_ARGUMENT in the trailer frame': async () => {
      const res = await post(GET_BOOK, 'application/grpc-web+proto', envelope('abc', { length: 100 }));
      assert.equal(res.status, 200);
      const frames = envelopes(res.bytes);
      assert.deepEqual(
        frames.map((f) => f.flags),
        [0x80],
        'only a trailer frame',
      );
      const trailer = Object.fromEntries(
        frames[0].data
          .toString()
          .trim()
          .split('\r\n')
          .map((l) => [l.slice(0, l.indexOf(':')), decodeURIComponent(l.slice(l.indexOf(':') + 1).trim())]),
      );
      assert.equal(trailer['grpc-status'], '3', JSON.stringify(trailer));
      assertOneLine(trailer['grpc-message']);
      assert.match(trailer['grpc-message'], /incomplete envelope/);
    },

    'a truncated Connect streaming envelope: an end-stream message with invalid_argument': async () => {
      const res = await post(
        '/books.v1.Books/StreamBooks',
        'application/connect+json',
        envelope('{"n"', { length: 100 }),
      );
      assert.equal(res.status, 200);
      const frames = envelopes(res.bytes);
      assert.deepEqual(
        frames.map((f) => f.flags),
        [0x02],
        'only the end-stream message',
      );
      const { error } = JSON.parse(frames[0].data);
      assert.equal(error.code, 'invalid_argument');
      assertOneLine(error.message);
      assert.match(error.message, /incomplete envelope/);
    },

    [`a message over LIMITS.MAX_BODY_BYTES (${LIMITS.MAX_BODY_BYTES}): resource_exhausted`]: async () => {
      const big = JSON.stringify({ id: 'x'.repeat(LIMITS.MAX_BODY_BYTES + 1000) });
      connectError(
        await post(GET_BOOK, 'application/json', big),
        429,
        'resource_exhausted',
        new RegExp(`larger than configured readMaxBytes ${LIMITS.MAX_BODY_BYTES}`),
      );
      // The same in binary, and in a gRPC-Web frame.
      const binary = bookRequest('book-1');
      const oversize = Buffer.concat([binary, Buffer.alloc(LIMITS.MAX_BODY_BYTES)]);
      connectError(await post(GET_BOOK, 'application/proto', oversize), 429, 'resource_exhausted', /readMaxBytes/);
      const web = await post(GET_BOOK, 'application/grpc-web+proto', envelope(oversize));
      const trailer = envelopes(web.bytes).at(-1).data.toString();
      assert.match(trailer, /grpc-status: 8\r\n/, trailer);
    },

    'malformed JSON, a field of the wrong type: invalid_argument naming what could not be decoded': async () => {
      connectError(
        await post(GET_BOOK, 'application/json', '{"id":'),
        400,
        'invalid_argument',
        /^cannot decode message books\.v1\.GetBookRequest from JSON: /,
      );
      connectError(
        await post(GET_BOOK, 'application/json', '{"id": 42}'),
        400,
        'invalid_argument',
        /^cannot decode field books\.v1\.GetBookRequest\.id from JSON: expected string, got 42$/,
      );
    },

    'an id that is no book id: invalid_argument with the sentence': async () => {
      connectError(
        await post(GET_BOOK, 'application/json', '{"id":"nope"}'),
        400,
        'invalid_argument',
        new RegExp(`^id must look like "book-<n>" with n from 1 to ${BOOK_COUNT} \\(got "nope"\\)$`),
      );
    },

    'an id above BOOK_COUNT (book-999999999): not_found': async () => {
      connectError(
        await post(GET_BOOK, 'application/json', '{"id":"book-999999999"}'),
        404,
        'not_found',
        new RegExp(`^no book with id "book-999999999"; ids run from book-1 to book-${BOOK_COUNT}$`),
      );
      // In binary too, where the status code is the same.
      connectError(
        await post(GET_BOOK, 'application/proto', bookRequest('book-999999999')),
        404,
        'not_found',
        /^no book with id/,
      );
    },

    'an unimplemented method (UploadBooks, TopicInfo): unimplemented; a Connect unary POST to a stream: 415':
      async () => {
        // TopicInfo is unary: a Connect unary call gets 501 unimplemented.
        connectError(
          await post('/books.v1.Books/TopicInfo', 'application/json', '{}'),
          501,
          'unimplemented',
          /^books\.v1\.Books\.TopicInfo is not implemented$/,
        );
        // UploadBooks is a client stream: as a Connect stream it gets unimplemented...
        const res = await post('/books.v1.Books/UploadBooks', 'application/connect+json', envelope('{}'));
        assert.equal(res.status, 200);
        const frames = envelopes(res.bytes);
        assert.equal(frames.at(-1).flags, 0x02);
        assert.deepEqual(JSON.parse(frames.at(-1).data).error, {
          code: 'unimplemented',
          message: 'books.v1.Books.UploadBooks is not implemented',
        });
        // ...as a Connect unary call (application/json) it is refused before that: the
        // line says a stream's content type.
        textRefusal(
          await post('/books.v1.Books/UploadBooks', 'application/json', '{}'),
          415,
          /application\/connect\+json/,
        );
      },

    'no such method, GET, and a bidirectional stream over HTTP/1.1: 404, 405, 505 with a line': async () => {
      textRefusal(
        await post('/books.v1.Books/NoSuchMethod', 'application/json', '{}'),
        404,
        /^no such method: \/books\.v1\.Books\/NoSuchMethod; /,
      );
      const get = await fetch(`${BASE()}${GET_BOOK}`);
      textRefusal(
        { status: get.status, headers: get.headers, bytes: Buffer.from(await get.arrayBuffer()) },
        405,
        /^HTTP method GET is not allowed for \/books\.v1\.Books\/GetBook: send POST$/,
      );
      textRefusal(
        await post('/books.v1.Books/Relay', 'application/connect+json', envelope('{}')),
        505,
        /needs HTTP\/2/,
      );
    },
  };
  for (const [name, run] of Object.entries(cases)) {
    test(name, async () => {
      await run();
      await stillServes();
    });
  }
});

// ---- stopping, and ports in use ----

test('SIGTERM: the server drains and exits 0', async () => {
  for (const manager of sessions) manager.abort();
  await server.stop();
  const { code, signal } = await server.exited;
  assert.equal(signal, null);
  assert.equal(code, 0, server.output().stderr);
  assert.match(server.output().stdout, /Connect server: SIGTERM, draining/);
  assert.equal(server.output().stderr, '');
});

describe('a port already in use: exit 1 with one line naming its variable', () => {
  for (const [envVar, label] of [
    ['CONNECT_PORT', 'Connect HTTP/1.1'],
    ['CONNECT_H2C_PORT', 'Connect HTTP/2 cleartext'],
    ['CONNECT_TLS_PORT', 'Connect TLS'],
  ]) {
    test(envVar, async (t) => {
      const [taken] = await freePorts(1);
      const holder = createTcpServer().listen(taken, '127.0.0.1');
      await once(holder, 'listening');
      t.after(() => holder.close());
      const env = { CONNECT_PORT: '0', CONNECT_H2C_PORT: '0', CONNECT_TLS_PORT: '0', [envVar]: String(taken) };
      const child = spawn(process.execPath, ['servers/connect/server.js'], {
        cwd: ROOT,
        env: { ...process.env, HOST: '127.0.0.1', TLS_CERT_FILE: '', TLS_KEY_FILE: '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      t.after(() => child.exitCode === null && child.kill('SIGKILL'));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const [code] = await once(child, 'close');
      assert.equal(code, 1, stderr);
      assert.equal(stdout, '');
      assert.equal(
        stderr,
        `${label}: port ${taken} is already in use; stop what holds it or set ${envVar} to a free port\n`,
      );
    });
  }
});
