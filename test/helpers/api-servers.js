// Servers this project did not write, as a team's own API would be: the examples in
// examples/api/ (graphql-yoga with graphql-ws; @grpc/grpc-js serving grpc-node's
// route_guide.proto), each started as a child process on a free port.
import { join } from 'node:path';
import { execa } from 'execa';
import { freePorts } from '../../dev/test-stack.js';
import { ROOT } from '../../lib/tools.js';

export const EXAMPLES = join(ROOT, 'examples', 'api');

// Resolves { port, child, stop() } once the server says it listens.
async function start(file, env) {
  const [port] = await freePorts(1);
  const child = execa(process.execPath, [join(EXAMPLES, file)], {
    env: { ...env, PORT: String(port) },
    reject: false,
    stdin: 'ignore',
    cleanup: true,
    forceKillAfterDelay: 3000,
  });
  let said = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start within 20 s: ${said}`)), 20000);
    child.stdout.on('data', (d) => {
      said += d;
      if (said.includes('127.0.0.1')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on('data', (d) => (said += d));
    child.then(() => {
      clearTimeout(timer);
      reject(new Error(`${file} exited: ${said}`));
    });
  });
  return {
    port,
    pid: child.pid,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      await child;
    },
  };
}

// graphql-yoga: env WS=off (no graphql-ws), TLS=on (https, self-signed). Adds url.
export async function startYoga(env = {}) {
  const s = await start('yoga-server.js', env);
  return { ...s, url: `${env.TLS === 'on' ? 'https' : 'http'}://127.0.0.1:${s.port}/graphql` };
}

// routeguide.RouteGuide: env TLS=on. Adds addr.
export async function startRouteGuide(env = {}) {
  const s = await start('route-guide-server.js', env);
  return { ...s, addr: `127.0.0.1:${s.port}` };
}

export const PROTO = join(EXAMPLES, 'route_guide.proto');
export const OPS = join(EXAMPLES, 'ops.graphql');
export const VARS = join(EXAMPLES, 'vars.json');
