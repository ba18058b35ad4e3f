// The document cache HTTP/1.1, HTTP/2 and WebSocket share (servers/graphql/documents.js),
// against a real server: a document parsed and validated on one transport is a
// cache hit on the others, cost verdicts kept in it never let a request through
// that the uncached check refuses, and a WebSocket result's timing covers the
// whole operation (parse and validation included, as HTTP's total does).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LIMITS } from '../common/defaults.js';
import { postGraphQL, runOperation, wsClient } from '../servers/graphql/client.js';
import { createServer } from '../servers/graphql/server.js';

// A valid document of `n` distinct aliases (about 70 bytes each) that executes
// nothing (@skip): parsing and validating it takes milliseconds, finding it in
// the cache far less.
const bigDocument = (tag, n = 1200) =>
  `query Big${tag} { ${Array.from({ length: n }, (_, i) => `${tag}${i}: book(id: "book-${i + 1}") @skip(if: true) { id pageCount }`).join(' ')} }`;

// The server's time besides execution and serialization: decoding, shape checks,
// parse, validation, cost (or their cache hits).
const beforeExecution = ({ exec, ser, total }) => total - exec - ser;
const headerTiming = (header) =>
  Object.fromEntries(header.split(', ').map((part) => [part.split(';')[0], Number(part.split('dur=')[1])]));

