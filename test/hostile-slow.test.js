// Slow clients (slowloris) against both servers as processes: a client that
// trickles or withholds what it owes -- the TLS handshake, the HTTP/2 connection
// preface, request headers, a request body, the WebSocket upgrade -- is dropped
// after SLOW_CLIENT_MS (servers/shared/slow-clients.js), with an answer saying
// why where the protocol has room for one (HTTP 408 JSON, a GOAWAY's debug
// data), and not before: the pack's clients give up after 30 s, and a client
// that sends nothing (the stall fault) must meet its own timeout first.
// The cases run concurrently (each takes ~40 s); meanwhile both servers serve others.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { h2Connect } from '../servers/graphql/client.js';
import { booksClient, unaryCall } from '../servers/grpc/client.js';
import { SLOW_CLIENT_MS } from '../servers/shared/slow-clients.js';
import {
  H2_PREFACE,
  WS_UPGRADE,
  expectGraphQLError,
  goawayOf,
  graphqlStillServes,
  h2Exchange,
  parseHttpResponse,
  rawExchange,
  spawnServer,
  trickle,
} from './helpers/hostile.js';

const EARLIEST = SLOW_CLIENT_MS - 1000; // Node checks HTTP/1.1 timeouts every second
const LATEST = SLOW_CLIENT_MS + 10_000; // a busy machine
const WAIT = SLOW_CLIENT_MS + 15_000; // how long a case waits for the server to act
const EVERY = 2000; // ms between trickled pieces

let graphql;
let grpc;

// The first bytes a TLS client sends (its ClientHello), caught on a local listener.
async function clientHello(alpn) {
  const catcher = net.createServer();
  catcher.listen(0, '127.0.0.1');
  await once(catcher, 'listening');
  const caught = new Promise((resolve) => catcher.once('connection', (s) => s.once('data', resolve)));
  const client = tls.connect({
    port: catcher.address().port,
    host: '127.0.0.1',
    ALPNProtocols: alpn,
    servername: 'localhost',
  });
  client.on('error', () => {});
  try {
    return await caught;
  } finally {
    client.destroy();
    catcher.close();
  }
}

const byteByByte = (text) => [...Buffer.from(text)].map((b) => Buffer.from([b]));
const POST_HEAD = 'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';

// Dropped within [EARLIEST, LATEST] ms.
function droppedInTime(r) {
  assert.equal(r.closedByServer, true, `still open after ${r.ms} ms`);
  assert.ok(r.ms >= EARLIEST && r.ms <= LATEST, `dropped after ${r.ms} ms, not ${SLOW_CLIENT_MS} ms`);
}
// ...with an HTTP 408 in the GraphQL error shape.
const timedOut408 = (pattern) => (r) => {
  droppedInTime(r);
  const res = parseHttpResponse(r.text);
  assert.ok(res, `no HTTP answer: ${JSON.stringify(r.text)}`);
  expectGraphQLError(res, 408, 'REQUEST_TIMEOUT', pattern);
};
const headersLate = timedOut408(new RegExp(`request not received in time: headers within ${SLOW_CLIENT_MS / 1000} s`));
const bodyLate = timedOut408(new RegExp(`request body not complete within ${SLOW_CLIENT_MS / 1000} s of its headers`));
// ...with a GOAWAY naming the missing preface.
const noPreface = (r) => {
  droppedInTime(r);
  assert.match(
    goawayOf(r.bytes)?.debug ?? '(no GOAWAY)',
    new RegExp(`no HTTP/2 connection preface \\(SETTINGS\\) within ${SLOW_CLIENT_MS / 1000} s`),
  );
};
// ...without a byte (TLS never got far enough to say anything).
const silentlyDropped = (r) => {
  droppedInTime(r);
  assert.equal(r.bytes.length, 0);
};

// An HTTP/2 stream on the GraphQL TLS port whose request never completes -> the answer and when it came.
async function slowH2Stream(writeBody) {
  const session = await h2Connect(`https://127.0.0.1:${graphql.tlsPort}`);
  const started = Date.now();
  try {
    const r = await h2Exchange(
      session,
      { ':method': 'POST', ':path': '/graphql', 'content-type': 'application/json' },
      writeBody,
      { timeoutMs: WAIT },
    );
    return { ...r, ms: Date.now() - started };
  } finally {
    session.destroy();
  }
}
const streamTimedOut = (r) => {
  assert.ok(r.ms >= EARLIEST && r.ms <= LATEST, `answered after ${r.ms} ms`);
  expectGraphQLError(
    r,
    408,
    'REQUEST_TIMEOUT',
    new RegExp(`request body not complete within ${SLOW_CLIENT_MS / 1000} s`),
  );
};

