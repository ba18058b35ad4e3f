import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { POLICIES } from '../policies.js';
import {
  LANES,
  laneEntry,
  messageSegmentsOf,
  requestCpuMsOf,
  setupPhasesOf,
  TRANSPORTS,
  wholeMsOf,
} from './catalogue.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('every lane once, with a known transport, family, policy and client', () => {
  assert.equal(new Set(LANES.map((l) => l.name)).size, LANES.length);
  for (const l of LANES) {
    assert.ok(TRANSPORTS[l.transport], l.name);
    assert.ok(['http', 'ws', 'grpc', 'rpc-web'].includes(l.family), l.name);
    if (l.policy) assert.ok(POLICIES[l.policy], `${l.name}: no policy ${l.policy}`);
    if (l.api) assert.ok(['http', 'ws', 'grpc', 'connect'].includes(l.api), l.name);
    for (const file of l.client.split(', ').map((c) => c.split(' ')[0]))
      assert.ok(existsSync(`${ROOT}${file}`), `${l.name}: ${file}`);
  }
  assert.equal(laneEntry(laneEntry('ws')), laneEntry('ws'));
});

test('a lane or transport the catalogue does not know is an error naming the known ones', () => {
  assert.throws(() => laneEntry('http3'), /no lane "http3".*http_fresh/);
  assert.throws(() => setupPhasesOf('http3', true), /no transport "http3".*http-fresh/);
});

test("a transport's cost terms: the CPU a request adds, the least segments of a message, whole-ms timing", () => {
  // bench/scale.js's knees (common/lanes/http.js): HTTP/2 +1.1 ms, gRPC +0.45 ms, a fresh gRPC
  // channel +1.75 ms, a fresh TCP connection +1.3 ms; HTTP/1.1 keep-alive is the reference.
  assert.deepEqual(Object.fromEntries(Object.keys(TRANSPORTS).map((t) => [t, requestCpuMsOf(t)])), {
    'http-fresh': 1.3,
    'http-keepalive': 0,
    'http-poll': 0,
    http2: 1.1,
    ws: 0,
    grpc: 0.45,
    'grpc-fresh': 1.75,
    'grpc-stream': 0,
    'grpc-bidi': 0,
    'grpc-client-stream': 0,
  });
  // HTTP/2 frames and gRPC messages write headers and data apart.
  assert.deepEqual(
    Object.keys(TRANSPORTS).filter((t) => messageSegmentsOf(t) === 2),
    ['http2', 'grpc', 'grpc-fresh', 'grpc-stream', 'grpc-bidi', 'grpc-client-stream'],
  );
  assert.ok(Object.keys(TRANSPORTS).every((t) => [1, 2].includes(messageSegmentsOf(t))));
  // k6's gRPC and WebSocket clients time in whole milliseconds (scenarios/lib/grpc.js, ws.js).
  assert.deepEqual(Object.keys(TRANSPORTS).filter(wholeMsOf), [
    'ws',
    'grpc',
    'grpc-fresh',
    'grpc-stream',
    'grpc-bidi',
    'grpc-client-stream',
  ]);
  assert.equal(requestCpuMsOf('no-such'), 0);
  assert.equal(wholeMsOf('no-such'), false);
});
