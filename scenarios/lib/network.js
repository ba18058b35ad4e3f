// The network profile of a k6 run: chosen in init context, applied to Toxiproxy in
// setup(), cleared in teardown(). Every scenario uses it the same way:
//
//   import { networkProfile, applyNetwork, clearNetwork, profileTags } from './lib/network.js';
//   const profile = networkProfile('3g');            // init: -e PROFILE=lte+flaky overrides
//   export function setup() { return { network: applyNetwork(profile) }; }
//   export function teardown() { clearNetwork(); }
//   ... metric.add(ms, { ...profileTags(profile), transport: 'ws' });
//
// Toxiproxy must already run with the four proxies (`npx k6pack up` or docker compose):
// k6 does not create them, because their upstreams differ between the two stacks.
// setup() resets Toxiproxy before adding the toxics, so a run that was killed before
// its teardown (a second Ctrl-C, Ctrl-C during setup, SIGKILL) cannot leak its
// toxics into the next run.
import http from 'k6/http';
import { PROXY_ROUTES, TARGET_DEFAULTS } from '../../common/defaults.js';
import { ProfileError, resolveProfile } from '../../common/profiles.js';

export const PROXY_NAMES = PROXY_ROUTES.map(([name]) => name);

// open() resolves a relative path against the main script or this module depending on
// the caller (k6 v1.x warns it will change), so every path is made absolute here from
// this module's own location: `k6 run scenarios/x.js` works from any directory.
const readText = (path) => open(import.meta.resolve(`../../${path}`));

// k6 prints a thrown Error with its stack trace, a thrown string as it is: errors the user
// must act on are thrown as strings, so they read as the one line that says what to do.
function fatal(message) {
  throw message;
}

// The profile for this run, in init context: __ENV.PROFILE, else the scenario's default.
// An unknown name or a malformed profile file throws here, before any VU starts.
export function networkProfile(defaultSpec = 'lan') {
  try {
    return resolveProfile(__ENV.PROFILE || defaultSpec, readText);
  } catch (err) {
    return fatal(err instanceof ProfileError ? err.message : String(err));
  }
}

// Tags to put on metrics so results from different profiles never mix.
export const profileTags = (profile) => ({ profile: profile.name });

export const toxiproxyUrl = () => (__ENV.TOXIPROXY_URL || TARGET_DEFAULTS.TOXIPROXY_URL).replace(/\/+$/, '');

const HINT = 'start the stack with `npx k6pack up` (or `docker compose up -d`)';
// Control-plane requests are tagged so thresholds on the scenario's own metrics never count them.
const params = (extra = {}) => ({ timeout: '5s', tags: { name: 'toxiproxy', k6pack: 'control' }, ...extra });
const json = { headers: { 'Content-Type': 'application/json' } };

function call(method, url, path, body) {
  const res = http.request(method, url + path, body === undefined ? null : JSON.stringify(body), params(body === undefined ? {} : json));
  if (res.error_code !== 0 && res.status === 0) {
    fatal(`Toxiproxy is not reachable at ${url}: ${HINT}`);
  }
  return res;
}

function fail(url, what, res) {
  let detail = String(res.body || '').trim();
  try {
    detail = JSON.parse(detail).error || detail;
  } catch (_) {
    // not JSON: keep the text
  }
  if (/toxic type/i.test(detail)) {
    detail += ': this Toxiproxy lacks the pack\'s handshake toxic; use its build (`npx k6pack tools`, then `npx k6pack up`)';
  }
  fatal(`Toxiproxy at ${url} refused ${what}: ${res.status} ${detail}`);
}

// For setup(): a clean Toxiproxy, then the profile's toxics on every proxy.
// Returns a small summary (setup data must be JSON).
export function applyNetwork(profile, url = toxiproxyUrl()) {
  const reset = call('POST', url, '/reset');
  if (reset.status !== 204) fail(url, 'POST /reset', reset);
  const list = call('GET', url, '/proxies');
  if (list.status !== 200) fail(url, 'GET /proxies', list);
  const have = Object.keys(list.json() || {});
  const missing = PROXY_NAMES.filter((p) => !have.includes(p));
  if (missing.length > 0) {
    fatal(
      `Toxiproxy at ${url} has no proxy ${missing.join(', ')} (it has: ${have.join(', ') || 'none'}): run \`npx k6pack up\` (or \`docker compose up -d\`) to create them`,
    );
  }
  // Toxics on one proxy are added in order (the order is part of the model); the
  // proxies themselves are independent, so each step goes to all four in one batch.
  for (const toxic of profile.toxics) {
    const body = JSON.stringify(toxic);
    const responses = http.batch(PROXY_NAMES.map((p) => ['POST', `${url}/proxies/${p}/toxics`, body, params(json)]));
    responses.forEach((res, i) => {
      if (res.status === 0) fatal(`Toxiproxy is not reachable at ${url}: ${HINT}`);
      if (res.status !== 200) fail(url, `toxic "${toxic.name}" on proxy "${PROXY_NAMES[i]}"`, res);
    });
  }
  return { profile: profile.name, toxics: profile.toxics.map((t) => t.name), toxiproxy: url };
}

// For teardown(): remove every toxic. Never throws: with Toxiproxy gone there is nothing
// to clean, and the next run's setup() resets anyway.
export function clearNetwork(url = toxiproxyUrl()) {
  try {
    const res = call('POST', url, '/reset');
    if (res.status !== 204) console.warn(`Toxiproxy at ${url}: POST /reset answered ${res.status}; toxics may remain until the next run`);
  } catch (err) {
    console.warn(`${err.message || err} (toxics, if any, are removed by the next run's setup)`);
  }
}
