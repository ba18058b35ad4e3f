// The GraphQL server's per-request switches for studies 001 and 002, real sockets:
//   - the executors (extensions.executor: plain, per-item, dataloader,
//     instrumented, jit) answer the same bytes over HTTP/1.1 (POST and GET), HTTP/2
//     and WebSocket, and the same errors; each reports its server time;
//   - generation time per resource (x-generate): serial sleeps (nb - hits) x delay,
//     parallel and dataloader one delay, hits skip it, atomic requests pay it each;
//   - Vulcain's Preload header: Link rel=preload headers to the selected hrefs, which
//     fetch exactly what the atomic requests fetch.
// Bad values of each are in hostile-graphql-*.test.js.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BOOK_RESOURCE_QUERY, bookResourceUrl } from '../common/book-resource.js';
import { EXECUTOR_NAMES } from '../common/executors.js';
import { formatGenerate } from '../common/generation.js';
import { graphqlGetUrl, h2Connect, h2Request, httpRequest, runOperation, wsClient } from '../servers/graphql/client.js';
import { createServer } from '../servers/graphql/server.js';
import { fullBookAt } from '../servers/shared/data.js';

const ALL_BOOKS =
  'query AllBooks($n: Int!) { allBooks(nrOfBooks: $n) { id name pageCount author { id firstName lastName } } }';
const timingOf = (header) =>
  Object.fromEntries(
    String(header)
      .split(', ')
      .map((p) => [p.split(';')[0], Number(p.split('dur=')[1])]),
  );

