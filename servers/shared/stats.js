// Process numbers for GraphQL's GET /healthz and Query.serverStats and gRPC's Stats
// (the soak scenario samples them to catch leaks).
export function processStats() {
  return {
    rssBytes: process.memoryUsage.rss(),
    heapUsedBytes: process.memoryUsage().heapUsed,
    uptimeSeconds: process.uptime(),
  };
}
