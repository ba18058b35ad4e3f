// The real k6 (k6/net/grpc) against the gRPC server: reflection, the .proto via
// client.load(), plaintext and TLS, and the ways k6 can be told to trust the
// server's self-signed certificate. Each k6 run does its calls in setup() and
// hands what came back to handleSummary, which writes it to a file we assert on.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LIMITS } from '../common/defaults.js';
import { PROTO_PATH } from '../servers/grpc/proto.js';
import { createServer } from '../servers/grpc/server.js';
import { fullBookAt } from '../servers/shared/data.js';
import { runK6 } from '../dev/run-k6.js';

// What k6 needs to receive ListBooks(500000) (~35 MB); its default is 4 MB.
const MAX_RECEIVE = 64 * 1024 * 1024;

// Shared by every script: attempt(name, fn) records fn's result or its error, so
// one failed step does not hide the others; call() keeps what a test looks at.
// setup() returns \`results\`; handleSummary gets it back as data.setup_data.
const PRELUDE = `
import grpc from 'k6/net/grpc';
const results = {};
function attempt(name, fn) {
  try { results[name] = fn(); } catch (e) { results[name] = { thrown: String(e) }; }
}
function call(client, method, request, params) {
  const r = client.invoke(method, request, params);
  return { status: r.status, message: r.message, trailers: r.trailers, error: r.error && r.error.message };
}
export function handleSummary(data) {
  return { [__ENV.OUT]: JSON.stringify(data.setup_data || {}) };
}
export default function () {}
`;

const SCRIPTS = {
  // No .proto: everything k6 knows comes from the server's reflection service.
  'reflect.js': `${PRELUDE}
const client = new grpc.Client();
export const options = { iterations: 1 };
export function setup() {
  attempt('reflect', () => {
    client.connect(__ENV.PLAIN_ADDR, { plaintext: true, reflect: true, timeout: '10s' });
    const r = call(client, 'books.v1.Books/GetBook', { id: 'book-42' });
    r.health = client.healthCheck().status;
    client.close();
    return r;
  });
  return results;
}
`,
  // The pack's .proto, loaded the way scenarios load it.
  'load.js': `${PRELUDE}
const client = new grpc.Client();
client.load([__ENV.PROTO_DIR], 'books.proto');
const CERT = open(__ENV.CERT_FILE);
export const options = { iterations: 1, insecureSkipTLSVerify: __ENV.SKIP_VERIFY === 'true' };

function getBookVia(addr, params) {
  client.connect(addr, Object.assign({ timeout: '10s' }, params));
  try {
    return call(client, 'books.v1.Books/GetBook', { id: 'book-42' });
  } finally {
    client.close();
  }
}

export function setup() {
  if (__ENV.SKIP_VERIFY === 'true') {
    attempt('skipVerify', () => getBookVia(__ENV.TLS_ADDR, {}));
    return results;
  }
  attempt('plaintext', () => {
    client.connect(__ENV.PLAIN_ADDR, { plaintext: true, maxReceiveSize: Number(__ENV.MAX_RECEIVE), timeout: '10s' });
    const r = {
      getBook: call(client, 'books.v1.Books/GetBook', { id: 'book-42' }),
      notFound: call(client, 'books.v1.Books/GetBook', { id: 'book-0' }),
      tooMany: call(client, 'books.v1.Books/ListBooks', { n: ${LIMITS.MAX_BOOKS + 1} }),
      payload: call(client, 'books.v1.Books/Payload', { size: 1000 }),
    };
    const all = call(client, 'books.v1.Books/ListBooks', { n: ${LIMITS.MAX_BOOKS} }, { timeout: '120s' });
    const books = all.message ? all.message.books : [];
    r.listAll = { status: all.status, error: all.error, count: books.length, first: books[0], last: books[books.length - 1] };
    client.close();
    return r;
  });
  attempt('defaultReceiveLimit', () => {
    client.connect(__ENV.PLAIN_ADDR, { plaintext: true, timeout: '10s' });
    const r = call(client, 'books.v1.Books/ListBooks', { n: 100000 }, { timeout: '60s' });
    client.close();
    return { status: r.status, error: r.error };
  });
  attempt('cacerts', () => getBookVia(__ENV.TLS_ADDR, { tls: { cacerts: [CERT] } }));
  attempt('noTrust', () => getBookVia(__ENV.TLS_ADDR, { timeout: '3s' }));
  return results;
}
`,
  // Server streams through k6's Stream API (async setup waits for their end).
  'stream.js': `${PRELUDE}
const client = new grpc.Client();
client.load([__ENV.PROTO_DIR], 'books.proto');
export const options = { iterations: 1 };

function collect(method, request) {
  return new Promise((resolve) => {
    const messages = [];
    const stream = new grpc.Stream(client, method);
    stream.on('data', (m) => messages.push(Object.assign({ receivedAt: Date.now() }, m)));
    stream.on('error', (e) => resolve({ messages, error: e }));
    stream.on('end', () => resolve({ messages }));
    stream.write(request);
    stream.end();
  });
}

export async function setup() {
  client.connect(__ENV.PLAIN_ADDR, { plaintext: true, timeout: '10s' });
  results.books = await collect('books.v1.Books/StreamBooks', { n: 20 });
  results.events = await collect('books.v1.Books/StreamEvents', { count: 3, intervalMs: 50, size: 16 });
  results.invalid = await collect('books.v1.Books/StreamEvents', { count: 3, intervalMs: 0 });
  client.close();
  return results;
}
`,
};

