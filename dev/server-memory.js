// A reference server's memory, after a full GC where the server allows it
// (servers run by tests and benches with --expose-gc answer ?gc=1 / metadata gc: 1).
// server: { kind: 'graphql' | 'grpc', port }. Resolves { rssBytes, heapUsedBytes }.
import { booksClient, unaryCall } from '../servers/grpc/client.js';

export async function serverMemory(server) {
  if (server.kind === 'graphql') {
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz?gc=1`);
    const { rssBytes, heapUsedBytes } = await res.json();
    return { rssBytes, heapUsedBytes };
  }
  const client = booksClient(`127.0.0.1:${server.port}`);
  try {
    const { message } = await unaryCall(client, 'Stats', {}, { metadata: { gc: '1' } });
    return { rssBytes: message.rss_bytes, heapUsedBytes: message.heap_used_bytes };
  } finally {
    client.close();
  }
}
