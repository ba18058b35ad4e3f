// Where the scenarios send load, and the small env-reading helpers they share.
//
// Every target comes from -e NAME=value with the default from defaults.js
// (TARGET_DEFAULTS: the embedded stack's proxies on 127.0.0.1), so a scenario
// runs unchanged against `npx k6pack up`, docker compose or, deliberately, a
// remote host. A target that is not loopback is refused unless
// ALLOW_REMOTE_TARGET=1: nobody load-tests production by a typo.
import { TARGET_DEFAULTS } from '../../common/defaults.js';
import { isLoopback } from '../../common/loopback.js';

export { hostOf, isLoopback } from '../../common/loopback.js';

// k6 prints a thrown Error with its stack trace and a thrown string as it is, so
// a setting the user must fix is thrown as a string: one line that says what to do.
export const configError = (message) => String(message);

// k6's __ENV; in Node (tests import the pure parts of the library) process.env.
export const ENV = typeof __ENV !== 'undefined' ? __ENV : globalThis.process ? globalThis.process.env : {};

// The targets, each checked: { TOXIPROXY_URL, GRAPHQL_HTTP_URL, ..., GRPC_TLS_ADDR }.
export function resolveTargets(env = ENV) {
  const allowRemote = env.ALLOW_REMOTE_TARGET === '1';
  const out = {};
  for (const [name, fallback] of Object.entries(TARGET_DEFAULTS)) {
    const value = env[name] !== undefined && env[name] !== '' ? env[name] : fallback;
    if (!allowRemote && !isLoopback(value)) {
      throw configError(
        `${name}=${value} is not a loopback address: the pack only loads 127.0.0.1/::1 unless you set -e ALLOW_REMOTE_TARGET=1 on purpose`,
      );
    }
    out[name] = value;
  }
  return out;
}

export const TARGETS = resolveTargets();

// The GraphQL server's own origin (for /healthz), from its proxied /graphql URL.
export const graphqlOrigin = (url = TARGETS.GRAPHQL_HTTP_URL) => url.replace(/\/graphql\/?$/, '');

// An integer from -e NAME=..., within [min, max]; a bad value stops the test with a sentence.
export function envInt(name, fallback, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  const raw = ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw configError(`${name}=${raw} must be a whole number from ${min} to ${max}`);
  }
  return n;
}

// A comma-separated list of integers, e.g. NS=100,1000.
export function envIntList(name, fallback, bounds) {
  const raw = ENV[name];
  if (raw === undefined || raw === '') return fallback;
  return raw.split(',').map((part, i) => {
    const n = Number(part.trim());
    const { min = 0, max = Number.MAX_SAFE_INTEGER } = bounds || {};
    if (!Number.isInteger(n) || n < min || n > max) {
      throw configError(`${name}=${raw}: item ${i + 1} must be a whole number from ${min} to ${max}`);
    }
    return n;
  });
}

// A duration in seconds from '90', '90s', '15m' or '1h'.
export function envSeconds(name, fallback) {
  const raw = ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(String(raw).trim());
  if (!m) throw configError(`${name}=${raw} must be a duration such as 90s, 15m or 1h`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] || 's'];
}

// true/false from -e NAME=true|false|1|0.
export function envBool(name, fallback) {
  const raw = ENV[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw configError(`${name}=${raw} must be true or false`);
}
