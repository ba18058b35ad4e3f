#!/usr/bin/env node
/*
 * Does the suite pass every time, within its time? `bash .ci/run` (the README's test
 * command: `npm ci && npm test`, installing k6 and the toxiproxy build on the way), each
 * run on a fresh clone of this checkout's HEAD, --runs times in a row: failures, the
 * names of the failed tests, and the wall time of each run (install included) and of
 * each of the suite's two phases (test/run.js). --busy keeps one core busy for the whole
 * bench (bench/lib/busy.js), as a loaded CI runner would. Targets: 0 failures; each run
 * <= 20 minutes (issue 38; 25 until 2026-11-28).
 *
 *   node bench/suite.js                   # 3 runs in a row, ~75 minutes
 *   node bench/suite.js --busy --runs 1   # once with one core busy
 *   node bench/suite.js --one-core --runs 1   # once pinned to the first core (taskset -c 0)
 *   node bench/suite.js --quick           # one fresh clone, `npm ci && npm run test:unit`
 * Nothing else may run beside it (the suite's timed files run alone). Each run's output
 * is kept in the temp folder it prints. Appends its figures to bench/results.jsonl.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { busyCore } from './lib/busy.js';
import { calibrationSummary } from './lib/gate-runs.js';
import { measureMachine } from '../lib/calibrate.js';
import {
  BenchError,
  gitCommit,
  main,
  parseFlags,
  recordResult,
  round,
  ROOT,
  runPinnedToOneCore,
  table,
  withTempDir,
} from './lib/common.js';

export const SUITE_TARGET_SECONDS = 20 * 60;
// A run's own bound: CI gives the whole job 90 minutes.
const RUN_TIMEOUT_MS = 60 * 60 * 1000;

// '174 s (6 files, 1 at once) + 300 s (11 files, 2 at once) + 600 s (89 files, 2 at once;
// beside them 10 files, 1 at once, 410 s)': a run beside another is written in its part.
export function phasesText(phases) {
  const parts = [];
  for (const p of phases) {
    if (p.beside && parts.length) parts[parts.length - 1].beside = p;
    else parts.push({ ...p });
  }
  const text = parts.map(
    (p) =>
      `${p.seconds} s (${p.files} files, ${p.atOnce} at once${p.beside ? `; beside them ${p.beside.files} files, ${p.beside.atOnce} at once, ${p.beside.seconds} s` : ''})`,
  );
  return text.join(' + ') || '-';
}

// What test/run.js and Node's test runner print, read back from a run's output.
export function suiteFigures(output) {
  // A run beside another (phase 2's waiting files) says so: "== 10 files beside them, ...".
  const phases = [...output.matchAll(/^== (\d+) files( beside them)?, (\d+) at a time: (\d+) s, exit (\S+)$/gm)].map(
    (m) => ({
      files: Number(m[1]),
      beside: Boolean(m[2]),
      atOnce: Number(m[3]),
      seconds: Number(m[4]),
      exit: m[5],
    }),
  );
  const count = (label) =>
    [...output.matchAll(new RegExp(`^ℹ ${label} (\\d+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  // The runner lists each failed test again under "failing tests:"; a test is named once.
  const failed = [...new Set([...output.matchAll(/^\s*✖ (.+?) \(\d+(?:\.\d+)?ms\)$/gm)].map((m) => m[1]))];
  return { phases, tests: count('tests'), passed: count('pass'), failures: count('fail'), failed };
}

async function oneRun(dir, i, { quick }) {
  const clone = join(dir, `clone-${i}`);
  await execa('git', ['clone', '--quiet', ROOT, clone]);
  await execa('git', ['-C', clone, 'checkout', '--quiet', gitCommit()]);
  const command = quick ? 'npm ci && npm run test:unit' : 'bash .ci/run';
  const t0 = performance.now();
  // Its own process group, so a stopped bench stops the whole suite with it; and not
  // inside this process's test run (bench.test.js): Node's runner skips the files of a
  // run nested in a test file, which it recognizes by NODE_TEST_CONTEXT.
  const child = execa('bash', ['-c', command], {
    cwd: clone,
    all: true,
    reject: false,
    timeout: RUN_TIMEOUT_MS,
    forceKillAfterDelay: 10000,
    stdin: 'ignore',
    detached: true,
    env: { NODE_TEST_CONTEXT: undefined },
  });
  const stop = () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    process.exit(130);
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const r = await child;
  process.off('SIGINT', stop).off('SIGTERM', stop);
  const seconds = (performance.now() - t0) / 1000;
  const log = join(dir, `run-${i}.log`);
  writeFileSync(log, r.all ?? '');
  return { exit: r.exitCode, timedOut: r.timedOut, seconds, log, ...suiteFigures(r.all ?? '') };
}

await main(async () => {
  const flags = parseFlags({ runs: 3, busy: false, quick: false, oneCore: false });
  // --one-core: `taskset -c 0`, the suite on a machine half as fast (phase 2 one file at a time).
  if (flags.oneCore && (await runPinnedToOneCore(import.meta.url))) return;
  if (flags.quick) flags.runs = 1;
  if (!(flags.runs >= 1)) throw new BenchError('--runs must be at least 1');
  // The logs outlive the clones: a failed run is read afterwards.
  const keep = mkdtempSync(join(tmpdir(), 'k6pack-suite-logs-'));
  const rows = [];
  await withTempDir(async (dir) => {
    const stopBusy = flags.busy ? busyCore() : () => {};
    try {
      for (let i = 1; i <= flags.runs; i++) {
        console.log(
          `== run ${i}/${flags.runs}${flags.busy ? ' (one core busy)' : ''}${availableParallelism() === 1 ? ' (pinned to one core)' : ''}: a fresh clone of ${gitCommit()}`,
        );
        // The machine's calibration before the run (lib/calibrate.js, as every k6 run and
        // the tests' waits read it), so that records of different machines can be told apart.
        const { cpuScale } = await measureMachine();
        const r = await oneRun(dir, i, flags);
        copyFileSync(r.log, join(keep, `run-${i}.log`));
        rows.push({
          run: i,
          exit: r.exit,
          seconds: round(r.seconds, 0),
          phases: phasesText(r.phases),
          tests: r.tests,
          failures: r.failures + (r.exit !== 0 && !r.failures ? 1 : 0),
          failed: r.failed.join('; ') || (r.timedOut ? 'timed out' : r.exit !== 0 ? readTail(r.log) : '-'),
          cpuScale,
        });
        console.log(
          table(rows.slice(-1), ['run', 'exit', 'seconds', 'cpuScale', 'phases', 'tests', 'failures', 'failed']),
        );
      }
    } finally {
      stopBusy();
    }
  }, 'k6pack-suite-');
  const failures = rows.reduce((n, r) => n + r.failures, 0);
  const slowest = Math.max(...rows.map((r) => r.seconds));
  const verdict = {
    failures: failures === 0 ? 'met' : 'MISSED',
    seconds: flags.quick ? 'n/a (unit tier)' : slowest <= SUITE_TARGET_SECONDS ? 'met' : 'MISSED',
  };
  console.log(`\n${table(rows, ['run', 'exit', 'seconds', 'cpuScale', 'phases', 'tests', 'failures', 'failed'])}`);
  console.log(`\nfailures: ${failures} in ${rows.length} runs (target 0): ${verdict.failures}`);
  console.log(
    `wall time: ${rows.map((r) => r.seconds).join(', ')} s (target <= ${SUITE_TARGET_SECONDS} s): ${verdict.seconds}`,
  );
  console.log(`logs: ${keep}`);
  recordResult(
    'suite',
    {
      runs: rows.length,
      busy: flags.busy,
      cores: availableParallelism(),
      failures,
      seconds: rows.map((r) => r.seconds),
      verdict,
      calibration: calibrationSummary(rows.map((r) => r.cpuScale)),
      rows,
    },
    { quick: flags.quick },
  );
});

function readTail(log) {
  return readFileSync(log, 'utf8').trim().split('\n').at(-1)?.slice(0, 200) || '-';
}
