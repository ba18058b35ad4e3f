// Bounds on clients that are slow to send what they owe (slowloris), for both servers.
//
// A client gets SLOW_CLIENT_MS for each step of getting a request to the server:
// the TLS handshake, the HTTP/2 connection preface, the request headers, the
// request body. Why 40 s: the pack's own clients give up after 30 s
// (HTTP_TIMEOUT, WS_TIMEOUT_MS, GRPC_TIMEOUT), so the server never cuts a request
// a client still waits for; in particular the stall fault (nothing the client
// sends arrives) still ends at the client's own timeout, as its profile says. And
// a 1 MiB body (LIMITS.MAX_BODY_BYTES) over 2G's 256 kbit/s takes 33 s.
import http2 from 'node:http2';

export const SLOW_CLIENT_MS = 40_000;

// How often Node checks its HTTP/1.1 header and request timeouts (default 30 s,
// which would let a slow client hold its connection for up to 70 s).
export const TIMEOUT_CHECK_MS = 1_000;

export const slowClientSeconds = () => SLOW_CLIENT_MS / 1000;

// An HTTP/2 server (node:http2, also those grpc-js creates): a session whose
// client has not sent its connection preface (the SETTINGS frame) within `ms` gets
// a GOAWAY saying so and is closed. Node itself waits for it forever.
export function requirePrefaceWithin(server, ms = SLOW_CLIENT_MS) {
  server.on('session', (session) => {
    const timer = setTimeout(() => {
      if (session.destroyed) return;
      const why = Buffer.from(`no HTTP/2 connection preface (SETTINGS) within ${ms / 1000} s`);
      session.goaway(http2.constants.NGHTTP2_PROTOCOL_ERROR, 0, why);
      session.close();
      setTimeout(() => session.destroy(), 1000).unref(); // if the GOAWAY cannot be flushed
    }, ms);
    timer.unref();
    session.once('remoteSettings', () => clearTimeout(timer));
    session.once('close', () => clearTimeout(timer));
  });
}
