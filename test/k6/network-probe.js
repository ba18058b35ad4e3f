// Probe for test/faults.test.js and test/profiles-k6.test.js: applies PROFILE in setup
// like every scenario, then checks from inside the run that each of the four proxies
// carries exactly the profile's toxics, in order (Counter toxic_matches: 1 per proxy),
// and times requests on a warm connection (Trend warm_request).
//   -e ABORT=1  then a threshold with abortOnFail fails (does teardown still clean up?)
// WARM_REQUESTS (5) warm requests are timed one by one: a busy machine only adds time,
// so their minimum says which profile is on.
import http from 'k6/http';
import { sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { TARGET_DEFAULTS } from '../../common/defaults.js';
import { withEpoch } from '../../common/profiles.js';
import { sameSettings } from '../../common/toxics.js';
import {
  applyNetwork,
  networkProfile,
  PROXY_NAMES,
  profileTags,
  restoreNetwork,
  toxiproxyUrl,
} from '../../scenarios/lib/network.js';

const profile = networkProfile('lan');
const abort = Boolean(__ENV.ABORT);
const matches = new Counter('toxic_matches');
const forced = new Counter('forced_failures');
const warm = new Trend('warm_request', true);
const WARM_REQUESTS = 5;

export const options = {
  vus: 1,
  iterations: abort ? 1000 : 1,
  thresholds: abort ? { forced_failures: [{ threshold: 'count<1', abortOnFail: true }] } : {},
};

export function setup() {
  return applyNetwork(profile);
}

// Toxiproxy lists a proxy's toxics stream by stream, each in chain order, and fills in
// every attribute of a type: compare what the profile sets (a timed profile's at the
// epoch setup() gave it; a trace element by element), in the same grouping.
function sameToxics(got, epochMs) {
  const wanted = withEpoch(profile.toxics, epochMs || 0);
  const want = ['upstream', 'downstream'].flatMap((s) => wanted.filter((t) => t.stream === s));
  return (
    got.length === want.length &&
    want.every((w, i) => {
      const g = got[i];
      return g.name === w.name && g.type === w.type && g.stream === w.stream && sameSettings(w, g);
    })
  );
}

export default function (data) {
  const proxies = http.get(`${toxiproxyUrl()}/proxies`).json();
  for (const name of PROXY_NAMES) {
    if (sameToxics(proxies[name].toxics, data.epochMs)) matches.add(1, { proxy: name });
    else console.warn(`proxy ${name} has ${JSON.stringify(proxies[name].toxics)}`);
  }
  if (abort) {
    forced.add(1);
    sleep(1);
    return;
  }
  const url = __ENV.GRAPHQL_HTTP_URL || TARGET_DEFAULTS.GRAPHQL_HTTP_URL;
  const body = JSON.stringify({ query: '{ book(id: "book-1") { id } }' });
  const params = { headers: { 'Content-Type': 'application/json' } };
  http.post(url, body, params); // opens the connection
  for (let i = 0; i < WARM_REQUESTS; i++) {
    const t0 = Date.now();
    const res = http.post(url, body, params);
    if (res.status === 200) warm.add(Date.now() - t0, profileTags(profile));
  }
  console.log(`applied ${JSON.stringify(data)}`);
}

export function teardown(data) {
  restoreNetwork(data);
}
