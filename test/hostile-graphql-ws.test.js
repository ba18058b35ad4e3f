// Hostile input to the GraphQL server over WebSocket (graphql-transport-ws),
// one test per case, against `node servers/graphql/server.js` as a process:
// protocol violations get their close code (graphql-ws's 44xx, RFC 6455's 1002,
// 1007, 1009) or an `error` message for the operation, then a fresh client runs
// a query, the process is alive and has logged nothing; memory is compared
// before and after the whole table. The WS upgrade sent slowly is in
// hostile-slow.test.js.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { LIMITS } from '../common/defaults.js';
import { runOperation, wsClient } from '../servers/graphql/client.js';
import { MAX_NESTING } from '../servers/graphql/rules.js';
import { MAX_INIT_PAYLOAD_BYTES, MAX_OPERATIONS_PER_SOCKET } from '../servers/graphql/ws.js';
import {
  WS_UPGRADE,
  ackedSocket,
  assertMemoryBounded,
  parseHttpResponse,
  rawExchange,
  rawSocket,
  rawWebSocket,
  spawnServer,
  waitFor,
  wsFrame,
  wsUrl,
} from './helpers/hostile.js';
import { serverMemory } from '../dev/server-memory.js';

let server;
let memoryBefore;

const BOOK = '{ book(id: "book-1") { id } }';
const EVENTS =
  'subscription($count: Int!, $interval: Int!, $size: Int) { events(count: $count, intervalMs: $interval, size: $size) { id } }';
const subscribe = (id, query, variables, extra = {}) =>
  JSON.stringify({ id, type: 'subscribe', payload: { query, variables, ...extra } });
const INVALID_UTF8 = Buffer.from([0xc3, 0x28, 0xff]);

// Sends `messages` (strings: text frames) on an acked socket (or a bare one) and
// waits for the close -> { code, reason }.
async function closeAfter(messages, { acked = true, url = wsUrl(server) } = {}) {
  const { ws, closed } = acked ? await ackedSocket(url) : await rawSocket(url);
  for (const m of [messages].flat()) ws.send(m);
  return closed;
}
const closesWith = (code, reason) => (r) => {
  assert.equal(r.code, code, `closed ${r.code} ${r.reason}`);
  if (reason) assert.match(r.reason, reason);
};

// Sends one operation on an acked socket -> the error messages it got (from an
// `error` message, or the errors of a `next` result), the socket left open.
async function operationErrors(query, variables, extra) {
  const socket = await ackedSocket(wsUrl(server));
  try {
    socket.ws.send(subscribe('op', query, variables, extra));
    await waitFor(
      () => socket.messages.some((m) => m.id === 'op' && (m.type === 'error' || m.type === 'complete')),
      'the operation to end',
    );
    const m = socket.messages.find(
      (x) => x.id === 'op' && (x.type === 'error' || (x.type === 'next' && x.payload.errors)),
    );
    assert.ok(m, `no error for the operation: ${JSON.stringify(socket.messages)}`);
    const errors = m.type === 'error' ? m.payload : m.payload.errors;
    assert.equal(socket.ws.readyState, WebSocket.OPEN, 'an operation error leaves the socket open');
    return errors;
  } finally {
    socket.ws.terminate();
  }
}
const errorWith = (code, pattern) => (errors) => {
  assert.equal(errors[0].extensions?.code, code, JSON.stringify(errors));
  assert.match(errors[0].message, pattern);
};

// A case that does `act(socket)` on a socket (acked unless `acked: false`), after
// which that same socket must still run a query: [send, check] for a CASES row.
function sameSocketServes(act, { acked = true } = {}) {
  const send = async () => {
    const socket = acked ? await ackedSocket(wsUrl(server)) : await rawSocket(wsUrl(server));
    try {
      await act(socket);
      socket.ws.send(subscribe('check', '{ book(id: "book-3") { id } }'));
      await waitFor(
        () => socket.messages.some((m) => m.id === 'check' && m.type === 'next'),
        'the query on the same socket',
      );
      return socket.messages.find((m) => m.id === 'check' && m.type === 'next').payload.data;
    } finally {
      socket.ws.terminate();
    }
  };
  return [send, (data) => assert.deepEqual(data, { book: { id: 'book-3' } })];
}

