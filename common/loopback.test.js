// Loopback addresses (common/loopback.js), as the k6 scripts and the CLI both check
// them: bare hosts, host:port, URLs, and the host k6 (Go's url.Parse) really connects
// to when the authority carries user info ('http://127.0.0.1:1@10.0.0.1/').
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostOf, isLoopback, isLoopbackHost } from './loopback.js';

test('isLoopbackHost: 127.0.0.0/8, localhost and ::1 (bracketed or not), any case', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '127.255.255.255', 'localhost', 'LocalHost', '::1', '[::1]'])
    assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['10.0.0.1', '128.0.0.1', '0.0.0.0', '127.0.0', 'localhost.example.com', 'example.com', '::2', ''])
    assert.equal(isLoopbackHost(host), false, host);
  // Not a string: read as its text.
  assert.equal(isLoopbackHost(undefined), false);
  assert.equal(isLoopbackHost(null), false);
});

test('hostOf: the host of a URL or host:port, after the last @ of the authority', () => {
  assert.equal(hostOf('http://127.0.0.1:14000/graphql'), '127.0.0.1');
  assert.equal(hostOf('127.0.0.1:15051'), '127.0.0.1');
  assert.equal(hostOf('wss://localhost/graphql?x=1#y'), 'localhost');
  assert.equal(hostOf('http://[::1]:8080/graphql'), '[::1]');
  assert.equal(hostOf('[::1]:15051'), '[::1]');
  assert.equal(hostOf('https://user:pw@example.com:443/x'), 'example.com');
  // User info that looks like a loopback host:port does not make the target one.
  assert.equal(hostOf('http://127.0.0.1:1@10.0.0.1/graphql'), '10.0.0.1');
  assert.equal(hostOf('example.com'), 'example.com');
});

test('isLoopback: URLs and host:port on this machine, and the ones that are not', () => {
  for (const target of [
    'http://127.0.0.1:14000/graphql',
    'ws://localhost:14000/graphql',
    'https://[::1]:14443/graphql',
    '127.0.0.1:15051',
    '[::1]:15051',
    'localhost',
  ])
    assert.equal(isLoopback(target), true, target);
  for (const target of [
    'http://10.0.0.1:14000/graphql',
    'http://127.0.0.1:1@10.0.0.1/graphql',
    'grpc.example.com:443',
    'http://localhost.evil.com/graphql',
  ])
    assert.equal(isLoopback(target), false, target);
});
