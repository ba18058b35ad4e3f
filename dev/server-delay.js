// Test-only: slows the reference servers down on purpose, for the tests and benches
// that must see a slower server (the gate catching drift, an open workload's queue).
// Nothing in the pack loads it: start the servers with
//   NODE_OPTIONS=--import=<this file's URL>
// and one of
//   K6PACK_TEST_DELAY_MS=<ms>                  every request waits <ms> before the server
//                                              sees it: HTTP/1.1 and HTTP/2 requests, gRPC
//                                              calls, graphql-transport-ws messages
//   K6PACK_TEST_DELAY_PER_INFLIGHT_MS=<ms>     an HTTP/1.1 or HTTP/2 request waits <ms> for
//                                              every request in flight, itself included: a
//                                              server that slows down with load
// It does nothing in any other process, or without either variable.
import net from 'node:net';
import { setting } from '../common/settings.js';

const fixed = setting(process.env, 'K6PACK_TEST_DELAY_MS');
const perInflight = setting(process.env, 'K6PACK_TEST_DELAY_PER_INFLIGHT_MS');
const isServer = /servers[\\/](graphql|grpc)[\\/]server\.js$/.test(process.argv[1] || '');

if (isServer && (fixed > 0 || perInflight > 0)) {
  let inflight = 0;
  const DELAYED = Symbol('k6pack delayed');
  const later = (ms, fn) => (ms > 0 ? setTimeout(fn, ms) : fn());
  const emit = net.Server.prototype.emit;
  net.Server.prototype.emit = function delayed(event, ...args) {
    // HTTP/2 (h2 GraphQL and gRPC): a 'stream' carries the request; the HTTP/2
    // compatibility API then emits 'request' for it, which must not wait again.
    if (event === 'stream' || (event === 'request' && !(args[0] && args[0].stream && args[0].stream[DELAYED]))) {
      const first = args[0];
      if (event === 'stream') first[DELAYED] = true;
      inflight++;
      const done = () => inflight--;
      if (event === 'stream') first.once('close', done);
      else args[1].once('close', done);
      later(fixed + perInflight * inflight, () => emit.call(this, event, ...args));
      return true;
    }
    return emit.call(this, event, ...args);
  };
  if (fixed > 0) {
    // graphql-transport-ws: every message a client sends waits too.
    const { WebSocket } = await import('ws');
    const wsEmit = WebSocket.prototype.emit;
    WebSocket.prototype.emit = function delayedMessage(event, ...args) {
      if (event === 'message') {
        setTimeout(() => wsEmit.call(this, event, ...args), fixed);
        return true;
      }
      return wsEmit.call(this, event, ...args);
    };
  }
}
