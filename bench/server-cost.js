#!/usr/bin/env node
/*
 * Server cost per operation: what the same GraphQL operation costs the reference
 * GraphQL server on each transport, and the gRPC server beside it; and what the
 * browser's RPC (Connect, gRPC-Web) costs the Connect server against gRPC on the
 * same call to the same Connect server. CPU time, not
 * wall time: the server process's utime + stime (/proc/<pid>/stat) over a slot,
 * divided by the operations k6 got right answers to in that slot. CPU time per
 * operation is far less sensitive to neighbours' load than latency or throughput.
 *
 * Lanes, straight to the servers (no proxy), k6 with --vus VUs for --seconds a slot
 * (bench/k6/server-cost.js):
 *   h1        HTTP/1.1 keep-alive, cleartext          (the baseline: x h1 = 1)
 *   h1-fresh  HTTP/1.1, a new connection per request (Connection: close)
 *   h1-tls    HTTP/1.1 keep-alive over TLS (k6 with GODEBUG=http2client=0)
 *   h2        HTTP/2 over TLS
 *   ws, wss   graphql-transport-ws, one socket per VU, operations one after another
 *   grpc      gRPC plaintext on the gRPC server (grpc-js), one channel per VU
 * and on the Connect server (@connectrpc/connect-node, one handler for all four):
 *   connect-grpc   gRPC on its h2c port, one channel per VU (what the three below are compared with)
 *   connect-json   Connect, JSON, HTTP/1.1 keep-alive
 *   connect-proto  Connect, binary protobuf, HTTP/1.1 keep-alive
 *   grpc-web       gRPC-Web (binary), HTTP/1.1 keep-alive
 * Operations: `book`, study 000's alternating query and mutation (bookOperation;
 * over gRPC, Connect and gRPC-Web GetBook), and `payload`, payload(size: 100000)
 * (Payload).
 *
 * k6 is the load: it is what the pack's users run, and its CPU is not what is
 * measured (the bench reads the server's own counters), though on a small machine
 * it bounds the request rate. Each slot is its own k6 run; rounds are interleaved
 * (lane order reversed every other round) after a warm-up slot per lane, and the
 * figures are medians over rounds, ratios taken within a round.
 *
 * Targets: ws within 1.15x of h1 (both cleartext); HTTP/2's cleartext-equivalent
 * work, h2 / h1-tls (both over TLS, so TLS cancels out), within 1.15x. TLS's own
 * extra cost is printed apart: h1-tls / h1 and wss / ws. The browser's RPC against
 * gRPC on the same call on the Connect server, each within 1.15x: connect-json /
 * connect-grpc, connect-proto / connect-grpc, grpc-web / connect-grpc. For
 * information, connect-grpc / grpc: the same gRPC call on the Connect server and on
 * the grpc-js server (what a gRPC call costs on the Connect server that could
 * replace the grpc-js server, against the grpc-js server it joins).
 *
 *   node bench/server-cost.js                        # 3 rounds of 5 s slots, ~6.5 min
 *   node bench/server-cost.js --lanes h1,ws --ops book --rounds 5
 *   node bench/server-cost.js --profile              # also: where the GraphQL server's time goes
 *   node bench/server-cost.js --keep-profile f.cpuprofile   # --profile, and keep the profile (+ f.cpuprofile.slots.json)
 *   node bench/server-cost.js --quick                # one short round (a check that it runs)
 * --profile runs the servers under V8's sampling profiler (bench/lib/cpu-profile-preload.js,
 * the profiler `node --cpu-prof` uses) and splits the GraphQL server's samples
 * of each slot into phases (dev/cpu-profile.js): parse, validate, cost,
 * execute, serialize, timing, framing, ... in microseconds per operation. The
 * profiler slows the server down: compare phases within a profile run, not with
 * an ordinary run.
 * Appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { monotonicMicros, readProfile, splitProfile } from '../dev/cpu-profile.js';
import { processCpuMs } from '../lib/process-cpu.js';
import {
  BenchError,
  main,
  median,
  parseFlags,
  recordResult,
  round,
  ROOT,
  runK6,
  table,
  withStack,
  withTempDir,
} from './lib/common.js';

const SCRIPT = join(ROOT, 'bench', 'k6', 'server-cost.js');
const BASE = 'h1';
const TARGET = 1.15;

// Each lane: the server it loads and where k6 reaches it.
const LANES = {
  h1: { server: 'graphql', target: (p) => ({ URL: `http://127.0.0.1:${p.GRAPHQL_PORT}/graphql` }) },
  'h1-fresh': { server: 'graphql', target: (p) => ({ URL: `http://127.0.0.1:${p.GRAPHQL_PORT}/graphql` }) },
  'h1-tls': {
    server: 'graphql',
    target: (p) => ({ URL: `https://127.0.0.1:${p.GRAPHQL_TLS_PORT}/graphql` }),
    processEnv: { GODEBUG: 'http2client=0' },
  },
  h2: { server: 'graphql', target: (p) => ({ URL: `https://127.0.0.1:${p.GRAPHQL_TLS_PORT}/graphql` }) },
  ws: { server: 'graphql', target: (p) => ({ URL: `ws://127.0.0.1:${p.GRAPHQL_PORT}/graphql` }) },
  wss: { server: 'graphql', target: (p) => ({ URL: `wss://127.0.0.1:${p.GRAPHQL_TLS_PORT}/graphql` }) },
  grpc: { server: 'grpc', target: (p) => ({ ADDR: `127.0.0.1:${p.GRPC_PORT}` }) },
  'connect-grpc': { server: 'connect', target: (p) => ({ ADDR: `127.0.0.1:${p.CONNECT_H2C_PORT}` }) },
  'connect-json': { server: 'connect', target: (p) => ({ URL: `http://127.0.0.1:${p.CONNECT_PORT}` }) },
  'connect-proto': { server: 'connect', target: (p) => ({ URL: `http://127.0.0.1:${p.CONNECT_PORT}` }) },
  'grpc-web': { server: 'connect', target: (p) => ({ URL: `http://127.0.0.1:${p.CONNECT_PORT}` }) },
};
const OPS = ['book', 'payload'];

// [label, numerator lane, denominator lane, target or null]
const COMPARISONS = [
  ['ws / h1 (cleartext)', 'ws', 'h1', TARGET],
  ['h2 / h1-tls (HTTP/2 cleartext-equivalent)', 'h2', 'h1-tls', TARGET],
  ['wss / h1-tls', 'wss', 'h1-tls', TARGET],
  ['TLS extra: h1-tls / h1', 'h1-tls', 'h1', null],
  ['TLS extra: wss / ws', 'wss', 'ws', null],
  ['fresh connection: h1-fresh / h1', 'h1-fresh', 'h1', null],
  ['connect-json / connect-grpc (Connect server)', 'connect-json', 'connect-grpc', TARGET],
  ['connect-proto / connect-grpc (Connect server)', 'connect-proto', 'connect-grpc', TARGET],
  ['grpc-web / connect-grpc (Connect server)', 'grpc-web', 'connect-grpc', TARGET],
  ['gRPC, Connect server / grpc-js: connect-grpc / grpc', 'connect-grpc', 'grpc', null],
];

// One k6 run of `lane` x `op`: { ops, cpuMs, usPerOp, opsPerSecond, from, to }.
async function slot(stack, lane, op, { seconds, vus }) {
  const spec = LANES[lane];
  const pid = stack.pids[spec.server];
  const from = monotonicMicros();
  const cpuBefore = processCpuMs(pid);
  const run = await runK6(SCRIPT, {
    env: { LANE: lane, OP: op, VUS: vus, SECONDS: seconds, ...spec.target(stack.ports) },
    processEnv: spec.processEnv ?? {},
    timeoutMs: (seconds + 60) * 1000,
  });
  const cpuMs = processCpuMs(pid) - cpuBefore;
  const to = monotonicMicros();
  const count = (name) => run.summary?.metrics[name]?.count ?? 0;
  const ops = count('ops');
  if (run.code !== 0 || !run.summary || count('op_errors') > 0 || ops === 0) {
    throw new BenchError(
      `${lane} ${op}: k6 exited ${run.code}${run.timedOut ? ' (timed out)' : ''}, ${ops} operations right, ${count('op_errors')} wrong: ${run.stderr.slice(-1500)}`,
    );
  }
  return { ops, cpuMs, usPerOp: (cpuMs * 1000) / ops, opsPerSecond: ops / seconds, from, to };
}

// Rounds of every lane x op; the first is a warm-up of `warmupSeconds` (not counted).
// Returns { 'op lane': [slot per counted round] }.
async function measure(stack, { lanes, ops, rounds, seconds, warmupSeconds, vus }) {
  const order = ops.flatMap((op) => lanes.map((lane) => [op, lane]));
  const out = Object.fromEntries(order.map(([op, lane]) => [`${op} ${lane}`, []]));
  for (let r = warmupSeconds > 0 ? 0 : 1; r <= rounds; r++) {
    const started = Date.now();
    for (const [op, lane] of r % 2 ? order : [...order].reverse()) {
      const s = await slot(stack, lane, op, { seconds: r === 0 ? warmupSeconds : seconds, vus });
      if (r > 0) out[`${op} ${lane}`].push(s);
    }
    console.log(
      `round ${r}${r === 0 ? ' (warm-up)' : ''} of ${rounds}: ${Math.round((Date.now() - started) / 1000)} s`,
    );
  }
  return out;
}

// Per-round ratio of two lanes' CPU per operation, median over rounds.
const ratio = (slots, a, b) => median(slots[a].map((s, i) => s.usPerOp / slots[b][i].usPerOp));

function report(slots, { lanes, ops }) {
  const rows = [];
  for (const op of ops) {
    for (const lane of lanes) {
      const s = slots[`${op} ${lane}`];
      rows.push({
        op,
        lane,
        server: LANES[lane].server,
        'ops/s': round(median(s.map((x) => x.opsPerSecond)), 0),
        'CPU us/op': round(median(s.map((x) => x.usPerOp)), 0),
        [`x ${BASE}`]: lanes.includes(BASE) ? round(ratio(slots, `${op} ${lane}`, `${op} ${BASE}`), 2) : null,
        'per round us/op': s.map((x) => Math.round(x.usPerOp)).join(' '),
      });
    }
  }
  const comparisons = [];
  for (const op of ops) {
    for (const [label, a, b, target] of COMPARISONS) {
      if (!lanes.includes(a) || !lanes.includes(b)) continue;
      const value = round(ratio(slots, `${op} ${a}`, `${op} ${b}`), 2);
      comparisons.push({
        op,
        comparison: label,
        ratio: value,
        target: target ? `<= ${target}` : '-',
        verdict: target ? (value <= target ? 'met' : 'MISSED') : '-',
      });
    }
  }
  return { rows, comparisons };
}

// --profile: each slot's share of the GraphQL server's CPU profile, by phase, in
// us/op. The profiler samples wall time on the main thread, so a phase's share of
// a slot's samples is scaled to the slot's CPU time (/proc: every thread, user
// and system): the parts add up to the measured CPU per operation.
function profileReport(profile, slots, { lanes, ops }) {
  const rows = [];
  for (const op of ops) {
    for (const lane of lanes.filter((l) => LANES[l].server === 'graphql')) {
      const s = slots[`${op} ${lane}`];
      const cpuMs = {};
      for (const x of s) {
        const split = splitProfile(profile, x);
        for (const [k, ms] of Object.entries(split))
          if (k !== 'total' && split.total > 0) cpuMs[k] = (cpuMs[k] ?? 0) + (ms / split.total) * x.cpuMs;
      }
      const n = s.reduce((sum, x) => sum + x.ops, 0);
      const perOp = Object.entries(cpuMs)
        .sort((a, b) => b[1] - a[1])
        .map(([k, ms]) => [k, round((ms * 1000) / n, 1)]);
      rows.push({
        op,
        lane,
        'CPU us/op': round((s.reduce((sum, x) => sum + x.cpuMs, 0) * 1000) / n, 0),
        ...Object.fromEntries(perOp),
      });
    }
  }
  return rows;
}

// Servers started with this environment write <dir>/<pid>.cpuprofile as they exit.
const profileEnv = (dir) => ({
  NODE_OPTIONS: `--import=${pathToFileURL(join(ROOT, 'bench', 'lib', 'cpu-profile-preload.js')).href}`,
  CPU_PROFILE_DIR: dir,
});

function profileOf(dir, pid) {
  const file = join(dir, `${pid}.cpuprofile`);
  if (!existsSync(file)) throw new BenchError(`no CPU profile of the GraphQL server (pid ${pid}) in ${dir}`);
  return readProfile(file);
}

await main(async () => {
  const flags = parseFlags({
    lanes: Object.keys(LANES).join(','),
    ops: OPS.join(','),
    rounds: 3,
    seconds: 5,
    vus: 8,
    profile: false,
    keepProfile: '',
    quick: false,
  });
  if (flags.keepProfile) flags.profile = true;
  const lanes = flags.lanes.split(',').map((l) => l.trim());
  const ops = flags.ops.split(',').map((o) => o.trim());
  for (const l of lanes) if (!LANES[l]) throw new BenchError(`unknown lane ${l}: use ${Object.keys(LANES).join(', ')}`);
  for (const o of ops) if (!OPS.includes(o)) throw new BenchError(`unknown op ${o}: use ${OPS.join(', ')}`);
  if (!(flags.rounds >= 1 && flags.seconds >= 1 && flags.vus >= 1))
    throw new BenchError('--rounds, --seconds and --vus must be at least 1');
  // --quick: one round of 1 s slots, 2 VUs, no warm-up.
  const opts = flags.quick
    ? { lanes, ops, rounds: 1, seconds: 1, warmupSeconds: 0, vus: 2 }
    : { lanes, ops, rounds: flags.rounds, seconds: flags.seconds, warmupSeconds: 2, vus: flags.vus };
  const started = Date.now();
  const figures = await withTempDir(async (dir) => {
    const serverEnv = flags.profile ? profileEnv(dir) : {};
    let slots;
    const pids = {};
    await withStack(
      async (stack) => {
        Object.assign(pids, stack.pids);
        slots = await measure(stack, opts);
      },
      { serverEnv },
    );
    const { rows, comparisons } = report(slots, opts);
    console.log(
      `\nServer CPU per operation (k6, ${opts.vus} VUs, ${opts.seconds} s slots, median of ${opts.rounds} rounds; x ${BASE}: ratio to GraphQL over HTTP/1.1 keep-alive, whatever the lane's server):`,
    );
    console.log(table(rows, Object.keys(rows[0])));
    if (comparisons.length) {
      console.log('\nComparisons (median of per-round ratios of CPU per operation):');
      console.log(table(comparisons, Object.keys(comparisons[0])));
    }
    const out = { rows, comparisons };
    if (flags.profile) {
      const profile = profileOf(dir, pids.graphql);
      if (flags.keepProfile) {
        writeFileSync(flags.keepProfile, JSON.stringify(profile));
        const windows = Object.fromEntries(
          Object.entries(slots).map(([k, s]) => [k, s.map(({ from, to, ops }) => ({ from, to, ops }))]),
        );
        writeFileSync(`${flags.keepProfile}.slots.json`, JSON.stringify(windows));
        console.log(
          `\nprofile: ${flags.keepProfile} (open in Chrome DevTools > Performance); slot windows (monotonic us): ${flags.keepProfile}.slots.json`,
        );
      }
      const phases = profileReport(profile, slots, opts);
      const columns = [...new Set(phases.flatMap((r) => Object.keys(r)))];
      console.log('\nGraphQL server CPU profile, us per operation by phase (profiler on: compare within this table):');
      console.log(table(phases, columns));
      out.profile = phases;
    }
    return out;
  });
  const wallSeconds = round((Date.now() - started) / 1000, 0);
  console.log(`\nserver-cost: wall time ${wallSeconds} s`);
  const { lanes: _l, ops: _o, ...settings } = opts;
  recordResult(
    'server-cost',
    { load: 'k6', ...settings, wallSeconds, profile: flags.profile, ...figures },
    { quick: flags.quick },
  );
});
