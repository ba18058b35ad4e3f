import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atTls, framingOf, laneEntry } from './catalogue.js';
import { RPC_WEB_LANES, RPC_WEB_PROTOCOLS } from './rpc-web.js';

test('each protocol kept, fresh and on HTTP/2 (gRPC-Web kept only), on the HTTP transports', () => {
  assert.deepEqual(
    RPC_WEB_LANES.map((l) => [l.name, l.transport, l.tls, l.protocol]),
    [
      ['connect_json', 'http-keepalive', false, 'connect-json'],
      ['connect_json_fresh', 'http-fresh', false, 'connect-json'],
      ['connect_json_h2', 'http2', true, 'connect-json'],
      ['connect_proto', 'http-keepalive', false, 'connect-proto'],
      ['connect_proto_fresh', 'http-fresh', false, 'connect-proto'],
      ['connect_proto_h2', 'http2', true, 'connect-proto'],
      ['grpc_web', 'http-keepalive', false, 'grpc-web'],
    ],
  );
  assert.ok(RPC_WEB_LANES.every((l) => l.variant === l.protocol));
  assert.deepEqual(
    RPC_WEB_LANES.filter((l) => l.api === 'connect').map((l) => l.name),
    ['connect_json', 'connect_proto', 'grpc_web'],
  );
  assert.deepEqual(atTls('grpc_web', true), { transport: 'http2', tls: true });
});

test("a protocol's framing on HTTP/1.1 and HTTP/2, and its messages' bytes", () => {
  assert.deepEqual(framingOf('http-keepalive', 'grpc-web'), { req: 170, res: 240 });
  assert.deepEqual(framingOf('http-fresh', 'connect-proto'), { req: 180, res: 210 });
  assert.deepEqual(framingOf('http2', 'connect-json'), { req: 50, res: 60 });
  assert.deepEqual(laneEntry('connect_proto_h2').framing, { req: 50, res: 60 });
  for (const p of Object.values(RPC_WEB_PROTOCOLS)) {
    assert.ok(p.getBook.reqBytes > 0 && p.getBook.resBytes > p.getBook.reqBytes);
    assert.ok(p.payload.req > 0 && p.payload.res > 0);
  }
});
