// Each server's heap after a full garbage collection, sampled over a run: what
// a server retains, where RSS also counts pages V8 and malloc have taken and not
// handed back yet (they keep taking them for a while before RSS levels off).
// The stack's servers must run with --expose-gc (serverEnv: withExposeGc()); they are
// asked directly, not through Toxiproxy: /healthz?gc=1 and gRPC Stats with
// metadata gc: 1 (dev/server-memory.js).
import { serverMemory } from './server-memory.js';

// serverEnv that makes the GraphQL server leak `bytes` per HTTP request in
// Buffers, and `heapBytes` more on the JS heap (dev/leak-preload.js, a test-only
// preload: the server itself has no leak switch).
export const leakEnv = (bytes, { heapBytes = 0 } = {}) => ({
  NODE_OPTIONS: `--import=${new URL('./leak-preload.js', import.meta.url).href}`,
  LEAK_TEST_BYTES_PER_REQUEST: String(bytes),
  LEAK_TEST_HEAP_BYTES_PER_REQUEST: String(heapBytes),
});

// serverEnv plus --expose-gc, keeping NODE_OPTIONS it already has (e.g. leakEnv's preload).
export function withExposeGc(serverEnv = {}) {
  return { ...serverEnv, NODE_OPTIONS: ['--expose-gc', serverEnv.NODE_OPTIONS].filter(Boolean).join(' ') };
}

// Starts sampling both servers of `stack` every `everyMs` (at most maxSamples
// rounds); resolves to a stop() that ends it and resolves the samples:
// [{ server: 'graphql' | 'grpc', time (ms), heapUsedBytes, rssBytes }].
// A failed sample (a server busy past the timeout) is skipped.
export function sampleHeap(stack, { everyMs, maxSamples }) {
  const points = [];
  let stopped = false;
  let wake = () => {};
  const servers = [
    ['graphql', stack.ports.GRAPHQL_PORT],
    ['grpc', stack.ports.GRPC_PORT],
  ];
  // On a fixed schedule (a round every everyMs from the start), not everyMs after each round:
  // a round forces a GC in both servers, which a busy machine stretches, and a wait after it
  // would thin the samples (bench.test.js counts them over a 30 s soak).
  const start = Date.now();
  const loop = (async () => {
    for (let i = 0; i < maxSamples && !stopped; i++) {
      for (const [server, port] of servers) {
        try {
          const m = await withTimeout(serverMemory({ kind: server, port }), 10000);
          points.push({ server, time: Date.now(), ...m });
        } catch {
          // skipped: the next round samples again
        }
      }
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.max(0, start + (i + 1) * everyMs - Date.now())).unref();
      });
    }
  })();
  return async function stop() {
    stopped = true;
    wake();
    await loop;
    return points;
  };
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
