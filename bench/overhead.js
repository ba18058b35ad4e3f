#!/usr/bin/env node
/*
 * Harness overhead: what the pack itself adds, for HTTP keep-alive, WebSocket
 * (graphql-transport-ws) and gRPC unary, the study-000 book(id) query.
 *   (a) Toxiproxy with no toxics (profile lan) vs straight to the server:
 *       added p50 per request (1 VU) and the throughput ratio (8 VUs).
 *   (b) The pack's clients (scenarios/lib: graphqlHttp, GraphqlWs, Channel,
 *       with their validation and metrics) vs a bare k6 script making the same
 *       request: iterations per second, lib / bare (1 VU), recording what a
 *       scenario records by default (METRICS=full: op_duration, op_failed,
 *       server time from one operation in 8) and under METRICS=lean (op_duration
 *       and op_failed only), side by side. Target lib/bare >= 0.85.
 *   (c) The reference servers vs bare Node servers answering the same bytes
 *       (node:http, ws, grpc-js; bench/lib/bare-servers.js): requests per
 *       second, reference / bare (8 VUs of bare k6), so users know where the
 *       servers' ceiling lies. k6 and the server share this machine's cores.
 * Each comparison is one k6 run of alternating slots (bench/k6/ab.js): A B,
 * then B A, for --rounds rounds of --slot seconds; printed figures are medians
 * over the rounds. A WebSocket iteration is one socket carrying 50 operations.
 *
 *   node bench/overhead.js                  # all three, ~5 minutes
 *   node bench/overhead.js --parts b --rounds 6
 *   node bench/overhead.js --quick          # one short round (a check that it runs)
 * Appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { booksClient } from '../servers/grpc/client.js';
import { BOOK_QUERY } from '../scenarios/lib/queries.js';
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
import { rawSetting } from '../common/settings.js';

const AB = join(ROOT, 'bench', 'k6', 'ab.js');
const WS_OPS = 50;
const TRANSPORTS = ['http', 'ws', 'grpc'];
const EXEC = {
  bare: { http: 'bareHttp', ws: 'bareWs', grpc: 'bareGrpc' },
  lib: { http: 'libHttp', ws: 'libWs', grpc: 'libGrpc' },
  lean: { http: 'leanHttp', ws: 'leanWs', grpc: 'leanGrpc' },
};
const LIB_TARGET = 0.85;

// Where each transport is reached: { http: url, ws: url, grpc: addr }.
const direct = (ports) => ({
  http: `http://127.0.0.1:${ports.GRAPHQL_PORT}/graphql`,
  ws: `ws://127.0.0.1:${ports.GRAPHQL_PORT}/graphql`,
  grpc: `127.0.0.1:${ports.GRPC_PORT}`,
});
const proxied = (env) => ({
  http: rawSetting(env, 'GRAPHQL_HTTP_URL'),
  ws: rawSetting(env, 'GRAPHQL_WS_URL'),
  grpc: rawSetting(env, 'GRPC_ADDR'),
});
const bareSide = (t, where) => ({ exec: EXEC.bare[t], env: t === 'grpc' ? { ADDR: where.grpc } : { URL: where[t] } });

// One A/B run: { transport: [{ round, a: { rate, p50 }, b: { rate, p50 }, c?: ... }] }.
// rate: operations per second; p50: ms per operation (a WS socket's iteration / WS_OPS).
async function abRun(pairs, { rounds, slot, vus, env = {} }) {
  const plan = { pairs, rounds, slotSeconds: slot, vus, warmupSeconds: 1 };
  const slots = Object.values(pairs).reduce((n, pair) => n + Object.keys(pair).length, 0);
  const run = await runK6(AB, {
    env: { ...env, PLAN: JSON.stringify(plan), WS_OPS },
    timeoutMs: ((rounds + 1) * slots * (slot + 1.5) + 60) * 1000,
  });
  if (run.code !== 0 || !run.summary)
    throw new BenchError(
      `A/B k6 run exited ${run.code}${run.timedOut ? ' (timed out)' : ''}: ${run.stderr.slice(-1500)}`,
    );
  const m = run.summary.metrics;
  const out = {};
  for (const [t, pair] of Object.entries(pairs)) {
    const perOp = pair.a.exec.endsWith('Ws') ? WS_OPS : 1;
    out[t] = [];
    for (let r = 1; r <= rounds; r++) {
      const side = (s) => {
        const name = `${t}_${s}_${r}`;
        const count = m[`iterations{scenario:${name}}`]?.count ?? 0;
        const dur = m[`iteration_duration{scenario:${name}}`];
        return { rate: (count * perOp) / slot, p50: dur && dur.count ? dur.med / perOp : null };
      };
      const slotPair = { round: r };
      for (const s of Object.keys(pair)) slotPair[s] = side(s);
      const idle = Object.keys(pair).filter((s) => !slotPair[s].rate);
      if (idle.length) {
        throw new BenchError(
          `${t} round ${r}: a side completed no iteration (${Object.keys(pair)
            .map((s) => `${pair[s].exec} ${slotPair[s].rate}/s`)
            .join(', ')}): ${run.stderr.slice(-1500)}`,
        );
      }
      out[t].push(slotPair);
    }
  }
  return out;
}

const medianRatio = (rounds, side = 'b') => median(rounds.map((x) => x[side].rate / x.a.rate));
const medianOf = (rounds, side, key) => median(rounds.map((x) => x[side][key]));

// (a) Toxiproxy (no toxics) vs direct.
async function proxyOverhead(stack, opts) {
  const pairs = Object.fromEntries(
    TRANSPORTS.map((t) => [t, { a: bareSide(t, direct(stack.ports)), b: bareSide(t, proxied(stack.env)) }]),
  );
  await stack.toxiproxy.reset();
  const latency = await abRun(pairs, { ...opts, vus: 1 });
  const throughput = await abRun(pairs, { ...opts, vus: 8 });
  return TRANSPORTS.map((t) => ({
    transport: t,
    'direct p50 ms': round(medianOf(latency[t], 'a', 'p50'), 3),
    'proxy p50 ms': round(medianOf(latency[t], 'b', 'p50'), 3),
    'added p50 ms': round(median(latency[t].map((x) => x.b.p50 - x.a.p50)), 3),
    'direct ops/s (8 VUs)': round(medianOf(throughput[t], 'a', 'rate'), 0),
    'proxy ops/s (8 VUs)': round(medianOf(throughput[t], 'b', 'rate'), 0),
    'throughput proxy/direct': round(medianRatio(throughput[t]), 3),
  }));
}

// (b) scenarios/lib clients (full, and lean) vs bare k6, straight to the servers.
async function clientOverhead(stack, opts) {
  const where = direct(stack.ports);
  const pairs = Object.fromEntries(
    TRANSPORTS.map((t) => [t, { a: bareSide(t, where), b: { exec: EXEC.lib[t] }, c: { exec: EXEC.lean[t] } }]),
  );
  // The lib clients read their targets from the run's env (scenarios/lib/config.js).
  const env = { GRAPHQL_HTTP_URL: where.http, GRAPHQL_WS_URL: where.ws, GRPC_ADDR: where.grpc };
  const r = await abRun(pairs, { ...opts, vus: 1, env });
  // What the lib's validation and metrics cost per operation in k6's JS runtime.
  const extra = (t, side) => round(median(r[t].map((x) => 1e6 / x[side].rate - 1e6 / x.a.rate)), 0);
  return TRANSPORTS.map((t) => {
    const ratio = medianRatio(r[t]);
    return {
      transport: t,
      'bare ops/s': round(medianOf(r[t], 'a', 'rate'), 0),
      'lib ops/s': round(medianOf(r[t], 'b', 'rate'), 0),
      'lib/bare': round(ratio, 3),
      'lib extra us/op': extra(t, 'b'),
      'lean ops/s': round(medianOf(r[t], 'c', 'rate'), 0),
      'lean/bare': round(medianRatio(r[t], 'c'), 3),
      'lean extra us/op': extra(t, 'c'),
      'per-round lib/bare': r[t].map((x) => (x.b.rate / x.a.rate).toFixed(2)).join(' '),
      'per-round lean/bare': r[t].map((x) => (x.c.rate / x.a.rate).toFixed(2)).join(' '),
      verdict: ratio >= LIB_TARGET ? 'met' : 'MISSED',
    };
  });
}

// What the reference servers answer to the book query on each transport.
async function captureAnswers(ports) {
  const where = direct(ports);
  const body = JSON.stringify({ query: BOOK_QUERY, variables: { id: 'book-1' } });
  const res = await fetch(where.http, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const httpAnswer = { body: await res.text(), contentType: res.headers.get('content-type') };
  if (res.status !== 200)
    throw new BenchError(`reference server answered ${res.status}: ${httpAnswer.body.slice(0, 200)}`);
  const wsNext = await new Promise((resolve, reject) => {
    const ws = new WebSocket(where.ws, 'graphql-transport-ws');
    const timer = setTimeout(() => reject(new BenchError('no WebSocket answer within 5 s')), 5000);
    ws.on('open', () => ws.send('{"type":"connection_init"}'));
    ws.on('message', (data) => {
      const msg = JSON.parse(data);
      if (msg.type === 'connection_ack')
        ws.send(
          JSON.stringify({ id: '1', type: 'subscribe', payload: { query: BOOK_QUERY, variables: { id: 'book-1' } } }),
        );
      if (msg.type === 'next') {
        clearTimeout(timer);
        ws.close();
        resolve(JSON.stringify(msg.payload));
      }
    });
    ws.on('error', reject);
  });
  const client = booksClient(where.grpc);
  try {
    const grpc = await new Promise((resolve, reject) =>
      client.getBook({ id: 'book-1' }, { deadline: Date.now() + 5000 }, (err, book) =>
        err ? reject(err) : resolve(book),
      ),
    );
    return { http: httpAnswer, wsNext, grpc };
  } finally {
    client.close();
  }
}

// Starts bench/lib/bare-servers.js; resolves { ports: { http, grpc }, stop() }.
function startBareServers(captureFile) {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'lib', 'bare-servers.js'), captureFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new BenchError('bare servers did not start within 10 s'));
    }, 10000);
    child.once('exit', (code) => reject(new BenchError(`bare servers exited (${code}) before listening`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      resolve({ ports: JSON.parse(line), stop });
    });
  });
}

// (c) reference servers vs bare servers, bare k6 at 8 VUs.
async function serverCeiling(stack, opts) {
  const capture = await captureAnswers(stack.ports);
  return withTempDir(async (dir) => {
    const file = join(dir, 'capture.json');
    writeFileSync(file, JSON.stringify(capture));
    const bare = await startBareServers(file);
    try {
      const bareWhere = {
        http: `http://127.0.0.1:${bare.ports.http}/graphql`,
        ws: `ws://127.0.0.1:${bare.ports.http}/graphql`,
        grpc: `127.0.0.1:${bare.ports.grpc}`,
      };
      const pairs = Object.fromEntries(
        TRANSPORTS.map((t) => [t, { a: bareSide(t, bareWhere), b: bareSide(t, direct(stack.ports)) }]),
      );
      const r = await abRun(pairs, { ...opts, vus: 8 });
      return TRANSPORTS.map((t) => ({
        transport: t,
        'bare server ops/s': round(medianOf(r[t], 'a', 'rate'), 0),
        'reference ops/s': round(medianOf(r[t], 'b', 'rate'), 0),
        'reference/bare': round(medianRatio(r[t]), 3),
        'bare p50 ms': round(medianOf(r[t], 'a', 'p50'), 2),
        'reference p50 ms': round(medianOf(r[t], 'b', 'p50'), 2),
      }));
    } finally {
      await bare.stop();
    }
  });
}

const PARTS = {
  a: ['(a) Toxiproxy, no toxics, vs straight to the server (bare k6)', proxyOverhead],
  b: [
    `(b) scenarios/lib clients vs bare k6 (1 VU, straight to the servers; lib: METRICS=full, lean: METRICS=lean; target lib/bare >= ${LIB_TARGET})`,
    clientOverhead,
  ],
  c: ['(c) reference servers vs bare Node servers answering the same bytes (bare k6, 8 VUs)', serverCeiling],
};

await main(async () => {
  const flags = parseFlags({ parts: 'a,b,c', rounds: 4, slot: 3, quick: false });
  const parts = flags.parts.split(',').map((p) => p.trim());
  for (const p of parts) if (!PARTS[p]) throw new BenchError(`unknown part ${p}: use a, b, c`);
  // --quick: one round; 2 s slots, so a WebSocket side (one socket, 50 operations)
  // completes an iteration even while the suite runs every bench at once.
  const opts = flags.quick ? { rounds: 1, slot: 2 } : { rounds: flags.rounds, slot: flags.slot };
  const started = Date.now();
  const figures = {};
  await withStack(async (stack) => {
    for (const p of parts) {
      const [title, fn] = PARTS[p];
      const rows = await fn(stack, opts);
      console.log(`\n${title}, median of ${opts.rounds} rounds of ${opts.slot} s:`);
      console.log(table(rows, Object.keys(rows[0])));
      figures[p] = rows;
    }
  });
  const wallSeconds = round((Date.now() - started) / 1000, 0);
  console.log(`\noverhead: wall time ${wallSeconds} s`);
  recordResult('overhead', { ...opts, wsOpsPerSocket: WS_OPS, wallSeconds, ...figures }, { quick: flags.quick });
});
