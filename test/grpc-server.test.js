// The gRPC reference server in-process on port 0, asked by real @grpc/grpc-js
// clients over plaintext and TLS: every RPC, the server-timing trailer, each
// bound, bad input (and that the next call is still served), health, shutdown.
// Invalid protobuf, unknown services, metadata bombs and broken framing are in
// hostile-grpc.test.js (against the server as a process).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import grpc from '@grpc/grpc-js';
import { LIMITS } from '../common/defaults.js';
import { filler, fullBookAt } from '../servers/shared/data.js';
import {
  booksClient,
  clientStreamCall,
  collectStream,
  healthClient,
  rawCall,
  unaryCall,
} from '../servers/grpc/client.js';
import { createServer, DRAIN_MS } from '../servers/grpc/server.js';
import { expectGrpcError, grpcMessage, waitFor } from './helpers/hostile.js';
import { scaled } from './helpers/waits.js';

const { status } = grpc;
// As the GraphQL server's Server-Timing header: milliseconds, at most 3 decimals.
const DUR = '(\\d+(?:\\.\\d{1,3})?)';
const TIMING = new RegExp(`^exec;dur=${DUR}, ser;dur=${DUR}, total;dur=${DUR}$`);
const CLIENT_MODULE = new URL('../servers/grpc/client.js', import.meta.url).href;

// The book as data.js defines it, in the proto's field names.
function expectedBook(i) {
  const b = fullBookAt(i);
  return {
    id: b.id,
    name: b.name,
    page_count: b.pageCount,
    author: { id: b.author.id, first_name: b.author.firstName, last_name: b.author.lastName },
  };
}

function serverTiming(trailers) {
  const values = trailers.get('server-timing');
  assert.equal(values.length, 1, 'one server-timing trailer');
  const m = TIMING.exec(values[0]);
  assert.ok(m, `server-timing has the GraphQL header's format: ${values[0]}`);
  const [exec, ser, total] = m.slice(1).map(Number);
  assert.ok(total + 0.002 >= exec + ser, `total ${total} covers exec ${exec} + ser ${ser}`);
  return { exec, ser, total };
}

