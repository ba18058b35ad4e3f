// What discovery needs from the network, Node side: a TLS handshake that says which
// protocols the server offers by ALPN and whether its certificate is trusted, one-line
// reasons for a connection that fails, and the median of a series of measurements.
import { connect as tcpConnect, isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { median } from '../../common/quantiles.js';
import { UsageError } from '../cli-support.js';

export const PROBE_TIMEOUT_MS = 5000;

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  'EAI_AGAIN',
  'EPIPE',
]);
const CERT = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export const isUnreachable = (err) => UNREACHABLE.has(err && err.code);
export const isCertError = (err) => CERT.has(err && err.code);

// 'host:port' -> { host, port } (IPv6 in brackets).
export function splitHostPort(hostport) {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(hostport);
  return { host: m[1], port: Number(m[2]) };
}

// The one line for an endpoint that cannot be reached.
export function unreachable(what, target, flag, err) {
  return new UsageError(
    `${what} ${target}: cannot connect (${err.code || err.message}): start your server, or fix ${flag}`,
  );
}

// A TLS handshake with `hostport`. -> { alpn: the protocol the server chose from `offer`
// (null: none), trusted }. An untrusted certificate throws (one line saying to add
// --insecure) unless insecure; a refused connection or a server that does not speak TLS throws too.
export async function tlsProbe(hostport, { what, target, flag, insecure, offer = ['h2', 'http/1.1'] }) {
  const { host, port } = splitHostPort(hostport);
  const attempt = (rejectUnauthorized) =>
    new Promise((resolve, reject) => {
      const sock = tlsConnect({
        host,
        port,
        servername: isIP(host) ? undefined : host,
        ALPNProtocols: offer,
        rejectUnauthorized,
        timeout: PROBE_TIMEOUT_MS,
      });
      sock.once('secureConnect', () => {
        const alpn = sock.alpnProtocol || null;
        sock.destroy();
        resolve({ alpn, trusted: rejectUnauthorized });
      });
      sock.once('timeout', () => {
        sock.destroy();
        reject(Object.assign(new Error('no TLS handshake'), { code: 'ETIMEDOUT' }));
      });
      sock.once('error', (err) => {
        sock.destroy();
        reject(err);
      });
    });
  try {
    return await attempt(true);
  } catch (err) {
    if (isUnreachable(err)) throw unreachable(what, target, flag, err);
    if (!isCertError(err))
      throw new UsageError(`${what} ${target}: no TLS handshake (${err.code || err.message}): is it a TLS port?`);
    if (!insecure)
      throw new UsageError(
        `${what} ${target}: the server's certificate is not trusted (${err.code}): add --insecure to accept it (k6 then skips verifying this API's certificates)`,
      );
    return attempt(false);
  }
}

// A TCP connection to `hostport`, or one line saying it cannot be reached.
export async function tcpProbe(hostport, { what, target, flag }) {
  const { host, port } = splitHostPort(hostport);
  await new Promise((resolve, reject) => {
    const sock = tcpConnect({ host, port, timeout: PROBE_TIMEOUT_MS });
    sock.once('connect', () => {
      sock.destroy();
      resolve();
    });
    sock.once('timeout', () => {
      sock.destroy();
      reject(unreachable(what, target, flag, { code: 'ETIMEDOUT' }));
    });
    sock.once('error', (err) => reject(unreachable(what, target, flag, err)));
  });
}

// The median of a series of measurements (common/quantiles.js: the pack's one definition).
export { median };

// Calls an operation is measured on, after the one that opens the connection.
export const CALLS = 20;
// Per operation: a slow API gets fewer calls, never a long wait.
export const MEASURE_BOUND_MS = 15000;

// Discovery's one measuring loop, for every protocol: call(i) up to CALLS + 1 times on one
// connection, within MEASURE_BOUND_MS; the first call opens the connection and warms the
// server, and is not measured. Each answer is { ms, timing (the server's own ms, or null) };
// call() throws what stops discovery (a refusal, a method not served) and keeps the rest
// (bytes, a first error) itself. The server's time is the median of what the server says
// (carried by `timingFrom`: its Server-Timing header or trailer) when it says so for at
// least half of the calls, else the median round trip.
// -> { serverMs, serverFrom, calls }
export async function measureCalls(call, { timingFrom, signal }) {
  const rounds = [];
  const timings = [];
  const deadline = Date.now() + MEASURE_BOUND_MS;
  for (let i = 0; i <= CALLS && Date.now() < deadline; i++) {
    signal?.throwIfAborted();
    const r = await call(i);
    if (i === 0) continue;
    rounds.push(r.ms);
    if (r.timing !== null && r.timing !== undefined) timings.push(r.timing);
  }
  const fromServer = timings.length > 0 && timings.length >= rounds.length / 2;
  return {
    serverMs: round3(median(fromServer ? timings : rounds)),
    serverFrom: fromServer ? timingFrom : 'round trip',
    calls: rounds.length,
  };
}

export const round3 = (x) => Math.round(x * 1000) / 1000;

// HTTP statuses and graphql-ws close codes that mean "who are you?", and the one line
// for them: the endpoint, what it said, and the flag that supplies credentials.
export const AUTH_STATUS = new Set([401, 403]);
export const AUTH_CLOSE = new Set([4401, 4403]);
const SUPPLY = {
  header: `--header 'Authorization: Bearer \${API_TOKEN}' (or "headers" in the --api file)`,
  initPayload: `--init-payload '{"authorization": "Bearer \${API_TOKEN}"}' (or "initPayload" in the --api file)`,
  metadata: `--header 'authorization: Bearer \${API_TOKEN}' (or "metadata" in the --api file)`,
};
// given: the names of the credentials sent on this channel (none: [])
export function authRefused(what, target, said, { given = [], supply = 'header' } = {}) {
  const fix = given.length
    ? `it refused ${given.join(', ')}: check their values (the environment variables they name), or give the right ones with ${SUPPLY[supply]}`
    : `it wants credentials: give them with ${SUPPLY[supply]}`;
  return new UsageError(`${what} ${target}: ${said} during discovery: ${fix}`);
}
