#!/usr/bin/env node
// Container healthcheck for the Node servers (docker-compose.yml runs it inside
// the graphql, grpc and connect containers; the image has no curl/wget).
//
//   node docker/healthcheck.js http://127.0.0.1:4000/healthz https://127.0.0.1:4443/healthz
//   node docker/healthcheck.js grpc://127.0.0.1:5051 tcp://127.0.0.1:5052
//
// Exits 0 when every probe passes, else 1 with one line naming the first that
// failed. Each probe gives up after TIMEOUT_MS, so the whole check is bounded.
//   http(s)://host:port/path  GET answers 200 (https: certificate not verified)
//   grpc://host:port           grpc.health.v1.Health/Check for the whole server ('') is SERVING
//   tcp://host:port            accepts a TCP connection
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { pathToFileURL } from 'node:url';
import { realpathSync } from 'node:fs';

export const TIMEOUT_MS = 2000;

// The servers' TLS certificate is self-signed for localhost: this only asks
// whether the TLS listener serves, so it does not verify it.
function httpProbe(url) {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: TIMEOUT_MS, rejectUnauthorized: false }, (res) => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new Error(`answered ${res.statusCode}`));
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.once('error', reject);
    req.end();
  });
}

function tcpProbe({ hostname, port }) {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: hostname, port: Number(port), timeout: TIMEOUT_MS });
    sock.once('connect', () => {
      sock.destroy();
      resolve();
    });
    sock.once('timeout', () => sock.destroy(new Error(`no connection within ${TIMEOUT_MS} ms`)));
    sock.once('error', reject);
  });
}

async function grpcProbe({ host }) {
  // Loaded only for grpc:// so the http check does not pay for grpc-js.
  const grpc = await import('@grpc/grpc-js');
  const { service } = (await import('grpc-health-check')).default;
  const Health = grpc.makeGenericClientConstructor(service, 'Health');
  const client = new Health(host, grpc.credentials.createInsecure());
  try {
    const res = await new Promise((resolve, reject) => {
      client.check({ service: '' }, { deadline: Date.now() + TIMEOUT_MS }, (err, r) =>
        err ? reject(err) : resolve(r),
      );
    });
    if (res.status !== 'SERVING') throw new Error(`health status ${res.status}`);
  } finally {
    client.close();
  }
}

const PROBES = { 'http:': httpProbe, 'https:': httpProbe, 'grpc:': grpcProbe, 'tcp:': tcpProbe };

// Runs the probes in order; resolves null when all pass, else "<target>: <reason>".
export async function check(targets) {
  if (!targets.length)
    return 'usage: healthcheck.js <http(s)://host:port/path | grpc://host:port | tcp://host:port>...';
  for (const target of targets) {
    let url;
    try {
      url = new URL(target);
    } catch {
      return `${target}: not a URL (use http://, https://, grpc:// or tcp://)`;
    }
    const probe = PROBES[url.protocol];
    if (!probe || !url.port) return `${target}: use http(s)://host:port/path, grpc://host:port or tcp://host:port`;
    try {
      await probe(url);
    } catch (err) {
      return `${target}: ${err.message}${err.cause?.message ? ` (${err.cause.message})` : ''}`;
    }
  }
  return null;
}

const runDirectly = process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (runDirectly) {
  const problem = await check(process.argv.slice(2));
  if (problem) {
    console.error(`unhealthy: ${problem}`);
    process.exit(1);
  }
  console.log('healthy');
}