describe('gRPC server', { timeout: 180_000 }, () => {
  let server;
  let plain;
  let secure;

  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0 });
    const plainAddr = `127.0.0.1:${server.port}`;
    plain = booksClient(plainAddr, { options: { 'grpc.max_receive_message_length': -1 } });
    secure = booksClient(`127.0.0.1:${server.tlsPort}`, { cert: server.cert });
  });

  after(async () => {
    for (const c of [plain, secure]) c?.close();
    await server?.close();
  });

  // The server is alive and answering after bad input.
  async function stillServes() {
    const { message } = await unaryCall(plain, 'GetBook', { id: 'book-7' });
    assert.deepEqual(message, expectedBook(7));
    assert.equal(server.openStreams(), 0, 'no stream left open');
  }

  describe('RPCs over plaintext and TLS', () => {
    for (const transport of ['plaintext', 'TLS']) {
      const client = () => (transport === 'TLS' ? secure : plain);

      it(`${transport}: GetBook answers data.js's book with a server-timing trailer`, async () => {
        const { message, trailers } = await unaryCall(client(), 'GetBook', { id: 'book-42' });
        assert.deepEqual(message, expectedBook(42));
        serverTiming(trailers);
      });

      it(`${transport}: StreamBooks sends one book per message, then the trailer`, async () => {
        const { messages, status: st } = await collectStream(client().StreamBooks({ n: 25 }));
        assert.equal(st.code, status.OK, st.details);
        assert.deepEqual(
          messages,
          Array.from({ length: 25 }, (_, i) => expectedBook(i + 1)),
        );
        serverTiming(st.metadata);
      });
    }

    it('GetBook: NOT_FOUND for an id outside book-1..book-500000', async () => {
      await expectGrpcError(
        unaryCall(plain, 'GetBook', { id: 'book-0' }),
        status.NOT_FOUND,
        /no book with id "book-0"; ids run from book-1 to book-500000/,
      );
      await expectGrpcError(unaryCall(plain, 'GetBook', { id: 'book-500001' }), status.NOT_FOUND, /"book-500001"/);
      assert.deepEqual((await unaryCall(plain, 'GetBook', { id: 'book-500000' })).message, expectedBook(500000));
    });

    it('GetBook: INVALID_ARGUMENT for a malformed id', async () => {
      await expectGrpcError(
        unaryCall(plain, 'GetBook', { id: 'forty-two' }),
        status.INVALID_ARGUMENT,
        /id must look like "book-<n>" .*\(got "forty-two"\)/,
      );
      await expectGrpcError(unaryCall(plain, 'GetBook', {}), status.INVALID_ARGUMENT, /\(got ""\)/);
      // A long id is cut in the message.
      const err = await unaryCall(plain, 'GetBook', { id: 'x'.repeat(10_000) }).catch((e) => e);
      assert.equal(err.code, status.INVALID_ARGUMENT);
      assert.ok(err.details.length < 200, err.details);
    });

    it('ListBooks(n) answers books 1..n in one message', async () => {
      for (const n of [0, 1, 3]) {
        const { message, trailers } = await unaryCall(plain, 'ListBooks', { n });
        assert.deepEqual(
          message.books,
          Array.from({ length: n }, (_, i) => expectedBook(i + 1)),
        );
        serverTiming(trailers);
      }
    });

    it('ListBooks(500000): the largest message goes through (send size unlimited); ser is timed', async () => {
      const { message, trailers } = await unaryCall(
        plain,
        'ListBooks',
        { n: LIMITS.MAX_BOOKS },
        { timeoutMs: 120_000 },
      );
      assert.equal(message.books.length, LIMITS.MAX_BOOKS);
      assert.deepEqual(message.books[0], expectedBook(1));
      assert.deepEqual(message.books.at(-1), expectedBook(LIMITS.MAX_BOOKS));
      const { exec, ser } = serverTiming(trailers);
      // Building and encoding 35 MB cannot take under a millisecond: both parts are measured.
      assert.ok(exec > 1 && ser > 1, `exec ${exec} ms, ser ${ser} ms`);
    });

    it('a client with the default 4 MB receive limit is refused the big message (clients must raise it)', async () => {
      const small = booksClient(`127.0.0.1:${server.port}`);
      try {
        await expectGrpcError(
          unaryCall(small, 'ListBooks', { n: 100_000 }, { timeoutMs: 60_000 }),
          status.RESOURCE_EXHAUSTED,
        );
      } finally {
        small.close();
      }
      await stillServes();
    });

    it('Payload(size) answers size bytes of data.js filler, up to MAX_PAYLOAD_BYTES', async () => {
      for (const size of [0, 1, 1000]) {
        const { message, trailers } = await unaryCall(plain, 'Payload', { size });
        assert.deepEqual(message, { size, data: filler(size) });
        serverTiming(trailers);
      }
      const { message } = await unaryCall(plain, 'Payload', { size: LIMITS.MAX_PAYLOAD_BYTES }, { timeoutMs: 60_000 });
      assert.equal(message.data.length, LIMITS.MAX_PAYLOAD_BYTES);
    });

    it('StreamEvents sends count events on an interval_ms schedule, sent_at in epoch ms at send time', async () => {
      const received = [];
      const startedAt = Date.now();
      const { messages, status: st } = await collectStream(
        plain.StreamEvents({ count: 5, interval_ms: 40, size: 100 }),
        () => received.push(Date.now()),
      );
      assert.equal(st.code, status.OK, st.details);
      serverTiming(st.metadata);
      assert.deepEqual(
        messages.map((m) => m.seq),
        [1, 2, 3, 4, 5],
      );
      messages.forEach((m, i) => {
        assert.equal(m.data, filler(100, m.seq));
        assert.equal(m.id, `event-${m.seq}`);
        // Same host, same clock: sent after the call started, before it was received.
        assert.ok(m.sent_at >= startedAt - 1 && m.sent_at <= received[i] + 1, `sent_at ${m.sent_at}`);
        // The first goes at once, event k+1 is due interval_ms * k later (timers never fire early).
        const sinceFirst = m.sent_at - messages[0].sent_at;
        assert.ok(sinceFirst >= 40 * i - 2, `event ${m.seq} sent ${sinceFirst} ms after the first`);
      });
    });

    it('Stats reports process memory and uptime', async () => {
      const { message, trailers } = await unaryCall(plain, 'Stats', {});
      assert.ok(message.rss_bytes > 10e6 && message.rss_bytes < 64e9, `rss ${message.rss_bytes}`);
      assert.ok(
        message.heap_used_bytes > 1e6 && message.heap_used_bytes < message.rss_bytes,
        `heap ${message.heap_used_bytes}`,
      );
      assert.ok(message.uptime_seconds > 0 && message.uptime_seconds <= process.uptime() + 1);
      serverTiming(trailers);
    });
  });

  describe('bounds (INVALID_ARGUMENT naming the bound)', () => {
    const cases = [
      ['ListBooks', { n: LIMITS.MAX_BOOKS + 1 }, /n must be an integer from 0 to 500000 \(got 500001\)/],
      ['ListBooks', { n: -1 }, /n must be an integer from 0 to 500000 \(got -1\)/],
      ['ListBooks', { n: 2 ** 31 - 1 }, /n must be an integer from 0 to 500000/],
      [
        'Payload',
        { size: LIMITS.MAX_PAYLOAD_BYTES + 1 },
        new RegExp(`size must be an integer from 0 to ${LIMITS.MAX_PAYLOAD_BYTES}`),
      ],
      ['Payload', { size: -5 }, /size must be an integer from 0/],
      ['Payload', { size: 2 ** 31 - 1 }, /size must be an integer from 0/],
    ];
    for (const [method, request, pattern] of cases) {
      it(`${method}(${JSON.stringify(request)})`, async () => {
        await expectGrpcError(unaryCall(plain, method, request), status.INVALID_ARGUMENT, pattern);
        await stillServes();
      });
    }

    const streamCases = [
      ['StreamBooks', { n: LIMITS.MAX_BOOKS + 1 }, /n must be an integer from 0 to 500000/],
      [
        'StreamEvents',
        { count: LIMITS.MAX_EVENTS + 1, interval_ms: 10 },
        new RegExp(`count must be an integer from 0 to ${LIMITS.MAX_EVENTS}`),
      ],
      ['StreamEvents', { count: 2 ** 31 - 1, interval_ms: 10 }, /count must be an integer from 0/],
      [
        'StreamEvents',
        { count: 1, interval_ms: 0 },
        new RegExp(
          `interval_ms must be an integer from ${LIMITS.MIN_EVENT_INTERVAL_MS} to ${LIMITS.MAX_EVENT_INTERVAL_MS} \\(got 0\\)`,
        ),
      ],
      [
        'StreamEvents',
        { count: 1, interval_ms: LIMITS.MAX_EVENT_INTERVAL_MS + 1 },
        /interval_ms must be an integer from 1 to 60000/,
      ],
      [
        'StreamEvents',
        { count: 1, interval_ms: 10, size: LIMITS.MAX_PAYLOAD_BYTES + 1 },
        /size must be an integer from 0/,
      ],
    ];
    for (const [method, request, pattern] of streamCases) {
      it(`${method}(${JSON.stringify(request)})`, async () => {
        const { messages, status: st } = await collectStream(plain[method](request));
        assert.equal(st.code, status.INVALID_ARGUMENT, st.details);
        assert.match(st.details, pattern);
        assert.equal(messages.length, 0);
        await stillServes();
      });
    }

    it('the boundary values themselves are accepted', async () => {
      const { messages, status: st } = await collectStream(
        plain.StreamEvents({ count: 2, interval_ms: LIMITS.MIN_EVENT_INTERVAL_MS, size: 0 }),
      );
      assert.equal(st.code, status.OK, st.details);
      assert.equal(messages.length, 2);
    });
  });

  describe('bad input never crashes the server', () => {
    it('a stream cancelled mid-way stops (timers cleared) and the next call is served', async () => {
      const events = await collectStream(
        plain.StreamEvents({ count: 1000, interval_ms: 20, size: 10 }),
        (m, call) => m.seq === 3 && call.cancel(),
      );
      assert.equal(events.status.code, status.CANCELLED);
      assert.equal(events.messages.length, 3);
      const books = await collectStream(
        plain.StreamBooks({ n: LIMITS.MAX_BOOKS }),
        (m, call) => m.id === 'book-10' && call.cancel(),
      );
      assert.equal(books.status.code, status.CANCELLED);
      assert.ok(books.messages.length >= 10 && books.messages.length < LIMITS.MAX_BOOKS);
      await waitFor(() => server.openStreams() === 0, 'the server to drop the cancelled streams');
      await stillServes();
    });

    it('cancelling a stream between events clears its timer at once', async () => {
      // The next event is 10 s away: only the cancel can end this stream within a second
      // (on the reference machine; the wait scales with this one's CPU, at most 4 s).
      const call = plain.StreamEvents({ count: 3, interval_ms: 10_000, size: 10 });
      const done = collectStream(call);
      await waitFor(() => server.openStreams() === 1, 'the event stream to start');
      call.cancel();
      assert.equal((await done).status.code, status.CANCELLED);
      await waitFor(() => server.openStreams() === 0, 'the server to drop the cancelled stream', 1000);
      await stillServes();
    });

    it('a client process that dies mid-stream: the server drops the stream and serves the next call', async () => {
      // A separate process, so the TCP connection really goes away (exit without closing the channel).
      const script = `
        const { booksClient } = await import(${JSON.stringify(CLIENT_MODULE)});
        const c = booksClient('127.0.0.1:${server.port}');
        c.StreamBooks({ n: ${LIMITS.MAX_BOOKS} }).on('data', (b) => { if (b.id === 'book-5') process.exit(0); });
        setTimeout(() => process.exit(3), 10000);`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      try {
        const [code] = await once(child, 'exit');
        assert.equal(code, 0, 'the child got its first books, then exited');
      } finally {
        child.kill('SIGKILL');
      }
      await waitFor(() => server.openStreams() === 0, 'the server to drop the stream of the dead client');
      await stillServes();
    });

    it('StreamBooks waits for a slow client (backpressure) instead of buffering the whole stream', async () => {
      const PAUSE_MS = 2000;
      const N = 50_000;
      const call = plain.StreamBooks({ n: N });
      let first = true;
      const done = collectStream(call, () => {
        if (!first) return;
        first = false;
        call.pause();
        setTimeout(() => call.resume(), PAUSE_MS);
      });
      const { messages, status: st } = await done;
      assert.equal(st.code, status.OK, st.details);
      assert.equal(messages.length, N);
      assert.deepEqual(messages.at(-1), expectedBook(N));
      // ~3.5 MB cannot fit the 64 KB HTTP/2 window: the server's loop had to wait for the
      // paused client. Had it written everything at once, total would be about exec + ser.
      const { exec, ser, total } = serverTiming(st.metadata);
      assert.ok(
        total - exec - ser > PAUSE_MS * 0.75,
        `waited ${(total - exec - ser).toFixed(0)} ms of a ${PAUSE_MS} ms pause`,
      );
    });
  });

  describe('TLS', () => {
    it('a client that does not trust the certificate cannot connect', async () => {
      const untrusting = new grpc.Client(`127.0.0.1:${server.tlsPort}`, grpc.credentials.createSsl(), {
        'grpc.ssl_target_name_override': 'localhost',
      });
      try {
        await expectGrpcError(
          rawCall(untrusting, '/books.v1.Books/GetBook', Buffer.alloc(0), { timeoutMs: 5000 }),
          status.UNAVAILABLE,
        );
      } finally {
        untrusting.close();
      }
    });

    it('a plaintext client gets no answer from the TLS port', async () => {
      const wrong = booksClient(`127.0.0.1:${server.tlsPort}`);
      try {
        const err = await unaryCall(wrong, 'GetBook', { id: 'book-1' }, { timeoutMs: 3000 }).catch((e) => e);
        assert.ok(
          [status.UNAVAILABLE, status.DEADLINE_EXCEEDED].includes(err.code),
          `${status[err.code]} ${err.details}`,
        );
      } finally {
        wrong.close();
      }
    });
  });

  describe('health service', () => {
    it("Check: '' and books.v1.Books are SERVING, an unknown service NOT_FOUND (plaintext and TLS)", async () => {
      for (const opts of [{ port: server.port }, { port: server.tlsPort, cert: server.cert }]) {
        const health = healthClient(`127.0.0.1:${opts.port}`, opts);
        try {
          for (const service of ['', 'books.v1.Books']) {
            assert.equal((await unaryCall(health, 'check', { service })).message.status, 'SERVING');
          }
          await expectGrpcError(unaryCall(health, 'check', { service: 'nope.v1.Nope' }), status.NOT_FOUND);
        } finally {
          health.close();
        }
      }
    });
  });
});

