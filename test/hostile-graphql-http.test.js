// Hostile input to the GraphQL server over HTTP/1.1 and HTTP/2, one test per
// case, against `node servers/graphql/server.js` as a process: each case gets a
// clear error (status, code and a message saying what is wrong), then a normal
// request is served, the process is alive and has logged nothing; the heap
// after a full GC and the RSS are compared before and after the whole table.
// Slow clients (slowloris) are in hostile-slow.test.js.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getOperationAST, parse } from 'graphql';
import { LIMITS } from '../common/defaults.js';
import { graphqlGetUrl, h2Connect, httpRequest } from '../servers/graphql/client.js';
import { MAX_RESULT_VALUES, costError } from '../servers/graphql/cost.js';
import { createSchema } from '../servers/graphql/schema.js';
import { MAX_NESTING, MAX_QUERY_BYTES } from '../servers/graphql/rules.js';
import {
  assertMemoryBounded,
  expectGraphQLError,
  graphqlStillServes,
  graphqlUrl,
  h2Exchange,
  parseHttpResponse,
  rawExchange,
  spawnServer,
} from './helpers/hostile.js';
import { serverMemory } from '../dev/server-memory.js';
import { scaled } from './helpers/waits.js';

let server;
let h2; // one HTTP/2 session for the h2 rows
let memoryBefore;

const JSON_TYPE = { 'content-type': 'application/json' };
const post = (body, headers = JSON_TYPE) => httpRequest(graphqlUrl(server), { method: 'POST', body, headers });
const postQuery = (query, variables, extra = {}) => post(JSON.stringify({ query, variables, ...extra }));
// Raw bytes on a fresh connection -> the parsed HTTP answer ({ status, headers, text }).
async function rawHttp(text, { port = server.port, alpn, end = false } = {}) {
  const r = await rawExchange({ port, alpn, timeoutMs: 5000 }, (socket) =>
    end ? socket.end(text) : socket.write(text),
  );
  return { ...parseHttpResponse(r.text), closedByServer: r.closedByServer };
}
const h2Post = (body, headers = JSON_TYPE) =>
  h2Exchange(h2, { ':method': 'POST', ':path': '/graphql', ...headers }, body);

const error = (status, code, pattern) => (res) => expectGraphQLError(res, status, code, pattern);
const badJson = error(400, 'BAD_REQUEST', /request body is not valid JSON/);
const notAnOperation = error(400, 'BAD_REQUEST', /POST body missing, invalid Content-Type, or JSON object has no keys/);
const batching = error(400, 'BAD_REQUEST', /batching disabled/);
const tooNested = (what) =>
  error(400, 'BAD_REQUEST', new RegExp(`${what} nests brackets more than ${MAX_NESTING} levels deep`));
const malformed = (hpe) => error(400, 'BAD_REQUEST', new RegExp(`malformed HTTP request \\(${hpe}`));
const tooCostly = (pattern) => error(400, 'COST_LIMIT_EXCEEDED', pattern);
const validation = (pattern) => error(400, 'GRAPHQL_VALIDATION_FAILED', pattern);
const userInput = (status, pattern) => error(status, 'BAD_USER_INPUT', pattern);
const unsupportedType = (type) =>
  error(415, 'UNSUPPORTED_MEDIA_TYPE', new RegExp(`needs Content-Type: application/json \\(got ${type}\\)`));
const bodyTooLarge = error(413, 'PAYLOAD_TOO_LARGE', new RegExp(`request body is over ${LIMITS.MAX_BODY_BYTES} bytes`));
const utf8 = error(400, 'BAD_REQUEST', /not valid UTF-8/);

const INVALID_UTF8 = Buffer.from([0xc3, 0x28, 0xff]);
const deepList = (levels) => `{ book(id: ${'['.repeat(levels)}${']'.repeat(levels)}) { id } }`;
const aliases = (n, field) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');
const BIG = 'x'.repeat(LIMITS.MAX_BODY_BYTES);

