// The GraphQL server over WebSocket (graphql-transport-ws) on ws:// and wss://:
// the graphql-ws client for queries, mutations and subscriptions, and errors on a
// healthy connection. Protocol violations are in hostile-graphql-ws.test.js.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LIMITS } from '../common/defaults.js';
import { filler, fullBookAt } from '../servers/shared/data.js';
import { runOperation, wsClient } from '../servers/graphql/client.js';
import { MAX_QUERY_BYTES } from '../servers/graphql/rules.js';
import { createServer } from '../servers/graphql/server.js';

const EVENTS =
  'subscription($count: Int!, $interval: Int!, $size: Int) { events(count: $count, intervalMs: $interval, size: $size) { id seq sentAt data } }';

describe('GraphQL server over WebSocket', { timeout: 120_000 }, () => {
  let server;
  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0 });
  });
  after(() => server?.close());

  const endpoints = () => ({
    'ws://': `ws://127.0.0.1:${server.httpPort}/graphql`,
    'wss://': `wss://127.0.0.1:${server.tlsPort}/graphql`,
  });

  for (const scheme of ['ws://', 'wss://']) {
    describe(`graphql-ws client over ${scheme}`, () => {
      let client;
      before(() => {
        client = wsClient(endpoints()[scheme]);
      });
      after(() => client?.dispose());

      it('query: the data, and extensions.timing {execMs, serMs}', async () => {
        const { results, errors } = await runOperation(client, {
          query:
            '{ payload(size: 64) { size data } book(id: "book-77") { id name pageCount author { id firstName lastName } } }',
        });
        assert.equal(errors, null);
        assert.equal(results.length, 1);
        assert.deepEqual(results[0].data, { payload: { size: 64, data: filler(64) }, book: fullBookAt(77) });
        const { execMs, serMs } = results[0].extensions.timing;
        assert.ok(
          Number.isFinite(execMs) && execMs >= 0 && Number.isFinite(serMs) && serMs >= 0,
          JSON.stringify(results[0].extensions),
        );
      });

      it('timing tells a big result apart: execMs and serMs above zero', async () => {
        const { results } = await runOperation(client, {
          query: '{ allBooks(nrOfBooks: 20000) { id name pageCount author { id firstName lastName } } }',
        });
        assert.equal(results[0].data.allBooks.length, 20000);
        const { execMs, serMs } = results[0].extensions.timing;
        assert.ok(execMs > 0 && serMs > 0, JSON.stringify(results[0].extensions));
      });

      it('mutation: rateBook', async () => {
        const rate = (stars) =>
          runOperation(client, {
            query: `mutation { rateBook(id: "book-${scheme.length}", stars: ${stars}) { bookId count average } }`,
          });
        assert.deepEqual((await rate(4)).results[0].data.rateBook, {
          bookId: `book-${scheme.length}`,
          count: 1,
          average: 4,
        });
        assert.deepEqual((await rate(1)).results[0].data.rateBook, {
          bookId: `book-${scheme.length}`,
          count: 2,
          average: 2.5,
        });
      });

      it('subscription: count events, seq 1..count, sentAt rising, data of size bytes, then complete', async () => {
        const before = Date.now();
        const { results, errors } = await runOperation(client, {
          query: EVENTS,
          variables: { count: 5, interval: 20, size: 16 },
        });
        assert.equal(errors, null);
        assert.equal(results.length, 5);
        const events = results.map((r) => r.data.events);
        assert.deepEqual(
          events.map((e) => [e.id, e.seq, e.data]),
          [1, 2, 3, 4, 5].map((seq) => [`event-${seq}`, seq, filler(16, seq)]),
        );
        for (let k = 1; k < events.length; k++) assert.ok(events[k].sentAt > events[k - 1].sentAt, 'sentAt rises');
        // Same machine, same clock: sentAt is epoch ms from the server.
        assert.ok(
          events[0].sentAt >= before - 1000 && events[4].sentAt <= Date.now() + 1000,
          JSON.stringify(events.map((e) => e.sentAt)),
        );
        for (const r of results) assert.ok(r.extensions.timing.execMs >= 0 && r.extensions.timing.serMs >= 0);
      });

      it('subscription: events are intervalMs apart', async () => {
        const { results } = await runOperation(client, { query: EVENTS, variables: { count: 3, interval: 200 } });
        const sentAt = results.map((r) => r.data.events.sentAt);
        assert.equal(sentAt.length, 3);
        assert.ok(
          sentAt[1] - sentAt[0] >= 180 && sentAt[2] - sentAt[0] >= 380,
          `gaps: ${sentAt[1] - sentAt[0]}, ${sentAt[2] - sentAt[0]}`,
        );
      });

      it('subscription: count 0 completes at once', async () => {
        const { results, errors } = await runOperation(client, {
          query: EVENTS,
          variables: { count: 0, interval: 1000 },
        });
        assert.deepEqual([results, errors], [[], null]);
      });

      it('unsubscribing mid-stream; the connection keeps serving', async () => {
        const { results, unsubscribed } = await runOperation(
          client,
          { query: EVENTS, variables: { count: 1000, interval: 30 } },
          { onNext: (_r, all) => all.length === 2 },
        );
        assert.equal(unsubscribed, true);
        assert.equal(results.length, 2);
        const { results: again } = await runOperation(client, { query: '{ book(id: "book-1") { id } }' });
        assert.deepEqual(again[0].data, { book: { id: 'book-1' } });
      });
    });
  }

  describe('errors on a healthy connection: an error or errored result, and the connection lives on', () => {
    let client;
    before(() => {
      client = wsClient(endpoints()['ws://']);
    });
    after(() => client?.dispose());

    const errorCases = [
      ['syntax error', { query: '{ book(id: "book-1") { id }' }, 'GRAPHQL_PARSE_FAILED', /Syntax Error/],
      [
        'unknown field',
        { query: '{ book(id: "book-1") { isbn } }' },
        'GRAPHQL_VALIDATION_FAILED',
        /Cannot query field "isbn"/,
      ],
      [
        'too deep',
        {
          query: `{ book(id: "book-1") { ${'author { books(first: 1) { '.repeat(5)}author { id }${' } }'.repeat(5)} } }`,
        }, // 13 deep
        'GRAPHQL_VALIDATION_FAILED',
        new RegExp(`nested ${LIMITS.MAX_QUERY_DEPTH + 1} fields deep`),
      ],
      [
        'document too large',
        { query: `{ book(id: "book-1") { id } } ${'#'.repeat(MAX_QUERY_BYTES)}\n` },
        'BAD_REQUEST',
        new RegExp(`limit is ${MAX_QUERY_BYTES} bytes`),
      ],
    ];
    for (const [name, payload, code, pattern] of errorCases) {
      it(`${name}: an error message with ${code}`, async () => {
        const { results, errors } = await runOperation(client, payload);
        assert.deepEqual(results, []);
        assert.ok(Array.isArray(errors), `errors: ${JSON.stringify(errors)}`);
        assert.equal(errors[0].extensions?.code, code, JSON.stringify(errors));
        assert.match(errors[0].message, pattern);
        const { results: next } = await runOperation(client, { query: '{ book(id: "book-2") { id } }' });
        assert.deepEqual(next[0].data, { book: { id: 'book-2' } });
      });
    }

    const resultErrorCases = [
      [
        'events count',
        { count: LIMITS.MAX_EVENTS + 1, interval: 10 },
        new RegExp(`count must be an integer from 0 to ${LIMITS.MAX_EVENTS}`),
      ],
      [
        'events intervalMs too small',
        { count: 1, interval: LIMITS.MIN_EVENT_INTERVAL_MS - 1 },
        new RegExp(
          `intervalMs must be an integer from ${LIMITS.MIN_EVENT_INTERVAL_MS} to ${LIMITS.MAX_EVENT_INTERVAL_MS}`,
        ),
      ],
      [
        'events intervalMs too large',
        { count: 1, interval: LIMITS.MAX_EVENT_INTERVAL_MS + 1 },
        /intervalMs must be an integer/,
      ],
      [
        'events size',
        { count: 1, interval: 10, size: LIMITS.MAX_PAYLOAD_BYTES + 1 },
        new RegExp(`size must be an integer from 0 to ${LIMITS.MAX_PAYLOAD_BYTES}`),
      ],
    ];
    for (const [name, variables, pattern] of resultErrorCases) {
      it(`${name}: a result with BAD_USER_INPUT, then complete`, async () => {
        const { results, errors } = await runOperation(client, { query: EVENTS, variables });
        assert.equal(errors, null);
        assert.equal(results.length, 1);
        assert.equal(results[0].errors[0].extensions.code, 'BAD_USER_INPUT', JSON.stringify(results[0]));
        assert.match(results[0].errors[0].message, pattern);
      });
    }

    it('query bound: allBooks over the limit is BAD_USER_INPUT', async () => {
      const { results } = await runOperation(client, {
        query: `{ allBooks(nrOfBooks: ${LIMITS.MAX_BOOKS + 1}) { id } }`,
      });
      assert.equal(results[0].errors[0].extensions.code, 'BAD_USER_INPUT');
    });

    it('wrong variable type: a result with the coercion error', async () => {
      const { results } = await runOperation(client, {
        query: 'query($n: Int!) { allBooks(nrOfBooks: $n) { id } }',
        variables: { n: 'ten' },
      });
      assert.match(results[0].errors[0].message, /Variable "\$n" got invalid value "ten"/);
      assert.equal(results[0].data, undefined);
    });
  });
});
