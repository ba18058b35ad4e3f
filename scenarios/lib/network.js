// The network profile of a k6 run: chosen in init context, applied to Toxiproxy in
// setup(), and the toxics found there put back in teardown(). Every scenario uses it
// through scenario.js (setup takes the stack's hold first: hold.js):
//
//   import { networkProfile, applyNetwork, restoreNetwork, profileTags } from './lib/network.js';
//   const profile = networkProfile('3g');            // init: -e PROFILE=lte+flaky overrides
//   export function setup() { return { network: applyNetwork(profile) }; }   // .epochMs: when events start
//   export function teardown(data) { restoreNetwork(data.network); }
//   ... metric.add(ms, { ...profileTags(profile), transport: 'ws' });
//
// Toxiproxy must already run with the four proxies (`npx k6pack up` or docker compose):
// k6 does not create them, because their upstreams differ between the two stacks.
// setup() makes every proxy carry exactly the profile's toxics, changing only what
// differs (common/toxics.js), so a run that was killed before its teardown (a second
// Ctrl-C, SIGKILL) cannot leak its toxics into the next run, and a proxy that already
// carries them is not touched.
import http from 'k6/http';
import { PROXY_NAMES, TARGET_DEFAULTS } from '../../common/defaults.js';
import { deathLine } from '../../common/log-tail.js';
import { resolveFrom } from '../../common/paths.js';
import { isTimed, NETWORK_FILE_HINT, ProfileError, resolveProfile, withEpoch } from '../../common/profiles.js';
import { radioLogOf } from '../../common/radio-log.js';
import { changeRequest, snapshotOf, toxicChanges } from '../../common/toxics.js';
import { rawSetting } from '../../common/settings.js';

export { PROXY_NAMES };

// open() resolves a relative path against the main script or this module depending on
// the caller (k6 v1.x warns it will change), so every path is made absolute here from
// this module's own location: `k6 run scenarios/x.js` works from any directory.
const readText = (path) => open(import.meta.resolve(`../../${path}`));

// k6 prints a thrown Error with its stack trace, a thrown string as it is: errors the user
// must act on are thrown as strings, so they read as the one line that says what to do.
export function fatal(message) {
  throw message;
}

// A file of the user's own (-e PROFILE=./my-network.json, or +trace=./my.trace): relative
// to the directory k6 was started in. open() reads it whole: common/trace.js refuses a
// trace over its limit after.
function readUser(path, { what = 'profile file', hint = NETWORK_FILE_HINT } = {}) {
  const abs = resolveFrom(rawSetting(__ENV, 'PWD'), path);
  try {
    return { text: open(abs), path: abs };
  } catch (err) {
    return fatal(`${what} ${path}: cannot read it (${String(err.message || err).split('\n')[0]}): ${hint}`);
  }
}

// The profile for this run, in init context: __ENV.PROFILE, else the scenario's default.
// An unknown name or a malformed profile file throws here, before any VU starts.
export function networkProfile(defaultSpec = 'lan') {
  try {
    return resolveProfile(rawSetting(__ENV, 'PROFILE') || defaultSpec, readText, readUser);
  } catch (err) {
    return fatal(err instanceof ProfileError ? err.message : String(err));
  }
}

// Tags to put on metrics so results from different profiles never mix.
export const profileTags = (profile) => ({ profile: profile.name });

// A scenario may name the stack it needs (the api scenario's plan file does); -e TOXIPROXY_URL wins.
let stackUrl = null;
export function useToxiproxy(url) {
  stackUrl = url || null;
}
export const toxiproxyUrl = () =>
  (rawSetting(__ENV, 'TOXIPROXY_URL') || stackUrl || TARGET_DEFAULTS.TOXIPROXY_URL).replace(/\/+$/, '');

// The stack `npx k6pack up` recorded (.run/stack.json in the directory k6 runs in, as `up`
// writes it in its own, or K6PACK_RUN_DIR), and the end of its toxiproxy's log, read once in
// the init context of setup's VU (__VU 0: k6 reads files only in init), so an unreachable
// Toxiproxy is named with what killed it.
function readStackRecord() {
  if (__VU !== 0) return null;
  const dir = resolveFrom(rawSetting(__ENV, 'PWD'), rawSetting(__ENV, 'K6PACK_RUN_DIR') || '.run').replace(/\/+$/, '');
  const at = (file) => `${dir}/${file}`;
  try {
    const state = JSON.parse(open(at('stack.json')));
    let log = '';
    try {
      log = open(state.logs && state.logs.toxiproxy ? state.logs.toxiproxy : at('toxiproxy.log'));
    } catch (_) {
      log = '';
    }
    return { state, log };
  } catch (_) {
    return null;
  }
}
const STACK = readStackRecord();

const HINT = 'start the stack with `npx k6pack up` (or `docker compose up -d`)';

function unreachable(url) {
  const port = Number((/:(\d+)$/.exec(url) || [])[1]);
  const state = STACK && STACK.state;
  if (state && state.ports && state.ports.TOXIPROXY_PORT === port && state.pids && state.pids.toxiproxy) {
    const said = deathLine(STACK.log);
    return fatal(
      `Toxiproxy is not reachable at ${url}: the toxiproxy-server \`npx k6pack up\` started (pid ${state.pids.toxiproxy}) is not answering` +
        (said ? `; its log ends: ${said}` : '') +
        '. `npx k6pack status` shows what runs; `npx k6pack up` restarts what died',
    );
  }
  return fatal(`Toxiproxy is not reachable at ${url}: ${HINT}`);
}

