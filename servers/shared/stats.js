// Process numbers for GET /healthz and Query.serverStats (the soak scenario samples them).
export function processStats() {
  return {
    rssBytes: process.memoryUsage.rss(),
    heapUsedBytes: process.memoryUsage().heapUsed,
    uptimeSeconds: process.uptime(),
  };
}
