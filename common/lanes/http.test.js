import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atTls, framingOf, laneEntry, setupPhasesOf } from './catalogue.js';
import { HTTP_LANES, HTTP_TRANSPORTS } from './http.js';

test('the HTTP lanes: their transports, TLS and what a kept connection becomes over TLS', () => {
  assert.deepEqual(
    HTTP_LANES.map((l) => [l.name, l.transport, l.tls]),
    [
      ['http_fresh', 'http-fresh', false],
      ['http_keepalive', 'http-keepalive', false],
      ['https_fresh', 'http-fresh', true],
      ['https_keepalive', 'http-keepalive', true],
      ['http2', 'http2', true],
      ['http_poll', 'http-poll', false],
    ],
  );
  assert.ok(HTTP_LANES.every((l) => HTTP_TRANSPORTS[l.transport]));
  // k6 takes h2 wherever TLS offers it: grpc-vs-graphql's TLS=true.
  assert.deepEqual(atTls('http_keepalive', true), { transport: 'http2', tls: true });
  assert.deepEqual(atTls('http_keepalive', false), { transport: 'http-keepalive', tls: false });
  assert.deepEqual(atTls('http_fresh', true), { transport: 'http-fresh', tls: true });
  assert.equal(laneEntry('https_fresh').family, 'http');
});

test('HTTP set-up: TCP, TLS where the lane has it; HTTP/2 always runs over TLS', () => {
  assert.deepEqual(setupPhasesOf('http-fresh', false), ['tcp']);
  assert.deepEqual(setupPhasesOf('http-keepalive', true), ['tcp', 'tls']);
  assert.deepEqual(setupPhasesOf('http2', false), ['tcp', 'tls']);
  assert.deepEqual(laneEntry('https_fresh').phases, ['tcp', 'tls']);
});

test('HTTP framing: HTTP/1.1 headers, and HPACK-compressed ones on HTTP/2', () => {
  assert.deepEqual(framingOf('http-keepalive'), { req: 160, res: 300 });
  assert.deepEqual(framingOf('http-poll'), framingOf('http-fresh'));
  assert.deepEqual(framingOf('http2'), { req: 90, res: 140 });
  assert.equal(laneEntry('http2').framing, framingOf('http2'));
});
