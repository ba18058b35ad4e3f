// Probe for test/faults.test.js: REQUESTS GraphQL POSTs, each on its own connection
// (Connection: close; fault toxicity is decided per connection), classified by outcome.
//   -e SIZE=n     ask for a payload of n bytes instead of a small book
//   -e TIMEOUT=d  the request timeout (k6 duration), for stalls
//   -e WARM=1     reuse one kept-alive connection instead (for latency spread)
// Counters: outcome_ok, outcome_reset, outcome_timeout, outcome_eof, outcome_other; Trend: rtt.
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import { TARGET_DEFAULTS } from '../../common/defaults.js';
import { applyNetwork, networkProfile, restoreNetwork } from '../../scenarios/lib/network.js';

const profile = networkProfile('lan');
const REQUESTS = Number(__ENV.REQUESTS || 100);
const SIZE = Number(__ENV.SIZE || 0);
const OUTCOMES = ['ok', 'reset', 'timeout', 'eof', 'other'];
const counters = Object.fromEntries(OUTCOMES.map((o) => [o, new Counter(`outcome_${o}`)]));
const rtt = new Trend('rtt', true);

export const options = { vus: 1, iterations: 1, summaryTrendStats: ['min', 'med', 'avg', 'p(90)', 'max', 'count'] };

export function setup() {
  return applyNetwork(profile);
}

export function teardown(data) {
  restoreNetwork(data);
}

function outcome(res) {
  if (res.error_code === 0 && res.status === 200) return 'ok';
  const e = String(res.error);
  if (/reset by peer/.test(e)) return 'reset';
  if (res.error_code === 1050 || /timeout/i.test(e)) return 'timeout';
  if (/EOF/.test(e)) return 'eof';
  console.warn(`other outcome: status ${res.status}, error_code ${res.error_code}: ${e}`);
  return 'other';
}

export default function () {
  const query = SIZE > 0 ? `{ payload(size: ${SIZE}) { size data } }` : '{ book(id: "book-1") { id } }';
  const headers = { 'Content-Type': 'application/json', ...(__ENV.WARM ? {} : { Connection: 'close' }) };
  const url = __ENV.GRAPHQL_HTTP_URL || TARGET_DEFAULTS.GRAPHQL_HTTP_URL;
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = Date.now();
    const res = http.post(url, JSON.stringify({ query }), { headers, timeout: __ENV.TIMEOUT || '10s' });
    const o = outcome(res);
    counters[o].add(1);
    if (o === 'ok') rtt.add(Date.now() - t0);
  }
}
