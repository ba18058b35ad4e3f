// What every bench shares: command-line flags, a private stack on free ports,
// k6 runs with their summary files and raw samples, statistics, a printed
// table, and the results log (bench/results.jsonl: one JSON line per run with
// the date and git commit, so later changes can be compared).
import { appendFileSync, createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { execa, execaSync } from 'execa';
import { fileURLToPath } from 'node:url';
import { ROOT } from '../../lib/tools.js';
import { runK6 } from '../../dev/run-k6.js';
import { startTestStack } from '../../dev/test-stack.js';
import { rawSetting } from '../../common/settings.js';

export { ROOT, runK6 };

export class BenchError extends Error {}

// --name value / --name=value / --flag. `spec`: { name: default } (booleans are flags).
export function parseFlags(spec, argv = process.argv.slice(2)) {
  const out = { ...spec };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    const key = m && m[1].replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!m || !(key in spec)) {
      throw new BenchError(
        `unknown argument ${argv[i]}: this bench takes ${Object.keys(spec)
          .map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)
          .join(', ')}`,
      );
    }
    if (typeof spec[key] === 'boolean') out[key] = m[2] === undefined ? true : m[2] !== 'false';
    else {
      const value = m[2] ?? argv[++i];
      if (value === undefined) throw new BenchError(`--${m[1]} needs a value`);
      out[key] = typeof spec[key] === 'number' ? Number(value) : value;
      if (typeof spec[key] === 'number' && !Number.isFinite(out[key]))
        throw new BenchError(`--${m[1]} ${value}: not a number`);
    }
  }
  return out;
}

// '90', '90s', '15m', '1h' -> seconds.
export function parseDuration(text) {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(String(text).trim());
  if (!m) throw new BenchError(`${text} is not a duration such as 90s, 10m or 1h`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] || 's'];
}

// ---- statistics ----

// The pack's one quantile (k6's definition), for the benches too.
export { median, quantile } from '../../common/quantiles.js';

// Least-squares slope of y over x.
export function slope(points) {
  const n = points.length;
  if (n < 2) return null;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den ? num / den : null;
}

export const round = (x, digits = 1) =>
  x === null || x === undefined || Number.isNaN(x) ? null : Number(x.toFixed(digits));

// Rows of objects as an aligned text table, columns in `columns` order.
export function table(rows, columns) {
  const text = (v) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => text(r[c]))))].join('\n');
}

// ---- the results log ----

export const RESULTS_FILE = rawSetting(process.env, 'BENCH_RESULTS') || join(ROOT, 'bench', 'results.jsonl');

export function gitCommit() {
  try {
    return execaSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT }).stdout.trim();
  } catch {
    return 'unknown';
  }
}

// True when tracked files differ from the commit (the figures may not be the commit's).
function gitDirty() {
  try {
    return execaSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT }).stdout.trim() !== '';
  } catch {
    return null;
  }
}

// Appends one line: { bench, date, commit, dirty, machine, quick, ...figures }.
export function recordResult(bench, figures, { quick = false } = {}) {
  const entry = {
    bench,
    date: new Date().toISOString(),
    commit: gitCommit(),
    dirty: gitDirty(),
    // cores: what this process may run on (a `taskset -c 0` run: 1 of 2 cpus).
    machine: { cpus: cpus().length, cores: availableParallelism(), load1: round(loadavg()[0], 2) },
    quick,
    ...figures,
  };
  appendFileSync(RESULTS_FILE, `${JSON.stringify(entry)}\n`);
  return entry;
}

// --one-core: the same bench again, pinned to the first core with everything it starts
// (`taskset -c 0`: a machine half as fast, k6, the servers and Toxiproxy sharing it).
// scriptUrl: the bench's import.meta.url. -> true when the pinned run happened (the
// caller returns), false when this process already has one core.
export async function runPinnedToOneCore(scriptUrl) {
  if (availableParallelism() <= 1) return false;
  const args = process.argv.slice(2).filter((a) => a !== '--one-core');
  const r = await execa('taskset', ['-c', '0', process.execPath, fileURLToPath(scriptUrl), ...args], {
    stdio: 'inherit',
    reject: false,
  });
  if (r.exitCode !== 0) throw new BenchError(`the bench pinned to core 0 exited ${r.exitCode}`);
  return true;
}

// ---- stack and k6 ----

// A private stack (the servers + toxiproxy on free ports). `serverEnv`: extra
// environment for its processes (they inherit this process's environment at
// spawn time, so it is set for the start-up only).
export const startStack = ({ serverEnv = {} } = {}) => startTestStack({ serverEnv });

// The same stack, stopped after fn(stack).
export async function withStack(fn, options) {
  const stack = await startStack(options);
  try {
    return await fn(stack);
  } finally {
    await stack.stop();
  }
}

// A temp directory removed after fn.
export async function withTempDir(fn, prefix = 'k6pack-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Runs a pack scenario (one k6 run) through the stack's proxies. Resolves
// { code, summary, samples, stderr }: `summary` is k6's own --summary-export
// (every metric and the scenario's observed sub-metrics, independent of the
// pack's RESULTS_DIR format); `samples` are k6's raw points (--out json) of the
// metrics keep(name) accepts, when `keep` is given: [{ metric, time (ms), value, tags }].
// A k6 exit code outside allowCodes throws.
export async function runScenario(
  stack,
  scenario,
  { env = {}, keep = null, timeoutMs = 600000, allowCodes = [0, 99] } = {},
) {
  return withTempDir(async (dir) => {
    const raw = join(dir, 'samples.json.gz');
    const run = await runK6(join(ROOT, 'scenarios', `${scenario}.js`), {
      env: { ...stack.env, ...env },
      args: keep ? ['--out', `json=${raw}`] : [],
      timeoutMs,
    });
    if (!allowCodes.includes(run.code) || !run.summary) {
      throw new BenchError(
        `k6 run of ${scenario} (${JSON.stringify(env)}) exited ${run.code}${run.timedOut ? ' (timed out)' : ''}: ${run.stderr.slice(-1500)}`,
      );
    }
    const samples = keep ? await readSamples(raw, keep) : [];
    return { code: run.code, summary: run.summary, samples, stderr: run.stderr };
  });
}

// k6's JSON output (gzip), the Point lines of metrics `keep(name)` accepts.
export async function readSamples(file, keep) {
  const out = [];
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.startsWith('{"metric"') && !line.includes('"type":"Point"')) continue;
    const p = JSON.parse(line);
    if (p.type !== 'Point' || !keep(p.metric)) continue;
    out.push({ metric: p.metric, time: Date.parse(p.data.time), value: p.data.value, tags: p.data.tags || {} });
  }
  return out;
}

// A (sub-)metric's statistic from k6's --summary-export (null when it has no samples).
export function stat(summary, key, name = 'med') {
  const m = summary.metrics[key];
  if (!m || m.count === 0) return null;
  return m[name] ?? null;
}

// Prints and exits with a one-line error on failure: the benches' main().
export async function main(fn) {
  try {
    await fn();
  } catch (err) {
    console.error(`bench: ${err instanceof BenchError ? err.message : err.stack || err}`);
    process.exitCode = 1;
  }
}