// An upgrade request by hand -> the HTTP answer.
async function upgradeAnswer(request) {
  const r = await rawExchange({ port: server.port, timeoutMs: 5000 }, (s) => s.write(request));
  return parseHttpResponse(r.text);
}
const upgradeRefused = (status, pattern) => (res) => {
  assert.equal(res?.status, status, JSON.stringify(res));
  assert.match(res.text, pattern);
};

const rawFrames = (...frames) => rawWebSocket(server.port, frames);
const protocolError = (r) => assert.equal(r.close?.code, 1002, JSON.stringify(r));

const CASES = [
  // graphql-transport-ws violations
  [
    'subscribe before connection_init: 4401',
    () => closeAfter(subscribe('1', BOOK), { acked: false }),
    closesWith(4401, /Unauthorized/),
  ],
  [
    'an unknown message type: 4400',
    () => closeAfter(JSON.stringify({ type: 'gimme' })),
    closesWith(4400, /Invalid message received/),
  ],
  ['a text frame that is not JSON: 4400', () => closeAfter('this is not json'), closesWith(4400)],
  [
    'a subscribe without a query: 4400',
    () => closeAfter(JSON.stringify({ id: '1', type: 'subscribe', payload: { variables: {} } })),
    closesWith(4400),
  ],
  [
    'a message only servers send (next): 4400',
    () => closeAfter(JSON.stringify({ id: '1', type: 'next', payload: { data: {} } })),
    closesWith(4400, /Invalid message received/),
  ],
  ['a subscribe with an empty id: 4400', () => closeAfter(subscribe('', BOOK)), closesWith(4400)],
  [
    'a subscribe with a numeric id: 4400',
    () => closeAfter(JSON.stringify({ id: 5, type: 'subscribe', payload: { query: BOOK } })),
    closesWith(4400),
  ],
  ['a subscribe whose variables are a string: 4400', () => closeAfter(subscribe('1', BOOK, 'x')), closesWith(4400)],
  [
    'a message nested 100000 levels deep: 4400',
    () =>
      closeAfter(
        `{"type":"subscribe","id":"1","payload":{"query":"${BOOK}","variables":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`,
      ),
    closesWith(4400),
  ],
  [
    'a duplicate subscription id: 4409',
    () =>
      closeAfter([
        subscribe('same', EVENTS, { count: 100, interval: 1000 }),
        subscribe('same', EVENTS, { count: 100, interval: 1000 }),
      ]),
    closesWith(4409, /Subscriber for same already exists/),
  ],
  ['connection_init twice: 4429', () => closeAfter(JSON.stringify({ type: 'connection_init' })), closesWith(4429)],
  [
    `a connection_init payload of 900 KB: 4400 naming the ${MAX_INIT_PAYLOAD_BYTES}-byte limit`,
    () =>
      closeAfter(JSON.stringify({ type: 'connection_init', payload: { token: 'x'.repeat(900_000) } }), {
        acked: false,
      }),
    closesWith(4400, new RegExp(`connection_init payload is \\d+ bytes; the limit is ${MAX_INIT_PAYLOAD_BYTES}`)),
  ],
  [
    'no connection_init within 3 s: 4408',
    () => closeAfter([], { acked: false }),
    closesWith(4408, /Connection initialisation timeout/),
  ],
  [
    'no subprotocol: 4406; the legacy graphql-ws subprotocol: refused in the handshake',
    async () => {
      const none = await (await rawSocket(wsUrl(server), [])).closed;
      const legacy = new WebSocket(wsUrl(server), 'graphql-ws');
      const [err] = await once(legacy, 'error');
      return { none, legacy: err.message };
    },
    ({ none, legacy }) => {
      assert.equal(none.code, 4406);
      assert.match(legacy, /Server sent no subprotocol/);
    },
  ],
  [
    'over wss://, the same codes (subscribe before init: 4401)',
    () => closeAfter(subscribe('1', BOOK), { acked: false, url: wsUrl(server, { tls: true }) }),
    closesWith(4401),
  ],
  [
    'a complete for an unknown id: ignored; the socket still serves',
    ...sameSocketServes(({ ws }) => ws.send(JSON.stringify({ type: 'complete', id: 'nobody' }))),
  ],
  [
    'a complete before connection_init: ignored; init and a query then work',
    ...sameSocketServes(
      async (socket) => {
        socket.ws.send(JSON.stringify({ type: 'complete', id: 'early' }));
        socket.ws.send(JSON.stringify({ type: 'connection_init' }));
        await waitFor(() => socket.messages.some((m) => m.type === 'connection_ack'), 'connection_ack');
      },
      { acked: false },
    ),
  ],
  [
    '2000 graphql-transport-ws pings at once: 2000 pongs, the socket still serves',
    ...sameSocketServes(async (socket) => {
      for (let i = 0; i < 2000; i++) socket.ws.send('{"type":"ping"}');
      await waitFor(() => socket.messages.filter((m) => m.type === 'pong').length === 2000, '2000 pongs');
    }),
  ],
  [
    "50 WebSocket ping frames: 50 pong frames (within ws's bound of 60 unanswered), the socket still serves",
    ...sameSocketServes(async ({ ws }) => {
      let pongs = 0;
      ws.on('pong', () => pongs++);
      for (let i = 0; i < 50; i++) ws.ping('p');
      await waitFor(() => pongs === 50, '50 pongs');
    }),
  ],
  [
    'a flood of 5000 WebSocket ping frames: the socket is cut (ws allows 60 unanswered pongs)',
    () => rawFrames(Buffer.concat(Array.from({ length: 5000 }, () => wsFrame(0x9, 'p')))),
    (r) => assert.deepEqual([r.upgraded, r.closedByServer], [true, true]),
  ],
  [
    `${MAX_OPERATIONS_PER_SOCKET + 50} operations at once on one socket: ${MAX_OPERATIONS_PER_SOCKET} run, the rest get an error naming the limit`,
    async () => {
      const socket = await ackedSocket(wsUrl(server));
      const n = MAX_OPERATIONS_PER_SOCKET + 50;
      for (let i = 0; i < n; i++) socket.ws.send(subscribe(`s${i}`, EVENTS, { count: 2, interval: 60_000 }));
      await waitFor(
        () => new Set(socket.messages.filter((m) => m.id).map((m) => m.id)).size === n,
        'an answer to every operation',
      );
      return socket;
    },
    (socket) => {
      const refused = socket.messages.filter((m) => m.type === 'error');
      const running = socket.messages.filter((m) => m.type === 'next');
      assert.deepEqual([running.length, refused.length], [MAX_OPERATIONS_PER_SOCKET, 50]);
      assert.match(
        refused[0].payload[0].message,
        new RegExp(`the limit is ${MAX_OPERATIONS_PER_SOCKET}: complete some first or open another connection`),
      );
      socket.ws.terminate(); // ends the 100 subscriptions and their timers
    },
  ],
  // operations refused with an `error` message, the socket left open
  [
    'alias fan-out (2 x allBooks(500000)): COST_LIMIT_EXCEEDED',
    () => operationErrors('{ a: allBooks(nrOfBooks: 500000) { id } b: allBooks(nrOfBooks: 500000) { id } }'),
    errorWith('COST_LIMIT_EXCEEDED', /asks for up to 1000000 list items/),
  ],
  [
    'a list literal nested 30000 levels: BAD_REQUEST before parsing',
    () => operationErrors(`{ book(id: ${'['.repeat(30_000)}${']'.repeat(30_000)}) { id } }`),
    errorWith('BAD_REQUEST', new RegExp(`nests brackets more than ${MAX_NESTING} levels deep`)),
  ],
  [
    'one field repeated 3500 times: validation stops, saying why',
    () => operationErrors(`{ ${'book(id: "book-1") { id } '.repeat(3500)} }`),
    errorWith('GRAPHQL_VALIDATION_FAILED', /Validation aborted: the document repeats fields/),
  ],
  [
    'two operations and no operationName: BAD_REQUEST',
    () => operationErrors('query A { book(id: "book-1") { id } } query B { book(id: "book-2") { id } }'),
    errorWith('BAD_REQUEST', /several operations: name one in operationName/),
  ],
  [
    'extensions.executor unknown: BAD_REQUEST naming the executors',
    () => operationErrors('{ book(id: "book-1") { id } }', undefined, { extensions: { executor: 'turbo' } }),
    errorWith(
      'BAD_REQUEST',
      /extensions\.executor must be one of plain, per-item, dataloader, instrumented, jit \(got "turbo"\)/,
    ),
  ],
  [
    'an operationName the document lacks: BAD_REQUEST',
    () => operationErrors('query A { book(id: "book-1") { id } }', undefined, { operationName: 'C' }),
    errorWith('BAD_REQUEST', /no operation named "C"/),
  ],
  [
    'a subscription with two root fields: validation error',
    () =>
      operationErrors(
        'subscription { a: events(count: 1, intervalMs: 1) { id } b: events(count: 1, intervalMs: 1) { id } }',
      ),
    errorWith('GRAPHQL_VALIDATION_FAILED', /must select only one top level field/),
  ],
  [
    'topicEvents on a topic of 200 characters: BAD_USER_INPUT naming the rule',
    () => operationErrors('subscription($t: String!) { topicEvents(topic: $t) { seq } }', { t: 'a'.repeat(200) }),
    errorWith('BAD_USER_INPUT', /topic must be 1 to 128 characters/),
  ],
  [
    'events count 2^31-1: BAD_USER_INPUT naming the bound',
    () => operationErrors(EVENTS, { count: 2 ** 31 - 1, interval: 10 }),
    errorWith('BAD_USER_INPUT', new RegExp(`count must be an integer from 0 to ${LIMITS.MAX_EVENTS}`)),
  ],
  [
    'events intervalMs -5: BAD_USER_INPUT naming the bound',
    () => operationErrors(EVENTS, { count: 1, interval: -5 }),
    errorWith('BAD_USER_INPUT', /intervalMs must be an integer from 1 to 60000 \(got -5\)/),
  ],
  [
    'events intervalMs 1.5 (literal): validation error',
    () => operationErrors('subscription { events(count: 1, intervalMs: 1.5) { id } }'),
    errorWith('GRAPHQL_VALIDATION_FAILED', /Int cannot represent non-integer value: 1.5/),
  ],
  [
    'events size "big" (literal): validation error',
    () => operationErrors('subscription { events(count: 1, intervalMs: 1, size: "big") { id } }'),
    errorWith('GRAPHQL_VALIDATION_FAILED', /Int cannot represent non-integer value: "big"/),
  ],
  [
    'events count as a float variable: coercion error',
    () => operationErrors(EVENTS, { count: 2.5, interval: 10 }),
    (errors) => assert.match(errors[0].message, /Variable "\$count" got invalid value 2.5/),
  ],
  // RFC 6455 violations
  [
    'a binary frame: 4400 saying to send text',
    () => closeAfter(Buffer.from([0xde, 0xad])),
    closesWith(4400, /Binary frames are not supported/),
  ],
  [
    'a binary frame before connection_init: 4400',
    () => closeAfter(Buffer.from([1, 2, 3]), { acked: false }),
    closesWith(4400, /Binary frames are not supported/),
  ],
  [
    'a frame over LIMITS.MAX_BODY_BYTES: 1009',
    () => closeAfter(subscribe('1', BOOK, { pad: 'x'.repeat(LIMITS.MAX_BODY_BYTES) })),
    closesWith(1009),
  ],
  [
    'invalid UTF-8 in a text frame: 1007',
    () => rawFrames(wsFrame(0x1, INVALID_UTF8)),
    (r) => assert.equal(r.close?.code, 1007, JSON.stringify(r)),
  ],
  [
    'invalid UTF-8 inside the JSON string of a text frame: 1007',
    () =>
      rawFrames(
        wsFrame(0x1, '{"type":"connection_init"}'),
        wsFrame(
          0x1,
          Buffer.concat([
            Buffer.from('{"type":"subscribe","id":"'),
            INVALID_UTF8,
            Buffer.from(`","payload":{"query":"${BOOK.replaceAll('"', '\\"')}"}}`),
          ]),
        ),
      ),
    (r) => assert.equal(r.close?.code, 1007, JSON.stringify(r)),
  ],
  [
    'an unmasked client frame: 1002',
    () => rawFrames(wsFrame(0x1, '{"type":"connection_init"}', { mask: false })),
    protocolError,
  ],
  ['a reserved opcode (0x3): 1002', () => rawFrames(wsFrame(0x3, 'x')), protocolError],
  ['a ping frame over 125 bytes: 1002', () => rawFrames(wsFrame(0x9, 'p'.repeat(200))), protocolError],
  ['a continuation frame with nothing to continue: 1002', () => rawFrames(wsFrame(0x0, 'x')), protocolError],
  [
    'a close frame with the invalid code 999: 1002',
    () => rawFrames(wsFrame(0x8, Buffer.from([0x03, 0xe7]))),
    protocolError,
  ],
  // the upgrade itself
  [
    'an upgrade to another path: 404',
    () => upgradeAnswer(`${WS_UPGRADE.replace('/graphql', '/elsewhere')}\r\n`),
    upgradeRefused(404, /WebSocket endpoint is \/graphql/),
  ],
  [
    'an upgrade with Sec-WebSocket-Version 7: 400',
    () => upgradeAnswer(`${WS_UPGRADE.replace('Version: 13', 'Version: 7')}\r\n`),
    upgradeRefused(400, /Missing or invalid Sec-WebSocket-Version header/),
  ],
  [
    'an upgrade with an invalid Sec-WebSocket-Key: 400',
    () => upgradeAnswer(`${WS_UPGRADE.replace('dGhlIHNhbXBsZSBub25jZQ==', 'nope')}\r\n`),
    upgradeRefused(400, /Missing or invalid Sec-WebSocket-Key header/),
  ],
  [
    'an upgrade by POST: 405',
    () => upgradeAnswer(`${WS_UPGRADE.replace('GET', 'POST')}Content-Length: 0\r\n\r\n`),
    upgradeRefused(405, /Invalid HTTP method/),
  ],
  [
    'Upgrade: h2c on the WebSocket path: 400',
    () =>
      upgradeAnswer(
        'GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n',
      ),
    upgradeRefused(400, /Invalid Upgrade header/),
  ],
  [
    'an upgrade with headers over 16 KB: 431',
    () => upgradeAnswer(`${WS_UPGRADE}X-Pad: ${'a'.repeat(20_000)}\r\n\r\n`),
    upgradeRefused(431, /request headers are over 16384 bytes/),
  ],
];

describe('hostile input: GraphQL over WebSocket', { timeout: 180_000 }, () => {
  before(async () => {
    server = await spawnServer('graphql');
    memoryBefore = await serverMemory(server);
  });
  after(() => server?.stop());

  // A fresh graphql-ws client runs a query: the server serves.
  async function stillServes() {
    const client = wsClient(wsUrl(server));
    try {
      const { results, errors } = await runOperation(
        client,
        { query: '{ book(id: "book-8") { id } }' },
        { timeoutMs: 10_000 },
      );
      assert.equal(errors, null);
      assert.deepEqual(results[0].data, { book: { id: 'book-8' } });
    } finally {
      await client.dispose();
    }
  }

  for (const [name, send, expect] of CASES) {
    test(name, async () => {
      await expect(await send());
      await stillServes();
      server.assertHealthy();
    });
  }

  test('memory after the whole table: heap after GC and RSS stay bounded', async (t) => {
    await sleep(200); // let the sockets the cases cut finish closing
    assertMemoryBounded(t, 'GraphQL WebSocket', memoryBefore, await serverMemory(server));
    server.assertHealthy();
  });
});
