// The GraphQL server over HTTP: HTTP/1.1 on the cleartext port, HTTP/2 (ALPN h2)
// and HTTP/1.1 on the TLS port. Real sockets, real clients (fetch, node:http(s),
// node:http2); answers are checked against the shared data module.
// Malformed and oversized bodies, content types, batching and document limits
// are in hostile-graphql-http.test.js (against the server as a process).
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { LIMITS } from '../common/defaults.js';
import { CPU_ASK } from '../common/server-timing.js';
import { BOOK_COUNT, authorAt, booksOfAuthor, filler, fullBookAt } from '../servers/shared/data.js';
import { graphqlGetUrl, h2Connect, h2Request, httpRequest, postGraphQL } from '../servers/graphql/client.js';
import { MAX_AUTHOR_BOOKS } from '../servers/graphql/rules.js';
import { createServer } from '../servers/graphql/server.js';
import { expectGraphQLError } from './helpers/hostile.js';

const BOOK_FIELDS = 'id name pageCount author { id firstName lastName }';

// "exec;dur=1.2, ser;dur=0.3, total;dur=2" -> { exec: 1.2, ser: 0.3, total: 2 }; with `cpu`
// (a request that asked for it: CPU_ASK), ", cpu;dur=1.9" too and nothing else.
function serverTiming(header, { cpu = false } = {}) {
  const parts = `^exec;dur=[\\d.]+, ser;dur=[\\d.]+, total;dur=[\\d.]+${cpu ? ', cpu;dur=[\\d.]+' : ''}$`;
  assert.match(header ?? '', new RegExp(parts), `Server-Timing: ${header}`);
  return Object.fromEntries(header.split(', ').map((part) => [part.split(';')[0], Number(part.split('dur=')[1])]));
}

// Selections `levels` fields deep below a Book: author { books(first: 1) { author { ... id } } }
function chain(levels, type = 'Book') {
  if (levels === 1) return 'id';
  return type === 'Book'
    ? `author { ${chain(levels - 1, 'Author')} }`
    : `books(first: 1) { ${chain(levels - 1, 'Book')} }`;
}
const nestedQuery = (depth) => `{ book(id: "book-1") { ${chain(depth - 1)} } }`;