describe('GraphQL server: the studies 001 and 002 switches', { timeout: 120_000 }, () => {
  let server;
  let url;
  let h2;
  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0 });
    url = `http://127.0.0.1:${server.httpPort}/graphql`;
    h2 = await h2Connect(`https://127.0.0.1:${server.tlsPort}`);
  });
  after(async () => {
    h2?.close();
    await server?.close();
  });

  const post = (body, headers = {}) => httpRequest(url, { method: 'POST', json: body, headers });
  const get = (query, variables, headers = {}, extensions) =>
    httpRequest(graphqlGetUrl(url, { query, variables, ...(extensions ? { extensions } : {}) }), { headers });

  describe('executors (study 002)', () => {
    it('every executor answers the same bytes on HTTP/1.1 POST and GET, HTTP/2 and WebSocket', async () => {
      const n = 300;
      const expected = JSON.stringify({ data: { allBooks: Array.from({ length: n }, (_, i) => fullBookAt(i + 1)) } });
      const client = wsClient(`ws://127.0.0.1:${server.httpPort}/graphql`);
      try {
        for (const executor of EXECUTOR_NAMES) {
          const extensions = { executor };
          const viaPost = await post({ query: ALL_BOOKS, variables: { n }, extensions });
          assert.equal(viaPost.status, 200, `${executor}: ${viaPost.text.slice(0, 200)}`);
          assert.equal(viaPost.text.trimEnd(), expected, `${executor} over POST`);
          const timing = timingOf(viaPost.headers['server-timing']);
          assert.ok(
            timing.exec > 0 && timing.ser > 0 && timing.total >= timing.exec + timing.ser - 0.002,
            `${executor}: ${viaPost.headers['server-timing']}`,
          );
          assert.equal((await get(ALL_BOOKS, { n }, {}, extensions)).text.trimEnd(), expected, `${executor} over GET`);
          const viaH2 = await h2Request(h2, {
            method: 'POST',
            json: { query: ALL_BOOKS, variables: { n }, extensions },
          });
          assert.equal(viaH2.text.trimEnd(), expected, `${executor} over HTTP/2`);
          const ws = await runOperation(client, { query: ALL_BOOKS, variables: { n }, extensions });
          assert.equal(ws.errors, null, executor);
          const [result] = ws.results;
          assert.equal(JSON.stringify({ data: result.data }), expected, `${executor} over WebSocket`);
          assert.ok(result.extensions.timing.execMs > 0, `${executor}: ${JSON.stringify(result.extensions.timing)}`);
        }
      } finally {
        await client.dispose();
      }
    });

    it('GET reads the executor from its extensions parameter too', async () => {
      const res = await get(ALL_BOOKS, { n: 1 }, {}, { executor: 'turbo' });
      assert.equal(res.status, 400);
      assert.match(res.text, /extensions\.executor must be one of/);
    });

    it('every executor refuses the same way: an argument out of range, a variable that does not coerce', async () => {
      const answers = {};
      for (const executor of EXECUTOR_NAMES) {
        const range = await post({ query: ALL_BOOKS, variables: { n: 600000 }, extensions: { executor } });
        const coercion = await post({ query: ALL_BOOKS, variables: { n: 'many' }, extensions: { executor } });
        answers[executor] = [range.status, range.text, coercion.status, coercion.text];
      }
      assert.equal(answers.plain[0], 200);
      assert.match(answers.plain[1], /nrOfBooks must be an integer from 0 to 500000 \(got 600000\)/);
      assert.equal(answers.plain[2], 400);
      for (const executor of EXECUTOR_NAMES) assert.deepEqual(answers[executor], answers.plain, executor);
    });

    it('a mutation runs once on any executor', async () => {
      const rate = 'mutation { rateBook(id: "book-77", stars: 4) { count } }';
      const counts = [];
      for (const executor of EXECUTOR_NAMES)
        counts.push(JSON.parse((await post({ query: rate, extensions: { executor } })).text).data.rateBook.count);
      assert.deepEqual(
        counts,
        EXECUTOR_NAMES.map((_, i) => i + 1),
      );
    });
  });

  describe('generation time per resource (study 001)', () => {
    const PAGE = 'query Page($size: Int!) { page(offset: 0, size: $size) { size books { id } } }';
    const execMs = (res) => timingOf(res.headers['server-timing']).exec;
    const page = (size, generate) =>
      post({ query: PAGE, variables: { size } }, { 'x-generate': formatGenerate(generate) });

    it('serial sleeps (nb - hits) x delay; parallel and dataloader sleep one delay; hits sleep nothing', async () => {
      const g = { delay: 20, hits: 5 };
      const serial = await page(20, { ...g, resolve: 'serial' });
      const parallel = await page(20, { ...g, resolve: 'parallel' });
      const loader = await page(20, { ...g, resolve: 'dataloader' });
      const allHits = await page(20, { delay: 20, hits: 20, resolve: 'serial' });
      const none = await post({ query: PAGE, variables: { size: 20 } });
      const ids = JSON.stringify(JSON.parse(none.text).data);
      for (const r of [serial, parallel, loader, allHits])
        assert.equal(JSON.stringify(JSON.parse(r.text).data), ids, 'the same page');
      // A timer can fire up to 1 ms early by performance.now() (libuv's clock is whole ms).
      assert.ok(
        execMs(serial) >= 15 * 19 && execMs(serial) < 15 * 20 + 150,
        `serial exec ${execMs(serial)} ms, expected 300`,
      );
      for (const [what, r] of [
        ['parallel', parallel],
        ['dataloader', loader],
      ])
        assert.ok(execMs(r) >= 19 && execMs(r) < 80, `${what} exec ${execMs(r)} ms, expected 20`);
      assert.ok(execMs(allHits) < 15, `all hits: exec ${execMs(allHits)} ms`);
      assert.ok(execMs(none) < 15, `no header: exec ${execMs(none)} ms`);
    });

    it('an atomic book(id) pays the delay unless it is a hit', async () => {
      const one = (hits) =>
        get(BOOK_RESOURCE_QUERY, { id: 'book-3', blurb: 10 }, { 'x-generate': formatGenerate({ delay: 30, hits }) });
      const miss = await one(0);
      const hit = await one(1);
      assert.equal(miss.text, hit.text);
      assert.ok(execMs(miss) >= 29, `miss exec ${execMs(miss)}`);
      assert.ok(execMs(hit) < 15, `hit exec ${execMs(hit)}`);
    });
  });

  describe("Vulcain's Preload header (study 001)", () => {
    const REFS =
      'query Refs($size: Int!, $blurb: Int!) { page(offset: 10, size: $size) { books { href(blurb: $blurb) } } }';

    it('answers Link rel=preload headers to the selected hrefs, once each, on HTTP/1.1 and HTTP/2', async () => {
      const preload = '"/data/page/books/*/href"';
      const h1 = await get(REFS, { size: 3, blurb: 50 }, { preload });
      const hrefs = JSON.parse(h1.text).data.page.books.map((b) => b.href);
      assert.deepEqual(
        hrefs,
        [11, 12, 13].map((i) => bookResourceUrl(`book-${i}`, 50)),
      );
      const links = (header) => [...String(header).matchAll(/<([^>]+)>; rel=preload; as=fetch/g)].map((m) => m[1]);
      assert.deepEqual(links(h1.headers.link), hrefs);
      const search = new URL(graphqlGetUrl(url, { query: REFS, variables: { size: 3, blurb: 50 } })).search;
      const viaH2 = await h2Request(h2, { path: `/graphql${search}`, headers: { preload: `${preload}, ""` } });
      assert.deepEqual(links(viaH2.headers.link), hrefs);
      const without = await get(REFS, { size: 3, blurb: 50 });
      assert.equal(without.headers.link, undefined);
    });

    it('a link fetches what the atomic request fetches', async () => {
      const linked = await httpRequest(`http://127.0.0.1:${server.httpPort}${bookResourceUrl('book-12', 50)}`);
      const atomic = await get(BOOK_RESOURCE_QUERY, { id: 'book-12', blurb: 50 });
      assert.equal(linked.status, 200);
      assert.equal(linked.text, atomic.text);
      assert.equal(linked.headers.etag, atomic.headers.etag);
    });
  });
});
