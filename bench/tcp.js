#!/usr/bin/env node
/*
 * TCP on the pack's link (tools/toxiproxy/link.go, tcp.go) against the round-trip
 * model (common/model.js), part by part:
 *   overhead   a round trip through the shaped proxy (Node ping-pong of 20 B through
 *              an extra proxy of the stack's Toxiproxy, link toxics of the profile)
 *              beside the configured round trip + bytes/rate, and through the same
 *              proxy unshaped: what the emulator itself costs (target: at most 0.3 ms
 *              beyond the model).
 *   slowstart  10 KB, 100 KB and 1 MB answers on a new connection and on a kept one
 *              (window open), under 3g and lte, with slow start and without (+ideal);
 *              and a kept-alive answer of 100 KB after 2 s idle (the window restarts).
 *              p50 over the model's (target 0.9-1.1). dev/k6/tcp-probe.js.
 *   study001   compound vs atomic over HTTP/2 vs atomic over 6 HTTP/1.1 connections
 *              under 3g+loss3 and 3g+loss3+shared (scenarios/compound-vs-parallel.js): p50 and p95 per
 *              lane beside the model's p50 and p95 (the tail operation with the loss
 *              stall at its 95th percentile).
 *   study000   ws vs http keep-alive vs https fresh under lte+loss1 and 3g+burst
 *              (scenarios/ws-vs-http.js): the same.
 * fios and cable fidelity (the same bench as today's) is bench/fidelity.js --profiles fios,cable.
 *
 *   node bench/tcp.js                         # every part, ~45 minutes
 *   node bench/tcp.js --parts overhead,slowstart --profiles lte
 *   node bench/tcp.js --quick                 # tiny: overhead under fios, 10/100 KB under lte, no studies
 * Appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { once } from 'node:events';
import { createServer, connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { linkOf, operation } from '../common/model.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import {
  BenchError,
  main,
  median,
  parseFlags,
  quantile,
  recordResult,
  round,
  ROOT,
  runK6,
  runScenario,
  stat,
  table,
  withStack,
} from './lib/common.js';

const PROBE = join(ROOT, 'dev', 'k6', 'tcp-probe.js');
const RATIO = [0.9, 1.1];
const OVERHEAD_TARGET_MS = 0.3;
const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');
const verdict = (ratio) => (ratio === null ? 'no data' : ratio >= RATIO[0] && ratio <= RATIO[1] ? 'met' : 'MISSED');

// ---- overhead: ping-pong through an extra proxy ----

function echoServer() {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  return server;
}

// Round trips of `size` bytes on one connection, after one that pays the handshake.
async function pingPong(port, { n, size }) {
  const sock = connect(port, '127.0.0.1');
  sock.setNoDelay(true);
  await once(sock, 'connect');
  const msg = Buffer.alloc(size, 120);
  const times = [];
  let want = 0;
  let got = 0;
  let done = null;
  sock.on('data', (d) => {
    got += d.length;
    if (got >= want && done) done();
  });
  try {
    for (let i = 0; i <= n; i++) {
      got = 0;
      want = size;
      const arrived = new Promise((resolve) => (done = resolve));
      const t0 = process.hrtime.bigint();
      sock.write(msg);
      await arrived;
      if (i > 0) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 3))); // lands at any phase of a ms
    }
  } finally {
    sock.destroy();
  }
  return times;
}

async function overhead(stack, profiles, { quick }) {
  const echo = echoServer();
  await once(echo, 'listening');
  const tp = stack.toxiproxy;
  const name = 'bench_echo';
  const created = await tp.request('POST', '/proxies', {
    name,
    listen: '127.0.0.1:0',
    upstream: `127.0.0.1:${echo.address().port}`,
    enabled: true,
  });
  const port = Number(created.listen.split(':').pop());
  const rows = [];
  try {
    const n = quick ? 60 : 400;
    const size = 20;
    const bare = await pingPong(port, { n, size });
    const bareP50 = median(bare);
    rows.push({
      profile: 'none (proxy, no toxics)',
      n,
      p50: round(bareP50, 3),
      p90: round(quantile(bare, 0.9), 3),
      model: 0,
      excess: round(bareP50, 3),
      'beyond bare proxy': 0,
      verdict: '-',
    });
    for (const spec of profiles) {
      const p = loadProfile(spec);
      for (const t of p.toxics) await tp.request('POST', `/proxies/${name}/toxics`, t);
      const times = await pingPong(port, { n, size });
      for (const t of p.toxics) await tp.request('DELETE', `/proxies/${name}/toxics/${t.name}`);
      const link = linkOf(p);
      const model = link.R + (size * 8) / link.upKbps + (size * 8) / link.downKbps;
      const p50 = median(times);
      rows.push({
        profile: spec,
        n,
        p50: round(p50, 3),
        p90: round(quantile(times, 0.9), 3),
        model: round(model, 3),
        excess: round(p50 - model, 3),
        'beyond bare proxy': round(p50 - model - bareP50, 3),
        verdict: p50 - model <= OVERHEAD_TARGET_MS ? 'met' : 'MISSED',
      });
    }
  } finally {
    await tp.request('DELETE', `/proxies/${name}`);
    echo.close();
  }
  console.log(
    `\noverhead: ${rows[1]?.n} round trips of 20 B through an extra proxy (target: p50 at most ${OVERHEAD_TARGET_MS} ms beyond R + bytes/rate)`,
  );
  console.log(table(rows, ['profile', 'n', 'p50', 'p90', 'model', 'excess', 'beyond bare proxy', 'verdict']));
  return rows;
}

// ---- slow start ----

const SLOW_SIZES = [10000, 100000, 1000000];
const REQ_BYTES = 70; // the payload query's JSON body
const RES_WRAP = 45; // {"data":{"payload":{"size":N,"data":"..."}}} around the data

async function slowStart(stack, profiles, { quick }) {
  const sizes = quick ? [10000, 100000] : SLOW_SIZES;
  const rows = [];
  for (const spec of profiles) {
    const profile = loadProfile(spec);
    const link = linkOf(profile);
    const samples = quick ? 2 : 3;
    const run = await runK6(PROBE, {
      env: {
        ...stack.env,
        PROFILE: spec,
        MODES: 'fresh,warm,idle',
        SIZES: sizes.join(','),
        SAMPLES: samples,
        IDLE_MS: 2000,
        IDLE_SIZE: 100000,
      },
      timeoutMs: 900000,
    });
    if (run.code !== 0 || !run.summary)
      throw new BenchError(
        `dev/k6/tcp-probe.js under ${spec} exited ${run.code}${run.timedOut ? ' (timed out)' : ''}: ${run.stderr.slice(-1500)}`,
      );
    const m = run.summary.metrics;
    const cases = [
      ...sizes.flatMap((size) => [
        ['fresh', size],
        ['warm', size],
      ]),
      ['idle', 100000],
    ];
    for (const [kind, size] of cases) {
      const measured = m[`${kind}_${size}`]?.med ?? null;
      const serverMs = m[`server_${kind}_${size}`]?.med ?? 0;
      const op = {
        transport: kind === 'fresh' ? 'http-fresh' : 'http-keepalive',
        conn: kind === 'fresh' ? 'cold' : 'warm',
        idle: kind === 'idle',
        reqBytes: REQ_BYTES,
        resBytes: size + RES_WRAP,
        serverMs,
      };
      const e = operation(link, op);
      const window = e.terms.find((t) => t.name === 'window')?.ms || 0;
      const ratio = measured === null ? null : measured / e.ms;
      rows.push({
        profile: spec,
        case: `${kind === 'idle' ? 'kept, after 2 s idle' : kind === 'fresh' ? 'new connection' : 'kept (window open)'} ${size / 1000} KB`,
        n: m[`${kind}_${size}`]?.count ?? 0,
        p50: round(measured, 1),
        model: round(e.ms, 1),
        'slow start': round(window, 1),
        formula: e.formula,
        ratio: round(ratio, 3),
        verdict: verdict(ratio),
      });
    }
  }
  console.log(
    '\nslow start: p50 of single requests, 1 VU, beside the model (common/model.js operation(); target 0.9-1.1)',
  );
  console.log(table(rows, ['profile', 'case', 'n', 'p50', 'model', 'slow start', 'ratio', 'verdict', 'formula']));
  return rows;
}

// ---- the studies under loss ----

async function declaration(name) {
  return (await import(pathToFileURL(join(ROOT, 'scenarios', 'specs', `${name}.js`)).href)).default;
}

// p50 and p95 of each row (lane at its first step, with dims) beside the model's:
// p50 of the median operation, p95 of the tail operation and its loss stall.
async function study(stack, scenario, spec, env, pick) {
  const declare = await declaration(scenario);
  const built = buildScenario(declare(env), loadProfile(spec), env, policy);
  const t0 = Date.now();
  const run = await runScenario(stack, scenario, { env: { ...env, PROFILE: spec }, timeoutMs: 1800000 });
  const seconds = (Date.now() - t0) / 1000;
  const rows = [];
  for (const g of built.gates.filter((x) => x.which === 'op' && pick(x))) {
    const p50 = stat(run.summary, g.key, 'med');
    const p95 = stat(run.summary, g.key, 'p(95)');
    const m50 = g.expected.p50.ms;
    const m95 = g.expected.p95.ms + (g.expected.p95.tailMs || 0);
    rows.push({
      scenario,
      profile: spec,
      row: [g.lane, ...Object.entries(g.dims).map(([k, v]) => `${k}:${v}`)].join(' '),
      n: stat(run.summary, g.key, 'count'),
      p50: round(p50, 0),
      'model p50': round(m50, 0),
      'p50 ratio': round(p50 === null ? null : p50 / m50, 3),
      p95: round(p95, 0),
      'model p95': round(m95, 0),
      'stall p95-p50': round(p95 === null ? null : p95 - p50, 0),
      'model stall': round(g.expected.p95.tailMs || 0, 0),
      gates: g.thresholds.join(' ') || 'not gated',
    });
  }
  console.log(`\n${scenario} under ${spec} (${round(seconds, 0)} s, k6 exit ${run.code}):`);
  console.log(
    table(rows, [
      'row',
      'n',
      'p50',
      'model p50',
      'p50 ratio',
      'p95',
      'model p95',
      'stall p95-p50',
      'model stall',
      'gates',
    ]),
  );
  return { rows, seconds, code: run.code };
}

async function study001(stack, { quick }) {
  // Under loss a step holds at least 5 iterations (common/scenario.js): ~2 minutes a lane here.
  const env = { LOAD: 'smoke', STEPS: '1', STEP_SECONDS: quick ? '20' : '60', DOC_SIZES: 'medium,large' };
  const out = [];
  for (const spec of quick ? ['3g+loss3'] : ['3g+loss3', '3g+loss3+shared']) {
    out.push(
      await study(stack, 'compound-vs-parallel', spec, env, (g) => g.dims.cache === 'off' && g.dims.conn === 'warm'),
    );
  }
  return out;
}

async function study000(stack, { quick }) {
  const out = [];
  for (const spec of quick ? ['lte+loss1'] : ['lte+loss1', '3g+burst']) {
    const env = { LOAD: 'smoke', STEPS: '1', STEP_SECONDS: quick ? '10' : spec.startsWith('3g') ? '90' : '45' };
    out.push(
      await study(stack, 'ws-vs-http', spec, env, (g) =>
        ['ws', 'http_keepalive', 'https_fresh', 'http2'].includes(g.lane),
      ),
    );
  }
  return out;
}

await main(async () => {
  const flags = parseFlags({
    parts: 'overhead,slowstart,study001,study000',
    profiles: '3g,3g+ideal,lte,lte+ideal',
    overheadProfiles: 'fios,cable,lte',
    quick: false,
  });
  // --quick: the emulator's overhead and slow start only (the studies take minutes each).
  const parts = (
    flags.quick && flags.parts === 'overhead,slowstart,study001,study000' ? 'overhead,slowstart' : flags.parts
  )
    .split(',')
    .map((p) => p.trim());
  const known = ['overhead', 'slowstart', 'study001', 'study000'];
  for (const p of parts) if (!known.includes(p)) throw new BenchError(`unknown part ${p}: use ${known.join(', ')}`);
  const profiles = (flags.quick ? 'lte' : flags.profiles).split(',').map((p) => p.trim());
  const overheadProfiles = (flags.quick ? 'fios' : flags.overheadProfiles).split(',').map((p) => p.trim());
  [...profiles, ...overheadProfiles].forEach((p) => loadProfile(p)); // an unknown name fails before any run
  const started = Date.now();
  const figures = {};
  await withStack(async (stack) => {
    if (parts.includes('overhead')) figures.overhead = await overhead(stack, overheadProfiles, flags);
    if (parts.includes('slowstart')) figures.slowstart = await slowStart(stack, profiles, flags);
    if (parts.includes('study001')) figures.study001 = await study001(stack, flags);
    if (parts.includes('study000')) figures.study000 = await study000(stack, flags);
  });
  const judged = (figures.slowstart || []).filter((r) => r.ratio !== null);
  if (judged.length) {
    const ratios = judged.map((r) => r.ratio);
    console.log(
      `\nslow start: ${judged.filter((r) => r.verdict === 'met').length} of ${judged.length} within ${RATIO[0]}-${RATIO[1]} (ratios ${Math.min(...ratios)}-${Math.max(...ratios)})`,
    );
  }
  recordResult(
    'tcp',
    {
      target: { ratio: RATIO, overheadMs: OVERHEAD_TARGET_MS },
      wallSeconds: round((Date.now() - started) / 1000, 0),
      ...figures,
    },
    { quick: flags.quick },
  );
});