// The trailer as k6 shows it: trailers['server-timing'] is an array of strings.
function assertTiming(trailers) {
  assert.equal(trailers['server-timing'].length, 1);
  assert.match(
    trailers['server-timing'][0],
    /^exec;dur=\d+(\.\d{1,3})?, ser;dur=\d+(\.\d{1,3})?, total;dur=\d+(\.\d{1,3})?$/,
  );
}

// k6 sees fields in lowerCamelCase (protojson), as the GraphQL schema names them.
function assertBook(message, i) {
  assert.deepEqual(message, fullBookAt(i));
}

describe('k6 against the gRPC server', { timeout: 240_000 }, () => {
  let server;
  let dir;

  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0 });
    dir = mkdtempSync(join(tmpdir(), 'k6pack-grpc-k6-'));
    for (const [name, text] of Object.entries(SCRIPTS)) writeFileSync(join(dir, name), text);
    writeFileSync(join(dir, 'server-cert.pem'), server.cert);
  });

  after(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await server?.close();
  });

  async function k6(script, env = {}) {
    const out = join(dir, `${script}.${Date.now()}.json`);
    const run = await runK6(join(dir, script), {
      timeoutMs: 180_000,
      env: {
        OUT: out,
        PLAIN_ADDR: `127.0.0.1:${server.port}`,
        TLS_ADDR: `127.0.0.1:${server.tlsPort}`,
        PROTO_DIR: dirname(PROTO_PATH),
        CERT_FILE: join(dir, 'server-cert.pem'),
        MAX_RECEIVE: String(MAX_RECEIVE),
        ...env,
      },
    });
    assert.equal(run.code, 0, `k6 exited ${run.code}${run.timedOut ? ' (timed out)' : ''}: ${run.stderr}`);
    return JSON.parse(readFileSync(out, 'utf8'));
  }

  it('reflect: true finds books.v1.Books on the server; GetBook and healthCheck() work', async () => {
    const { reflect } = await k6('reflect.js');
    assert.equal(reflect.thrown, undefined, reflect.thrown);
    assert.equal(reflect.status, 0, reflect.error);
    assertBook(reflect.message, 42);
    assertTiming(reflect.trailers);
    assert.equal(reflect.health, 1); // grpc.HealthCheckServing
  });

  it('client.load() of servers/proto: plaintext, TLS trusted via tls.cacerts, and untrusted TLS refused', async () => {
    const r = await k6('load.js');

    assert.equal(r.plaintext.thrown, undefined, r.plaintext.thrown);
    const { getBook, notFound, tooMany, payload, listAll } = r.plaintext;
    assert.equal(getBook.status, 0, getBook.error);
    assertBook(getBook.message, 42);
    assertTiming(getBook.trailers);
    assert.equal(notFound.status, 5);
    assert.match(notFound.error, /no book with id "book-0"/);
    assert.equal(tooMany.status, 3);
    assert.match(tooMany.error, /n must be an integer from 0 to 500000/);
    assert.equal(payload.status, 0, payload.error);
    assert.equal(payload.message.size, 1000);
    assert.equal(payload.message.data.length, 1000);
    assert.equal(listAll.status, 0, listAll.error);
    assert.equal(listAll.count, LIMITS.MAX_BOOKS);
    assertBook(listAll.first, 1);
    assertBook(listAll.last, LIMITS.MAX_BOOKS);

    // Without maxReceiveSize k6 refuses messages over 4 MB (ListBooks(100000) is ~7 MB).
    assert.equal(r.defaultReceiveLimit.status, 8, JSON.stringify(r.defaultReceiveLimit));
    assert.match(r.defaultReceiveLimit.error, /received message larger than max/);

    assert.equal(r.cacerts.thrown, undefined, r.cacerts.thrown);
    assert.equal(r.cacerts.status, 0, r.cacerts.error);
    assertBook(r.cacerts.message, 42);

    assert.match(
      r.noTrust.thrown ?? '',
      /certificate/,
      'k6 refuses the self-signed certificate unless told to trust it',
    );
  });

  it('grpc.Stream: StreamBooks and StreamEvents (sentAt in epoch ms), INVALID_ARGUMENT as a stream error', async () => {
    const { books, events, invalid } = await k6('stream.js');
    assert.equal(books.error, undefined, JSON.stringify(books.error));
    assert.deepEqual(
      books.messages.map(({ receivedAt, ...book }) => book),
      Array.from({ length: 20 }, (_, i) => fullBookAt(i + 1)),
    );
    assert.equal(events.error, undefined, JSON.stringify(events.error));
    assert.deepEqual(
      events.messages.map((e) => e.seq),
      [1, 2, 3],
    );
    for (const e of events.messages) {
      // Same host, same clock; k6's Date.now() has whole milliseconds.
      const latency = e.receivedAt - e.sentAt;
      assert.ok(latency > -2 && latency < 2000, `push latency ${latency} ms`);
      assert.equal(e.data.length, 16);
    }
    assert.equal(invalid.messages.length, 0);
    assert.equal(invalid.error.code, 3, JSON.stringify(invalid.error));
    assert.match(invalid.error.message, /interval_ms must be an integer from 1/);
  });

  it('the insecureSkipTLSVerify option also lets k6 talk TLS to the self-signed server', async () => {
    const { skipVerify } = await k6('load.js', { SKIP_VERIFY: 'true' });
    assert.equal(skipVerify.thrown, undefined, skipVerify.thrown);
    assert.equal(skipVerify.status, 0, skipVerify.error);
    assertBook(skipVerify.message, 42);
  });
});
