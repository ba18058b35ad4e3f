// The browser-RPC lanes' client (scenarios/lib/rpc-web.js, run by the real k6) against
// servers the pack did not write, and against answers that break the protocols:
//  - a @connectrpc/connect-node server of connectrpc's Eliza (test/fixtures/eliza.proto):
//    Say over Connect JSON, Connect protobuf and gRPC-Web, and an error over each;
//  - a server that answers gRPC-Web without its trailer frame, with a truncated frame,
//    Connect with another content type, and one whose trailers never come (the call
//    ends at its timeout): each a failed call with one line saying what was wrong.
// And the reference lanes under lan, where a row is a millisecond or two and the
// assertions are not timings: every browser-RPC lane of grpc-vs-graphql runs clean
// (test/connect-lanes.test.js times them under lte).
// (The reference Connect server's own bad-input answers: test/connect-server.test.js.)
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runK6 } from '../dev/run-k6.js';
import { useTestStack } from '../dev/test-stack.js';
import { ROOT } from '../lib/tools.js';
import { ELIZA_SERVICE, GRPC_VS_GRAPHQL_RPC_LANES, startEliza } from './helpers/connect-servers.js';

const SCRIPT = join(ROOT, 'test', 'k6', 'rpc-web-probe.js');
const stack = useTestStack();

const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)));

let eliza;
let broken;
const hung = new Set();
before(async () => {
  eliza = await startEliza();
  // Answers as a broken server would, by the method's name.
  broken = http.createServer((req, res) => {
    req.resume();
    const frame = (flag, bytes) => Buffer.concat([Buffer.from([flag, 0, 0, 0, bytes.length]), bytes]);
    const message = Buffer.from([0x0a, 0x02, 0x68, 0x69]); // sentence: "hi"
    const web = { 'content-type': 'application/grpc-web+proto' };
    // /bad.v1.<Case>/Say
    switch (req.url.split('/')[1].split('.').pop()) {
      case 'NoTrailer':
        res.writeHead(200, web);
        return res.end(frame(0, message));
      case 'Truncated':
        res.writeHead(200, web);
        return res.end(Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), message]));
      case 'Html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html><body>a proxy answered</body></html>');
      case 'Hang':
        res.writeHead(200, web);
        res.write(frame(0, message));
        hung.add(res);
        return undefined;
      default:
        res.writeHead(404);
        return res.end();
    }
  });
});
after(() => {
  for (const res of hung) res.destroy();
  eliza?.close();
  broken?.close();
});

async function calls(url, cases) {
  const r = await runK6(SCRIPT, { env: { URL: url, CASES: JSON.stringify(cases) }, timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  const results = {};
  for (const m of `${r.stdout}\n${r.stderr}`.matchAll(/RESULT ([A-Za-z0-9+/=]+)/g)) {
    const one = JSON.parse(Buffer.from(m[1], 'base64').toString('utf8'));
    results[one.name] = one;
  }
  return results;
}

const PROTOCOLS = ['connect-json', 'connect-proto', 'grpc-web'];

test(
  "Eliza on @connectrpc/connect-node: Say over each protocol, and its error as Connect's code and message",
  { timeout: 90_000 },
  async () => {
    const { url } = eliza;
    const say = (protocol, sentence) => ({
      name: `${protocol} ${sentence || 'empty'}`,
      protocol,
      service: ELIZA_SERVICE,
      method: 'Say',
      request: { sentence },
    });
    const r = await calls(
      url,
      PROTOCOLS.flatMap((p) => [say(p, 'I feel fine'), say(p, '')]),
    );
    for (const p of PROTOCOLS) {
      const good = r[`${p} I feel fine`];
      assert.ok(good?.ok, `${p}: ${JSON.stringify(good)}`);
      assert.equal(good.message.sentence, 'Why do you say "I feel fine"?');
      const bad = r[`${p} empty`];
      assert.equal(bad?.ok, false, `${p}: an empty sentence is refused`);
      assert.match(bad.reason, /invalid_argument: say something/, p);
    }
  },
);

test(
  'broken answers: no trailer frame, a truncated frame, another content type, trailers that never come',
  { timeout: 90_000 },
  async () => {
    const url = await listen(broken);
    const cases = [
      ['no trailer', 'grpc-web', 'NoTrailer'],
      ['truncated', 'grpc-web', 'Truncated'],
      ['html', 'connect-json', 'Html'],
      ['html proto', 'connect-proto', 'Html'],
      ['hang', 'grpc-web', 'Hang'],
    ].map(([name, protocol, which]) => ({
      name,
      protocol,
      service: `bad.v1.${which}`,
      method: 'Say',
      request: { sentence: 'x' },
      timeout: '2s',
    }));
    const r = await calls(url, cases);
    assert.match(r['no trailer'].reason, /^no trailer frame: the answer ended after 9 bytes without grpc-status$/);
    assert.match(r.truncated.reason, /^truncated frame: 100 bytes announced, 4 came$/);
    assert.equal(r.html.reason, "the answer's content type is text/html, not application/json");
    assert.equal(r['html proto'].reason, "the answer's content type is text/html, not application/proto");
    assert.match(r.hang.reason, /request timeout/);
    for (const [name, one] of Object.entries(r)) {
      assert.equal(one.ok, false, name);
      assert.ok(!one.reason.includes('\n'), `${name}: one line: ${one.reason}`);
    }
  },
);

test('grpc-vs-graphql under lan: every browser-RPC lane runs clean, small and big', { timeout: 180_000 }, async () => {
  const r = await runK6(join(ROOT, 'scenarios', 'grpc-vs-graphql.js'), {
    env: { ...stack.env, LOAD: 'ci', STEPS: '1', PROFILE: 'lan', LANES: GRPC_VS_GRAPHQL_RPC_LANES.join(',') },
    timeoutMs: 150_000,
  });
  // Under lan a busy machine may cross a lan budget (docs/known-limits.md): 0 or 99.
  assert.ok([0, 99].includes(r.code), `${r.stdout}\n${r.stderr.slice(-3000)}`);
  const m = r.summary.metrics;
  for (const lane of GRPC_VS_GRAPHQL_RPC_LANES) {
    // op_failed is a rate of failures: its "passes" are failed operations.
    assert.equal(m[`op_failed{scenario:${lane}_c1}`].passes, 0, `${lane}: no failed call`);
    for (const payload of ['small', 'big']) {
      const rows = ['warm', 'cold'].map(
        (conn) => m[`op_duration{scenario:${lane}_c1,payload:${payload},conn:${conn}}`],
      );
      assert.ok(
        rows.some((r) => r?.count > 0),
        `${lane} ${payload} ran`,
      );
    }
  }
});