// Streams chunks of 64 KB until the server answers (it must, at 1 MiB; 4 MiB at most).
async function endlessBody(stream) {
  let answered = false;
  stream.once('response', () => (answered = true));
  const chunk = Buffer.alloc(64 * 1024, 'x');
  for (let sent = 0; sent < 4 * LIMITS.MAX_BODY_BYTES && !answered && stream.writable; sent += chunk.length) {
    if (!stream.write(chunk)) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  stream.end();
}

// [name, what the client sends (-> response), what it must get back]
const CASES = [
  // JSON bodies
  ['truncated JSON (cut inside a string): 400', () => post('{"query": "{ book(id: \\"bo'), badJson],
  ['malformed JSON: 400', () => post('{"query": '), badJson],
  ['JSON followed by garbage: 400', () => post('{"query": "{ book(id: \\"book-1\\") { id } }"} trailing'), badJson],
  ['a JSON string instead of an operation: 400', () => post('"just a string"'), notAnOperation],
  ['JSON null: 400', () => post('null'), notAnOperation],
  ['an empty body: 400', () => post(''), notAnOperation],
  ['query is a number: 400', () => post('{"query": 42}'), error(400, 'BAD_REQUEST', /GraphQL queries must be strings/)],
  [
    'variables is a string: 400',
    () => post('{"query": "{ book(id: \\"book-1\\") { id } }", "variables": "{}"}'),
    error(400, 'BAD_REQUEST', /`variables` in a POST body should be provided as an object/),
  ],
  [
    'variables nested 100000 levels deep: 400 before anything recurses',
    () =>
      post(
        `{"query": "{ book(id: \\"book-1\\") { id } }", "variables": {"x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
      ),
    tooNested('request JSON'),
  ],
  [
    'invalid UTF-8 inside a JSON string: 400',
    () => post(Buffer.concat([Buffer.from('{"query": "{ book(id: \\"'), INVALID_UTF8, Buffer.from('\\") { id } }"}')])),
    utf8,
  ],
  [
    'invalid UTF-8 in the query text: 400',
    () =>
      post(
        Buffer.concat([Buffer.from('{"query": "{ book(id: \\"book-1\\") { id '), INVALID_UTF8, Buffer.from(' } }"}')]),
      ),
    utf8,
  ],
  [
    'invalid UTF-8 percent-encoded in a GET query string: 400',
    () => httpRequest(`${graphqlUrl(server)}?query=%7B%20book(id%3A%20%22%FF%22)%20%7B%20id%20%7D%20%7D`),
    utf8,
  ],
  // batching
  [
    'a batch of two operations: 400',
    () =>
      post(JSON.stringify([{ query: '{ book(id: "book-1") { id } }' }, { query: '{ book(id: "book-2") { id } }' }])),
    batching,
  ],
  ['an empty batch []: 400', () => post('[]'), batching],
  [
    'a batch of 5000 operations: 400',
    () => post(JSON.stringify(Array.from({ length: 5000 }, () => ({ query: '{ book(id: "book-1") { id } }' })))),
    batching,
  ],
  // content types
  [
    'form-urlencoded: 415',
    () => post('query=%7Bbook%7D', { 'content-type': 'application/x-www-form-urlencoded' }),
    unsupportedType('application/x-www-form-urlencoded'),
  ],
  ['no content type: 415', () => post('{}', {}), unsupportedType('none')],
  [
    'text/plain with a JSON body: 415',
    () => post('{"query": "{ book(id: \\"book-1\\") { id } }"}', { 'content-type': 'text/plain' }),
    unsupportedType('text/plain'),
  ],
  [
    'application/graphql: 415',
    () => post('{ book(id: "book-1") { id } }', { 'content-type': 'application/graphql' }),
    unsupportedType('application/graphql'),
  ],
  // sizes and framing
  [
    'a body over 1 MiB with Content-Length: 413',
    () => post(JSON.stringify({ query: '{ __typename }', variables: { pad: BIG } })),
    bodyTooLarge,
  ],
  [
    'a body over 1 MiB, chunked: 413',
    () =>
      post(JSON.stringify({ query: '{ __typename }', variables: { pad: BIG } }), {
        ...JSON_TYPE,
        'transfer-encoding': 'chunked',
      }),
    bodyTooLarge,
  ],
  [
    'Content-Length of 10 GB and no body: 413 at once',
    () =>
      rawHttp(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n',
      ),
    bodyTooLarge,
  ],
  [
    'a chunked body that never ends: 413 at 1 MiB',
    () =>
      rawExchange({ port: server.port, timeoutMs: 10_000 }, async (socket) => {
        socket.write(
          'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
        );
        const chunk = `10000\r\n${'x'.repeat(0x10000)}\r\n`;
        for (let i = 0; i < 64 && socket.writable; i++) socket.write(chunk);
      }).then((r) => parseHttpResponse(r.text)),
    bodyTooLarge,
  ],
  [
    'a body cut off mid-way (the client goes away): nothing to answer',
    () =>
      rawExchange({ port: server.port, timeoutMs: 200 }, (s) =>
        s.write(
          'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query":',
        ),
      ),
    (r) => assert.equal(r.text, ''),
  ],
  [
    'a body shorter than Content-Length, then FIN: 400',
    () =>
      rawHttp(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":',
        { end: true },
      ),
    error(400, 'BAD_REQUEST', /the client ended the connection before the request was complete/),
  ],
  [
    'Content-Length and Transfer-Encoding together (smuggling): 400',
    () =>
      rawHttp(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ),
    malformed('HPE_INVALID_TRANSFER_ENCODING'),
  ],
  [
    'an invalid chunk size: 400',
    () =>
      rawHttp(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n',
      ),
    malformed('HPE_INVALID_CHUNK_SIZE'),
  ],
  ['a garbage request line: 400', () => rawHttp('HELLO THERE\r\n\r\n'), malformed('HPE_INVALID_METHOD')],
  [
    'a NUL byte in a header value: 400',
    () => rawHttp('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n'),
    malformed('HPE_INVALID_HEADER_TOKEN'),
  ],
  [
    'headers over 16 KB: 431',
    () => rawHttp(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`),
    error(431, 'HEADERS_TOO_LARGE', /request headers are over 16384 bytes/),
  ],
  [
    'a GET URL over 16 KB: 431',
    () => rawHttp(`GET /graphql?query=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    error(431, 'HEADERS_TOO_LARGE', /request headers are over/),
  ],
  // documents
  [
    `a document over ${MAX_QUERY_BYTES} bytes: 400`,
    () => postQuery(`{ book(id: "book-1") { id } } ${'#'.repeat(MAX_QUERY_BYTES)}\n`),
    error(400, 'BAD_REQUEST', new RegExp(`the limit is ${MAX_QUERY_BYTES} bytes`)),
  ],
  [
    'a list literal nested 30000 levels: 400 before parsing',
    () => postQuery(deepList(30_000)),
    tooNested('GraphQL document'),
  ],
  [
    'selections nested 1000 levels: 400 before parsing',
    () => postQuery(`{ book(id: "book-1") ${'{ author { books '.repeat(500)}{ id }${' } }'.repeat(500)} }`),
    tooNested('GraphQL document'),
  ],
  [
    'one field repeated 3500 times: 400 saying why validation stopped',
    () => postQuery(`{ ${'book(id: "book-1") { id } '.repeat(3500)} }`),
    validation(/Validation aborted: the document repeats fields/),
  ],
  [
    'a fragment cycle A -> B -> A: 400',
    () =>
      postQuery(
        '{ book(id: "book-1") { ...A } } fragment A on Book { author { ...B } } fragment B on Author { books { ...A } }',
      ),
    validation(/Cannot spread fragment "A" within itself via "B"/),
  ],
  // cost: bounds multiplied
  [
    'alias fan-out: 8 x allBooks(nrOfBooks: 500000): 400',
    () => postQuery(`{ ${aliases(8, 'allBooks(nrOfBooks: 500000) { id }')} }`),
    tooCostly(/asks for up to 4000000 list items .*the limit is 500000 per operation/),
  ],
  [
    'alias fan-out through variables: 400',
    () => postQuery(`query($n: Int!) { ${aliases(3, 'allBooks(nrOfBooks: $n) { id }')} }`, { n: LIMITS.MAX_BOOKS }),
    tooCostly(/asks for up to 1500000 list items/),
  ],
  [
    'nested lists page(500) > author > books(50) > author > books(50): 400',
    () =>
      postQuery('{ page(size: 500) { books { author { books(first: 50) { author { books(first: 50) { id } } } } } } }'),
    tooCostly(/list items/),
  ],
  [
    'a fragment of 30 aliases spread over allBooks(500000): 400',
    () => postQuery(`{ allBooks(nrOfBooks: 500000) { ...S } } fragment S on Book { ${aliases(30, 'id')} }`),
    tooCostly(new RegExp(`would return up to 15000000 values; the limit is ${MAX_RESULT_VALUES}`)),
  ],
  [
    'fragments spreading each other 30 levels deep (2^30 paths): 400',
    () =>
      postQuery(
        `{ ...F0 } ${Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ')} fragment F30 on Query { book(id: "book-1") { id } }`,
      ),
    tooCostly(/values; the limit is/),
  ],
  [
    '600 blurbs of 64 KB in one book: 400',
    () => postQuery(`{ book(id: "book-1") { ${aliases(600, 'blurb(size: 65536)')} } }`),
    tooCostly(/bytes of payload, blurb and event data/),
  ],
  [
    'two payloads of 16 MiB: 400',
    () => postQuery(`{ ${aliases(2, `payload(size: ${LIMITS.MAX_PAYLOAD_BYTES}) { size }`)} }`),
    tooCostly(/asks for up to 33554432 bytes/),
  ],
  // operations
  [
    'two operations and no operationName: 400',
    () => postQuery('query A { book(id: "book-1") { id } } query B { book(id: "book-2") { id } }'),
    error(400, 'OPERATION_RESOLUTION_FAILURE', /Must provide operation name/),
  ],
  [
    'an operationName the document lacks: 400',
    () => postQuery('query A { book(id: "book-1") { id } }', undefined, { operationName: 'Nope' }),
    error(400, 'OPERATION_RESOLUTION_FAILURE', /Unknown operation named "Nope"/),
  ],
  [
    '2000 operations, one named: only that one runs',
    () =>
      postQuery(
        Array.from({ length: 2000 }, (_, i) => `query Q${i} { book(id: "book-${i + 1}") { id } }`).join('\n'),
        undefined,
        { operationName: 'Q1999' },
      ),
    (res) => assert.deepEqual(JSON.parse(res.text), { data: { book: { id: 'book-2000' } } }),
  ],
  // values
  [
    'a float literal for an Int: 400',
    () => postQuery('{ allBooks(nrOfBooks: 1.5) { id } }'),
    validation(/Int cannot represent non-integer value: 1.5/),
  ],
  [
    'a string literal for an Int: 400',
    () => postQuery('{ allBooks(nrOfBooks: "5") { id } }'),
    validation(/Int cannot represent non-integer value: "5"/),
  ],
  [
    'an Int literal beyond 32 bits: 400',
    () => postQuery('{ allBooks(nrOfBooks: 99999999999999999999) { id } }'),
    validation(/non 32-bit signed integer value/),
  ],
  [
    'a float variable for an Int: 400',
    () => postQuery('query($n: Int!) { allBooks(nrOfBooks: $n) { id } }', { n: 1.5 }),
    userInput(400, /Variable "\$n" got invalid value 1.5/),
  ],
  [
    'a variable of 1e300 for an Int: 400',
    () => postQuery('query($n: Int!) { allBooks(nrOfBooks: $n) { id } }', { n: 1e300 }),
    userInput(400, /non 32-bit signed integer value: 1e\+300/),
  ],
  [
    'nrOfBooks 2^31-1: BAD_USER_INPUT naming the bound',
    () => postQuery('query($n: Int!) { allBooks(nrOfBooks: $n) { id } }', { n: 2 ** 31 - 1 }),
    userInput(200, /nrOfBooks must be an integer from 0 to 500000 \(got 2147483647\)/),
  ],
  [
    'page offset 2^31-1 and size -1: BAD_USER_INPUT',
    () => postQuery('{ page(offset: 2147483647, size: -1) { size } }'),
    userInput(200, /offset must be an integer from 0 to 500000/),
  ],
  // the fan-out hub (hub.graphql)
  [
    'publish to a topic with a newline: BAD_USER_INPUT naming the rule',
    () => postQuery('mutation($t: String!) { publish(topic: $t) { seq } }', { t: 'a\nb' }),
    userInput(200, /topic must be 1 to 128 characters of letters, digits/),
  ],
  [
    `publish a payload of ${LIMITS.MAX_EVENT_PAYLOAD_BYTES + 1} bytes: BAD_USER_INPUT naming the limit`,
    () =>
      postQuery('mutation($p: String) { publish(topic: "t", payload: $p) { seq } }', {
        p: 'x'.repeat(LIMITS.MAX_EVENT_PAYLOAD_BYTES + 1),
      }),
    userInput(200, /payload is 65537 bytes; the limit is 65536 per event/),
  ],
  [
    'topic events limit 2^31-1: BAD_USER_INPUT',
    () => postQuery('{ topic(name: "t") { events(limit: 2147483647) { seq } } }'),
    userInput(200, /limit must be an integer from 1 to 100 \(got 2147483647\)/),
  ],
  [
    'topic events through 6 aliases of 100 events of 64 KiB: 400',
    () => postQuery(`{ topic(name: "t") { ${aliases(6, 'events(limit: 100) { payload }')} } }`),
    tooCostly(/asks for up to 39321600 bytes of payload, blurb and event data/),
  ],
  [
    'payload size 2^31-1 over GET: BAD_USER_INPUT',
    () => httpRequest(graphqlGetUrl(graphqlUrl(server), { query: '{ payload(size: 2147483647) { size } }' })),
    userInput(200, /size must be an integer from 0 to 16777216/),
  ],
  // per-request switches: the executor (study 002), generation time and Preload (study 001)
  [
    'extensions.executor unknown: 400 naming the executors',
    () => postQuery('{ book(id: "book-1") { id } }', undefined, { extensions: { executor: 'turbo' } }),
    error(
      400,
      'BAD_REQUEST',
      /extensions\.executor must be one of plain, per-item, dataloader, instrumented, jit \(got "turbo"\)/,
    ),
  ],
  [
    'extensions.executor not a string: 400',
    () => postQuery('{ book(id: "book-1") { id } }', undefined, { extensions: { executor: { a: 1 } } }),
    error(400, 'BAD_REQUEST', /extensions\.executor must be one of/),
  ],
  [
    'x-generate with a delay over the bound: 400',
    () =>
      post(JSON.stringify({ query: '{ book(id: "book-1") { id } }' }), {
        ...JSON_TYPE,
        'x-generate': `delay=${LIMITS.MAX_GENERATE_DELAY_MS + 1}`,
      }),
    error(
      400,
      'BAD_REQUEST',
      new RegExp(`x-generate: delay must be an integer from 0 to ${LIMITS.MAX_GENERATE_DELAY_MS}`),
    ),
  ],
  [
    'x-generate with a negative delay: 400',
    () => post(JSON.stringify({ query: '{ book(id: "book-1") { id } }' }), { ...JSON_TYPE, 'x-generate': 'delay=-5' }),
    error(400, 'BAD_REQUEST', /x-generate: delay must be an integer from 0/),
  ],
  [
    'x-generate that is not key=value pairs: 400',
    () =>
      post(JSON.stringify({ query: '{ book(id: "book-1") { id } }' }), { ...JSON_TYPE, 'x-generate': 'sleep forever' }),
    error(400, 'BAD_REQUEST', /x-generate must be key=value pairs/),
  ],
  [
    'x-generate with an unknown strategy: 400',
    () =>
      post(JSON.stringify({ query: '{ book(id: "book-1") { id } }' }), {
        ...JSON_TYPE,
        'x-generate': 'delay=1, resolve=random',
      }),
    error(400, 'BAD_REQUEST', /resolve must be one of serial, parallel, dataloader/),
  ],
  [
    'a serial generation over its total bound: BAD_USER_INPUT before sleeping',
    async () => {
      const t0 = Date.now();
      const res = await post(JSON.stringify({ query: '{ page(size: 500) { size books { id } } }' }), {
        ...JSON_TYPE,
        'x-generate': `delay=${LIMITS.MAX_GENERATE_DELAY_MS}, resolve=serial`,
      });
      // Sleeping first would take 500 s.
      assert.ok(Date.now() - t0 < scaled(2000), 'the server slept before refusing');
      return res;
    },
    userInput(
      200,
      new RegExp(
        `generating 500 resources of ${LIMITS.MAX_GENERATE_DELAY_MS} ms one after another .* the limit is ${LIMITS.MAX_GENERATE_MS} ms`,
      ),
    ),
  ],
  [
    'a Preload header that is not a list of quoted selectors: 400',
    () => post(JSON.stringify({ query: '{ book(id: "book-1") { id } }' }), { ...JSON_TYPE, preload: '/data/*' }),
    error(400, 'BAD_REQUEST', /Preload must be a list of quoted selectors/),
  ],
  [
    'a Preload selector 40 segments deep: 400',
    () =>
      post(JSON.stringify({ query: '{ book(id: "book-1") { id } }' }), {
        ...JSON_TYPE,
        preload: `"${'/*'.repeat(40)}"`,
      }),
    error(400, 'BAD_REQUEST', /has 40 segments; the limit is 16/),
  ],
  [
    'href with a blurb over the bound: BAD_USER_INPUT',
    () => postQuery(`{ book(id: "book-1") { href(blurb: ${LIMITS.MAX_BLURB_BYTES + 1}) } }`),
    userInput(200, new RegExp(`blurb must be an integer from 0 to ${LIMITS.MAX_BLURB_BYTES}`)),
  ],
  // HTTP/2
  ['h2: truncated JSON: 400', () => h2Post('{"query": "{ bo'), badJson],
  [
    'h2: a body over 1 MiB: 413',
    () => h2Post(JSON.stringify({ query: '{ __typename }', variables: { pad: BIG } })),
    bodyTooLarge,
  ],
  ['h2: a body that never ends: 413 at 1 MiB', () => h2Post(endlessBody), bodyTooLarge],
  ['h2: text/plain: 415', () => h2Post('{}', { 'content-type': 'text/plain' }), unsupportedType('text/plain')],
  [
    'h2: alias fan-out: 400',
    () => h2Post(JSON.stringify({ query: `{ ${aliases(2, 'allBooks(nrOfBooks: 500000) { id }')} }` })),
    tooCostly(/list items/),
  ],
  [
    'h2: 200 headers (over 128 pairs): the stream is refused with ENHANCE_YOUR_CALM',
    async () => {
      const session = await h2Connect(`https://127.0.0.1:${server.tlsPort}`);
      try {
        return await h2Exchange(session, {
          ':method': 'GET',
          ':path': '/healthz',
          ...Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h${i}`, 'v'])),
        });
      } finally {
        session.destroy();
      }
    },
    (r) => assert.deepEqual([r.status, r.rstCode], [undefined, 11]),
  ],
  [
    'h2: 1000 streams opened and reset at once (rapid reset): the session still answers',
    async () => {
      const session = await h2Connect(`https://127.0.0.1:${server.tlsPort}`);
      try {
        for (let i = 0; i < 1000; i++) {
          const stream = session.request({ ':method': 'GET', ':path': '/healthz' });
          stream.on('error', () => {});
          stream.close(8); // CANCEL
        }
        return await h2Exchange(session, { ':method': 'GET', ':path': '/healthz' });
      } finally {
        session.destroy();
      }
    },
    (r) => assert.equal(r.status, 200),
  ],
  // the TLS port
  [
    'HTTP/1.1 over TLS: a garbage request line: 400',
    () => rawHttp('HELLO THERE\r\n\r\n', { port: server.tlsPort, alpn: ['http/1.1'] }),
    malformed('HPE_INVALID_METHOD'),
  ],
  [
    'plain HTTP to the TLS port: closed without an answer',
    () =>
      rawExchange({ port: server.tlsPort, timeoutMs: 5000 }, (s) =>
        s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
      ),
    (r) => assert.deepEqual([r.closedByServer, r.text], [true, '']),
  ],
  [
    'TLS offering only an unknown ALPN protocol (h3): the handshake is refused',
    () =>
      rawExchange({ port: server.tlsPort, alpn: ['h3'], timeoutMs: 5000 }, () =>
        assert.fail('the handshake succeeded'),
      ),
    (r) => assert.deepEqual([r.closedByServer, r.text], [true, '']),
  ],
];

describe('hostile input: GraphQL over HTTP/1.1 and HTTP/2', { timeout: 180_000 }, () => {
  before(async () => {
    server = await spawnServer('graphql');
    h2 = await h2Connect(`https://127.0.0.1:${server.tlsPort}`);
    memoryBefore = await serverMemory(server);
  });
  after(async () => {
    h2?.destroy();
    await server?.stop();
  });

  for (const [name, send, expect] of CASES) {
    test(name, async () => {
      await expect(await send());
      await graphqlStillServes(server);
      server.assertHealthy();
    });
  }

  test('memory after the whole table: heap after GC and RSS stay bounded', async (t) => {
    assertMemoryBounded(t, 'GraphQL HTTP', memoryBefore, await serverMemory(server));
    server.assertHealthy();
  });
});

// The cost limit must not refuse what the studies send: the largest legitimate
// operations, priced by the same function the server runs (no server needed).
describe('cost limit: the largest legitimate operations still pass', () => {
  const schema = createSchema();
  const BOOK = 'id name pageCount author { id firstName lastName }';
  const legit = [
    [
      `allBooks(${LIMITS.MAX_BOOKS}) with every field, blurb and __typename`,
      `query($n: Int!) { allBooks(nrOfBooks: $n) { __typename ${BOOK} blurb author { __typename } } }`,
      { n: LIMITS.MAX_BOOKS },
    ],
    [`allBooksAsJSON(${LIMITS.MAX_BOOKS})`, `{ allBooksAsJSON(nrOfBooks: ${LIMITS.MAX_BOOKS}) }`],
    // MAX_BLURB_BYTES rose from 64 KiB to 100 KiB (study 001's resources) while the
    // filler total per operation stayed: the largest page keeps 64 KiB blurbs, and
    // study 001's page of 50 books carries the largest blurbs.
    [
      `page(${LIMITS.MAX_PAGE_SIZE}) with blurbs of 65536 bytes`,
      `{ page(size: ${LIMITS.MAX_PAGE_SIZE}) { offset size books { ${BOOK} blurb(size: 65536) } } }`,
    ],
    [
      `page(50) with blurbs of ${LIMITS.MAX_BLURB_BYTES} bytes (study 001)`,
      `{ page(size: 50) { offset size books { ${BOOK} blurb(size: ${LIMITS.MAX_BLURB_BYTES}) href(blurb: ${LIMITS.MAX_BLURB_BYTES}) } } }`,
    ],
    [`payload(${LIMITS.MAX_PAYLOAD_BYTES})`, `{ payload(size: ${LIMITS.MAX_PAYLOAD_BYTES}) { size data } }`],
    [
      `events(${LIMITS.MAX_EVENTS}) of ${LIMITS.MAX_PAYLOAD_BYTES} bytes each`,
      `subscription { events(count: ${LIMITS.MAX_EVENTS}, intervalMs: 1, size: ${LIMITS.MAX_PAYLOAD_BYTES}) { id seq sentAt data } }`,
    ],
    [
      'typed and JSON books side by side (1000 each)',
      `{ typed: allBooks(nrOfBooks: 1000) { ${BOOK} } json: allBooksAsJSON(nrOfBooks: 1000) }`,
    ],
  ];
  for (const [name, query, variables] of legit) {
    test(name, () => {
      const document = parse(query);
      assert.equal(costError(schema, document, getOperationAST(document), variables), null);
    });
  }
});
