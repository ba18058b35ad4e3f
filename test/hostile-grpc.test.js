// Hostile input to the gRPC server, one test per case, against
// `node servers/grpc/server.js` as a process: invalid protobuf, unknown services
// and methods, metadata bombs, absurd and negative values, broken gRPC framing
// on raw HTTP/2 streams, and other protocols on its ports. Each case gets a gRPC
// status with a message saying what is wrong (or an HTTP/2 refusal), then a
// normal call is served, the process is alive and has logged nothing; memory
// is compared before and after the whole table. Slow clients: hostile-slow.test.js.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { LIMITS } from '../common/defaults.js';
import { MAX_METADATA_BYTES } from '../servers/grpc/books-service.js';
import {
  booksClient,
  clientStreamCall,
  collectStream,
  genericClient,
  rawCall,
  toMetadata,
  unaryCall,
} from '../servers/grpc/client.js';
import { MAX_RELAY_PEERS } from '../servers/grpc/hub-service.js';
import {
  assertMemoryBounded,
  goawayOf,
  grpcMessage,
  h2Exchange,
  rawExchange,
  spawnServer,
  H2_PREFACE,
} from './helpers/hostile.js';
import { serverMemory } from '../dev/server-memory.js';

const { status } = grpc;
let server;
let plain; // typed client
let raw; // generic client for bytes and unknown paths
let memoryBefore;

const GET_BOOK = '/books.v1.Books/GetBook';
const LIST_BOOKS = '/books.v1.Books/ListBooks';
const getBookRequest = (id) => Buffer.concat([Buffer.from([0x0a, Buffer.byteLength(id)]), Buffer.from(id)]);
const call = (path, bytes, metadata) => rawCall(raw, path, bytes, { metadata });

// What a case's promise came to: { value } or { error }.
const settle = (promise) =>
  promise.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
const fails =
  (code, pattern) =>
  ({ error }) => {
    assert.ok(error, 'the call succeeded');
    assert.equal(error.code, code, `status ${status[error.code]} (${error.details}), want ${status[code]}`);
    if (pattern) assert.match(error.details, pattern);
  };
const notProtobuf = (type) =>
  fails(status.INVALID_ARGUMENT, new RegExp(`request is not a valid books\\.v1\\.${type} protobuf message`));
const metadataTooLarge = fails(
  status.RESOURCE_EXHAUSTED,
  new RegExp(`request metadata is \\d+ bytes; the limit is ${MAX_METADATA_BYTES}: send less metadata`),
);
const streamFails =
  (code, pattern) =>
  ({ value }) => {
    assert.equal(value.status.code, code, `${status[value.status.code]} ${value.status.details}`);
    assert.match(value.status.details, pattern);
    assert.equal(value.messages.length, 0);
  };

// The stream idle bound the suite's server runs with (STREAM_IDLE_MS): streams that never end.
const IDLE_MS = 1000;
const UPLOAD_BOOKS = '/books.v1.Books/UploadBooks';
const PAYLOAD_STREAM = '/books.v1.Books/PayloadStream';

// One gRPC call on a raw HTTP/2 stream (framing a client library would not send)
// -> { httpStatus, code, message } from the headers or trailers.
async function rawGrpc(headers, body, path = GET_BOOK) {
  const session = http2.connect(`http://127.0.0.1:${server.port}`);
  session.on('error', () => {});
  try {
    const r = await h2Exchange(
      session,
      { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers },
      body,
    );
    const grpcStatus = r.trailers['grpc-status'] ?? r.headers['grpc-status'];
    const message = r.trailers['grpc-message'] ?? r.headers['grpc-message'];
    return {
      httpStatus: r.status,
      code: grpcStatus === undefined ? null : Number(grpcStatus),
      message: message === undefined ? null : decodeURIComponent(message),
    };
  } finally {
    session.destroy();
  }
}
const rawFails =
  (code, pattern) =>
  ({ value }) => {
    assert.equal(value.code, code, `${value.code} ${value.message}, want ${status[code]}`);
    assert.match(value.message, pattern);
  };

