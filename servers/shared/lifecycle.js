// What both servers do the same way when run directly: read their ports from
// the environment, report a port in use in one line, and drain on SIGTERM/SIGINT.
import { SERVER_PORTS, DEFAULT_HOST } from '../../common/defaults.js';
import { rawSetting } from '../../common/settings.js';

export const SHUTDOWN_GRACE_MS = 5000;

// Port from env var `name` (SERVER_PORTS[name] when unset). Bad values exit with one line.
export function portFromEnv(name, env = process.env) {
  const raw = rawSetting(env, name);
  if (raw === undefined || raw === '') return SERVER_PORTS[name];
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fatal(`${name}=${raw} is not a port number (0-65535)`);
  return port;
}

export function hostFromEnv(env = process.env) {
  return rawSetting(env, 'HOST') || DEFAULT_HOST;
}

// The one-line message for a listen error; `label` names the endpoint, `envVar` its port variable.
export function listenErrorMessage(err, { label, port, envVar }) {
  if (err.code === 'EADDRINUSE')
    return `${label}: port ${port} is already in use; stop what holds it or set ${envVar} to a free port`;
  if (err.code === 'EACCES')
    return `${label}: no permission to listen on port ${port}; set ${envVar} to a port above 1023`;
  if (err.code === 'EADDRNOTAVAIL')
    return `${label}: cannot bind HOST=${rawSetting(process.env, 'HOST')}; set HOST to an address of this machine (default 127.0.0.1)`;
  return `${label}: cannot listen on port ${port} (${envVar}): ${err.message}`;
}

// Listen, or reject with err.endpoint = { label, port, envVar } for listenErrorMessage.
export function listen(server, { port, host, label, envVar }) {
  return new Promise((resolve, reject) => {
    const onError = (err) => reject(Object.assign(err, { endpoint: { label, port, envVar } }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      server.on('error', (err) => console.error(`${label}: ${err.message}`));
      resolve(server.address().port);
    });
  });
}

export function fatal(message) {
  console.error(message);
  process.exit(1);
}

// Calls `stop()` (which should resolve once everything is closed) on SIGTERM or
// SIGINT; exits 0 when it resolves, 1 if it takes longer than the grace period.
export function exitOnSignals(stop, { name }) {
  let stopping = false;
  const handler = (signal) => {
    if (stopping) return;
    stopping = true;
    console.log(`${name}: ${signal}, draining`);
    const force = setTimeout(() => {
      console.error(`${name}: still draining after ${SHUTDOWN_GRACE_MS} ms, exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    Promise.resolve()
      .then(stop)
      .then(
        () => process.exit(0),
        (err) => {
          console.error(`${name}: error while stopping: ${err.message}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