describe('one document cache for every transport', { timeout: 120_000 }, () => {
  let server;
  let client;
  let url;
  before(async () => {
    server = await createServer({ port: 0, tlsPort: 0 });
    url = `http://127.0.0.1:${server.httpPort}/graphql`;
    client = wsClient(`ws://127.0.0.1:${server.httpPort}/graphql`);
  });
  after(async () => {
    await client?.dispose();
    await server?.close();
  });

  const ws = async (query, variables) => {
    const { results, errors } = await runOperation(client, { query, variables });
    return { result: results[0], errors };
  };
  const http = (query, variables) => postGraphQL(url, { query, variables });
  const wsBeforeExecution = async (query) => {
    const { result, errors } = await ws(query);
    assert.equal(errors, null, JSON.stringify(errors));
    const { execMs, serMs, totalMs } = result.extensions.timing;
    return beforeExecution({ exec: execMs, ser: serMs, total: totalMs });
  };
  const httpBeforeExecution = async (query) => {
    const res = await http(query);
    assert.equal(res.status, 200, res.text.slice(0, 300));
    return beforeExecution(headerTiming(res.headers['server-timing']));
  };

  // HITS documents, each validated on one transport and then timed once on the other,
  // judged by the least: a stall of the test process (the suite runs this file beside
  // benches) only adds to a time, and each timed request is still the other transport's
  // first sight of its document (a cache per transport would make all of them misses).
  // Over 20 suite runs' logs (2026-11-26/27) a miss took 76-630 ms and a single hit
  // 0.18-9.7 ms, once 171 ms (a stalled sample beside a miss of 287: the failure this removes).
  const HITS = 3;
  const leastHit = async (tag, validate, time) => {
    let best = Infinity;
    for (let i = 0; i < HITS; i++) {
      const doc = bigDocument(`${tag}${i}`);
      await validate(doc);
      best = Math.min(best, await time(doc));
    }
    return best;
  };

  it('a document HTTP has validated is a cache hit over WebSocket', async (t) => {
    await wsBeforeExecution(bigDocument('warm')); // the code paths are warm, the cache holds another document
    const missMs = await wsBeforeExecution(bigDocument('wsfirst'));
    const hitMs = await leastHit('httpfirst', httpBeforeExecution, wsBeforeExecution);
    t.diagnostic(
      `WebSocket, time before execution: ${missMs.toFixed(3)} ms for a new document, ${hitMs.toFixed(3)} ms for one HTTP had`,
    );
    assert.ok(hitMs * 5 < missMs, `${hitMs} ms after HTTP had the document, ${missMs} ms for a new one`);
  });

  it('a document the WebSocket has validated is a cache hit over HTTP', async (t) => {
    await httpBeforeExecution(bigDocument('warm2'));
    const missMs = await httpBeforeExecution(bigDocument('httpnew'));
    const hitMs = await leastHit('wsnew', wsBeforeExecution, httpBeforeExecution);
    t.diagnostic(
      `HTTP, time before execution: ${missMs.toFixed(3)} ms for a new document, ${hitMs.toFixed(3)} ms for one the WebSocket had`,
    );
    assert.ok(hitMs * 5 < missMs, `${hitMs} ms after the WebSocket had the document, ${missMs} ms for a new one`);
  });

  it('WebSocket timing: totalMs holds execMs and serMs', async () => {
    const { result } = await ws('{ allBooks(nrOfBooks: 2000) { id name } }');
    const { execMs, serMs, totalMs } = result.extensions.timing;
    assert.ok(execMs > 0 && serMs > 0 && totalMs + 0.002 >= execMs + serMs, JSON.stringify(result.extensions.timing));
  });

  // Each sequence runs alternately over WebSocket and HTTP, on the one cache.
  const expectCost = async (transport, query, variables, refused) => {
    if (transport === 'ws') {
      const { result, errors } = await ws(query, variables);
      const code = errors?.[0]?.extensions?.code;
      assert.equal(
        code === 'COST_LIMIT_EXCEEDED',
        refused,
        `ws ${JSON.stringify(variables)}: ${JSON.stringify(errors ?? result?.errors)}`,
      );
    } else {
      const res = await http(query, variables);
      const code = res.body.errors?.[0]?.extensions?.code;
      assert.equal(
        code === 'COST_LIMIT_EXCEEDED',
        refused,
        `http ${JSON.stringify(variables)}: ${res.status} ${res.text.slice(0, 300)}`,
      );
      assert.equal(res.status, refused ? 400 : 200);
    }
  };

  it('a cost verdict is kept per variable value: a fitting value does not let a bigger one through', async () => {
    const query = 'query Twice($n: Int!) { a: allBooks(nrOfBooks: $n) { id } b: allBooks(nrOfBooks: $n) { id } }';
    const over = LIMITS.MAX_BOOKS / 2 + 1;
    for (const [transport, n, refused] of [
      ['ws', 10, false],
      ['http', over, true],
      ['http', 10, false],
      ['ws', over, true],
      ['ws', 10, false],
    ]) {
      await expectCost(transport, query, { n }, refused);
    }
  });

  it('an absent variable (its default applies) is not the same as one given as null', async () => {
    // first: null asks for no books (the resolver refuses it), the default of 50
    // for 5 x 50^3 of them: over the limit.
    const books = (inner) => `books(first: $f) { author { ${inner} } }`;
    const fanOut = `author { ${books(books('books(first: $f) { id }'))} }`;
    const query = `query Default($f: Int = 50) { book(id: "book-1") { ${['a', 'b', 'c', 'd', 'e'].map((a) => `${a}: ${fanOut}`).join(' ')} } }`;
    for (const [transport, variables, refused] of [
      ['http', { f: null }, false],
      ['ws', {}, true],
      ['ws', { f: null }, false],
      ['http', {}, true],
      ['http', { f: 2 }, false],
    ]) {
      await expectCost(transport, query, variables, refused);
    }
  });

  it('a verdict reached while an argument did not resolve is not kept', async () => {
    // With id null, book's argument does not resolve, so its fan-out of 5 x 50^3
    // books counts nothing and the operation fits; with an id it is refused. The
    // cost does not depend on $id's value otherwise, so a kept "fits" would let it through.
    const fanOut = 'author { books(first: 50) { author { books(first: 50) { author { books(first: 50) { id } } } } } }';
    const query = `query FanOut($id: ID = "book-1") { book(id: $id) { ${['a', 'b', 'c', 'd', 'e'].map((a) => `${a}: ${fanOut}`).join(' ')} } }`;
    for (const [transport, variables, refused] of [
      ['ws', { id: null }, false],
      ['http', { id: 'book-1' }, true],
      ['http', { id: null }, false],
      ['ws', { id: 'book-2' }, true],
    ]) {
      await expectCost(transport, query, variables, refused);
    }
  });
});
