// Probe for bench/tcp.js and test/tcp-k6.test.js: GraphQL payload(size) answers of
// several sizes on a new connection per request (Connection: close), on a kept-alive
// connection whose window earlier answers of the same size opened, on a kept-alive
// connection after it sat idle, and BATCH answers at once over BATCH kept
// connections. One VU, one iteration; applies PROFILE in setup like every scenario
// (KEEP_TOXICS=1: leaves Toxiproxy alone).
//
//   -e MODES=fresh,warm,idle,batch  -e SIZES=10000,100000,1000000  -e SAMPLES=3
//   -e IDLE_MS=2000  -e IDLE_SIZE=100000  -e BATCH=6  -e BATCH_SIZE=100000
//
// Trends (ms): fresh_<size>, warm_<size>, idle_<size>, batch_<size> (the whole
// batch); server_<kind>_<size>: the server's own time (Server-Timing total).
import http from 'k6/http';
import { sleep } from 'k6';
import { Trend } from 'k6/metrics';
import { applyNetwork, networkProfile, restoreNetwork } from '../../scenarios/lib/network.js';
import { rawSetting, setting, settingNames } from '../../common/settings.js';

const profile = networkProfile('lan');
const MODES = settingNames(__ENV, 'MODES', ['fresh', 'warm', 'idle'], ['fresh', 'warm', 'idle', 'batch']);
const SIZES = setting(__ENV, 'SIZES', [10000, 100000, 1000000]);
const BATCH = setting(__ENV, 'BATCH');
const BATCH_SIZE = setting(__ENV, 'BATCH_SIZE');
const SAMPLES = setting(__ENV, 'SAMPLES');
const IDLE_MS = setting(__ENV, 'IDLE_MS');
const IDLE_SIZE = setting(__ENV, 'IDLE_SIZE');
const keep = Boolean(rawSetting(__ENV, 'KEEP_TOXICS'));
// -e TLS=true: over HTTPS (HTTP/2 on kept connections), where TLS would notice a byte out of place.
const TLS = setting(__ENV, 'TLS');
const url = TLS ? setting(__ENV, 'GRAPHQL_HTTPS_URL') : setting(__ENV, 'GRAPHQL_HTTP_URL');
// Fresh requests go to another host name (same address), so they never take or close the kept connection.
const FRESH_HOST = 'fresh.k6pack.test';

export const options = {
  vus: 1,
  iterations: 1,
  hosts: { [FRESH_HOST]: '127.0.0.1' },
  batchPerHost: BATCH,
  insecureSkipTLSVerify: true, // the servers' self-signed certificate
  summaryTrendStats: ['min', 'med', 'max', 'count'],
  setupTimeout: '60s',
};

const trends = {};
const trend = (name) => (trends[name] ||= new Trend(name, true));
// Trends must exist in the init context: one per kind and size.
for (const size of [...SIZES, IDLE_SIZE, BATCH_SIZE])
  for (const kind of ['fresh', 'warm', 'idle', 'batch']) for (const p of ['', 'server_']) trend(`${p}${kind}_${size}`);

export function setup() {
  return keep ? {} : { network: applyNetwork(profile) };
}

export function teardown(data) {
  if (!keep) restoreNetwork(data.network);
}

const serverMs = (res) => Number((/total;dur=([\d.]+)/.exec(res.headers['Server-Timing'] || '') || [])[1] || 0);

const request = (size, fresh) => ({
  method: 'POST',
  url: fresh ? url.replace('127.0.0.1', FRESH_HOST) : url,
  body: JSON.stringify({ query: `{ payload(size: ${size}) { size data } }` }),
  params: {
    headers: { 'Content-Type': 'application/json', ...(fresh ? { Connection: 'close' } : {}) },
    timeout: '120s',
  },
});

function checked(res, size) {
  if (res.status !== 200 || res.json('data.payload.size') !== size || res.json('data.payload.data').length !== size) {
    throw new Error(`payload(${size}) failed: ${res.status} ${res.error || ''}`);
  }
  return serverMs(res);
}

function fetch(size, fresh) {
  const r = request(size, fresh);
  const t0 = Date.now();
  const res = http.request(r.method, r.url, r.body, r.params);
  const ms = Date.now() - t0;
  return { ms, server: checked(res, size) };
}

// BATCH answers at once, one per kept connection (batchPerHost).
function batch(size) {
  const reqs = Array.from({ length: BATCH }, () => request(size, false));
  const t0 = Date.now();
  const res = http.batch(reqs.map((r) => [r.method, r.url, r.body, r.params]));
  const ms = Date.now() - t0;
  return { ms, server: Math.max(...res.map((x) => checked(x, size))) };
}

function record(kind, size, r) {
  trend(`${kind}_${size}`).add(r.ms);
  trend(`server_${kind}_${size}`).add(r.server);
}

export default function () {
  for (const size of SIZES) {
    if (MODES.includes('fresh')) for (let i = 0; i < SAMPLES; i++) record('fresh', size, fetch(size, true));
    if (MODES.includes('warm')) {
      fetch(size, false); // opens the kept connection's window (not recorded)
      for (let i = 0; i < SAMPLES; i++) record('warm', size, fetch(size, false));
    }
  }
  if (MODES.includes('idle')) {
    fetch(IDLE_SIZE, false);
    for (let i = 0; i < SAMPLES; i++) {
      sleep(IDLE_MS / 1000);
      record('idle', IDLE_SIZE, fetch(IDLE_SIZE, false));
    }
  }
  if (MODES.includes('batch')) {
    batch(BATCH_SIZE); // opens the connections and their windows (not recorded)
    batch(BATCH_SIZE);
    for (let i = 0; i < SAMPLES; i++) record('batch', BATCH_SIZE, batch(BATCH_SIZE));
  }
}
