/*
 * Soak: every transport at once, at constant arrival rates, for the nightly run.
 * HTTP/1.1 keep-alive, HTTP/2 (TLS) and gRPC GetBook run the study-000
 * operations at SOAK_RATE iterations/s each (default 2); WebSocket sessions
 * (a socket, WS_SOAK_OPS operations, close) arrive at the same rate. An open
 * model: when the servers slow down, iterations queue in more VUs, and what
 * cannot start is counted in dropped_iterations.
 * Memory: every SAMPLE_SECONDS the GraphQL server (/healthz) and the gRPC
 * server (Stats) report their RSS and heap (server_rss_bytes,
 * server_heap_bytes{server:graphql|grpc}); server_rss_growth is the RSS growth
 * over the first sample after warm-up (the first 20 % of the run), as a
 * fraction, so a leak fails a threshold. Drift: operations are tagged
 * part:first|middle|last (quarters of the run); op_drift is each late
 * operation's duration over its VU's own first-quarter median, so op_drift
 * p50 > 1 means the run got slower.
 * Servers: the GraphQL and gRPC servers behind Toxiproxy.
 * Default profile: lte. Default load: soak (SOAK_DURATION, default 1h).
 *
 *   npx k6pack up && k6 run scenarios/soak.js
 *   k6 run -e SOAK_DURATION=15m -e SOAK_RATE=10 scenarios/soak.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan soak --load ci`; dev/plan-headers.js writes it):
 *   soak under lte (R 70 ms, down 12000 / up 12000 kbit/s), load ci, open (mix) workload: 5 k6 scenarios, 65.0 s in all
 *     k6 scenario         executor               VUs or rate       start  duration  graceful stop
 *     http_keepalive_mix  constant-arrival-rate  2/1s (VUs 2..8)   0s     60s       5s
 *     http2_mix           constant-arrival-rate  2/1s (VUs 2..8)   0s     60s       5s
 *     ws_mix              constant-arrival-rate  2/1s (VUs 3..12)  0s     60s       5s
 *     grpc_mix            constant-arrival-rate  2/1s (VUs 2..8)   0s     60s       5s
 *     memory_mix          constant-arrival-rate  1/5s (VUs 1..1)   0s     60s       5s
 *   where the figures come from:
 *     VUs or rate, http_keepalive: the spec's mix at LOAD=ci's rate (SOAK_RATE); VUs for 2 x the iteration
 *     VUs or rate, http2: the spec's mix at LOAD=ci's rate (SOAK_RATE); VUs for 2 x the iteration
 *     VUs or rate, ws: the spec's mix at LOAD=ci's rate (SOAK_RATE); VUs for 2 x the iteration
 *     VUs or rate, grpc: the spec's mix at LOAD=ci's rate (SOAK_RATE); VUs for 2 x the iteration
 *     VUs or rate, memory: the spec's rate for this lane; the spec's VUs
 *     duration: the spec's mix at LOAD=ci's
 *     graceful stop: the spec's mix at LOAD=ci's
 *     start: every lane at once (a mix)
 * (end of the plan)
 */
import exec from 'k6/execution';
import http from 'k6/http';
import declare from './specs/soak.js';
import { graphqlOrigin, SETTINGS } from './lib/config.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { WARMUP_SHARE } from '../common/server-cost.js';
import { partNow, recordDrift } from './lib/drift.js';
import { progress } from './lib/load.js';
import { recordOp, serverHeap, serverRss, serverRssGrowth } from './lib/metrics.js';
import { bookId, bookOperation } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { wsSession } from './lib/sessions.js';

const decl = declare(SETTINGS);
const { WS_OPS } = decl;
const s = defineScenario(decl, { notes: memoryNotes });
export const { options, setup, teardown, handleSummary } = s;

function httpLane({ transport, tls }) {
  const part = partNow();
  const op = bookOperation(exec.vu.idInTest, exec.scenario.iterationInTest);
  const r = graphqlHttp({ transport, tls, ...op, tags: { ...op.tags, part } });
  recordDrift(transport, { part }, r);
}

function wsLane({ tls }) {
  return wsSession({
    tls,
    tags: {},
    maxOps: WS_OPS,
    op: async (socket, i) => {
      const part = partNow();
      const op = bookOperation(exec.vu.idInTest, exec.scenario.iterationInTest * WS_OPS + i);
      const r = await socket.execute({ ...op, tags: { ...op.tags, part } });
      recordDrift('ws', { part }, r);
      return r;
    },
  });
}

const channel = new Channel(newClient());

function grpcLane() {
  const part = partNow();
  const id = bookId(1 + (exec.scenario.iterationInTest % 1000));
  const r = channel.call(
    'GetBook',
    { id },
    { validate: (b) => (b && b.id === id ? null : `GetBook answered ${b && b.id}`), tags: { part } },
  );
  recordDrift('grpc', { part }, r);
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch).
export const runLane = s.dispatch({ http: httpLane, ws: wsLane, grpc: grpcLane });

// ---- memory ----

const statsChannel = new Channel(newClient());
const baseline = {};

function sample(server, rss, heap) {
  serverRss.add(rss, { server });
  serverHeap.add(heap, { server });
  if (progress() < WARMUP_SHARE) return;
  if (baseline[server] === undefined) baseline[server] = rss;
  serverRssGrowth.add((rss - baseline[server]) / baseline[server], { server });
}

export function sampleMemory() {
  const res = http.get(`${graphqlOrigin()}/healthz`, { tags: { name: 'healthz' }, timeout: '10s' });
  const okG = res.status === 200;
  recordOp({
    ok: okG,
    tags: { probe: 'memory', server: 'graphql' },
    checks: { 'healthz 200': okG },
    reason: `GET /healthz answered ${res.status}`,
  });
  if (okG) sample('graphql', res.json('rssBytes'), res.json('heapUsedBytes'));
  const r = statsChannel.call('Stats', {}, { record: false, tags: { probe: 'memory', server: 'grpc' } });
  if (r.ok) sample('grpc', Number(r.message.rssBytes), Number(r.message.heapUsedBytes));
}

function memoryNotes(data) {
  const lines = ['', 'server memory (last sample, growth since warm-up):'];
  for (const server of ['graphql', 'grpc']) {
    const rss = data.metrics[`server_rss_bytes{server:${server}}`];
    const growth = data.metrics[`server_rss_growth{server:${server}}`];
    const mb = rss ? `${(rss.values.value / 1048576).toFixed(1)} MB` : '-';
    const g = growth && growth.values.count ? `${(growth.values.max * 100).toFixed(1)}% max` : '-';
    lines.push(`  ${server}: rss ${mb}, growth ${g}`);
  }
  return lines;
}
