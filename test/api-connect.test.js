// Your own API over the browser's RPC, timed: `k6pack run api --connect URL --proto --call`
// with the pack's Connect server as "your API" (two calls) through real Toxiproxy and real
// k6 under lte: connect_json, connect_proto and grpc_web each run both calls, and every
// row's p50 is within -3..+10 % of the model (its measured bytes and server time).
// A server this project did not write, and bad input: test/api-cli.test.js.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createServer as createConnectServer } from '../servers/connect/server.js';
import { cliEnv, runCli } from './helpers/cli-env.js';
import { summaries } from './helpers/api-run.js';
import { API_CONNECT_LANES, BOOKS_PROTO } from './helpers/connect-servers.js';

// As test/connect-lanes.test.js: a shaped call is never faster than its round trips and
// bytes, at most 10 % slower (spread measured 2026-11-27 on the reference lanes: x0.98..x1.05;
// here x1.025..x1.032 over 2 runs).
const FLOOR = 0.97;
const CEILING = 1.1;

let books;
before(async () => {
  books = await createConnectServer({ port: 0, h2cPort: 0, tlsPort: 0 });
});
after(() => books?.close());

const booksArgs = () => [
  'run',
  'api',
  '--connect',
  `http://127.0.0.1:${books.port}`,
  '--proto',
  BOOKS_PROTO,
  '--call',
  'books.v1.Books/GetBook',
  '--request',
  '{"id": "book-1{{vu}}"}',
  '--call',
  'books.v1.Books/Payload',
  '--request',
  '{"size": 1000}',
];

test(
  'the Connect server as your API under lte: every lane, every row within -3..+10 % of the model',
  { timeout: 180_000 },
  async (t) => {
    const { env, runDir, cleanup } = await cliEnv({ api: true });
    t.after(cleanup);
    const r = await runCli([...booksArgs(), '--profile', 'lte', '--load', 'ci', '--', '-e', 'STEPS=1'], {
      env,
      timeoutMs: 150_000,
    });
    assert.equal(r.exitCode, 0, `${r.stdout.slice(-3000)}${r.stderr}`);
    assert.match(r.stdout, /== lanes: connect_json, connect_proto, grpc_web/);
    const doc = summaries(runDir).lte;
    const off = [];
    for (const lane of API_CONNECT_LANES) {
      const rows = doc.rows.filter((x) => x.lane === lane && x.latency?.count);
      assert.deepEqual(rows.map((x) => x.dims.op).sort(), ['GetBook', 'Payload'], `${lane}: both calls ran`);
      for (const row of rows) {
        assert.equal(row.failures.rate, 0, `${row.id}: no failed call`);
        const x = row.latency.p50 / row.model.p50.ms;
        t.diagnostic(
          `${row.id}: p50 ${row.latency.p50.toFixed(1)} ms, model ${row.model.p50.ms.toFixed(1)} ms, x${x.toFixed(3)}`,
        );
        if (x < FLOOR || x > CEILING) off.push(`${row.id} x${x.toFixed(3)}`);
      }
    }
    assert.deepEqual(off, [], `rows outside ${FLOOR}..${CEILING} of the model`);
  },
);