const CASES = [
  [
    'HTTP/1.1: a connection that sends nothing: 408 after the header bound',
    () => rawExchange({ port: graphql.port, timeoutMs: WAIT }),
    headersLate,
  ],
  [
    'HTTP/1.1: headers trickled, a line every 2 s: 408',
    () =>
      rawExchange({ port: graphql.port, timeoutMs: WAIT }, (s) =>
        trickle(s, ['GET /healthz HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`)], EVERY),
      ),
    headersLate,
  ],
  [
    'HTTP/1.1: a body trickled, a byte every 2 s: 408 from the handler',
    () =>
      rawExchange({ port: graphql.port, timeoutMs: WAIT }, (s) =>
        trickle(
          s,
          [`${POST_HEAD}Content-Length: 100\r\n\r\n`, ...byteByByte('{"query": "{ book(id: \\"book-1\\") { id } }"}')],
          EVERY,
        ),
      ),
    bodyLate,
  ],
  [
    'HTTP/1.1: a chunked body that stops after its first chunk: 408',
    () =>
      rawExchange({ port: graphql.port, timeoutMs: WAIT }, (s) =>
        s.write(`${POST_HEAD}Transfer-Encoding: chunked\r\n\r\n5\r\n{"que\r\n`),
      ),
    bodyLate,
  ],
  [
    'HTTP/1.1 over TLS: headers trickled: 408',
    () =>
      rawExchange({ port: graphql.tlsPort, alpn: ['http/1.1'], timeoutMs: WAIT }, (s) =>
        trickle(s, ['GET /healthz HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`)], EVERY),
      ),
    headersLate,
  ],
  [
    'the WebSocket upgrade trickled, a line every 2 s: 408',
    () =>
      rawExchange({ port: graphql.port, timeoutMs: WAIT }, (s) =>
        trickle(
          s,
          [...WS_UPGRADE.split(/(?<=\r\n)/), ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`)],
          EVERY,
        ),
      ),
    headersLate,
  ],
  [
    'TLS: a connection that never starts the handshake: dropped',
    () => rawExchange({ port: graphql.tlsPort, timeoutMs: WAIT }),
    silentlyDropped,
  ],
  [
    'TLS: a ClientHello trickled, 10 bytes every 2 s: dropped',
    async () => {
      const hello = await clientHello(['h2']);
      const pieces = Array.from({ length: Math.ceil(hello.length / 10) }, (_, i) =>
        hello.subarray(i * 10, i * 10 + 10),
      );
      return rawExchange({ port: graphql.tlsPort, timeoutMs: WAIT }, (s) => trickle(s, pieces, EVERY));
    },
    silentlyDropped,
  ],
  [
    'HTTP/2: TLS done, no connection preface: GOAWAY saying so',
    () => rawExchange({ port: graphql.tlsPort, alpn: ['h2'], timeoutMs: WAIT }),
    noPreface,
  ],
  [
    'HTTP/2: half a connection preface, then silence: GOAWAY',
    () =>
      rawExchange({ port: graphql.tlsPort, alpn: ['h2'], timeoutMs: WAIT }, (s) => s.write(H2_PREFACE.slice(0, 12))),
    noPreface,
  ],
  [
    'HTTP/2: a stream whose body is trickled, a byte every 2 s: 408 on the stream',
    () =>
      slowH2Stream(async (stream) => {
        for (const piece of byteByByte('{"query": "{ book(id: \\"book-1\\") { id } }"}')) {
          if (stream.destroyed || !stream.writable) return;
          stream.write(piece);
          await sleep(EVERY);
        }
      }),
    streamTimedOut,
  ],
  [
    'HTTP/2: a stream with headers and no body, never ended: 408 on the stream',
    () => slowH2Stream(() => {}),
    streamTimedOut,
  ],
  [
    'gRPC: a plaintext connection that sends nothing: GOAWAY saying so',
    () => rawExchange({ port: grpc.port, timeoutMs: WAIT }),
    noPreface,
  ],
  [
    'gRPC: half a connection preface, then silence: GOAWAY',
    () => rawExchange({ port: grpc.port, timeoutMs: WAIT }, (s) => s.write(H2_PREFACE.slice(0, 12))),
    noPreface,
  ],
  [
    'gRPC over TLS: a connection that never starts the handshake: dropped',
    () => rawExchange({ port: grpc.tlsPort, timeoutMs: WAIT }),
    silentlyDropped,
  ],
  [
    'gRPC over TLS: TLS done, no connection preface: GOAWAY saying so',
    () => rawExchange({ port: grpc.tlsPort, alpn: ['h2'], timeoutMs: WAIT }),
    noPreface,
  ],
];

async function bothServe() {
  await graphqlStillServes(graphql);
  const client = booksClient(`127.0.0.1:${grpc.port}`);
  try {
    assert.equal((await unaryCall(client, 'GetBook', { id: 'book-7' })).message.id, 'book-7');
  } finally {
    client.close();
  }
}

describe('slow clients are dropped after a bounded time', { timeout: 120_000 }, () => {
  before(async () => {
    [graphql, grpc] = await Promise.all([spawnServer('graphql'), spawnServer('grpc')]);
  });
  after(() => Promise.all([graphql?.stop(), grpc?.stop()]));

  describe(`each after ${SLOW_CLIENT_MS / 1000} s, all at once`, { concurrency: true }, () => {
    for (const [name, run, expect] of CASES) {
      test(name, { timeout: WAIT + 10_000 }, async () => expect(await run()));
    }
    test('meanwhile both servers serve others', async () => {
      await sleep(5000); // every slow client is connected by now
      await bothServe();
    });
  });

  test('afterwards both servers still serve, alive and without a log line', async () => {
    await bothServe();
    graphql.assertHealthy();
    grpc.assertHealthy();
  });
});
