// Drain plugin for the TLS server. Apollo's ApolloServerPluginDrainHttpServer knows
// http and https servers only; an http2 secure server with allowHTTP1 carries
// HTTP/2 sessions, HTTP/1.1 sockets (ALPN fallback) and upgraded WebSockets, so:
// stop accepting, send GOAWAY to every session (in-flight streams finish), end idle
// HTTP/1.1 sockets and the others once their response is done, leave WebSockets to
// graphql-ws's dispose (close 1001), and destroy whatever is left after graceMs.
import { once } from 'node:events';

export function drainSecureServerPlugin(server, { graceMs }) {
  const sockets = new Set(); // every TCP socket, TLS handshake done or not
  const sessions = new Set(); // HTTP/2
  const http1 = new Map(); // TLS socket speaking HTTP/1.1 -> requests in flight
  const upgraded = new WeakSet(); // TLS sockets now carrying a WebSocket
  let stopping = false;

  const track = (set, item) => {
    set.add(item);
    item.once('close', () => set.delete(item));
  };
  server.on('connection', (socket) => track(sockets, socket));
  server.on('secureConnection', (tlsSocket) => {
    track(sockets, tlsSocket);
    if (tlsSocket.alpnProtocol === 'h2') return;
    http1.set(tlsSocket, 0);
    tlsSocket.once('close', () => http1.delete(tlsSocket));
  });
  server.on('session', (session) => {
    track(sessions, session);
    if (stopping) session.close();
  });
  server.on('upgrade', (_req, socket) => upgraded.add(socket));
  server.on('request', (req, res) => {
    const socket = req.socket;
    if (!http1.has(socket)) return; // HTTP/2 stream
    http1.set(socket, http1.get(socket) + 1);
    res.once('close', () => {
      const inFlight = http1.get(socket) - 1;
      if (!http1.has(socket)) return;
      http1.set(socket, inFlight);
      if (stopping && inFlight === 0) socket.end();
    });
  });

  async function stop() {
    stopping = true;
    const closed = server.listening ? once(server, 'close') : Promise.resolve();
    server.close();
    for (const session of sessions) session.close();
    for (const [socket, inFlight] of http1) if (inFlight === 0 && !upgraded.has(socket)) socket.end();
    const force = setTimeout(() => {
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
    }, graceMs);
    try {
      await closed;
    } finally {
      clearTimeout(force);
    }
  }

  return {
    async serverWillStart() {
      return { drainServer: stop };
    },
  };
}
