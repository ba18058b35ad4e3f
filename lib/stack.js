// The embedded stack: the reference servers and toxiproxy as plain processes
// on 127.0.0.1, health-checked, with the proxies populated. Used by the CLI
// (`k6pack up`, detached) and by tests (dev/test-stack.js, attached).
import { mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_HOST, DEFAULT_PORTS, PROXY_ROUTES, proxiesFor, targetsFor } from '../common/defaults.js';
import { isLoopback, isLoopbackHost } from '../common/loopback.js';
import { PORT_WAIT_MS, portInUseMessage, stillHeldMessage, stopReleasing, waitPortsFree } from './ports.js';
import { lastLogLine, spawnLogged } from './processes.js';
import { ensureTools, ROOT } from './tools.js';
import { Toxiproxy } from './toxiproxy.js';
import { rawSetting } from '../common/settings.js';

export class StackError extends Error {}

export const START_TIMEOUT_MS = 30000;
const HOST = DEFAULT_HOST;

// Where `up` keeps logs and pid files: .run/ in the current directory (the user's project,
// never the package, which may be read-only); K6PACK_RUN_DIR moves it (tests do).
export function defaultRunDir(env = process.env) {
  return resolve(rawSetting(env, 'K6PACK_RUN_DIR') || '.run');
}

// The embedded stack listens on 127.0.0.1 only, and k6pack drives its own
// Toxiproxy there; it reads neither HOST (the servers' bind address when run by
// hand) nor TOXIPROXY_URL (k6's). Set to another host, they say the user expects
// what k6pack does not do (serve or reach beyond this machine), so k6pack stops
// instead of ignoring them. There is no opt-in: to serve elsewhere, run the
// servers with HOST yourself or use docker compose.
export function refuseRemoteHosts(env = process.env) {
  const checks = [
    ['HOST', rawSetting(env, 'HOST'), isLoopbackHost],
    ['TOXIPROXY_URL', rawSetting(env, 'TOXIPROXY_URL'), isLoopback],
  ];
  for (const [name, value, loopback] of checks) {
    if (value && !loopback(value)) {
      throw new StackError(
        `${name}=${value} is not a loopback address: k6pack's stack is on 127.0.0.1 only; unset ${name} (to serve beyond this machine, run the servers with HOST yourself or use docker compose)`,
      );
    }
  }
}

// DEFAULT_PORTS, overridden by env vars of the same names, overridden by
// `overrides`. Every command that reads the stack's addresses from the
// environment comes here, so the host check is made here too.
export function resolvePorts(overrides = {}, env = process.env) {
  refuseRemoteHosts(env);
  const ports = {};
  for (const [name, fallback] of Object.entries(DEFAULT_PORTS)) {
    const raw = overrides[name] ?? rawSetting(env, name);
    if (raw === undefined || raw === '') {
      ports[name] = fallback;
      continue;
    }
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new StackError(`${name}=${raw} is not a port number (1-65535)`);
    }
    ports[name] = port;
  }
  const byPort = new Map();
  for (const [name, port] of Object.entries(ports)) {
    if (byPort.has(port))
      throw new StackError(`${byPort.get(port)} and ${name} are both ${port}: give each its own port`);
    byPort.set(port, name);
  }
  return ports;
}

export { portIsFree } from './ports.js';

// Fails with one line naming the first port that cannot be bound and its variable.
// A port in use is waited for first, up to waitMs (polled): the process that held
// it may still be exiting (a `down` or a run's stack stopped just before).
export async function checkPortsFree(ports, { waitMs = PORT_WAIT_MS } = {}) {
  const started = Date.now();
  const entries = Object.entries(ports).map(([name, port]) => ({ name, port }));
  const [first] = await waitPortsFree(entries, { waitMs });
  if (!first) return;
  const { name, port, problem } = first;
  if (problem === 'EADDRINUSE') throw new StackError(portInUseMessage(name, port, { waitedMs: Date.now() - started }));
  if (problem === 'EACCES')
    throw new StackError(`no permission to listen on port ${port} (${name}): set ${name} to a port above 1023`);
  throw new StackError(`cannot listen on ${HOST}:${port} (${name}): ${problem}`);
}

// ---- health probes: each resolves true/false within about a second ----

