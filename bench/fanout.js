#!/usr/bin/env node
/*
 * Fan-out at scale: scenarios/fanout.js, one k6 run per profile, transport and
 * subscriber count (each step sized for its own count), on a private stack.
 * Figures per run:
 *   - delivery p50 and p95 (publish -> each subscriber's receipt), spread p95
 *     (first to last subscriber of one event), missed, failed operations;
 *   - whether the step held its gates (latency budgets from the model, nothing
 *     missed, < 1 % failed): the largest subscriber count each transport holds
 *     with nothing missed, per profile;
 *   - memory per subscriber: the server's RSS (/proc) at its peak during the run
 *     over its RSS just before, and k6's peak RSS, per subscriber, at the largest
 *     count run (k6's as the slope between the two largest counts, which leaves
 *     its fixed cost out).
 * Through Toxiproxy a socket costs it two descriptors: a count that would take the
 * proxy past the open-files limit is run straight to the servers under lan (said
 * in the table) and skipped under shaped profiles. gRPC subscribers share their
 * VU's channel (a VU per SUBSCRIBERS_PER_VU = 1000).
 *
 *   node bench/fanout.js                                   # lan, lte; 10, 100, 1000, 10000; ~25 min
 *   node bench/fanout.js --profiles lan --subscribers 10,100,1000 --lanes ws,grpc_stream
 *   node bench/fanout.js --quick                           # lan, 10 and 100, ws and grpc_stream
 * Appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { k6RunArgs, requireK6 } from '../lib/k6.js';
import {
  BenchError,
  main,
  parseFlags,
  recordResult,
  round,
  ROOT,
  table,
  withStack,
  withTempDir,
} from './lib/common.js';

const LANES = ['ws', 'wss', 'grpc_stream', 'http_poll'];
// Lanes whose every subscriber has a connection of its own (gRPC's share a VU's channel).
const SOCKET_PER_SUBSCRIBER = new Set(['ws', 'wss', 'http_poll']);
const PER_VU = 1000;
const KB = 1024;

const rssOf = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * KB;
  } catch {
    return null;
  }
};
const hardFileLimit = () => {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const hard = line.trim().split(/\s+/)[4];
  return hard === 'unlimited' ? Infinity : Number(hard);
};

// Targets straight to the servers (no Toxiproxy): lan only.
const directTargets = (stack) => ({
  GRAPHQL_HTTP_URL: `http://127.0.0.1:${stack.ports.GRAPHQL_PORT}/graphql`,
  GRAPHQL_HTTPS_URL: `https://127.0.0.1:${stack.ports.GRAPHQL_TLS_PORT}/graphql`,
  GRAPHQL_WS_URL: `ws://127.0.0.1:${stack.ports.GRAPHQL_PORT}/graphql`,
  GRAPHQL_WSS_URL: `wss://127.0.0.1:${stack.ports.GRAPHQL_TLS_PORT}/graphql`,
  GRPC_ADDR: `127.0.0.1:${stack.ports.GRPC_PORT}`,
  GRPC_TLS_ADDR: `127.0.0.1:${stack.ports.GRPC_TLS_PORT}`,
});

// One k6 run of one lane at one subscriber count, with the processes' RSS sampled.
async function runOne(stack, dir, { profile, lane, n, events, direct }) {
  const summaryFile = join(dir, `${profile}-${lane}-${n}.json`);
  const env = {
    ...stack.env,
    ...(direct ? directTargets(stack) : {}),
    LOAD: 'smoke',
    PROFILE: profile,
    LANES: lane,
    SUBSCRIBERS: String(n),
    SUBSCRIBERS_PER_VU: String(PER_VU),
    FANOUT_EVENTS: String(events),
  };
  const servers = { graphql: stack.pids.graphql, grpc: stack.pids.grpc };
  const before = Object.fromEntries(Object.entries(servers).map(([k, pid]) => [k, rssOf(pid)]));
  const child = execa(
    requireK6(),
    k6RunArgs(join(ROOT, 'scenarios', 'fanout.js'), {
      env,
      args: ['--quiet', '--no-color', '--address', '', '--summary-export', summaryFile],
    }),
    {
      reject: false,
      stdin: 'ignore',
      timeout: 900_000,
      forceKillAfterDelay: 5000,
    },
  );
  const peak = { graphql: 0, grpc: 0, k6: 0 };
  const sampler = setInterval(() => {
    for (const [k, pid] of Object.entries(servers)) peak[k] = Math.max(peak[k], rssOf(pid) || 0);
    peak.k6 = Math.max(peak.k6, rssOf(child.pid) || 0);
  }, 250);
  const r = await child;
  clearInterval(sampler);
  if (![0, 99].includes(r.exitCode))
    throw new BenchError(`k6 (fanout ${profile} ${lane} ${n}) exited ${r.exitCode}: ${String(r.stderr).slice(-1500)}`);
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
  const m = (key) => summary.metrics[key];
  const key = `{scenario:${lane}_c${n}}`;
  const latency = m(`delivery_latency${key}`);
  const failed = m(`op_failed${key}`);
  // Held: every gate of the step (latency budgets, nothing missed or twice) and < 1 % failed
  // (k6's summary export marks a crossed threshold true).
  const gates = Object.entries(summary.metrics)
    .filter(([k]) => k.endsWith(key))
    .flatMap(([, v]) => Object.values(v.thresholds || {}));
  const failedRate = failed ? failed.passes / Math.max(1, failed.passes + failed.fails) : 0;
  const held = gates.length > 0 && gates.every((crossed) => crossed === false) && failedRate < 0.01;
  const server = lane === 'grpc_stream' ? 'grpc' : 'graphql';
  return {
    profile,
    transport: lane,
    subscribers: n,
    path: direct ? 'direct' : 'toxiproxy',
    'p50 ms': round(latency?.med ?? null, 1),
    'p95 ms': round(latency?.['p(95)'] ?? null, 1),
    'spread p95': round(m(`delivery_spread${key}`)?.['p(95)'] ?? null, 1),
    deliveries: latency?.count ?? 0,
    missed: m(`delivery_missed${key}`)?.count ?? null,
    duplicates: m(`delivery_duplicates${key}`)?.count ?? 0,
    'failed %': round(failedRate * 100, 2),
    held: held ? 'yes' : 'no',
    serverDeltaBytes: peak[server] && before[server] ? peak[server] - before[server] : null,
    k6PeakBytes: peak.k6 || null,
  };
}

await main(async () => {
  const flags = parseFlags({
    profiles: 'lan,lte',
    subscribers: '10,100,1000,10000',
    lanes: LANES.join(','),
    events: 100,
    quick: false,
  });
  if (flags.quick)
    Object.assign(flags, { profiles: 'lan', subscribers: '10,100', lanes: 'ws,grpc_stream', events: 10 });
  const profiles = flags.profiles.split(',');
  const counts = flags.subscribers.split(',').map(Number);
  const lanes = flags.lanes.split(',');
  for (const lane of lanes)
    if (!LANES.includes(lane)) throw new BenchError(`--lanes ${lane}: the fanout lanes are ${LANES.join(', ')}`);
  if (counts.some((n) => !Number.isInteger(n) || n < 1))
    throw new BenchError(`--subscribers ${flags.subscribers}: give whole numbers, e.g. 10,100,1000`);
  const fileLimit = hardFileLimit();
  const rows = [];
  const skipped = [];
  await withStack(async (stack) =>
    withTempDir(async (dir) => {
      for (const profile of profiles) {
        for (const lane of lanes) {
          for (const n of counts) {
            // Toxiproxy holds two descriptors per proxied connection.
            const direct = SOCKET_PER_SUBSCRIBER.has(lane) && 2 * n + 500 > fileLimit;
            if (direct && profile !== 'lan') {
              skipped.push(
                `${profile} ${lane} ${n}: ${2 * n} descriptors through Toxiproxy, over the open-files limit ${fileLimit}`,
              );
              continue;
            }
            const row = await runOne(stack, dir, { profile, lane, n, events: flags.events, direct });
            rows.push(row);
            console.error(
              `fanout ${profile} ${lane} ${n}${direct ? ' (direct)' : ''}: p50 ${row['p50 ms']} ms, p95 ${row['p95 ms']} ms, missed ${row.missed}, held ${row.held}`,
            );
          }
        }
      }
    }),
  );
  // The largest count each transport held with nothing missed, counts in order.
  const held = {};
  for (const profile of profiles) {
    held[profile] = {};
    for (const lane of lanes) {
      let most = 0;
      for (const row of rows
        .filter((r) => r.profile === profile && r.transport === lane)
        .sort((a, b) => a.subscribers - b.subscribers)) {
        if (row.held !== 'yes') break;
        most = row.subscribers;
      }
      held[profile][lane] = most;
    }
  }
  // Memory per subscriber at the largest count run (server), k6's as the slope of its peak.
  const memory = {};
  for (const lane of lanes) {
    const own = rows
      .filter((r) => r.transport === lane && r.profile === profiles[0])
      .sort((a, b) => a.subscribers - b.subscribers);
    const top = own.at(-1);
    const next = own.at(-2);
    if (!top) continue;
    memory[lane] = {
      subscribers: top.subscribers,
      'server KB/subscriber':
        top.serverDeltaBytes !== null ? round(top.serverDeltaBytes / top.subscribers / KB, 1) : null,
      'k6 KB/subscriber':
        next && top.k6PeakBytes && next.k6PeakBytes
          ? round((top.k6PeakBytes - next.k6PeakBytes) / (top.subscribers - next.subscribers) / KB, 1)
          : null,
    };
  }
  console.log(
    table(rows, [
      'profile',
      'transport',
      'subscribers',
      'path',
      'p50 ms',
      'p95 ms',
      'spread p95',
      'deliveries',
      'missed',
      'duplicates',
      'failed %',
      'held',
    ]),
  );
  console.log('\nlargest subscriber count held with nothing missed:');
  for (const [profile, byLane] of Object.entries(held))
    console.log(
      `  ${profile}: ${Object.entries(byLane)
        .map(([l, v]) => `${l} ${v || 'none'}`)
        .join(', ')}`,
    );
  console.log(
    '\nmemory per subscriber (server: peak RSS over the RSS before the run; k6: slope of its peak RSS between the two largest counts):',
  );
  console.log(
    table(
      Object.entries(memory).map(([lane, v]) => ({ transport: lane, ...v })),
      ['transport', 'subscribers', 'server KB/subscriber', 'k6 KB/subscriber'],
    ),
  );
  for (const s of skipped) console.log(`skipped: ${s}`);
  recordResult(
    'fanout',
    {
      profiles,
      subscribers: counts,
      events: flags.events,
      rows: rows.map(({ serverDeltaBytes, k6PeakBytes, ...r }) => r),
      held,
      memory,
      skipped,
    },
    { quick: flags.quick },
  );
});
