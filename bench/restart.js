#!/usr/bin/env node
/*
 * Restarts back to back: `k6pack up`, `k6pack down`, then at once `k6pack run
 * ws-vs-http --profile lan --load smoke` (1 s steps), which starts its own stack
 * and stops it afterwards, --runs times on the same ports. A port still closing
 * once failed the run after a `down` ("port 50052 (GRPC_TLS_PORT) is already in
 * use"): each run must start its stack and run k6, and each `up` (right after the
 * run before stopped its stack) must start too. Target: N of N start.
 *
 *   node bench/restart.js             # 20 times, ~5 minutes
 *   node bench/restart.js --runs 50
 *   node bench/restart.js --quick     # 2 times, k6 on one lane (LANES=http_keepalive)
 * On free ports with a temp run dir; on the environment's ports when every port
 * variable is set (and K6PACK_RUN_DIR, if set: a stack recorded there is stopped).
 * Appends its figures to bench/results.jsonl.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { DEFAULT_PORTS } from '../common/defaults.js';
import { freePortMap } from '../dev/test-stack.js';
import { BenchError, main, parseFlags, quantile, recordResult, round, table, withTempDir } from './lib/common.js';
import { CLI } from './lib/gate-runs.js';
import { rawSetting } from '../common/settings.js';

const RUN = ['run', 'ws-vs-http', '--profile', 'lan', '--load', 'smoke', '--no-samples', '--', '-e', 'STEP_SECONDS=1'];

async function cli(args, env) {
  const t0 = performance.now();
  const r = await execa(process.execPath, [CLI, ...args], { env, reject: false, timeout: 180000, stdin: 'ignore' });
  const seconds = (performance.now() - t0) / 1000;
  const line = r.stderr.trim().split('\n').at(-1) || '';
  return { code: r.exitCode, stdout: r.stdout, line, seconds, timedOut: r.timedOut };
}

// The environment's ports when every port variable is set, else free ones.
async function benchPorts() {
  const names = Object.keys(DEFAULT_PORTS);
  if (names.every((n) => process.env[n])) return { ports: Object.fromEntries(names.map((n) => [n, process.env[n]])) };
  const free = await freePortMap();
  return { ports: Object.fromEntries(Object.entries(free).map(([k, v]) => [k, String(v)])), free: true };
}

const stats = (values) => ({ p50: round(quantile(values, 0.5), 2), max: round(Math.max(...values), 2) });

await main(async () => {
  const flags = parseFlags({ runs: 20, quick: false });
  if (flags.quick) flags.runs = 2;
  // --quick: each run's k6 on one lane (2 s instead of ws-vs-http's nine lanes, 18 s): what is
  // checked is that the run starts its stack and k6 right after a `down`, not what k6 measures.
  const runArgs = flags.quick ? [...RUN, '-e', 'LANES=http_keepalive'] : RUN;
  if (!Number.isInteger(flags.runs) || flags.runs < 1)
    throw new BenchError(`--runs ${flags.runs}: give a whole number`);
  await withTempDir(async (dir) => {
    const { ports, free } = await benchPorts();
    const env = {
      ...ports,
      K6PACK_RUN_DIR: rawSetting(process.env, 'K6PACK_RUN_DIR') || join(dir, 'run'),
      K6PACK_RESULTS_DIR: join(dir, 'results'),
    };
    console.log(
      `restart: up, down, run ${RUN.slice(1, 7).join(' ')} (1 s steps), ${flags.runs} times back to back on ${free ? 'free ports' : "the environment's ports"} (GRPC_TLS_PORT=${ports.GRPC_TLS_PORT})`,
    );
    const rows = [];
    const failures = [];
    try {
      for (let i = 1; i <= flags.runs; i++) {
        const up = await cli(['up'], env);
        const down = up.code === 0 ? await cli(['down'], env) : null;
        // A run starts when it has its stack and k6 ran (0, or 99: a threshold failed).
        const run = await cli(runArgs, env);
        const upStarted = up.code === 0;
        const runStarted = [0, 99].includes(run.code) && /^== ws-vs-http, profile lan: k6 exited/m.test(run.stdout);
        for (const [what, r, ok] of [
          ['up', up, upStarted],
          ['down', down, !down || down.code === 0],
          ['run', run, runStarted],
        ])
          if (!ok) failures.push(`#${i} ${what} exited ${r.code}${r.timedOut ? ' (timed out)' : ''}: ${r.line}`);
        rows.push({
          '#': i,
          'up s': round(up.seconds, 1),
          'down s': down ? round(down.seconds, 2) : null,
          'run s': round(run.seconds, 1),
          up: upStarted ? 'started' : `exit ${up.code}`,
          run: runStarted ? 'started' : `exit ${run.code}`,
        });
        const r = rows.at(-1);
        console.log(`#${i}: up ${r.up} (${r['up s']} s), down ${r['down s'] ?? '-'} s, run ${r.run} (${r['run s']} s)`);
      }
    } finally {
      await cli(['down'], env); // whatever a failed cycle left up
    }
    console.log(`\n${table(rows, Object.keys(rows[0]))}`);
    const started = rows.filter((r) => r.run === 'started').length;
    const upsStarted = rows.filter((r) => r.up === 'started').length;
    for (const f of failures) console.log(`  ${f}`);
    const downs = rows.map((r) => r['down s']).filter((s) => s !== null);
    console.log(
      `\nrestart: ${started} of ${flags.runs} start (each run right after \`down\`); ups ${upsStarted} of ${flags.runs} (each right after the run before stopped its stack); down took p50 ${stats(downs).p50} s, max ${stats(downs).max} s; target ${flags.runs} of ${flags.runs}: ${started === flags.runs && upsStarted === flags.runs ? 'met' : 'MISSED'}`,
    );
    recordResult(
      'restart',
      {
        runs: flags.runs,
        started,
        upsStarted,
        downSeconds: downs.length ? stats(downs) : null,
        runSeconds: stats(rows.map((r) => r['run s'])),
        failures,
      },
      { quick: flags.quick },
    );
  }, 'k6pack-restart-');
});
