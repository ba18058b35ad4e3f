// The same data whichever transport asks: the GraphQL server (HTTP/1.1, HTTP/2
// over TLS, WebSocket) and the gRPC server (plaintext, TLS), both in-process on
// port 0, compared with each other field by field, not with a fixture.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import grpc from '@grpc/grpc-js';
import { LIMITS } from '../common/defaults.js';
import { booksClient, collectStream, unaryCall } from '../servers/grpc/client.js';
import { createServer as createGrpcServer } from '../servers/grpc/server.js';
import { h2Connect, h2Request, postGraphQL, runOperation, wsClient } from '../servers/graphql/client.js';
import { GRAPHQL_PATH } from '../servers/graphql/http.js';
import { createServer as createGraphqlServer } from '../servers/graphql/server.js';

const BOOK_FIELDS = 'id name pageCount author { id firstName lastName }';

// gRPC's snake_case fields in the lowerCamelCase GraphQL (and k6) use.
function camel(value) {
  if (Array.isArray(value)) return value.map(camel);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), camel(v)]),
  );
}

describe('GraphQL and gRPC answer the same data', { timeout: 120_000 }, () => {
  let graphql;
  let rpc;
  let plain;
  let secure;
  let httpUrl;

  before(async () => {
    [graphql, rpc] = await Promise.all([
      createGraphqlServer({ port: 0, tlsPort: 0 }),
      createGrpcServer({ port: 0, tlsPort: 0 }),
    ]);
    httpUrl = `http://127.0.0.1:${graphql.httpPort}${GRAPHQL_PATH}`;
    plain = booksClient(`127.0.0.1:${rpc.port}`, { options: { 'grpc.max_receive_message_length': -1 } });
    secure = booksClient(`127.0.0.1:${rpc.tlsPort}`, { cert: rpc.cert });
  });

  after(async () => {
    plain?.close();
    secure?.close();
    await Promise.all([graphql?.close(), rpc?.close()]);
  });

  async function query(q, variables) {
    const res = await postGraphQL(httpUrl, { query: q, variables });
    assert.equal(res.status, 200, res.text.slice(0, 300));
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    return res.body.data;
  }

  it('book(id) over HTTP = GetBook over gRPC', async () => {
    for (const id of ['book-1', 'book-42', 'book-123457', `book-${LIMITS.MAX_BOOKS}`]) {
      const { book } = await query(`query ($id: ID!) { book(id: $id) { ${BOOK_FIELDS} } }`, { id });
      const { message } = await unaryCall(plain, 'GetBook', { id });
      assert.equal(book.id, id);
      assert.deepEqual(camel(message), book);
    }
  });

  it('allBooks(n) over HTTP = ListBooks(n) over gRPC', async () => {
    for (const n of [0, 1, 7, 2000]) {
      const { allBooks } = await query(`query ($n: Int!) { allBooks(nrOfBooks: $n) { ${BOOK_FIELDS} } }`, { n });
      const { message } = await unaryCall(plain, 'ListBooks', { n });
      assert.equal(allBooks.length, n);
      assert.deepEqual(camel(message.books), allBooks);
    }
  });

  it('payload(size) over HTTP = Payload(size) over gRPC', async () => {
    for (const size of [0, 1, 45, 1000, 100_000]) {
      const { payload } = await query('query ($size: Int!) { payload(size: $size) { size data } }', { size });
      const { message } = await unaryCall(plain, 'Payload', { size });
      assert.equal(payload.data.length, size);
      assert.deepEqual(message, payload);
    }
  });

  it('over TLS too: HTTP/2 allBooks = gRPC-over-TLS StreamBooks, one book per message', async () => {
    const n = 50;
    const session = await h2Connect(`https://127.0.0.1:${graphql.tlsPort}`);
    try {
      const res = await h2Request(session, {
        method: 'POST',
        path: GRAPHQL_PATH,
        json: { query: `query ($n: Int!) { allBooks(nrOfBooks: $n) { ${BOOK_FIELDS} } }`, variables: { n } },
      });
      assert.equal(res.status, 200, res.text.slice(0, 300));
      const { messages, status } = await collectStream(secure.StreamBooks({ n }));
      assert.equal(status.code, grpc.status.OK, status.details);
      assert.deepEqual(camel(messages), JSON.parse(res.text).data.allBooks);
    } finally {
      session.close();
    }
  });

  it('events subscription over WebSocket = StreamEvents over gRPC (ids, seq, data)', async () => {
    const request = { count: 4, intervalMs: 5, size: 64 };
    const ws = wsClient(`ws://127.0.0.1:${graphql.httpPort}${GRAPHQL_PATH}`);
    try {
      const { results, errors } = await runOperation(ws, {
        query:
          'subscription ($count: Int!, $intervalMs: Int!, $size: Int) { events(count: $count, intervalMs: $intervalMs, size: $size) { id seq data } }',
        variables: request,
      });
      assert.equal(errors, null, JSON.stringify(errors));
      const { messages, status } = await collectStream(plain.StreamEvents({ count: 4, interval_ms: 5, size: 64 }));
      assert.equal(status.code, grpc.status.OK, status.details);
      assert.equal(results.length, 4);
      assert.deepEqual(
        messages.map(({ id, seq, data }) => ({ id, seq, data })),
        results.map((r) => r.data.events),
      );
    } finally {
      await ws.dispose();
    }
  });

  it('both refuse the same out-of-range requests', async () => {
    const tooMany = await postGraphQL(httpUrl, { query: `{ allBooks(nrOfBooks: ${LIMITS.MAX_BOOKS + 1}) { id } }` });
    assert.match(tooMany.body.errors[0].message, /must be an integer from 0 to 500000/);
    await assert.rejects(unaryCall(plain, 'ListBooks', { n: LIMITS.MAX_BOOKS + 1 }), (err) => {
      assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
      return /must be an integer from 0 to 500000/.test(err.details);
    });
  });

  it('an id that names no book: null in GraphQL (book is nullable), NOT_FOUND in gRPC', async () => {
    assert.deepEqual(await query('{ book(id: "book-0") { id } }'), { book: null });
    await assert.rejects(
      unaryCall(plain, 'GetBook', { id: 'book-0' }),
      (err) => err.code === grpc.status.NOT_FOUND && /no book with id "book-0"/.test(err.details),
    );
  });
});
