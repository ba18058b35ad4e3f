// Process numbers for GraphQL's GET /healthz and Query.serverStats and gRPC's Stats
// (the soak scenario samples them to catch leaks). With `gc` and a process run
// with --expose-gc, garbage is collected first, so tests can measure what is
// retained; without --expose-gc the flag does nothing.
export function processStats({ gc = false } = {}) {
  if (gc && typeof globalThis.gc === 'function') globalThis.gc();
  return {
    rssBytes: process.memoryUsage.rss(),
    heapUsedBytes: process.memoryUsage().heapUsed,
    uptimeSeconds: process.uptime(),
  };
}
