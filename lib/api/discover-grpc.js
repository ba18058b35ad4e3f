// Discovery of a gRPC endpoint, Node side, before any k6 run: it answers (plaintext, or
// TLS with --tls and a trusted certificate or --insecure), it serves each method (--call),
// and each method's bytes and server time under lan at one VU: the median of CALLS calls on
// a warm channel, from a `server-timing` trailer when the server sends one, else from
// the round trip. A server-streaming call counts until its stream ends.
import grpc from '@grpc/grpc-js';
import { parseServerTiming, serverTotal } from '../../common/server-timing.js';
import { UsageError } from '../cli-support.js';
import { authRefused, measureCalls, PROBE_TIMEOUT_MS, tcpProbe, tlsProbe } from './probe.js';
import { encodeRequest } from './proto-method.js';
import { DISCOVERY_VU, variableSource } from '../../common/variables.js';

const STATUS = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));
export const statusText = (code, details) =>
  `gRPC status ${STATUS[code] || code} (${code})${details ? `: ${details}` : ''}`;

// A client for the one method whose response deserializer counts the bytes it decodes.
function clientFor(m, addr, credentials) {
  const seen = { bytes: 0 };
  const def = { ...m.def, responseDeserialize: (buf) => ((seen.bytes += buf.length), m.def.responseDeserialize(buf)) };
  const Client = grpc.makeGenericClientConstructor({ call: def }, m.service);
  return { client: new Client(addr, credentials, { 'grpc.max_receive_message_length': 64 * 1024 * 1024 }), seen };
}

// The credentials' metadata as grpc-js's.
function metadataFor(values) {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(values)) md.set(k, v);
  return md;
}
const AUTH_CODES = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED]);

// One call. -> { ms, status, details, timing (server-timing), messages }
function callOnce(client, m, message, metadata) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const deadline = new Date(Date.now() + PROBE_TIMEOUT_MS * 2);
    let messages = 0;
    let timing = null;
    const done = (status) =>
      resolve({
        ms: Number(process.hrtime.bigint() - t0) / 1e6,
        status: status.code,
        details: status.details,
        timing,
        messages,
      });
    if (m.stream) {
      const call = client.call(message, metadata, { deadline });
      call.on('data', () => (messages += 1));
      call.on('error', () => {});
      call.on('status', (s) => {
        timing = serverTotal(parseServerTiming(s.metadata.get('server-timing').join(',')));
        done(s);
      });
    } else {
      const call = client.call(message, metadata, { deadline }, () => {});
      call.on('status', (s) => {
        timing = serverTotal(parseServerTiming(s.metadata.get('server-timing').join(',')));
        messages = s.code === grpc.status.OK ? 1 : 0;
        done(s);
      });
    }
  });
}

// methods: checkApiInput()'s, each with its request.
// -> { addr, tls, calls: [measure()'s, one per method] }
export async function discoverGrpc(cfg, methods, { signal } = {}) {
  const addr = cfg.grpc;
  await tcpProbe(addr, { what: 'gRPC endpoint', target: addr, flag: '--grpc' });
  if (cfg.tls)
    await tlsProbe(addr, {
      what: 'gRPC endpoint',
      target: addr,
      flag: '--grpc',
      insecure: cfg.insecure,
      offer: ['h2'],
    });
  const credentials = cfg.tls
    ? grpc.credentials.createSsl(null, null, null, {
        rejectUnauthorized: !cfg.insecure,
        ...(cfg.insecure ? { checkServerIdentity: () => undefined } : {}),
      })
    : grpc.credentials.createInsecure();
  const calls = [];
  for (const m of methods) calls.push(await measure(cfg, m, credentials, signal));
  return { addr, tls: cfg.tls, calls };
}

// One method CALLS times on a warm channel of its own.
// -> { reqBytes, resBytes, messages, serverMs, serverFrom, calls, error }
async function measure(cfg, m, credentials, signal) {
  const addr = cfg.grpc;
  const next = variableSource(m.request);
  let reqBytes = 0;
  const { client, seen } = clientFor(m, addr, credentials);
  try {
    await new Promise((resolve, reject) => {
      client.waitForReady(new Date(Date.now() + PROBE_TIMEOUT_MS), (err) => (err ? reject(err) : resolve()));
    }).catch((err) => {
      const hint = cfg.tls ? 'is it a TLS port? (--tls)' : 'a TLS port needs --tls';
      throw new UsageError(
        `gRPC endpoint ${addr}: cannot connect (${String(err.message || err).split('\n')[0]}): start your server, or fix --grpc (${hint})`,
      );
    });
    let resBytes = 0;
    let messages = 0;
    let error = null;
    const measured = await measureCalls(
      async () => {
        seen.bytes = 0;
        const encoded = encodeRequest(next(DISCOVERY_VU), m);
        reqBytes = encoded.bytes;
        const r = await callOnce(client, m, encoded.message, metadataFor(cfg.expanded.metadata));
        if (AUTH_CODES.has(r.status))
          throw authRefused('gRPC endpoint', addr, statusText(r.status, r.details), {
            given: Object.keys(cfg.expanded.metadata).map((k) => `metadata ${k}`),
            supply: 'metadata',
          });
        if (r.status === grpc.status.UNIMPLEMENTED) {
          throw new UsageError(
            `gRPC endpoint ${addr}: does not serve ${m.method} (${statusText(r.status, r.details)}): check --call and --grpc`,
          );
        }
        if (r.status !== grpc.status.OK && !error) error = statusText(r.status, r.details);
        resBytes = seen.bytes;
        messages = r.messages;
        return r;
      },
      { timingFrom: 'server-timing trailer', signal },
    );
    return { reqBytes, resBytes, messages, ...measured, error };
  } finally {
    client.close();
  }
}