describe('GraphQL server over HTTP', { timeout: 120_000 }, () => {
  let server;
  let url; // http://127.0.0.1:port/graphql
  let tlsUrl; // https://127.0.0.1:port/graphql
  let h2; // one HTTP/2 session for the whole file

  const post = (operation, options) => postGraphQL(url, operation, options);
  // The server still serves after whatever came before.
  async function assertStillServing() {
    const res = await post({ query: '{ book(id: "book-7") { id } }' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { book: { id: 'book-7' } } });
  }
  const expectError = async (res, status, code, pattern) => {
    expectGraphQLError(res, status, code, pattern);
    await assertStillServing();
  };

  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0 });
    url = `http://127.0.0.1:${server.httpPort}/graphql`;
    tlsUrl = `https://127.0.0.1:${server.tlsPort}/graphql`;
    h2 = await h2Connect(`https://127.0.0.1:${server.tlsPort}`);
  });
  after(async () => {
    h2?.close();
    await server?.close();
  });

  describe('/healthz', () => {
    it('answers 200 JSON with memory and uptime on the cleartext port (fetch)', async () => {
      const res = await fetch(`http://127.0.0.1:${server.httpPort}/healthz`);
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.status, 'ok');
      assert.ok(body.rssBytes > 1e6 && body.heapUsedBytes > 1e5 && body.uptimeSeconds > 0, JSON.stringify(body));
    });

    it('answers on the TLS port over HTTP/2 and HTTP/1.1', async () => {
      const viaH2 = await h2Request(h2, { path: '/healthz' });
      assert.equal(viaH2.status, 200);
      assert.equal(JSON.parse(viaH2.text).status, 'ok');
      const viaH1 = await httpRequest(`https://127.0.0.1:${server.tlsPort}/healthz`);
      assert.equal(viaH1.status, 200);
      assert.equal(viaH1.alpn, 'http/1.1');
      assert.equal(JSON.parse(viaH1.text).status, 'ok');
    });
  });

  describe('every field', () => {
    it('allBooks(n): n books with authors, as data.js defines them', async () => {
      const res = await post({
        query: `query($n: Int!) { allBooks(nrOfBooks: $n) { ${BOOK_FIELDS} } }`,
        variables: { n: 25 },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.allBooks,
        Array.from({ length: 25 }, (_, k) => fullBookAt(k + 1)),
      );
    });

    it('allBooksAsJSON(n) parses to exactly allBooks(n)', async () => {
      const n = 1000;
      const res = await post({
        query: `query($n: Int!) { typed: allBooks(nrOfBooks: $n) { ${BOOK_FIELDS} } json: allBooksAsJSON(nrOfBooks: $n) }`,
        variables: { n },
      });
      assert.equal(typeof res.body.data.json, 'string');
      assert.deepEqual(JSON.parse(res.body.data.json), res.body.data.typed);
      assert.equal(res.body.data.typed.length, n);
    });

    it('payload(size): exactly size bytes of filler', async () => {
      const res = await post({ query: '{ payload(size: 1000) { size data } }' });
      assert.deepEqual(res.body.data.payload, { size: 1000, data: filler(1000) });
    });

    it('book(id), its blurb, and null for an unknown id', async () => {
      const res = await post({
        query:
          '{ a: book(id: "book-42") { id name pageCount blurb(size: 300) author { id } } b: book(id: "nope") { id } }',
      });
      const expected = fullBookAt(42);
      assert.deepEqual(res.body.data.a, {
        id: expected.id,
        name: expected.name,
        pageCount: expected.pageCount,
        blurb: filler(300, 42),
        author: { id: expected.author.id },
      });
      assert.equal(res.body.data.a.blurb.length, 300);
      assert.equal(res.body.data.b, null);
    });

    it('author(id) with books(first): the author wrote every book listed', async () => {
      const res = await post({
        query: '{ author(id: "author-7") { id firstName lastName books(first: 3) { id author { id } } } }',
      });
      const { author } = res.body.data;
      assert.deepEqual({ ...author, books: undefined }, { ...authorAt(7), books: undefined });
      assert.deepEqual(
        author.books.map((b) => b.id),
        booksOfAuthor(7, 3).map((i) => `book-${i}`),
      );
      for (const book of author.books) assert.equal(book.author.id, 'author-7');
    });

    it('page(offset, size): a compound document of books offset+1 .. offset+size with authors', async () => {
      const res = await post({ query: `{ page(offset: 10, size: 5) { offset size total books { ${BOOK_FIELDS} } } }` });
      assert.deepEqual(res.body.data.page, {
        offset: 10,
        size: 5,
        total: BOOK_COUNT,
        books: [11, 12, 13, 14, 15].map(fullBookAt),
      });
      const end = await post({ query: `{ page(offset: ${BOOK_COUNT - 2}, size: 5) { size books { id } } }` });
      assert.deepEqual(end.body.data.page, {
        size: 2,
        books: [{ id: `book-${BOOK_COUNT - 1}` }, { id: `book-${BOOK_COUNT}` }],
      });
    });

    it('serverStats: the process numbers', async () => {
      const res = await post({ query: '{ serverStats { rssBytes heapUsedBytes uptimeSeconds } }' });
      const stats = res.body.data.serverStats;
      assert.ok(stats.rssBytes > 1e6 && stats.heapUsedBytes > 1e5 && stats.uptimeSeconds > 0, JSON.stringify(stats));
    });

    it('rateBook: count and average per book', async () => {
      const rate = (stars) =>
        post({
          query: 'mutation($s: Int!) { rateBook(id: "book-9", stars: $s) { bookId count average } }',
          variables: { s: stars },
        });
      assert.deepEqual((await rate(5)).body.data.rateBook, { bookId: 'book-9', count: 1, average: 5 });
      assert.deepEqual((await rate(2)).body.data.rateBook, { bookId: 'book-9', count: 2, average: 3.5 });
      assert.deepEqual((await rate(2)).body.data.rateBook, { bookId: 'book-9', count: 3, average: 3 });
    });

    it('introspection is on (and within the depth limit)', async () => {
      const { getIntrospectionQuery } = await import('graphql');
      const res = await post({ query: getIntrospectionQuery() });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.data.__schema.types.some((t) => t.name === 'Book'));
    });

    it('allBooks(500000) works end to end', async (t) => {
      const started = performance.now();
      const res = await post(
        { query: `{ allBooks(nrOfBooks: ${LIMITS.MAX_BOOKS}) { ${BOOK_FIELDS} } }` },
        { timeoutMs: 90_000, headers: { [CPU_ASK.header]: CPU_ASK.value } },
      );
      const ms = performance.now() - started;
      assert.equal(res.status, 200);
      const books = res.body.data.allBooks;
      assert.equal(books.length, LIMITS.MAX_BOOKS);
      assert.deepEqual(books[LIMITS.MAX_BOOKS - 1], fullBookAt(LIMITS.MAX_BOOKS));
      const timing = serverTiming(res.headers['server-timing'], { cpu: true });
      t.diagnostic(
        `allBooks(${LIMITS.MAX_BOOKS}): ${Math.round(ms)} ms round trip, ${(res.text.length / 1e6).toFixed(1)} MB; server exec ${timing.exec} ms, ser ${timing.ser} ms, total ${timing.total} ms, cpu ${timing.cpu} ms`,
      );
      // The server's CPU time over the request: some, and no more than all the
      // machine's cores could give it (its threads run side by side; a busy machine
      // only lowers it against total, so no lower share is asserted).
      const most = availableParallelism() * timing.total + 1;
      assert.ok(timing.cpu > 0 && timing.cpu <= most, `cpu ${timing.cpu} ms, total ${timing.total} ms`);
    });
  });

  describe('HTTP/2 over TLS', () => {
    it('negotiates h2 by ALPN and answers exactly as HTTP/1.1 does', async () => {
      assert.equal(h2.alpnProtocol, 'h2');
      const operation = { query: `{ page(offset: 100, size: 20) { books { ${BOOK_FIELDS} } } }` };
      const viaH2 = await h2Request(h2, { method: 'POST', json: operation });
      const viaH1 = await post(operation);
      assert.equal(viaH2.status, 200);
      assert.equal(viaH2.text, viaH1.text);
    });

    it('serves GET with ETag and Server-Timing on HTTP/2 too', async () => {
      const path = new URL(graphqlGetUrl(tlsUrl, { query: '{ book(id: "book-3") { id } }' }));
      const res = await h2Request(h2, { path: path.pathname + path.search });
      assert.equal(res.status, 200);
      assert.match(res.headers.etag, /^"[\w-]+"$/);
      serverTiming(res.headers['server-timing']);
      const notModified = await h2Request(h2, {
        path: path.pathname + path.search,
        headers: { 'if-none-match': res.headers.etag },
      });
      assert.equal(notModified.status, 304);
      assert.equal(notModified.text, '');
    });

    it('falls back to HTTP/1.1 on the TLS port', async () => {
      const res = await postGraphQL(tlsUrl, { query: '{ book(id: "book-5") { id } }' });
      assert.equal(res.alpn, 'http/1.1');
      assert.deepEqual(res.body, { data: { book: { id: 'book-5' } } });
    });
  });

  describe('Server-Timing', () => {
    it('splits exec and ser, and total covers both', async () => {
      const res = await post({ query: `{ allBooks(nrOfBooks: 20000) { ${BOOK_FIELDS} } }` });
      const timing = serverTiming(res.headers['server-timing']);
      assert.ok(timing.exec > 0 && timing.ser > 0, res.headers['server-timing']);
      assert.ok(timing.total + 0.002 >= timing.exec + timing.ser, res.headers['server-timing']);
    });

    it('is sent on errors too', async () => {
      const res = await post({ query: '{ nope }' });
      serverTiming(res.headers['server-timing']);
    });
  });

  describe('HTTP caching of GET queries', () => {
    const getUrl = () =>
      graphqlGetUrl(url, {
        query: 'query Two($id: ID!) { book(id: $id) { id name } }',
        variables: { id: 'book-2' },
        operationName: 'Two',
      });

    it('Cache-Control public, max-age=60 and a strong ETag that is stable', async () => {
      const first = await httpRequest(getUrl());
      assert.equal(first.status, 200);
      assert.equal(first.headers['cache-control'], 'public, max-age=60');
      assert.match(first.headers.etag, /^"[\w-]+"$/, 'strong ETag (no W/)');
      const second = await httpRequest(getUrl());
      assert.equal(second.headers.etag, first.headers.etag);
      const other = await httpRequest(graphqlGetUrl(url, { query: '{ book(id: "book-3") { id name } }' }));
      assert.notEqual(other.headers.etag, first.headers.etag);
    });

    it('If-None-Match with the tag: 304 without a body; another tag: 200', async () => {
      const first = await httpRequest(getUrl());
      const hit = await httpRequest(getUrl(), { headers: { 'if-none-match': first.headers.etag } });
      assert.equal(hit.status, 304);
      assert.equal(hit.text, '');
      assert.equal(hit.headers.etag, first.headers.etag);
      const listed = await httpRequest(getUrl(), { headers: { 'if-none-match': `"other", W/${first.headers.etag}` } });
      assert.equal(listed.status, 304);
      const miss = await httpRequest(getUrl(), { headers: { 'if-none-match': '"something-else"' } });
      assert.equal(miss.status, 200);
      assert.equal(miss.text, first.text);
    });

    it('POST, GET with errors, and mutations are not cacheable', async () => {
      const viaPost = await post({ query: '{ book(id: "book-2") { id } }' });
      assert.equal(viaPost.headers['cache-control'], 'no-store');
      assert.equal(viaPost.headers.etag, undefined);
      const failing = await httpRequest(graphqlGetUrl(url, { query: '{ allBooks(nrOfBooks: -1) { id } }' }));
      assert.equal(failing.headers['cache-control'], 'no-store');
      assert.equal(failing.headers.etag, undefined);
      const mutation = await httpRequest(
        graphqlGetUrl(url, { query: 'mutation { rateBook(id: "book-1", stars: 3) { count } }' }),
      );
      assert.equal(mutation.status, 405);
      assert.match(JSON.parse(mutation.text).errors[0].message, /GET requests only support query operations/);
    });
  });

  describe('server-side response cache', () => {
    const cacheOn = { 'x-response-cache': 'on' };

    it('off by default: x-cache BYPASS', async () => {
      const res = await post({ query: '{ book(id: "book-11") { id } }' });
      assert.equal(res.headers['x-cache'], 'BYPASS');
    });

    it('x-response-cache: on -> MISS, then HIT with the same body and no execution', async () => {
      const operation = { query: 'query($n: Int!) { allBooks(nrOfBooks: $n) { id } }', variables: { n: 300 } };
      const miss = await post(operation, { headers: cacheOn });
      assert.equal(miss.headers['x-cache'], 'MISS');
      const hit = await post(operation, { headers: cacheOn });
      assert.equal(hit.headers['x-cache'], 'HIT');
      assert.equal(hit.text, miss.text);
      assert.equal(serverTiming(hit.headers['server-timing']).exec, 0);
      const otherVariables = await post({ ...operation, variables: { n: 301 } }, { headers: cacheOn });
      assert.equal(otherVariables.headers['x-cache'], 'MISS');
      const headerOff = await post(operation, { headers: { 'x-response-cache': 'off' } });
      assert.equal(headerOff.headers['x-cache'], 'BYPASS');
    });

    it('GET hits carry the ETag and honour If-None-Match', async () => {
      const getUrl = graphqlGetUrl(url, { query: '{ book(id: "book-12") { id name } }' });
      const miss = await httpRequest(getUrl, { headers: cacheOn });
      const hit = await httpRequest(getUrl, { headers: cacheOn });
      assert.deepEqual([miss.headers['x-cache'], hit.headers['x-cache']], ['MISS', 'HIT']);
      assert.equal(hit.headers.etag, miss.headers.etag);
      const notModified = await httpRequest(getUrl, { headers: { ...cacheOn, 'if-none-match': miss.headers.etag } });
      assert.equal(notModified.status, 304);
      assert.equal(notModified.headers['x-cache'], 'HIT');
    });

    it('mutations and errors are never stored', async () => {
      const mutation = { query: 'mutation { rateBook(id: "book-13", stars: 4) { count } }' };
      const first = await post(mutation, { headers: cacheOn });
      const second = await post(mutation, { headers: cacheOn });
      assert.deepEqual([first.headers['x-cache'], second.headers['x-cache']], ['BYPASS', 'BYPASS']);
      assert.equal(second.body.data.rateBook.count, first.body.data.rateBook.count + 1);
      const failing = { query: '{ payload(size: -5) { size } }' };
      await post(failing, { headers: cacheOn });
      assert.equal((await post(failing, { headers: cacheOn })).headers['x-cache'], 'MISS');
    });

    it('a bad x-response-cache value is a 400 saying on or off', async () => {
      const res = await post({ query: '{ book(id: "book-1") { id } }' }, { headers: { 'x-response-cache': 'maybe' } });
      await expectError(res, 400, 'BAD_REQUEST', /x-response-cache must be "on" or "off"/);
    });

    it('createServer({ responseCache: true }) caches without the header; the header turns it off', async () => {
      const cached = await createServer({ port: 0, tlsPort: 0, responseCache: true });
      try {
        const cachedUrl = `http://127.0.0.1:${cached.httpPort}/graphql`;
        const operation = { query: '{ book(id: "book-14") { id } }' };
        const first = await postGraphQL(cachedUrl, operation);
        const second = await postGraphQL(cachedUrl, operation);
        assert.deepEqual([first.headers['x-cache'], second.headers['x-cache']], ['MISS', 'HIT']);
        assert.equal(
          (await postGraphQL(cachedUrl, operation, { headers: { 'x-response-cache': 'off' } })).headers['x-cache'],
          'BYPASS',
        );
      } finally {
        await cached.close();
      }
    });
  });

  describe('bounds', () => {
    const bounds = [
      [
        'allBooks nrOfBooks',
        `{ allBooks(nrOfBooks: ${LIMITS.MAX_BOOKS + 1}) { id } }`,
        new RegExp(`nrOfBooks must be an integer from 0 to ${LIMITS.MAX_BOOKS}`),
      ],
      ['allBooks negative', '{ allBooks(nrOfBooks: -1) { id } }', /nrOfBooks must be an integer from 0/],
      [
        'allBooksAsJSON nrOfBooks',
        `{ allBooksAsJSON(nrOfBooks: ${LIMITS.MAX_BOOKS + 1}) }`,
        /nrOfBooks must be an integer/,
      ],
      [
        'payload size',
        `{ payload(size: ${LIMITS.MAX_PAYLOAD_BYTES + 1}) { size } }`,
        new RegExp(`size must be an integer from 0 to ${LIMITS.MAX_PAYLOAD_BYTES}`),
      ],
      [
        'blurb size',
        `{ book(id: "book-1") { blurb(size: ${LIMITS.MAX_BLURB_BYTES + 1}) } }`,
        new RegExp(`size must be an integer from 0 to ${LIMITS.MAX_BLURB_BYTES}`),
      ],
      [
        'page size',
        `{ page(size: ${LIMITS.MAX_PAGE_SIZE + 1}) { size } }`,
        new RegExp(`size must be an integer from 0 to ${LIMITS.MAX_PAGE_SIZE}`),
      ],
      ['page offset', '{ page(offset: -1) { size } }', /offset must be an integer from 0/],
      [
        'author books first',
        `{ author(id: "author-1") { books(first: ${MAX_AUTHOR_BOOKS + 1}) { id } } }`,
        new RegExp(`first must be an integer from 0 to ${MAX_AUTHOR_BOOKS}`),
      ],
      [
        'rateBook stars',
        'mutation { rateBook(id: "book-1", stars: 6) { count } }',
        /stars must be an integer from 1 to 5/,
      ],
      ['rateBook id', 'mutation { rateBook(id: "book-0", stars: 3) { count } }', /no book with id "book-0"/],
    ];
    for (const [name, query, pattern] of bounds) {
      it(`${name}: BAD_USER_INPUT naming the bound`, async () => {
        const res = await post({ query });
        assert.equal(res.status, 200); // a resolver error: GraphQL answers with data null and errors
        assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT', res.text);
        assert.match(res.body.errors[0].message, pattern);
        assert.equal(res.body.errors[0].extensions.stacktrace, undefined);
        await assertStillServing();
      });
    }

    it(`query depth: ${LIMITS.MAX_QUERY_DEPTH} passes, ${LIMITS.MAX_QUERY_DEPTH + 1} is refused`, async () => {
      const ok = await post({ query: nestedQuery(LIMITS.MAX_QUERY_DEPTH) });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.errors, undefined, ok.text);
      const deep = await post({ query: nestedQuery(LIMITS.MAX_QUERY_DEPTH + 1) });
      await expectError(
        deep,
        400,
        'GRAPHQL_VALIDATION_FAILED',
        new RegExp(`nested ${LIMITS.MAX_QUERY_DEPTH + 1} fields deep; the limit is ${LIMITS.MAX_QUERY_DEPTH}`),
      );
    });

    it('query depth counts through fragments, and fragment cycles are still reported', async () => {
      const depth = LIMITS.MAX_QUERY_DEPTH + 1;
      const viaFragments = `{ ...A } fragment A on Query { book(id: "book-1") { ...B } } fragment B on Book { ${chain(depth - 1)} }`;
      const deep = await post({ query: viaFragments });
      await expectError(deep, 400, 'GRAPHQL_VALIDATION_FAILED', new RegExp(`nested ${depth} fields deep`));
      const cycle = await post({
        query: '{ book(id: "book-1") { ...A } } fragment A on Book { author { books { ...A } } }',
      });
      await expectError(cycle, 400, 'GRAPHQL_VALIDATION_FAILED', /Cannot spread fragment "A" within itself/);
    });
  });

  describe('bad input: a clear error, and the next request is served', () => {
    it('GraphQL syntax error: 400 GRAPHQL_PARSE_FAILED', async () => {
      await expectError(
        await post({ query: '{ book(id: "book-1") { id }' }),
        400,
        'GRAPHQL_PARSE_FAILED',
        /Syntax Error/,
      );
    });

    it('unknown field: 400 GRAPHQL_VALIDATION_FAILED', async () => {
      await expectError(
        await post({ query: '{ book(id: "book-1") { isbn } }' }),
        400,
        'GRAPHQL_VALIDATION_FAILED',
        /Cannot query field "isbn" on type "Book"/,
      );
    });

    it('wrong variable type: 400 BAD_USER_INPUT', async () => {
      const res = await post({ query: 'query($n: Int!) { allBooks(nrOfBooks: $n) { id } }', variables: { n: 'ten' } });
      await expectError(res, 400, 'BAD_USER_INPUT', /Variable "\$n" got invalid value "ten"/);
    });

    it('GET /graphql without a query, even asking for HTML: 400 JSON, no landing page', async () => {
      const res = await httpRequest(url, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      assert.match(res.headers['content-type'], /^application\/json/);
      await expectError(res, 400, 'BAD_REQUEST', /must contain a non-empty `query`/);
    });

    it('a subscription over HTTP: 400 pointing at the WebSocket endpoint', async () => {
      const res = await post({ query: 'subscription { events(count: 1, intervalMs: 1) { id } }' });
      await expectError(res, 400, 'BAD_REQUEST', /subscriptions are served over WebSocket/);
    });

    it('unknown path: 404; unsupported method: 405', async () => {
      await expectError(
        await httpRequest(`http://127.0.0.1:${server.httpPort}/nope`),
        404,
        'NOT_FOUND',
        /GraphQL is at \/graphql/,
      );
      const put = await httpRequest(url, { method: 'PUT', json: { query: '{ book(id: "book-1") { id } }' } });
      assert.equal(put.headers.allow, 'GET, POST');
      await expectError(put, 405, 'BAD_REQUEST', /supports only GET\/POST/);
    });
  });
});
