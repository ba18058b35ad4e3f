// Discovery of a Connect / gRPC-Web endpoint (--connect URL with --proto and --call),
// Node side, before any k6 run: it answers (cleartext, or TLS with a trusted
// certificate or --insecure, noting whether it offers h2), it serves each unary method
// over the Connect protocol in JSON, and each method's bytes and server time under lan
// at one VU: the median of CALLS calls on a kept connection, from a Server-Timing
// header when the server sends one, else from the round trip. Then one call each over
// Connect's binary protobuf and gRPC-Web says which of those lanes apply.
// (connectrpc.com/docs/protocol; github.com/grpc/grpc doc/PROTOCOL-WEB.md)
import http from 'node:http';
import https from 'node:https';
import { hostPort } from '../../common/your-api.js';
import { parseServerTiming, serverTotal } from '../../common/server-timing.js';
import { DISCOVERY_VU, variableSource } from '../../common/variables.js';
import { UsageError } from '../cli-support.js';
import { SERVER_TIMING_HEADER } from './discover-graphql.js';
import { authRefused, AUTH_STATUS, measureCalls, PROBE_TIMEOUT_MS, tcpProbe, tlsProbe } from './probe.js';
import { encodeRequest, fieldTable } from './proto-method.js';

const BINARY = { 'connect-proto': 'application/proto', 'grpc-web': 'application/grpc-web+proto' };

// One POST. -> { status, type, bytes (the answer's), ms, timing, grpcStatus (gRPC-Web's trailer) }
function post(agent, url, body, headers) {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = client.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': body.length }, timeout: PROBE_TIMEOUT_MS * 2 },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('latin1');
          const trailer = /grpc-status:\s*(\d+)/i.exec(text);
          resolve({
            status: res.statusCode,
            type: String(res.headers['content-type'] || ''),
            bytes,
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
            timing: serverTotal(parseServerTiming(res.headers['server-timing'])),
            grpcStatus: trailer ? Number(trailer[1]) : null,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

// A Connect error's JSON ({"code", "message"}) or null.
const connectErrorOf = (r) => {
  try {
    const e = JSON.parse(r.bytes.toString('utf8'));
    return e && typeof e.code === 'string' ? e : null;
  } catch {
    return null; // not Connect's JSON error
  }
};
// The error of a Connect answer that is not 200, as one phrase.
const connectError = (r) => {
  const e = connectErrorOf(r);
  if (e) return `${e.code}${e.message ? `: ${e.message}` : ''}`;
  return `HTTP ${r.status}${r.type ? ` (${r.type})` : ''}`;
};
// The method is not served there: no Connect error at all (a plain 404, 415 or 405 from
// whatever answers the path), or Connect's own unimplemented. A Connect not_found
// (also 404) is the method's answer: the call is served.
const notServed = (r) => {
  if (r.status === 200) return false;
  const e = connectErrorOf(r);
  return e ? e.code === 'unimplemented' : [404, 405, 415, 501].includes(r.status);
};

const framed = (bytes) => {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  bytes.copy(out, 5);
  return out;
};

// methods: checkApiInput()'s, each with its request.
// -> { url, h2, calls: [{ ...measure(), fields, binary: { 'connect-proto': reason|null, 'grpc-web': ... } }] }
export async function discoverConnect(cfg, methods, { signal } = {}) {
  const url = cfg.connect;
  const target = hostPort(url);
  await tcpProbe(target, { what: 'Connect endpoint', target: url, flag: '--connect' });
  let h2 = false;
  if (url.startsWith('https:')) {
    const t = await tlsProbe(target, {
      what: 'Connect endpoint',
      target: url,
      flag: '--connect',
      insecure: cfg.insecure,
    });
    h2 = t.alpn === 'h2';
  }
  const agent = new (url.startsWith('https:') ? https : http).Agent({
    keepAlive: true,
    maxSockets: 1,
    rejectUnauthorized: !cfg.insecure,
  });
  try {
    const calls = [];
    for (const m of methods) {
      signal?.throwIfAborted();
      calls.push(m.stream ? { stream: true } : await measure(cfg, m, agent, signal));
    }
    return { url, h2, calls };
  } finally {
    agent.destroy();
  }
}

async function measure(cfg, m, agent, signal) {
  const where = `${cfg.connect}/${m.method}`;
  const headers = { ...cfg.expanded.headers, 'connect-protocol-version': '1' };
  const next = variableSource(m.request);
  const send = async (protocol, request) => {
    if (protocol === 'connect-json')
      return post(agent, where, Buffer.from(JSON.stringify(request)), {
        ...headers,
        'content-type': 'application/json',
      });
    const bytes = m.def.requestSerialize(encodeRequest(request, m).message);
    const body = protocol === 'grpc-web' ? framed(bytes) : bytes;
    const h = { ...cfg.expanded.headers, 'content-type': BINARY[protocol] };
    if (protocol === 'grpc-web') h['x-grpc-web'] = '1';
    else h['connect-protocol-version'] = '1';
    return post(agent, where, body, h);
  };
  const call = async (protocol, request) => {
    try {
      return await send(protocol, request);
    } catch (err) {
      throw new UsageError(
        `Connect endpoint ${where}: no answer (${err.code || err.message}): start your server, or fix --connect`,
      );
    }
  };
  let reqBytes = 0;
  let resBytes = 0;
  let error = null;
  const measured = await measureCalls(
    async () => {
      const request = next(DISCOVERY_VU);
      const r = await call('connect-json', request);
      if (AUTH_STATUS.has(r.status))
        throw authRefused('Connect endpoint', where, `HTTP ${r.status}`, {
          given: Object.keys(cfg.expanded.headers).map((k) => `header ${k}`),
        });
      if (notServed(r))
        throw new UsageError(
          `Connect endpoint ${where}: does not serve ${m.method} over the Connect protocol (${connectError(r)}): check --call and --connect (the base URL its /package.Service/Method paths hang off)`,
        );
      if (r.status !== 200 && !error) error = connectError(r);
      reqBytes = Buffer.byteLength(JSON.stringify(request));
      resBytes = r.bytes.length;
      return r;
    },
    { timingFrom: SERVER_TIMING_HEADER, signal },
  );
  // Binary protobuf needs the request's wire table; then one call says if the server takes it.
  const { table, problem } = fieldTable(m.requestType);
  const binary = {};
  for (const protocol of Object.keys(BINARY)) {
    if (problem) {
      binary[protocol] = `the request's ${problem}, which the pack's protobuf writer in k6 does not encode`;
      continue;
    }
    const r = await call(protocol, next(DISCOVERY_VU));
    const ok =
      r.status === 200 && r.type.startsWith(BINARY[protocol]) && (protocol !== 'grpc-web' || r.grpcStatus === 0);
    binary[protocol] = ok
      ? null
      : `${m.method} over ${protocol} answered ${r.status === 200 ? `${r.type || 'no content type'}${r.grpcStatus ? `, grpc-status ${r.grpcStatus}` : ''}` : connectError(r)}`;
  }
  return {
    reqBytes,
    resBytes,
    ...measured,
    error,
    fields: problem ? null : table,
    binary,
  };
}
