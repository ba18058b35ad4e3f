// What a dead process's log says about its death (common/log-tail.js): a Go panic
// with its function and frame, a fatal error or signal, a Node error, else the last
// lines that are not routine log records; and the same as one line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deathLine, deathLines } from './log-tail.js';

const GO_PANIC = `{"level":"info","name":"graphql","msg":"Started proxy"}
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6c4e2a]

goroutine 42 [running]:
github.com/Shopify/toxiproxy/v2.(*ToxicLink).read(0xc000190000, 0xc0001a2000)
	/src/toxiproxy/link.go:123 +0x2a
github.com/Shopify/toxiproxy/v2.(*ToxicLink).Start.func1()
	/src/toxiproxy/link.go:80 +0x45
created by github.com/Shopify/toxiproxy/v2.(*ToxicLink).Start
`;

const NODE_ERROR = `listening on 127.0.0.1:14000
file:///srv/servers/graphql/index.js:12
    throw new Error('boom');
          ^

Error: first
    at main (file:///srv/servers/graphql/index.js:12:11)
TypeError: Cannot read properties of undefined (reading 'port')
    at start (file:///srv/servers/graphql/index.js:40:3)

Node.js v20.11.0
`;

test('a Go panic: the panic, the function it happened in and its file:line', () => {
  assert.deepEqual(deathLines(GO_PANIC), [
    'panic: runtime error: invalid memory address or nil pointer dereference',
    'github.com/Shopify/toxiproxy/v2.(*ToxicLink).read(0xc000190000, 0xc0001a2000)',
    '/src/toxiproxy/link.go:123 +0x2a',
  ]);
  assert.deepEqual(deathLines(GO_PANIC, 1), [
    'panic: runtime error: invalid memory address or nil pointer dereference',
  ]);
});

test("a Go runtime's fatal error or fatal signal counts as its panic", () => {
  assert.deepEqual(
    deathLines(
      'starting\nfatal error: concurrent map writes\n\ngoroutine 7 [running]:\nmain.loop()\n\t/src/main.go:9 +0x1\n',
    ),
    ['fatal error: concurrent map writes', 'main.loop()', '/src/main.go:9 +0x1'],
  );
  // No frame in the log: the line alone.
  assert.deepEqual(deathLines('ok\nSIGABRT: abort\nPC=0x4 m=0 sigcode=0\n'), ['SIGABRT: abort']);
});

test("a Node process: the last error line (with or without a code), not the stack's", () => {
  assert.deepEqual(deathLines(NODE_ERROR), ["TypeError: Cannot read properties of undefined (reading 'port')"]);
  assert.deepEqual(
    deathLines('Error [ERR_MODULE_NOT_FOUND]: Cannot find package x\n    at resolve (node:internal)\n'),
    ['Error [ERR_MODULE_NOT_FOUND]: Cannot find package x'],
  );
  assert.deepEqual(deathLines('grpc.ServiceError: 14 UNAVAILABLE: no connection'), [
    'grpc.ServiceError: 14 UNAVAILABLE: no connection',
  ]);
});

test("otherwise the log's last lines, routine JSON records left out; nothing for an empty log", () => {
  const log = [
    '{"level":"info","msg":"Started proxy","name":"grpc"}',
    'listen tcp 127.0.0.1:18474: bind: address already in use',
    '{"level":"debug","msg":"Accepted client"}',
    '  ',
    'shutting down',
    '{"level":"error","msg":"cannot open"}',
    '{"level":"trace","msg":"read"}',
  ].join('\n');
  assert.deepEqual(deathLines(log), [
    'listen tcp 127.0.0.1:18474: bind: address already in use',
    'shutting down',
    '{"level":"error","msg":"cannot open"}',
  ]);
  assert.deepEqual(deathLines(log, 1), ['{"level":"error","msg":"cannot open"}']);
  assert.deepEqual(deathLines(''), []);
  assert.deepEqual(deathLines(undefined), []);
  assert.deepEqual(deathLines('\n \n\t\n'), []);
  assert.deepEqual(deathLines('{"level":"info","msg":"Started proxy"}\n'), []);
});

test('deathLine: the same lines joined into one', () => {
  assert.equal(
    deathLine(GO_PANIC),
    'panic: runtime error: invalid memory address or nil pointer dereference | github.com/Shopify/toxiproxy/v2.(*ToxicLink).read(0xc000190000, 0xc0001a2000) | /src/toxiproxy/link.go:123 +0x2a',
  );
  assert.equal(deathLine('a\nb\nc\nd', 2), 'c | d');
  assert.equal(deathLine(''), '');
});
