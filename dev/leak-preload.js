// Test-only: a deliberate memory leak, to prove the soak catches one
// (test/soak.test.js, `node bench/soak.js --leak <bytes>`). Nothing in the pack
// loads it: a stack started with
//   NODE_OPTIONS=--import=<this file's URL> LEAK_TEST_BYTES_PER_REQUEST=<n>
// keeps <n> touched bytes per HTTP request the GraphQL server answers
// (HTTP/1.1 and HTTP/2, via net.Server's 'request' event) and never frees them.
// Those are Buffers, outside the JS heap (RSS shows them, heapUsed does not);
// LEAK_TEST_HEAP_BYTES_PER_REQUEST=<m> also keeps <m> bytes per request on the
// JS heap (an array of doubles), which heapUsed after a GC shows.
// It does nothing in any other process, or without either variable.
import net from 'node:net';
import { setting } from '../common/settings.js';

const bytes = setting(process.env, 'LEAK_TEST_BYTES_PER_REQUEST');
const heapBytes = setting(process.env, 'LEAK_TEST_HEAP_BYTES_PER_REQUEST');
if ((bytes > 0 || heapBytes > 0) && /servers[\\/]graphql[\\/]server\.js$/.test(process.argv[1] || '')) {
  const kept = [];
  const emit = net.Server.prototype.emit;
  net.Server.prototype.emit = function leakOnRequest(event, ...args) {
    if (event === 'request') {
      // Filled, so the pages are really resident (a zeroed allocation may not be).
      if (bytes > 0) kept.push(Buffer.alloc(bytes, 1));
      // Doubles (not small integers): 8 bytes each in the array's backing store.
      if (heapBytes > 0) kept.push(Array.from({ length: Math.ceil(heapBytes / 8) }, (_, i) => i + 0.5));
    }
    return emit.call(this, event, ...args);
  };
}
