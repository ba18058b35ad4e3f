#!/usr/bin/env node
/*
 * Scale on this machine:
 *   ws    concurrent graphql-transport-ws connections held open against the
 *         reference GraphQL server (straight to it: through Toxiproxy every
 *         connection would cost two more sockets and a goroutine pair), each
 *         running a book query every --op-every seconds. Target: >= 10,000
 *         without errors. Client: bench/lib/ws-swarm.js, one Node process;
 *         k6 needs a JS runtime per VU, so its memory per VU holding a socket is
 *         measured apart (part k6: --k6-vus VUs) and the 10,000-VU cost extrapolated.
 *         Memory per connection: server RSS (/healthz) and client RSS, held vs before.
 *   knee  per transport (HTTP/1.1 keep-alive, HTTP/2, WebSocket, gRPC unary),
 *         rising constant request rates through the proxies under lan, with the
 *         pack's clients (bench/k6/knee.js): the highest rate whose p95 stays
 *         within twice the lowest p95 of the steps so far (at least 2 ms), with < 1 % failed or
 *         dropped and >= 95 % of the rate done. k6, Toxiproxy and the server
 *         share the machine's cores: the knee is the whole box's.
 *
 *   node bench/scale.js                                  # ~6 minutes
 *   node bench/scale.js --parts ws --connections 18000
 *   node bench/scale.js --quick                          # small numbers (a check that it runs)
 * Raises its open-files limit to the hard limit (re-running itself under
 * `ulimit -n`); appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { requireK6, k6RunArgs } from '../lib/k6.js';
import { BenchError, main, parseFlags, recordResult, round, ROOT, runK6, table, withStack } from './lib/common.js';
import { rawSetting } from '../common/settings.js';

const MB = 1024 * 1024;
const WS_TARGET = 10000;
const KNEE_TRANSPORTS = ['http-keepalive', 'http2', 'ws', 'grpc'];
// A p95 below this counts as this when deciding "doubled": k6's gRPC and
// WebSocket timings have 1 ms resolution, and sub-ms swings on a shared
// machine are noise, not load.
const P95_FLOOR_MS = 2;

// The open-files limit (soft, hard) from /proc/self/limits.
function fileLimits() {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const [soft, hard] = line
    .trim()
    .split(/\s+/)
    .slice(3, 5)
    .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
  return { soft, hard };
}

// Node cannot raise its own limit: run this script again under `ulimit -n <hard>`.
async function ensureFileLimit() {
  const { soft, hard } = fileLimits();
  if (soft >= hard || rawSetting(process.env, 'K6PACK_BENCH_ULIMIT')) return { soft, hard };
  const limit = hard === Infinity ? 'unlimited' : String(hard);
  const child = spawn(
    'sh',
    ['-c', `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, ...process.argv.slice(1)],
    {
      stdio: 'inherit',
      env: { ...process.env, K6PACK_BENCH_ULIMIT: '1' },
    },
  );
  const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  process.exit(code);
}

const rssOf = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    return null;
  }
};

async function serverRss(ports) {
  const res = await fetch(`http://127.0.0.1:${ports.GRAPHQL_PORT}/healthz`, { signal: AbortSignal.timeout(10000) });
  return (await res.json()).rssBytes;
}

// ---- ws: the swarm ----

function runSwarm(options, onOpened) {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'lib', 'ws-swarm.js'), JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bound = setTimeout(
    () => child.kill('SIGKILL'),
    (options.connections / options.rampPerSecond + options.holdSeconds + 120) * 1000,
  );
  return new Promise((resolve, reject) => {
    let done = null;
    createInterface({ input: child.stdout }).on('line', async (line) => {
      const msg = JSON.parse(line);
      if (msg.event === 'opened') await onOpened(msg, child.pid);
      if (msg.event === 'done') done = msg;
    });
    child.on('exit', (code) => {
      clearTimeout(bound);
      if (done) resolve(done);
      else reject(new BenchError(`ws-swarm exited ${code} before finishing`));
    });
  });
}

async function wsConnections(stack, flags) {
  const url = `ws://127.0.0.1:${stack.ports.GRAPHQL_PORT}/graphql`;
  const before = await serverRss(stack.ports);
  let held = null;
  const result = await runSwarm(
    {
      url,
      connections: flags.connections,
      rampPerSecond: flags.ramp,
      holdSeconds: flags.hold,
      opEverySeconds: flags.opEvery,
    },
    // Mid-hold, once the ramp is over: the server's memory with every socket open.
    async (opened) => {
      await sleep(Math.min(flags.hold / 2, 10) * 1000);
      held = { server: await serverRss(stack.ports), opened };
    },
  );
  const n = result.opened;
  const row = {
    connections: flags.connections,
    opened: n,
    'open failed': result.openFailed,
    'closed early': result.closedEarly,
    ops: result.ops,
    'ops failed': result.opFailed,
    'op p50 ms': result.p50,
    'op p95 ms': result.p95,
    'ramp s': round(result.rampSeconds, 1),
    'server KB/conn': held && n ? round((held.server - before) / n / 1024, 1) : null,
    'client KB/conn': n ? round((result.rssBytes - result.baseRssBytes) / n / 1024, 1) : null,
    'server RSS MB': held ? round(held.server / MB, 0) : null,
    errors:
      Object.entries(result.errors)
        .map(([k, v]) => `${v}x ${k}`)
        .join('; ') || '-',
  };
  const clean = n === flags.connections && !result.openFailed && !result.closedEarly && !result.opFailed;
  row.verdict = n >= WS_TARGET && clean ? 'met' : clean ? `below ${WS_TARGET}` : 'errors';
  return row;
}

// k6's RSS holding `vus` sockets (one GraphqlWs per VU, an operation every 5 s).
async function k6Rss(stack, vus, seconds) {
  const script = join(ROOT, 'bench', 'k6', 'ws-hold.js');
  const env = { GRAPHQL_WS_URL: `ws://127.0.0.1:${stack.ports.GRAPHQL_PORT}/graphql`, VUS: vus, SECONDS: seconds };
  const child = execa(requireK6(), k6RunArgs(script, { env, args: ['--quiet', '--no-color', '--address', ''] }), {
    reject: false,
    timeout: (seconds + 120) * 1000,
  });
  let peak = 0;
  while (child.exitCode === null && child.pid) {
    peak = Math.max(peak, rssOf(child.pid) || 0);
    await sleep(500);
  }
  const r = await child;
  if (r.exitCode !== 0) throw new BenchError(`k6 holding ${vus} sockets exited ${r.exitCode}: ${r.stderr.slice(-800)}`);
  return peak;
}

async function k6PerVu(stack, flags) {
  const small = Math.max(10, Math.round(flags.k6Vus / 5));
  const a = await k6Rss(stack, small, flags.k6Seconds);
  const b = await k6Rss(stack, flags.k6Vus, flags.k6Seconds);
  const perVu = (b - a) / (flags.k6Vus - small);
  return {
    [`k6 RSS, ${small} VUs`]: `${round(a / MB, 0)} MB`,
    [`k6 RSS, ${flags.k6Vus} VUs`]: `${round(b / MB, 0)} MB`,
    'k6 per VU': `${round(perVu / MB, 2)} MB`,
    [`k6 at ${WS_TARGET} VUs (extrapolated)`]: `${round((a + perVu * (WS_TARGET - small)) / MB / 1024, 1)} GB`,
  };
}

// ---- knee ----

async function kneeStep(stack, transport, rate, seconds) {
  const run = await runK6(join(ROOT, 'bench', 'k6', 'knee.js'), {
    env: { ...stack.env, TRANSPORT: transport, RATE: rate, SECONDS: seconds },
    timeoutMs: (seconds + 90) * 1000,
  });
  if (!run.summary)
    throw new BenchError(`knee step ${transport} at ${rate}/s: k6 exited ${run.code}: ${run.stderr.slice(-800)}`);
  const m = run.summary.metrics;
  const ops = m.op_duration?.count ?? 0;
  // k6's summary export counts a Rate's non-zero samples (failures here) as "passes".
  const total = m.op_failed ? m.op_failed.fails + m.op_failed.passes : 0;
  const dropped = (m.dropped_iterations?.count ?? 0) + (m.knee_dropped?.count ?? 0);
  const wanted = rate * seconds;
  return {
    rate,
    achieved: round(ops / seconds, 0),
    p50: round(m.op_duration?.med, 2),
    p95: round(m.op_duration?.['p(95)'], 2),
    failedShare: total && m.op_failed.passes / total,
    droppedShare: dropped / wanted,
  };
}

async function knee(stack, transport, flags) {
  await stack.toxiproxy.reset();
  const steps = [];
  // The unloaded p95: the lowest so far (the first step also pays warm-up: new VUs, new connections).
  let base = Infinity;
  let kneeRate = null;
  for (let rate = flags.kneeStart; rate <= flags.kneeMax; rate = Math.round(rate * flags.kneeFactor)) {
    const s = await kneeStep(stack, transport, rate, flags.kneeSeconds);
    if (s.p95 !== null) base = Math.min(base, s.p95);
    const ok =
      s.p95 !== null &&
      s.p95 <= 2 * Math.max(base, P95_FLOOR_MS) &&
      s.failedShare < 0.01 &&
      s.droppedShare < 0.01 &&
      s.achieved >= 0.95 * rate;
    steps.push({ ...s, ok });
    if (!ok) break;
    kneeRate = rate;
  }
  const last = steps.at(-1);
  return {
    transport,
    'knee ops/s': kneeRate,
    'lowest p95 ms': base === Infinity ? null : base,
    'p95 at knee ms': steps.find((s) => s.rate === kneeRate)?.p95 ?? null,
    'first step past it': last.ok
      ? `none up to ${last.rate}/s`
      : `${last.rate}/s: p95 ${last.p95} ms, ${last.achieved}/s done, ${(last.failedShare * 100).toFixed(1)} % failed, ${(last.droppedShare * 100).toFixed(1)} % dropped`,
    steps: steps.map((s) => `${s.rate}:${s.p95}`).join(' '),
  };
}

await main(async () => {
  const flags = parseFlags({
    parts: 'ws,k6,knee',
    connections: WS_TARGET,
    ramp: 500,
    hold: 60,
    opEvery: 30,
    k6Vus: 500,
    k6Seconds: 8,
    kneeStart: 100,
    kneeFactor: 1.6,
    kneeMax: 20000,
    kneeSeconds: 6,
    transports: KNEE_TRANSPORTS.join(','),
    quick: false,
  });
  if (flags.quick)
    Object.assign(flags, {
      connections: 200,
      hold: 4,
      opEvery: 2,
      k6Vus: 30,
      k6Seconds: 3,
      kneeStart: 50,
      kneeMax: 80,
      kneeSeconds: 2,
      transports: 'http-keepalive',
    });
  const limits = await ensureFileLimit();
  if (flags.parts.includes('ws') && limits.soft < flags.connections + 1000) {
    throw new BenchError(
      `open-files limit is ${limits.soft} (hard ${limits.hard}): ${flags.connections} connections need ${flags.connections + 1000}; raise the hard limit (ulimit -Hn) or use --connections`,
    );
  }
  const started = Date.now();
  const figures = { limits: { soft: limits.soft, hard: limits.hard } };
  await withStack(async (stack) => {
    if (flags.parts.includes('ws')) {
      const row = await wsConnections(stack, flags);
      console.log(
        `\nWebSocket connections held ${flags.hold} s, an operation every ${flags.opEvery} s each (target >= ${WS_TARGET} without errors):`,
      );
      console.log(table([row], Object.keys(row)));
      figures.ws = row;
    }
    if (flags.parts.includes('k6')) {
      const k6 = await k6PerVu(stack, flags);
      console.log('\nk6 as the client instead (one VU per socket):');
      console.log(table([k6], Object.keys(k6)));
      figures.k6 = k6;
    }
    if (flags.parts.includes('knee')) {
      const rows = [];
      for (const t of flags.transports.split(',')) rows.push(await knee(stack, t.trim(), flags));
      console.log(
        `\nknee under lan, through the proxies (steps of ${flags.kneeSeconds} s, x${flags.kneeFactor}; rate:p95 ms):`,
      );
      console.log(table(rows, Object.keys(rows[0])));
      figures.knee = rows;
    }
  });
  const wallSeconds = round((Date.now() - started) / 1000, 0);
  console.log(`\nscale: wall time ${wallSeconds} s`);
  recordResult('scale', { flags, wallSeconds, ...figures }, { quick: flags.quick });
});
