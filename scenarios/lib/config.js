// Where the scenarios send load (common/env.js reads the other settings).
//
// Every target comes from -e NAME=value with the default from defaults.js
// (TARGET_DEFAULTS: the embedded stack's proxies on 127.0.0.1), so a scenario
// runs unchanged against `npx k6pack up`, docker compose or, deliberately, a
// remote host. A target that is not loopback is refused unless
// ALLOW_REMOTE_TARGET=1: nobody load-tests production by a typo.
import { TARGET_DEFAULTS } from '../../common/defaults.js';
import { configError } from '../../common/env.js';
import { isLoopback } from '../../common/loopback.js';
import { rawSetting, readSettings, setting } from '../../common/settings.js';

export { hostOf, isLoopback } from '../../common/loopback.js';

// k6's __ENV; in Node (tests import the pure parts of the library) process.env.
export const ENV = typeof __ENV !== 'undefined' ? __ENV : globalThis.process ? globalThis.process.env : {};

// The run's settings, read once in the init context (common/settings.js readSettings):
// every one k6 reads, checked at once. The declaration and the plan take this object.
export const SETTINGS = readSettings(ENV);

// The targets, each checked: { TOXIPROXY_URL, GRAPHQL_HTTP_URL, ..., GRPC_TLS_ADDR }.
export function resolveTargets(env = ENV) {
  const allowRemote = rawSetting(env, 'ALLOW_REMOTE_TARGET') === '1';
  const out = {};
  for (const [name, fallback] of Object.entries(TARGET_DEFAULTS)) {
    const value = setting(env, name, fallback);
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
