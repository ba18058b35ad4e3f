// What a stream of events delivered, one definition for k6's clients (scenarios/lib/ws.js,
// grpc.js) and the CLI's discovery (lib/api/discover-graphql.js). Plain ES module.

// Events a second from the first event to the last (count - 1 intervals); null when it
// cannot be told: fewer than two events, or no time between them. floorMs: the shortest
// span counted (gRPC's clock in k6 ticks in whole ms: two messages in one tick are one ms
// apart, the rate then a lower bound).
export function eventsPerSecond(count, firstMs, lastMs, floorMs = 0) {
  const span = Math.max(floorMs, lastMs - firstMs);
  return count > 1 && span > 0 ? ((count - 1) * 1000) / span : null;
}
