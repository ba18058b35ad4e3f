// Your own API over the browser's RPC through the CLI, where the assertions are not
// timings (so this file runs beside others in the suite; the timed run is
// test/api-connect.test.js):
//   - connectrpc's Eliza on @connectrpc/connect-node (a server this project did not
//     write) as your API under lan: every lane runs clean;
//   - bad input: one line naming what is at fault, exit 2, nothing left running.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createServer as createConnectServer } from '../servers/connect/server.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { nothingLeft, summaries } from './helpers/api-run.js';
import { API_CONNECT_LANES, BOOKS_PROTO, ELIZA_PROTO, ELIZA_SERVICE, startEliza } from './helpers/connect.js';

let books;
let eliza;
before(async () => {
  books = await createConnectServer({ port: 0, h2cPort: 0, tlsPort: 0 });
  eliza = await startEliza();
});
after(async () => {
  await books?.close();
  eliza?.close();
});

test(
  'Eliza on @connectrpc/connect-node as your API under lan: every lane runs clean',
  { timeout: 120_000 },
  async (t) => {
    const { env, runDir, cleanup } = await cliEnv({ api: true });
    t.after(cleanup);
    const { url } = eliza;
    const args = ['run', 'api', '--connect', url, '--proto', ELIZA_PROTO, '--call', `${ELIZA_SERVICE}/Say`];
    const r = await runCli(
      [...args, '--request', '{"sentence": "hello {{vu}}"}', '--profile', 'lan', '--load', 'smoke'],
      {
        env,
        timeoutMs: 100_000,
      },
    );
    assert.equal(r.exitCode, 0, `${r.stdout.slice(-3000)}${r.stderr}`);
    const doc = summaries(runDir).lan;
    for (const lane of API_CONNECT_LANES) {
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