// Control-plane requests are tagged so thresholds on the scenario's own metrics never count them.
const params = (extra = {}) => ({ timeout: '5s', tags: { name: 'toxiproxy', k6pack: 'control' }, ...extra });
const json = { headers: { 'Content-Type': 'application/json' } };

export function call(method, url, path, body) {
  const res = http.request(
    method,
    url + path,
    body === undefined ? null : JSON.stringify(body),
    params(body === undefined ? {} : json),
  );
  if (res.error_code !== 0 && res.status === 0) unreachable(url);
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
    detail += ": this Toxiproxy lacks the pack's own toxics; use its build (`npx k6pack tools`, then `npx k6pack up`)";
  }
  fatal(`Toxiproxy at ${url} refused ${what}: ${res.status} ${detail}`);
}

// GET /proxies, checked: every proxy the scenario shapes (`names`: the reference
// servers' by default) is there.
export function proxiesAt(url = toxiproxyUrl(), names = PROXY_NAMES) {
  const list = call('GET', url, '/proxies');
  if (list.status !== 200) fail(url, 'GET /proxies', list);
  const proxies = list.json() || {};
  const missing = names.filter((p) => !proxies[p]);
  if (missing.length > 0) {
    const how =
      names === PROXY_NAMES
        ? '`npx k6pack up` (or `docker compose up -d`)'
        : "`npx k6pack up --api …` (the same flags as the plan file's)";
    fatal(
      `Toxiproxy at ${url} has no proxy ${missing.join(', ')} (it has: ${Object.keys(proxies).join(', ') || 'none'}): run ${how} to create them`,
    );
  }
  return proxies;
}

// Gives each proxy the toxics wantedFor(proxy) returns, changing only what differs.
// Proxies are independent, so each round of changes goes to all four in one batch;
// on one proxy the changes go in order (the order of toxics is part of the model).
function setToxics(url, proxies, wantedFor, names = PROXY_NAMES) {
  const plans = names.map((p) => [p, toxicChanges(proxies[p].toxics, wantedFor(p))]);
  const rounds = Math.max(0, ...plans.map(([, changes]) => changes.length));
  for (let i = 0; i < rounds; i++) {
    const batch = plans.filter(([, changes]) => changes[i]).map(([p, changes]) => [p, changes[i]]);
    const responses = http.batch(
      batch.map(([p, change]) => {
        const [method, path, body] = changeRequest(p, change);
        return [
          method,
          url + path,
          body === undefined ? null : JSON.stringify(body),
          params(body === undefined ? {} : json),
        ];
      }),
    );
    responses.forEach((res, j) => {
      const [p, change] = batch[j];
      if (res.status === 0) unreachable(url);
      if (res.status >= 300)
        fail(url, `${change.op} of toxic "${change.toxic ? change.toxic.name : change.name}" on proxy "${p}"`, res);
    });
  }
}

// For setup(): every proxy carries exactly the profile's toxics. Returns what the
// proxies carried before (for restoreNetwork) and a small summary (setup data must be
// JSON). A profile with events or a trace is timed from now: epochMs (Unix ms, 0 for
// an untimed profile) is when they start, so a scenario can place the events in time
// (the first at epochMs + the events' offsetS).
export function applyNetwork(profile, url = toxiproxyUrl(), names = PROXY_NAMES) {
  const proxies = proxiesAt(url, names);
  const before = snapshotOf(proxies, names);
  const epochMs = isTimed(profile) ? Date.now() : 0;
  const toxics = withEpoch(profile.toxics, epochMs);
  setToxics(url, proxies, () => toxics, names);
  return {
    profile: profile.name,
    toxics: profile.toxics.map((t) => t.name),
    toxiproxy: url,
    proxies: names,
    epochMs,
    ...(profile.network && profile.network.events ? { events: profile.network.events } : {}),
    before,
  };
}

// For teardown(): the toxics setup() found, back on every proxy (none when it found
// none). Never throws: with Toxiproxy gone there is nothing to put back.
export function restoreNetwork(applied, url = toxiproxyUrl()) {
  try {
    const before = (applied && applied.before) || {};
    const names = (applied && applied.proxies) || PROXY_NAMES;
    setToxics(url, proxiesAt(url, names), (p) => before[p] || [], names);
  } catch (err) {
    console.warn(`${err.message || err} (the toxics of this run may remain until the next run's setup)`);
  }
}

// The phone's radio's event log (tools/toxiproxy/radio_log.go), as the uplink link toxic of
// `proxy` lists it (every proxy's shares the device's one radio): null without a radio (or
// on a Toxiproxy that lists no radio_log). common/radio-log.js reads it.
export function radioLogAt(url = toxiproxyUrl(), proxy = PROXY_NAMES[0]) {
  const res = call('GET', url, `/proxies/${encodeURIComponent(proxy)}/toxics`);
  if (res.status !== 200) return null;
  return radioLogOf(res.json() || []);
}

// No toxics on any proxy (push.js calibrates its clock on a bare link). Throws like applyNetwork.
export function clearNetwork(url = toxiproxyUrl()) {
  setToxics(url, proxiesAt(url), () => []);
}