function httpOk(url) {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(url, { timeout: 1000, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function tcpAccepts(port) {
  return new Promise((resolve) => {
    const sock = connect({ port, host: HOST, timeout: 1000 });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('timeout', () => sock.destroy());
    sock.once('error', () => resolve(false));
    sock.once('close', () => resolve(false));
  });
}

// grpc.health.v1.Health/Check for the whole server ('' service) answers SERVING.
// NOT_FOUND / UNIMPLEMENTED also come from a live gRPC server, just one that
// does not report '' or has no health service: up is up.
const GRPC_ANSWERED = new Set([5, 12]);
async function grpcServing(port) {
  const grpc = await import('@grpc/grpc-js');
  const { service } = (await import('grpc-health-check')).default;
  const Health = grpc.makeGenericClientConstructor(service, 'Health');
  const client = new Health(`${HOST}:${port}`, grpc.credentials.createInsecure());
  try {
    return await new Promise((resolve) => {
      client.check({ service: '' }, { deadline: Date.now() + 1000 }, (err, res) =>
        resolve(err ? GRPC_ANSWERED.has(err.code) : res.status === 'SERVING'),
      );
    });
  } finally {
    client.close();
  }
}

// ---- the processes: the three servers and toxiproxy ----

// A reference server run as `node servers/<dir>/server.js`, its ports from env.
function nodeServer(ports, { name, label, dir, portVars, ready, env: more = {} }) {
  const script = join(ROOT, 'servers', dir, 'server.js');
  const env = { HOST, ...Object.fromEntries(portVars.map((v) => [v, String(ports[v])])), ...more };
  return { name, label, file: process.execPath, args: [script], marker: script, env, ports: portVars, ready };
}

// Each service: how to start it and how to tell it is ready. `marker` is a
// string of its command line, so `down` never signals a reused pid.
export function services(ports, { toxiproxyBin } = {}) {
  return [
    nodeServer(ports, {
      name: 'graphql',
      label: 'GraphQL server',
      dir: 'graphql',
      portVars: ['GRAPHQL_PORT', 'GRAPHQL_TLS_PORT', 'GRAPHQL_TLS_H1_PORT'],
      // Its topic hub relays with the gRPC server's (servers/graphql/hub-relay.js).
      env: { HUB_PEER: `${HOST}:${ports.GRPC_PORT}` },
      ready: async () =>
        (await httpOk(`http://${HOST}:${ports.GRAPHQL_PORT}/healthz`)) &&
        (await httpOk(`https://${HOST}:${ports.GRAPHQL_TLS_PORT}/healthz`)) &&
        httpOk(`https://${HOST}:${ports.GRAPHQL_TLS_H1_PORT}/healthz`),
    }),
    nodeServer(ports, {
      name: 'grpc',
      label: 'gRPC server',
      dir: 'grpc',
      portVars: ['GRPC_PORT', 'GRPC_TLS_PORT', 'GRPC_KEEPALIVE_PORT'],
      ready: async () =>
        (await grpcServing(ports.GRPC_PORT)) &&
        (await tcpAccepts(ports.GRPC_TLS_PORT)) &&
        grpcServing(ports.GRPC_KEEPALIVE_PORT),
    }),
    nodeServer(ports, {
      name: 'connect',
      label: 'Connect server',
      dir: 'connect',
      portVars: ['CONNECT_PORT', 'CONNECT_H2C_PORT', 'CONNECT_TLS_PORT'],
      ready: async () =>
        (await httpOk(`http://${HOST}:${ports.CONNECT_PORT}/healthz`)) &&
        (await grpcServing(ports.CONNECT_H2C_PORT)) &&
        httpOk(`https://${HOST}:${ports.CONNECT_TLS_PORT}/healthz`),
    }),
    {
      name: 'toxiproxy',
      label: 'toxiproxy-server',
      file: toxiproxyBin,
      args: ['-host', HOST, '-port', String(ports.TOXIPROXY_PORT)],
      marker: 'toxiproxy-server',
      // Warnings and what kills it (a panic goes to stderr, the same log), not a line per
      // connection: the log stays short enough to read back (scenarios/lib/network.js).
      env: { LOG_LEVEL: 'warn' },
      ports: ['TOXIPROXY_PORT', ...PROXY_ROUTES.map(([, listenVar]) => listenVar)],
      ready: () => new Toxiproxy(targetsFor(ports).TOXIPROXY_URL, { timeoutMs: 1000 }).isReachable(),
    },
  ];
}

// Waits until every service is ready; throws naming the first that exits or the
// ones still not ready at the deadline.
async function waitReady(started, timeoutMs, signal) {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(started);
  while (pending.size) {
    signal?.throwIfAborted();
    for (const s of pending) {
      if (s.exit) {
        const last = lastLogLine(s.logFile, 3);
        throw new StackError(`${s.label} exited during start-up (${s.exit}): ${last || `no output, see ${s.logFile}`}`);
      }
      if (await s.ready()) pending.delete(s);
    }
    if (!pending.size) return;
    if (Date.now() > deadline) {
      const names = [...pending].map((s) => `${s.label} (log: ${s.logFile})`).join(', ');
      throw new StackError(`not ready after ${timeoutMs / 1000} s: ${names}`);
    }
    await sleep(100);
  }
}

// Starts the stack; returns { ports, targets, pids, logs, markers, toxiproxy, stop() }:
// stop() resolves once its processes are gone and their ports free (lib/ports.js
// stopReleasing), and rejects with one line naming a port still held.
// `detached`: the processes get their own process group (a Ctrl-C in the
// terminal does not reach them) and outlive this one; stop() still works.
// `only`: start just these services (names: graphql, grpc, connect, toxiproxy), e.g. the
// ones of a recorded stack that died. `reference: false` leaves the reference
// servers' proxies out (the api scenario's stack: Toxiproxy for the team's own
// endpoints, whose proxies it adds itself). Aborting `signal` stops what has
// started and rejects with its reason. `portWaitMs`: how long a port in use is
// waited for before refusing (checkPortsFree).
export async function startStack({
  ports: overrides = {},
  runDir = defaultRunDir(),
  detached = false,
  log = () => {},
  timeoutMs = START_TIMEOUT_MS,
  signal,
  only = null,
  reference = true,
  portWaitMs = PORT_WAIT_MS,
} = {}) {
  const ports = resolvePorts(overrides);
  const pick = (list) => list.filter((s) => !only || only.includes(s.name));
  // Ports first: a port in use is said at once, before any tool is built.
  const portsOf = (svc) => svc.ports.filter((v) => reference || !v.startsWith('PROXY_'));
  const needed = pick(services(ports)).flatMap(portsOf);
  await checkPortsFree(Object.fromEntries(needed.map((v) => [v, ports[v]])), { waitMs: portWaitMs });
  const { toxiproxy: toxiproxyBin } = ensureTools({ log });
  const wanted = pick(services(ports, { toxiproxyBin }));
  mkdirSync(runDir, { recursive: true });

  const started = [];
  const stop = async () => {
    const held = await stopReleasing(
      started.map((s) => ({ pid: s.pid, label: s.label, ports: portsOf(s).map((v) => ({ name: v, port: ports[v] })) })),
    );
    if (held.length) throw new StackError(stillHeldMessage(held));
  };
  try {
    for (const svc of wanted) {
      signal?.throwIfAborted();
      const logFile = join(runDir, `${svc.name}.log`);
      const child = spawnLogged(svc.file, svc.args, { env: svc.env, logFile, detached, cwd: ROOT });
      if (!child.pid) throw new StackError(`${svc.label} could not be started: ${(await child).shortMessage}`);
      const s = { ...svc, logFile, pid: child.pid, exit: null };
      child.then((r) => {
        s.exit = r.signal ? `signal ${r.signal}` : `exit code ${r.exitCode}`;
      });
      started.push(s);
      log(`started ${svc.label} (pid ${child.pid}), log: ${logFile}`);
    }
    await waitReady(started, timeoutMs, signal);
    const toxiproxy = new Toxiproxy(targetsFor(ports).TOXIPROXY_URL);
    if (reference && wanted.some((s) => s.name === 'toxiproxy')) await populate(toxiproxy, ports);
    return {
      ports,
      targets: targetsFor(ports),
      pids: Object.fromEntries(started.map((s) => [s.name, s.pid])),
      logs: Object.fromEntries(started.map((s) => [s.name, s.logFile])),
      markers: Object.fromEntries(started.map((s) => [s.name, s.marker])),
      toxiproxy,
      stop,
    };
  } catch (err) {
    await stop().catch(() => {}); // the start's own error says more
    throw err;
  }
}

// Creates the proxies (PROXY_ROUTES); a listen port taken since the check is named by its variable.
export async function populate(toxiproxy, ports) {
  try {
    return await toxiproxy.populate(proxiesFor(ports));
  } catch (err) {
    const taken = Object.entries(ports).find(
      ([name, port]) => name.startsWith('PROXY_') && err.message.includes(`:${port}`),
    );
    if (taken) throw new StackError(portInUseMessage(taken[0], taken[1]));
    throw err;
  }
}