describe('gRPC server: the fan-out hub, client and bidirectional streams', { timeout: 120_000 }, () => {
  const IDLE_MS = 400;
  let server;
  let plain;
  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0, streamIdleMs: IDLE_MS });
    plain = booksClient(`127.0.0.1:${server.port}`, { options: { 'grpc.max_receive_message_length': -1 } });
  });
  after(async () => {
    plain?.close();
    await server?.close();
  });
  // waitFor for an async check.
  async function waitUntil(check, what, ms = 5000) {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const subscribersOf = async (topic) => (await unaryCall(plain, 'TopicInfo', { topic })).message.subscribers;
  async function stillServes() {
    assert.equal((await unaryCall(plain, 'GetBook', { id: 'book-7' })).message.id, 'book-7');
    await waitFor(() => server.openStreams() === 0, 'no stream left open');
    assert.equal(server.hub.stats().subscribers, 0, 'no subscriber left');
  }
  // A Subscribe stream and what it received; cancel() ends it.
  function subscriber(topic, afterSeq = 0) {
    const call = plain.Subscribe({ topic, after_seq: afterSeq });
    const s = collectStream(call);
    return { call, messages: [], done: s, cancel: () => call.cancel() };
  }
  const received = (sub) => sub.done.then((r) => r.messages);

  it('Publish stamps and numbers each event; every subscriber gets every event in order; TopicInfo counts them', async () => {
    const subs = [subscriber('t.order'), subscriber('t.order'), subscriber('t.order')];
    await waitUntil(async () => (await subscribersOf('t.order')) === 3, 'three subscribers');
    const before = Date.now();
    const answers = [];
    for (let i = 1; i <= 20; i++)
      answers.push((await unaryCall(plain, 'Publish', { topic: 't.order', payload: `p${i}` })).message);
    assert.deepEqual(
      answers.map((a) => a.seq),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    assert.ok(
      answers.every(
        (a) =>
          a.subscribers === 3 &&
          /^grpc-\d+$/.test(a.id) &&
          a.published_at >= before - 50 &&
          a.published_at <= Date.now() + 50,
      ),
    );
    assert.equal((await unaryCall(plain, 'TopicInfo', { topic: 't.order' })).message.last_seq, 20);
    await new Promise((r) => setTimeout(r, 100));
    for (const s of subs) s.cancel();
    for (const s of subs) {
      const got = await received(s);
      assert.deepEqual(
        got.map((m) => [m.seq, m.payload, m.origin]),
        answers.map((a, i) => [a.seq, `p${i + 1}`, 'grpc']),
      );
    }
    await stillServes();
  });

  it('Subscribe with after_seq resumes: first the kept events after it, then new ones', async () => {
    for (let i = 1; i <= 5; i++) await unaryCall(plain, 'Publish', { topic: 't.resume', payload: `p${i}` });
    const s = subscriber('t.resume', 3);
    await waitUntil(async () => (await subscribersOf('t.resume')) === 1, 'the subscriber');
    await unaryCall(plain, 'Publish', { topic: 't.resume', payload: 'p6' });
    await new Promise((r) => setTimeout(r, 100));
    s.cancel();
    assert.deepEqual(
      (await received(s)).map((m) => m.seq),
      [4, 5, 6],
    );
    await stillServes();
  });

  it("hub bounds: INVALID_ARGUMENT with the hub's sentence", async () => {
    await expectGrpcError(
      unaryCall(plain, 'Publish', { topic: 'has space', payload: '' }),
      status.INVALID_ARGUMENT,
      /topic must be 1 to 128 characters of letters, digits/,
    );
    await expectGrpcError(
      unaryCall(plain, 'Publish', { topic: 'x'.repeat(129), payload: '' }),
      status.INVALID_ARGUMENT,
      /topic must be 1 to 128 characters/,
    );
    await expectGrpcError(
      unaryCall(plain, 'Publish', { topic: 't', payload: 'x'.repeat(LIMITS.MAX_EVENT_PAYLOAD_BYTES + 1) }),
      status.INVALID_ARGUMENT,
      new RegExp(
        `payload is ${LIMITS.MAX_EVENT_PAYLOAD_BYTES + 1} bytes; the limit is ${LIMITS.MAX_EVENT_PAYLOAD_BYTES} per event`,
      ),
    );
    await expectGrpcError(unaryCall(plain, 'TopicInfo', { topic: '' }), status.INVALID_ARGUMENT, /topic must be/);
    const bad = await collectStream(plain.Subscribe({ topic: 'ok', after_seq: -1 }));
    assert.equal(bad.status.code, status.INVALID_ARGUMENT);
    assert.match(bad.status.details, /afterSeq must be a whole number >= 0 \(got -1\)/);
    await stillServes();
  });

  it('a subscriber that does not read is dropped once it falls SUBSCRIBER_QUEUE_EVENTS behind, and the hub lets go of it', async () => {
    // A raw HTTP/2 stream that is never read: HTTP/2 flow control stops the server's writes.
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    session.on('error', () => {});
    try {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/books.v1.Books/Subscribe',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      stream.on('error', () => {});
      const trailers = new Promise((resolve) => stream.on('trailers', resolve));
      stream.end(grpcMessage(Buffer.concat([Buffer.from([0x0a, 6]), Buffer.from('t.slow')])));
      stream.pause();
      await waitUntil(async () => (await subscribersOf('t.slow')) === 1, 'the subscriber');
      const payload = 'x'.repeat(4096);
      const until = Date.now() + 20_000;
      for (
        let i = 0;
        i < 2 * LIMITS.SUBSCRIBER_QUEUE_EVENTS && server.hub.stats().subscribers > 0 && Date.now() < until;
        i++
      )
        await unaryCall(plain, 'Publish', { topic: 't.slow', payload });
      assert.equal(server.hub.stats().subscribers, 0, 'the slow subscriber was dropped');
      stream.resume();
      const t = await Promise.race([
        trailers,
        new Promise((_, reject) => setTimeout(() => reject(new Error('no trailers within 10 s')), 10_000)),
      ]);
      assert.equal(Number(t['grpc-status']), status.RESOURCE_EXHAUSTED);
      assert.match(
        decodeURIComponent(t['grpc-message']),
        /this subscriber fell \d+ events behind; the limit is 1000: read faster, or subscribe again with after_seq/,
      );
    } finally {
      session.destroy();
    }
    await stillServes();
  });

  it('PayloadStream answers each request in order on one stream, and ends at the half-close', async () => {
    const call = plain.PayloadStream();
    const done = collectStream(call);
    const sizes = [10, 100000, 0, 5000, 1];
    for (const size of sizes) call.write({ size });
    call.end();
    const { messages, status: st } = await done;
    assert.equal(st.code, status.OK, st.details);
    assert.deepEqual(
      messages.map((m) => [m.size, m.data.length]),
      sizes.map((n) => [n, n]),
    );
    await stillServes();
  });

  it('PayloadStream: a bad size ends the stream with INVALID_ARGUMENT; a message over the size limit with RESOURCE_EXHAUSTED', async () => {
    const call = plain.PayloadStream();
    const done = collectStream(call);
    call.write({ size: 3 });
    call.write({ size: LIMITS.MAX_PAYLOAD_BYTES + 1 });
    const { messages, status: st } = await done;
    assert.deepEqual([messages.length, st.code], [1, status.INVALID_ARGUMENT]);
    assert.match(st.details, /size must be an integer from 0 to 16777216/);
    const big = plain.UploadBooks(() => {});
    const bigDone = new Promise((resolve) => big.on('status', resolve));
    big.on('error', () => {});
    big.write({ id: 'book-1', name: 'x'.repeat(LIMITS.MAX_BODY_BYTES + 10) });
    big.end();
    const bigStatus = await bigDone;
    assert.equal(bigStatus.code, status.RESOURCE_EXHAUSTED, bigStatus.details);
    await stillServes();
  });

  it('UploadBooks counts the books of a client stream and answers once it ends, with server-timing', async () => {
    const books = Array.from({ length: 1000 }, (_, i) => expectedBook(i + 1));
    const { message, status: st } = await clientStreamCall(plain, 'UploadBooks', books);
    assert.equal(st.code, status.OK, st.details);
    assert.deepEqual(message, {
      count: 1000,
      page_count: books.reduce((n, b) => n + b.page_count, 0),
      first_id: 'book-1',
      last_id: 'book-1000',
    });
    serverTiming(st.metadata);
    const empty = await clientStreamCall(plain, 'UploadBooks', []);
    assert.deepEqual(empty.message, { count: 0, page_count: 0, first_id: '', last_id: '' });
    await stillServes();
  });

  it('streams that never end: UploadBooks and PayloadStream are ended after STREAM_IDLE_MS of silence', async () => {
    const started = Date.now();
    const upload = await clientStreamCall(plain, 'UploadBooks', [expectedBook(1)], { end: false });
    assert.equal(upload.status.code, status.DEADLINE_EXCEEDED);
    assert.match(upload.status.details, /no message for 0.4 s: the stream was idle and is ended; open a new one/);
    const call = plain.PayloadStream();
    const done = collectStream(call);
    call.write({ size: 1 });
    const bidi = await done;
    assert.deepEqual([bidi.messages.length, bidi.status.code], [1, status.DEADLINE_EXCEEDED]);
    assert.ok(Date.now() - started < 5 * IDLE_MS + scaled(2000), 'both ended within their idle time');
    await stillServes();
  });

  // The upload is cancelled once the server holds all three, not at a fixed 100 ms: in a
  // fresh-clone suite (8e4a948, phase 2 beside another file) it was cancelled before the
  // other two had opened, and the server never held three. Until then it writes a book
  // every 100 ms, so the server's idle end (IDLE_MS) cannot close it first.
  it('cancelled streams: Subscribe, PayloadStream and UploadBooks are dropped at once and the next call is served', async () => {
    const sub = subscriber('t.cancel');
    const call = plain.PayloadStream();
    const bidi = collectStream(call);
    call.write({ size: 10 });
    let uploadCall = null;
    let keepAlive = null;
    const upload = clientStreamCall(plain, 'UploadBooks', [expectedBook(1), expectedBook(2)], {
      end: false,
      onCall: (c) => {
        uploadCall = c;
        keepAlive = setInterval(() => c.write(expectedBook(3)), 100);
      },
    });
    try {
      await waitFor(() => server.openStreams() === 3, 'three streams open');
    } finally {
      clearInterval(keepAlive);
    }
    uploadCall.cancel();
    sub.cancel();
    call.cancel();
    assert.equal((await sub.done).status.code, status.CANCELLED);
    assert.equal((await bidi).status.code, status.CANCELLED);
    assert.equal((await upload).status.code, status.CANCELLED);
    await stillServes();
  });

  it('close(): open hub and client streams end UNAVAILABLE', async () => {
    const own = await createServer({ port: 0, tlsPort: 0 });
    const client = booksClient(`127.0.0.1:${own.port}`);
    try {
      const sub = collectStream(client.Subscribe({ topic: 't' }));
      const upload = clientStreamCall(client, 'UploadBooks', [expectedBook(1)], { end: false });
      await waitFor(() => own.openStreams() === 2, 'both streams open');
      await own.close();
      assert.equal((await sub).status.code, status.UNAVAILABLE);
      assert.equal((await upload).status.code, status.UNAVAILABLE);
    } finally {
      client.close();
      await own.close();
    }
  });
});

