// Your own API over the browser's RPC: `k6pack run api --connect URL --proto --call`
// discovers a Connect / gRPC-Web endpoint and runs the lanes that apply (connect_json,
// connect_proto, grpc_web), through real Toxiproxy and real k6:
//   - the pack's Connect server as "your API": two calls, each lane under lte with every
//     row's p50 within -3..+10 % of the model (its measured bytes and server time);
//   - connectrpc's Eliza on @connectrpc/connect-node (a server this project did not
//     write) under lan: every lane runs clean;
//   - bad input: one line, exit 2, nothing left running.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import protoLoader from '@grpc/proto-loader';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { createServer as createConnectServer } from '../servers/connect/server.js';
import { registryOf } from '../servers/connect/proto.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { nothingLeft, summaries } from './helpers/api-run.js';

const BOOKS_PROTO = fileURLToPath(new URL('../servers/proto/books.proto', import.meta.url));
const ELIZA_PROTO = fileURLToPath(new URL('./fixtures/eliza.proto', import.meta.url));
const CONNECT_LANES = ['connect_json', 'connect_proto', 'grpc_web'];
// As test/connect-lanes.test.js: a shaped call is never faster than its round trips and
// bytes, at most 10 % slower (spread measured 2026-11-27 on the reference lanes: x0.98..x1.05).
const FLOOR = 0.97;
const CEILING = 1.1;

let books;
let eliza;
before(async () => {
  books = await createConnectServer({ port: 0, h2cPort: 0, tlsPort: 0 });
  const ElizaService = registryOf(protoLoader.loadSync(ELIZA_PROTO)).getService('connectrpc.eliza.v1.ElizaService');
  eliza = http.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(ElizaService, { say: ({ sentence }) => ({ sentence: `You said ${sentence}` }) }),
    }),
  );
  await new Promise((resolve) => eliza.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  await books?.close();
  eliza?.close();
});

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
    for (const lane of CONNECT_LANES) {
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

test(
  'Eliza on @connectrpc/connect-node as your API under lan: every lane runs clean',
  { timeout: 120_000 },
  async (t) => {
    const { env, runDir, cleanup } = await cliEnv({ api: true });
    t.after(cleanup);
    const url = `http://127.0.0.1:${eliza.address().port}`;
    const args = [
      'run',
      'api',
      '--connect',
      url,
      '--proto',
      ELIZA_PROTO,
      '--call',
      'connectrpc.eliza.v1.ElizaService/Say',
    ];
    const r = await runCli(
      [...args, '--request', '{"sentence": "hello {{vu}}"}', '--profile', 'lan', '--load', 'smoke'],
      {
        env,
        timeoutMs: 100_000,
      },
    );
    assert.equal(r.exitCode, 0, `${r.stdout.slice(-3000)}${r.stderr}`);
    const doc = summaries(runDir).lan;
    for (const lane of CONNECT_LANES) {
      const rows = doc.rows.filter((x) => x.lane === lane);
      assert.ok(
        rows.some((x) => x.latency?.count > 0),
        `${lane} ran`,
      );
      assert.ok(
        rows.every((x) => !x.failures?.count),
        `${lane}: no failed call`,
      );
    }
  },
);

describe('bad input: one line naming what is at fault, exit 2, nothing left running', () => {
  test('each case', { timeout: 120_000 }, async (t) => {
    const { env, ports, cleanup } = await cliEnv({ api: true });
    t.after(cleanup);
    const base = `http://127.0.0.1:${books.port}`;
    const cases = [
      [
        'a dead endpoint',
        ['run', 'api', '--connect', 'http://127.0.0.1:9', '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/GetBook'],
        /^k6pack: Connect endpoint http:\/\/127\.0\.0\.1:9: cannot connect \(ECONNREFUSED\)/,
      ],
      ['no --proto', ['run', 'api', '--connect', base], /^k6pack: --connect needs --proto FILE/],
      ['not a URL', ['run', 'api', '--connect', '127.0.0.1:6080'], /^k6pack: --connect 127\.0\.0\.1:6080: not a URL/],
      [
        'a method the server does not serve',
        ['run', 'api', '--connect', base, '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/TopicInfo'],
        /^k6pack: Connect endpoint .*\/books\.v1\.Books\/TopicInfo: does not serve books\.v1\.Books\/TopicInfo over the Connect protocol \(unimplemented/,
      ],
      [
        'a URL where no Connect server is',
        ['run', 'api', '--connect', `${base}/nope`, '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/GetBook'],
        /^k6pack: Connect endpoint .*\/nope\/books\.v1\.Books\/GetBook: does not serve books\.v1\.Books\/GetBook over the Connect protocol \(HTTP 404/,
      ],
      [
        '--tls without --grpc',
        ['run', 'api', '--connect', base, '--tls', '--proto', BOOKS_PROTO, '--call', 'books.v1.Books/GetBook'],
        /^k6pack: --tls needs --grpc$/,
      ],
    ];
    for (const [what, args, message] of cases) {
      const r = await runCli([...args, '--profile', 'lan', '--load', 'smoke'], { env, timeoutMs: 60000 });
      assert.equal(r.exitCode, 2, `${what}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message, what);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
      await nothingLeft(env, ports);
    }
  });
});
