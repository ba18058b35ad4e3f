#!/usr/bin/env node
/*
 * Soak as a bench: scenarios/soak.js (every transport at once, constant
 * arrival rates) for --duration under --profile, then from k6's raw samples:
 *   - each server's RSS slope in MB/hour (least squares over the memory lane's
 *     samples after the first 20 % of the run, the scenario's own warm-up), and
 *     over the second half alone (RSS that is still settling shows a smaller
 *     slope there; a leak keeps its slope);
 *   - each server's heap after a full GC and its slope in MB/hour over the same
 *     samples: the servers run with --expose-gc and this process asks them
 *     directly (not through Toxiproxy) every SAMPLE_SECONDS for their heap after
 *     a collection (/healthz?gc=1, gRPC Stats with metadata gc: 1). RSS alone
 *     overstates a short run: V8 and malloc keep taking pages for a while
 *     before RSS levels off, while the heap after GC is what is retained;
 *   - each transport's p50 drift between the first and the last ten minutes
 *     (a quarter of the run each when it is shorter than 40 minutes).
 * The scenario's own gates (RSS growth < 50 %, drift p50 < 1.5x, dropped
 * iterations) decide k6's exit code (99: one failed), shown beside the figures.
 *
 *   node bench/soak.js --duration 1h             # the nightly soak, under 3g
 *   node bench/soak.js --duration 10m --profile lte
 *   node bench/soak.js --duration 2m --leak 524288  # a server that leaks 512 KB per HTTP request
 *   node bench/soak.js --quick                    # 40 s under lan (a check that it runs)
 * Appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { loadProfile } from '../lib/profiles.js';
import { leakEnv, sampleHeap, withExposeGc } from '../dev/heap.js';
import {
  main,
  median,
  parseDuration,
  parseFlags,
  recordResult,
  round,
  runScenario,
  slope,
  table,
  withStack,
} from './lib/common.js';
import { rawSetting } from '../common/settings.js';

const WARMUP = 0.2; // as scenarios/soak.js
const DRIFT_WINDOW_S = 600;
const MB = 1024 * 1024;

const SERVERS = ['graphql', 'grpc'];
const mbPerHour = (perMsBytes) => (perMsBytes === null ? null : round((perMsBytes * 3600 * 1000) / MB, 1));
const mb = (point) => (point ? round(point[1] / MB, 1) : null);

// `samples`: k6's (the scenario's memory lane reports RSS); `heap`: from sampleHeap.
function memorySlopes(samples, heap, t0, seconds) {
  const after = t0 + WARMUP * seconds * 1000;
  const secondHalf = t0 + (seconds * 1000) / 2;
  const out = [];
  for (const server of SERVERS) {
    const points = samples
      .filter((s) => s.metric === 'server_rss_bytes' && s.tags.server === server)
      .map((s) => [s.time, s.value]);
    const late = points.filter(([t]) => t >= after);
    const heapPoints = heap.filter((h) => h.server === server).map((h) => [h.time, h.heapUsedBytes]);
    const heapLate = heapPoints.filter(([t]) => t >= after);
    out.push({
      server,
      samples: points.length,
      'RSS first MB': mb(points[0]),
      'RSS after warm-up MB': mb(late[0]),
      'RSS last MB': mb(points.at(-1)),
      'slope MB/hour': mbPerHour(slope(late)),
      'RSS slope 2nd half MB/hour': mbPerHour(slope(points.filter(([t]) => t >= secondHalf))),
      'heap samples': heapPoints.length,
      'heap after GC first MB': mb(heapPoints[0]),
      'heap after GC after warm-up MB': mb(heapLate[0]),
      'heap after GC last MB': mb(heapPoints.at(-1)),
      'heap slope MB/hour': mbPerHour(slope(heapLate)),
    });
  }
  return out;
}

function drift(samples, seconds) {
  const ops = samples.filter((s) => s.metric === 'op_duration');
  if (!ops.length) return { window: 0, rows: [] };
  const start = Math.min(...ops.map((s) => s.time));
  const end = Math.max(...ops.map((s) => s.time));
  const window = Math.min(DRIFT_WINDOW_S, seconds / 4);
  const rows = [];
  const transports = [...new Set(ops.map((s) => `${s.tags.transport} tls=${s.tags.tls}`))];
  for (const t of transports) {
    const mine = ops.filter((s) => `${s.tags.transport} tls=${s.tags.tls}` === t);
    const first = median(mine.filter((s) => s.time <= start + window * 1000).map((s) => s.value));
    const last = median(mine.filter((s) => s.time >= end - window * 1000).map((s) => s.value));
    rows.push({
      transport: t,
      ops: mine.length,
      'p50 first ms': round(first, 1),
      'p50 last ms': round(last, 1),
      'drift last/first': first && last ? round(last / first, 3) : null,
    });
  }
  return { window, rows };
}

await main(async () => {
  const defaults = { duration: '1h', profile: '3g' };
  const flags = parseFlags({ ...defaults, rate: 0, leak: 0, quick: false });
  // --quick: 40 s under lan, unless told otherwise.
  if (flags.quick)
    for (const [k, v] of Object.entries({ duration: '40s', profile: 'lan' }))
      if (flags[k] === defaults[k]) flags[k] = v;
  const seconds = parseDuration(flags.duration);
  loadProfile(flags.profile); // an unknown name fails here
  const env = {
    PROFILE: flags.profile,
    LOAD: 'soak',
    SOAK_DURATION: `${seconds}s`,
    // About sixty memory samples per run, at most one every 30 s.
    SAMPLE_SECONDS: String(Math.max(2, Math.min(30, Math.round(seconds / 60)))),
    ...(flags.rate ? { SOAK_RATE: String(flags.rate) } : {}),
  };
  console.log(
    `soak: ${flags.duration} under ${flags.profile}${flags.leak ? `, GraphQL server leaking ${flags.leak} bytes per HTTP request` : ''} ...`,
  );
  const started = Date.now();
  const serverEnv = withExposeGc(flags.leak ? leakEnv(flags.leak) : {});
  const sampleMs = Number(rawSetting(env, 'SAMPLE_SECONDS')) * 1000;
  let heap = [];
  const run = await withStack(
    async (stack) => {
      const stopHeap = sampleHeap(stack, {
        everyMs: sampleMs,
        maxSamples: Math.ceil((seconds * 1000) / sampleMs) + 30,
      });
      try {
        return await runScenario(stack, 'soak', {
          env,
          keep: (m) => m === 'op_duration' || m === 'server_rss_bytes',
          timeoutMs: (seconds + 300) * 1000,
        });
      } finally {
        heap = await stopHeap();
      }
    },
    { serverEnv },
  );
  const t0 = Math.min(...run.samples.map((s) => s.time));
  const memory = memorySlopes(run.samples, heap, t0, seconds);
  const d = drift(run.samples, seconds);
  const failed = Object.entries(run.summary.metrics).flatMap(([k, m]) =>
    Object.entries(m.thresholds || {})
      .filter(([, bad]) => bad)
      .map(([expr]) => `${k} ${expr}`),
  );
  const dropped = run.summary.metrics.dropped_iterations?.count ?? 0;

  console.log(
    `\nserver memory (slopes over the samples after the first ${WARMUP * 100} %, and RSS over the second half):`,
  );
  const columns = Object.keys(memory[0]);
  console.log(
    table(
      memory,
      columns.filter((c) => !c.startsWith('heap')),
    ),
  );
  console.log(table(memory, ['server', ...columns.filter((c) => c.startsWith('heap'))]));
  console.log(`\np50 drift, first vs last ${d.window >= 60 ? `${round(d.window / 60, 1)} minutes` : `${d.window} s`}:`);
  if (d.rows.length) console.log(table(d.rows, Object.keys(d.rows[0])));
  console.log(
    `\ndropped iterations: ${dropped}; k6 exit ${run.code}${failed.length ? `; failed thresholds: ${failed.join(', ')}` : ' (every soak threshold passed)'}`,
  );
  const wallSeconds = round((Date.now() - started) / 1000, 0);
  recordResult(
    'soak',
    {
      duration: flags.duration,
      profile: flags.profile,
      leakBytesPerRequest: flags.leak,
      k6Exit: run.code,
      failedThresholds: failed,
      dropped,
      driftWindowSeconds: d.window,
      memory,
      drift: d.rows,
      wallSeconds,
    },
    { quick: flags.quick },
  );
});