describe('gRPC server shutdown', { timeout: 30_000 }, () => {
  it('close(): Watch sees NOT_SERVING, an open stream ends UNAVAILABLE, and it returns within the drain time', async () => {
    const server = await createServer({ port: 0, tlsPort: 0 });
    const addr = `127.0.0.1:${server.port}`;
    const health = healthClient(addr);
    const books = booksClient(addr);
    try {
      const watch = health.watch({ service: 'books.v1.Books' });
      const statuses = [];
      watch.on('data', (m) => statuses.push(m.status));
      watch.on('error', () => {});
      await waitFor(() => statuses.length === 1, 'the first Watch answer');
      assert.deepEqual(statuses, ['SERVING']);

      const stream = collectStream(books.StreamEvents({ count: 1000, interval_ms: 50, size: 10 }));
      await waitFor(() => server.openStreams() === 1, 'the event stream to start');

      const started = Date.now();
      await server.close();
      const took = Date.now() - started;
      assert.ok(took < DRAIN_MS + scaled(1500), `close() took ${took} ms`);
      assert.deepEqual(statuses, ['SERVING', 'NOT_SERVING']);
      const { status: st } = await stream;
      assert.equal(st.code, status.UNAVAILABLE);
      assert.match(st.details, /server is shutting down/);
      assert.equal(server.openStreams(), 0);
    } finally {
      health.close();
      books.close();
      await server.close();
    }
  });
});

