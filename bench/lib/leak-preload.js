// Test-only: a deliberate memory leak, to prove the soak catches one
// (test/soak.test.js, `node bench/soak.js --leak <bytes>`). Nothing in the pack
// loads it: a stack started with
//   NODE_OPTIONS=--import=<this file's URL> LEAK_TEST_BYTES_PER_REQUEST=<n>
// keeps <n> touched bytes per HTTP request the GraphQL server answers
// (HTTP/1.1 and HTTP/2, via net.Server's 'request' event) and never frees them.
// It does nothing in any other process, or without LEAK_TEST_BYTES_PER_REQUEST.
import net from 'node:net';

const bytes = Number(process.env.LEAK_TEST_BYTES_PER_REQUEST || 0);
if (bytes > 0 && /servers[\\/]graphql[\\/]server\.js$/.test(process.argv[1] || '')) {
  const kept = [];
  const emit = net.Server.prototype.emit;
  net.Server.prototype.emit = function leakOnRequest(event, ...args) {
    // Filled, so the pages are really resident (a zeroed allocation may not be).
    if (event === 'request') kept.push(Buffer.alloc(bytes, 1));
    return emit.call(this, event, ...args);
  };
}