const CASES = [
  // protobuf
  [
    'invalid protobuf (a length varint cut short): INVALID_ARGUMENT',
    () => call(GET_BOOK, Buffer.from([0x0a, 0xff])),
    notProtobuf('GetBookRequest'),
  ],
  [
    'invalid protobuf (a varint cut short): INVALID_ARGUMENT',
    () => call(LIST_BOOKS, Buffer.from([0x08])),
    notProtobuf('ListBooksRequest'),
  ],
  [
    'an int32 field sent as a string (wire type 2): INVALID_ARGUMENT',
    () => call(LIST_BOOKS, Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63])),
    notProtobuf('ListBooksRequest'),
  ],
  [
    'an unknown fixed64 field cut short: INVALID_ARGUMENT',
    () => call(LIST_BOOKS, Buffer.from([0x11, 1, 0, 0])),
    notProtobuf('ListBooksRequest'),
  ],
  [
    'an 11-byte varint: INVALID_ARGUMENT',
    () => call(LIST_BOOKS, Buffer.from([0x08, ...Array(10).fill(0xff), 0x01])),
    notProtobuf('ListBooksRequest'),
  ],
  [
    'wire type 7 (does not exist): INVALID_ARGUMENT',
    () => call(LIST_BOOKS, Buffer.from([0x0f])),
    notProtobuf('ListBooksRequest'),
  ],
  [
    'an unknown field (number 111): ignored, as proto3 says',
    () => call(LIST_BOOKS, Buffer.from([0x08, 0x02, 0xf8, 0x06, 0x05])),
    ({ value, error }) => {
      assert.equal(error, undefined, error?.details);
      assert.equal(value.length > 0, true); // two books
    },
  ],
  [
    'an id that is not UTF-8: INVALID_ARGUMENT naming the id format',
    () => call(GET_BOOK, Buffer.from([0x0a, 0x03, 0xc3, 0x28, 0xff])),
    fails(status.INVALID_ARGUMENT, /id must look like "book-<n>"/),
  ],
  [
    'an id with 11 digits: NOT_FOUND',
    () => unaryCall(plain, 'GetBook', { id: 'book-99999999999' }),
    fails(status.NOT_FOUND, /no book with id "book-99999999999"/),
  ],
  // services and sizes
  [
    'an unknown service: UNIMPLEMENTED',
    () => call('/books.v1.Nope/GetBook', Buffer.alloc(0)),
    fails(status.UNIMPLEMENTED, /\/books\.v1\.Nope\/GetBook/),
  ],
  [
    'an unknown method: UNIMPLEMENTED',
    () => call('/books.v1.Books/DeleteBook', Buffer.alloc(0)),
    fails(status.UNIMPLEMENTED, /DeleteBook/),
  ],
  [
    'a request over LIMITS.MAX_BODY_BYTES: RESOURCE_EXHAUSTED',
    () => call(GET_BOOK, Buffer.alloc(LIMITS.MAX_BODY_BYTES + 1)),
    fails(status.RESOURCE_EXHAUSTED, /larger than max/),
  ],
  // values
  [
    'StreamBooks n -1: INVALID_ARGUMENT',
    () => collectStream(plain.StreamBooks({ n: -1 })),
    streamFails(status.INVALID_ARGUMENT, /n must be an integer from 0 to 500000 \(got -1\)/),
  ],
  [
    'StreamEvents count -1: INVALID_ARGUMENT',
    () => collectStream(plain.StreamEvents({ count: -1, interval_ms: 10 })),
    streamFails(status.INVALID_ARGUMENT, /count must be an integer from 0/),
  ],
  [
    'StreamEvents interval_ms -5: INVALID_ARGUMENT',
    () => collectStream(plain.StreamEvents({ count: 1, interval_ms: -5 })),
    streamFails(status.INVALID_ARGUMENT, /interval_ms must be an integer from 1 to 60000 \(got -5\)/),
  ],
  [
    'StreamEvents size -1: INVALID_ARGUMENT',
    () => collectStream(plain.StreamEvents({ count: 1, interval_ms: 10, size: -1 })),
    streamFails(status.INVALID_ARGUMENT, /size must be an integer from 0/),
  ],
  [
    'Payload size -2^31: INVALID_ARGUMENT',
    () => unaryCall(plain, 'Payload', { size: -(2 ** 31) }),
    fails(status.INVALID_ARGUMENT, /size must be an integer from 0 to 16777216 \(got -2147483648\)/),
  ],
  // metadata bombs
  [
    `metadata of 12 KB: RESOURCE_EXHAUSTED naming the ${MAX_METADATA_BYTES}-byte limit`,
    () => call(GET_BOOK, getBookRequest('book-1'), { 'x-bomb': 'a'.repeat(12_000) }),
    metadataTooLarge,
  ],
  [
    'binary metadata of 10 KB: RESOURCE_EXHAUSTED naming the limit',
    () => call(GET_BOOK, getBookRequest('book-1'), { 'x-bomb-bin': Buffer.alloc(10_000, 7) }),
    metadataTooLarge,
  ],
  [
    'metadata of 12 KB on a server stream: RESOURCE_EXHAUSTED naming the limit',
    () => collectStream(plain.StreamBooks({ n: 5 }, toMetadata({ 'x-bomb': 'a'.repeat(12_000) }))),
    streamFails(status.RESOURCE_EXHAUSTED, /request metadata is \d+ bytes/),
  ],
  [
    'metadata of 100 KB: refused by HTTP/2 (RESOURCE_EXHAUSTED)',
    () => call(GET_BOOK, getBookRequest('book-1'), { 'x-bomb': 'a'.repeat(100_000) }),
    fails(status.RESOURCE_EXHAUSTED),
  ],
  [
    '2000 metadata entries: refused by HTTP/2 (RESOURCE_EXHAUSTED)',
    () =>
      call(
        GET_BOOK,
        getBookRequest('book-1'),
        Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`x-h${i}`, 'v'])),
      ),
    fails(status.RESOURCE_EXHAUSTED),
  ],
  // gRPC framing on a raw HTTP/2 stream
  [
    'grpc-encoding snappy (not supported): UNIMPLEMENTED',
    () => rawGrpc({ 'grpc-encoding': 'snappy' }, grpcMessage(getBookRequest('book-1'), { compressed: 1 })),
    rawFails(status.UNIMPLEMENTED, /unsupported encoding "snappy"/),
  ],
  [
    'a gzip-flagged message that is not gzip: INTERNAL',
    () => rawGrpc({ 'grpc-encoding': 'gzip' }, grpcMessage(getBookRequest('book-1'), { compressed: 1 })),
    rawFails(status.INTERNAL, /Failed to decompress message/),
  ],
  [
    'a length prefix of 4 GB: RESOURCE_EXHAUSTED',
    () => rawGrpc({}, grpcMessage(getBookRequest('book-1'), { length: 0xffffffff })),
    rawFails(status.RESOURCE_EXHAUSTED, /larger than max \(4294967295 vs 1048576\)/),
  ],
  [
    'a message shorter than its length prefix: no request message',
    () => rawGrpc({}, grpcMessage(getBookRequest('book-1'), { length: 100 })),
    rawFails(status.UNIMPLEMENTED, /Received no request message/),
  ],
  [
    'no message at all: no request message',
    () => rawGrpc({}, Buffer.alloc(0)),
    rawFails(status.UNIMPLEMENTED, /Received no request message/),
  ],
  [
    'two messages on a unary call: refused',
    () => rawGrpc({}, Buffer.concat([grpcMessage(getBookRequest('book-1')), grpcMessage(getBookRequest('book-2'))])),
    rawFails(status.UNIMPLEMENTED, /Received a second request message/),
  ],
  [
    'grpc-timeout "abc": INTERNAL naming the value',
    () => rawGrpc({ 'grpc-timeout': 'abc' }, grpcMessage(getBookRequest('book-1'))),
    rawFails(status.INTERNAL, /Invalid grpc-timeout value "abc"/),
  ],
  [
    'content-type text/plain: HTTP 415',
    () => rawGrpc({ 'content-type': 'text/plain' }, grpcMessage(getBookRequest('book-1'))),
    ({ value }) => assert.equal(value.httpStatus, 415),
  ],
  // other protocols and abuse of HTTP/2
  [
    'HTTP/1.1 on the plaintext port: a GOAWAY, then closed',
    () => rawExchange({ port: server.port, timeoutMs: 5000 }, (s) => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')),
    ({ value: r }) => {
      assert.equal(r.closedByServer, true);
      assert.ok(goawayOf(r.bytes), `no GOAWAY in ${r.bytes.toString('hex')}`);
    },
  ],
  [
    'an HTTP/2 preface in cleartext on the TLS port: closed without an answer',
    () => rawExchange({ port: server.tlsPort, timeoutMs: 5000 }, (s) => s.write(H2_PREFACE)),
    ({ value: r }) => assert.deepEqual([r.closedByServer, goawayOf(r.bytes)], [true, null]),
  ],
  [
    '1000 streams opened and reset at once (rapid reset): the session still answers',
    async () => {
      const session = http2.connect(`http://127.0.0.1:${server.port}`);
      session.on('error', () => {});
      try {
        for (let i = 0; i < 1000; i++) {
          const stream = session.request({
            ':method': 'POST',
            ':path': GET_BOOK,
            'content-type': 'application/grpc',
            te: 'trailers',
          });
          stream.on('error', () => {});
          stream.close(http2.constants.NGHTTP2_CANCEL);
        }
        return await h2Exchange(
          session,
          { ':method': 'POST', ':path': GET_BOOK, 'content-type': 'application/grpc', te: 'trailers' },
          grpcMessage(getBookRequest('book-9')),
        );
      } finally {
        session.destroy();
      }
    },
    ({ value: r }) => assert.equal(r.trailers['grpc-status'], '0'),
  ],
  // client and bidirectional streams (grpc-vs-graphql), the hub's streams (fanout)
  [
    'UploadBooks: a message that is not a Book: INVALID_ARGUMENT',
    () =>
      rawGrpc({}, Buffer.concat([grpcMessage(Buffer.alloc(0)), grpcMessage(Buffer.from([0x0a, 0xff]))]), UPLOAD_BOOKS),
    rawFails(status.INVALID_ARGUMENT, /request is not a valid books\.v1\.Book protobuf message/),
  ],
  [
    'UploadBooks: a message over LIMITS.MAX_BODY_BYTES: RESOURCE_EXHAUSTED',
    () => rawGrpc({}, grpcMessage(Buffer.alloc(LIMITS.MAX_BODY_BYTES + 1)), UPLOAD_BOOKS),
    rawFails(status.RESOURCE_EXHAUSTED, /larger than max/),
  ],
  [
    `UploadBooks: ${LIMITS.MAX_UPLOAD_BOOKS + 1} books in one call: RESOURCE_EXHAUSTED naming the limit`,
    () =>
      rawGrpc(
        {},
        Buffer.concat(Array.from({ length: LIMITS.MAX_UPLOAD_BOOKS + 1 }, () => grpcMessage(Buffer.alloc(0)))),
        UPLOAD_BOOKS,
      ),
    rawFails(
      status.RESOURCE_EXHAUSTED,
      new RegExp(`an upload takes at most ${LIMITS.MAX_UPLOAD_BOOKS} books: split it into several calls`),
    ),
  ],
  [
    'UploadBooks that never ends: DEADLINE_EXCEEDED once idle for STREAM_IDLE_MS',
    () => clientStreamCall(plain, 'UploadBooks', [{ id: 'book-1' }], { end: false }),
    ({ value }) => {
      assert.equal(value.status.code, status.DEADLINE_EXCEEDED, value.status.details);
      assert.match(value.status.details, /no message for 1 s: the stream was idle and is ended; open a new one/);
    },
  ],
  [
    'PayloadStream: a message that is not a PayloadRequest: INVALID_ARGUMENT',
    () => rawGrpc({}, grpcMessage(Buffer.from([0x08])), PAYLOAD_STREAM),
    rawFails(status.INVALID_ARGUMENT, /request is not a valid books\.v1\.PayloadRequest protobuf message/),
  ],
  [
    'PayloadStream: a message over LIMITS.MAX_BODY_BYTES: RESOURCE_EXHAUSTED',
    () => rawGrpc({}, grpcMessage(Buffer.alloc(LIMITS.MAX_BODY_BYTES + 1)), PAYLOAD_STREAM),
    rawFails(status.RESOURCE_EXHAUSTED, /larger than max/),
  ],
  [
    'PayloadStream size -1 after a good request: the answer, then INVALID_ARGUMENT',
    async () => {
      const call = plain.PayloadStream();
      const done = collectStream(call);
      call.write({ size: 2 });
      call.write({ size: -1 });
      return done;
    },
    ({ value }) => {
      assert.deepEqual([value.messages.length, value.status.code], [1, status.INVALID_ARGUMENT]);
      assert.match(value.status.details, /size must be an integer from 0 to 16777216 \(got -1\)/);
    },
  ],
  [
    'PayloadStream that never ends: DEADLINE_EXCEEDED once idle for STREAM_IDLE_MS',
    async () => {
      const call = plain.PayloadStream();
      const done = collectStream(call);
      call.write({ size: 1 });
      return done;
    },
    ({ value }) => assert.deepEqual([value.messages.length, value.status.code], [1, status.DEADLINE_EXCEEDED]),
  ],
  [
    'Subscribe to a topic with a space: INVALID_ARGUMENT',
    () => collectStream(plain.Subscribe({ topic: 'no spaces' })),
    streamFails(status.INVALID_ARGUMENT, /topic must be 1 to 128 characters of letters, digits/),
  ],
  [
    'Subscribe to a topic of 10000 characters: INVALID_ARGUMENT',
    () => collectStream(plain.Subscribe({ topic: 'a'.repeat(10_000) })),
    streamFails(status.INVALID_ARGUMENT, /topic must be 1 to 128 characters/),
  ],
  [
    'Subscribe after_seq -2^31: INVALID_ARGUMENT',
    () => collectStream(plain.Subscribe({ topic: 't', after_seq: -(2 ** 31) })),
    streamFails(status.INVALID_ARGUMENT, /afterSeq must be a whole number >= 0/),
  ],
  [
    'Publish a payload over MAX_EVENT_PAYLOAD_BYTES: INVALID_ARGUMENT naming the limit',
    () => unaryCall(plain, 'Publish', { topic: 't', payload: 'x'.repeat(LIMITS.MAX_EVENT_PAYLOAD_BYTES + 1) }),
    fails(status.INVALID_ARGUMENT, /payload is 65537 bytes; the limit is 65536 per event: publish less/),
  ],
  [
    'Relay: nonsense relayed events are dropped, and one link too many is refused',
    async () => {
      const links = Array.from({ length: MAX_RELAY_PEERS + 1 }, () => plain.Relay());
      const statuses = links.map((l) => collectStream(l));
      links[0].write({ topic: 'bad topic', origin: 'graphql', published_at: 1, payload: '' });
      links[0].write({ topic: 't.relay', origin: 'martian', published_at: 1, payload: '' });
      links[0].write({ topic: 't.relay', origin: 'grpc', published_at: 1, payload: '' }); // its own origin
      const info = await unaryCall(plain, 'TopicInfo', { topic: 't.relay' });
      const refused = await Promise.race(statuses);
      for (const l of links) l.cancel();
      await Promise.all(statuses);
      return { info: info.message, refused };
    },
    ({ value }) => {
      assert.equal(value.info.last_seq, 0, 'nothing was delivered');
      assert.equal(value.refused.status.code, status.RESOURCE_EXHAUSTED);
      assert.match(value.refused.status.details, new RegExp(`already relays to ${MAX_RELAY_PEERS} peers`));
    },
  ],
  [
    '200 PayloadStreams, 200 UploadBooks and 200 Subscribes at once, then all cancelled: every one ends CANCELLED',
    async () => {
      const client = booksClient(`127.0.0.1:${server.port}`);
      try {
        const bidi = Array.from({ length: 200 }, () => {
          const call = client.PayloadStream();
          const done = collectStream(call, (_m, c) => c.cancel());
          call.write({ size: 1000 });
          return done;
        });
        const uploads = Array.from({ length: 200 }, () =>
          clientStreamCall(client, 'UploadBooks', [{ id: 'book-1' }], {
            end: false,
            onCall: (c) => setTimeout(() => c.cancel(), 200),
          }),
        );
        const subCalls = Array.from({ length: 200 }, () => client.Subscribe({ topic: 't.cancel' }));
        const subs = subCalls.map((c) => collectStream(c));
        const first = await Promise.all([...bidi, ...uploads]);
        for (
          let i = 0;
          i < 500 && (await unaryCall(plain, 'TopicInfo', { topic: 't.cancel' })).message.subscribers < 200;
          i++
        )
          await new Promise((r) => setTimeout(r, 10));
        await unaryCall(plain, 'Publish', { topic: 't.cancel', payload: 'x' });
        for (const c of subCalls) c.cancel();
        return [...first, ...(await Promise.all(subs))];
      } finally {
        client.close();
      }
    },
    ({ value: results }) => {
      assert.equal(results.length, 600);
      assert.deepEqual([...new Set(results.slice(0, 400).map((r) => r.status.code))], [status.CANCELLED]);
      assert.deepEqual([...new Set(results.slice(400).map((r) => r.status.code))], [status.CANCELLED]);
    },
  ],
  [
    '300 event streams at once, then all cancelled: every one ends CANCELLED',
    async () => {
      const client = booksClient(`127.0.0.1:${server.port}`);
      try {
        const calls = Array.from({ length: 300 }, () =>
          client.StreamEvents({ count: 100, interval_ms: 60_000, size: 1000 }),
        );
        const done = Promise.all(calls.map((c) => collectStream(c, (_m, x) => x.cancel())));
        return await done;
      } finally {
        client.close();
      }
    },
    ({ value: results }) =>
      assert.deepEqual(
        [
          ...new Set(
            results.map((r) => `${r.status.code}${r.status.code === status.CANCELLED ? '' : ` ${r.status.details}`}`),
          ),
        ],
        [String(status.CANCELLED)],
      ),
  ],
];

describe('hostile input: gRPC', { timeout: 180_000 }, () => {
  before(async () => {
    server = await spawnServer('grpc', { env: { STREAM_IDLE_MS: String(IDLE_MS) } });
    plain = booksClient(`127.0.0.1:${server.port}`);
    raw = genericClient(`127.0.0.1:${server.port}`);
    memoryBefore = await serverMemory(server);
  });
  after(async () => {
    plain?.close();
    raw?.close();
    await server?.stop();
  });

  for (const [name, send, expect] of CASES) {
    test(name, async () => {
      await expect(await settle(Promise.resolve().then(send)));
      const { message } = await unaryCall(plain, 'GetBook', { id: 'book-7' });
      assert.equal(message.id, 'book-7');
      server.assertHealthy();
    });
  }

  test('memory after the whole table: heap after GC and RSS stay bounded', async (t) => {
    assertMemoryBounded(t, 'gRPC', memoryBefore, await serverMemory(server));
    server.assertHealthy();
  });
});
