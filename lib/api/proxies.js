// The Toxiproxy proxies in front of a team's own endpoints: one for the GraphQL port
// (cleartext or TLS: Toxiproxy forwards TCP), one for the WebSocket endpoint when it is
// on another host:port, one for the gRPC port; each listening on 127.0.0.1 only, at the
// port of its variable (PROXY_API_GRAPHQL_PORT, ...). k6 keeps the user's URLs and is
// sent to the proxies by its `hosts` option (common/your-api.js), so Host headers, TLS names
// and certificates stay the user's.
import { connect } from 'node:net';
import { API_PROXY_PORTS, API_PROXY_ROUTES, DEFAULT_HOST, targetsFor } from '../../common/defaults.js';
import { hostPort } from '../../common/your-api.js';
import { UsageError } from '../cli-support.js';
import { readState } from '../runstate.js';
import { portInUseMessage, waitPortsFree } from '../ports.js';
import { resolvePorts } from '../stack.js';
import { Toxiproxy } from '../toxiproxy.js';
import { splitHostPort } from './probe.js';
import { rawSetting } from '../../common/settings.js';

// PROXY_API_* from the environment, each a port that no stack port uses.
export function resolveApiPorts(stackPorts = resolvePorts(), env = process.env) {
  const out = {};
  for (const [name, fallback] of Object.entries(API_PROXY_PORTS)) {
    const raw = rawSetting(env, name);
    const port = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new UsageError(`${name}=${raw} is not a port number (1-65535)`);
    const clash = Object.entries({ ...stackPorts, ...out }).find(([, p]) => p === port);
    if (clash) throw new UsageError(`${clash[0]} and ${name} are both ${port}: give each its own port`);
    out[name] = port;
  }
  return out;
}

const routeVar = Object.fromEntries(API_PROXY_ROUTES);

// The proxies an API needs: [{ name, portVar, listen, upstream, enabled }].
export function apiRoutes(cfg, apiPorts) {
  const routes = [];
  const add = (name, upstream) => {
    if (routes.some((r) => r.upstream === upstream)) return; // one port serving both: one proxy
    routes.push({
      name,
      portVar: routeVar[name],
      listen: `${DEFAULT_HOST}:${apiPorts[routeVar[name]]}`,
      upstream,
      enabled: true,
    });
  };
  if (cfg.graphql) add('api_graphql', hostPort(cfg.graphql));
  if (cfg.ws) add('api_ws', hostPort(cfg.ws));
  if (cfg.grpc) add('api_grpc', cfg.grpc);
  if (cfg.connect) add('api_connect', hostPort(cfg.connect));
  return routes;
}

// k6's hosts option: each endpoint's host:port -> its proxy.
export const hostsOf = (routes) => Object.fromEntries(routes.map((r) => [r.upstream, r.listen]));

// The Toxiproxy the API's proxies go on: the recorded stack's, or one answering on the
// configured port; null when none runs (the command then starts one).
export async function runningToxiproxy(runDir) {
  const state = readState(runDir);
  const url = targetsFor(state ? state.ports : resolvePorts()).TOXIPROXY_URL;
  const toxiproxy = new Toxiproxy(url, { timeoutMs: 2000 });
  return (await toxiproxy.isReachable()) ? toxiproxy : null;
}

// Every port the API's proxies (and a Toxiproxy still to start) need, free before
// anything starts: one line naming the port and its variable (exit 2).
export async function checkApiPorts(routes, runDir) {
  const toxiproxy = await runningToxiproxy(runDir);
  const existing = toxiproxy ? await toxiproxy.proxies() : {};
  const needed = routes
    .filter((r) => !(existing[r.name] && existing[r.name].listen === r.listen))
    .map((r) => [r.portVar, Number(r.listen.split(':').pop())]);
  if (!toxiproxy) {
    const ports = resolvePorts();
    needed.unshift(['TOXIPROXY_PORT', ports.TOXIPROXY_PORT]);
  }
  // A port in use is waited for first (bounded): what held it may still be exiting.
  const started = Date.now();
  const [busy] = await waitPortsFree(needed.map(([name, port]) => ({ name, port })));
  if (!busy) return;
  const { name, port, problem } = busy;
  if (problem === 'EADDRINUSE') throw new UsageError(portInUseMessage(name, port, { waitedMs: Date.now() - started }));
  throw new UsageError(`cannot listen on ${DEFAULT_HOST}:${port} (${name}): ${problem}: set ${name} to another port`);
}

// Creates (or points) the API's proxies on a Toxiproxy; returns restore(), which puts
// back what was there before (a proxy that was not there is removed).
export async function installApiProxies(toxiproxy, routes) {
  const before = await toxiproxy.proxies();
  try {
    await toxiproxy.populate(
      routes.map(({ name, listen, upstream, enabled }) => ({ name, listen, upstream, enabled })),
    );
  } catch (err) {
    const taken = routes.find((r) => err.message.includes(r.listen.split(':').pop()));
    if (taken) throw new UsageError(portInUseMessage(taken.portVar, Number(taken.listen.split(':').pop())));
    throw err;
  }
  return async () => {
    for (const r of routes) {
      const was = before[r.name];
      if (!was) await toxiproxy.deleteProxy(r.name);
      else if (was.listen !== r.listen || was.upstream !== r.upstream)
        await toxiproxy.populate([
          { name: was.name, listen: was.listen, upstream: was.upstream, enabled: was.enabled },
        ]);
    }
  };
}

// Lines naming the endpoints that no longer accept connections (after a run).
export async function endpointsGone(routes) {
  const lines = [];
  for (const r of routes) {
    const { host, port } = splitHostPort(r.upstream);
    const err = await new Promise((resolve) => {
      const sock = connect({ host, port, timeout: 2000 });
      sock.once('connect', () => {
        sock.destroy();
        resolve(null);
      });
      sock.once('timeout', () => {
        sock.destroy();
        resolve(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' }));
      });
      sock.once('error', resolve);
    });
    if (err)
      lines.push(
        `your server at ${r.upstream} (behind proxy ${r.name}) no longer accepts connections (${err.code || err.message})`,
      );
  }
  return lines;
}