// The keepalive port (the mobile scenario's grpc_ping lane): its server PINGs each
// connection every keepaliveMs, the plaintext port's never (grpc-js's default is 2 h).
// Counted on raw HTTP/2 sessions over 2 s at 250 ms: about 7 PINGs; at least 3 leaves
// room for a machine several times slower.
describe('gRPC server: the keepalive port', { timeout: 30_000 }, () => {
  it('PINGs every connection on GRPC_KEEPALIVE_PORT, none on GRPC_PORT, and serves the same RPCs there', async () => {
    const server = await createServer({ port: 0, tlsPort: 0, keepaliveMs: 250 });
    const pings = { plain: 0, keepalive: 0 };
    const sessions = Object.entries({ plain: server.port, keepalive: server.keepalivePort }).map(([name, port]) => {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.on('ping', () => pings[name]++);
      session.on('error', () => {});
      return session;
    });
    const books = booksClient(`127.0.0.1:${server.keepalivePort}`);
    try {
      await new Promise((r) => setTimeout(r, 2000));
      assert.equal(pings.plain, 0, 'no PING on the plaintext port');
      assert.ok(pings.keepalive >= 3, `${pings.keepalive} PINGs in 2 s on the keepalive port (interval 250 ms)`);
      assert.equal((await unaryCall(books, 'GetBook', { id: 'book-3' })).message.id, 'book-3');
    } finally {
      books.close();
      for (const s of sessions) s.close();
      await server.close();
    }
  });
});
