#!/usr/bin/env node
/*
 * Merge at scale: `k6pack merge` of 8 k6-operator runner folders holding 10
 * million k6 samples in total (bench/lib/synthetic-runs.js: 32 rows of a 4-lane,
 * 4-step test, 8 JSON lines per operation as k6 writes them, 2.5 million of them
 * trend samples the summary uses; gzip level 1).
 * Target: <= 60 s and <= 1 GB peak RSS for the merge, and every merged p50, p95
 * and p99 (rows and steps) within the histograms' stated precision (0.1 % of the
 * values k6 interpolates between, 3 significant digits) of the exact pooled
 * value, computed here once from the generator's values (a Float64Array per key).
 *
 * Two merges of the same data, each `node bin/k6pack.js merge` as a child (its
 * peak RSS from getrusage at exit, bench/lib/max-rss.js):
 *   samples     the runner folders as the operator leaves them (samples.json.gz
 *               only): histograms built from the samples in worker threads
 *               (--method hdr, what auto picks above 32 MiB of samples)
 *   histograms  the same runs with only histograms.json.gz (as `k6pack run
 *               --no-samples` leaves them)
 *
 *   node bench/merge-scale.js
 *   node bench/merge-scale.js --samples 20000000 --runners 8
 *   node bench/merge-scale.js --data /tmp/k6pack-merge-data   # keep (and reuse) the generated folders
 *   node bench/merge-scale.js --quick                          # 200,000 samples: a check that it runs
 * Appends its figures to bench/results.jsonl.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { execa } from 'execa';
import { RELATIVE_PRECISION } from '../lib/report/histograms.js';
import { SeriesSet } from '../lib/report/series.js';
import { percentile } from '../lib/report/metric-sinks.js';
import { plan, rowKey, stepKey } from './lib/synthetic-runs.js';
import { BenchError, main, parseFlags, recordResult, round, ROOT, table } from './lib/common.js';

const TARGET = { seconds: 60, rssMB: 1024 };
const CLI = join(ROOT, 'bin', 'k6pack.js');
const MAX_RSS = join(ROOT, 'bench', 'lib', 'max-rss.js');
const GENERATOR = new URL('./lib/synthetic-runs.js', import.meta.url);

// Generates the runner folders (2 at a time per core) unless `dir` has them for these flags.
async function generate(dir, flags) {
  const manifest = join(dir, 'manifest.json');
  const want = { runners: flags.runners, samples: flags.samples, seed: flags.seed, version: 1 };
  if (
    existsSync(manifest) &&
    JSON.stringify(JSON.parse(readFileSync(manifest, 'utf8')).want) === JSON.stringify(want)
  ) {
    console.log(`reusing the runner folders in ${dir}`);
    return JSON.parse(readFileSync(manifest, 'utf8'));
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  const per = Math.floor(flags.samples / flags.runners);
  const queue = Array.from({ length: flags.runners }, (_, i) => i + 1);
  const values = new Map(); // row key -> [Float64Array per runner]
  let ops = 0;
  const lane = async () => {
    for (let runner = queue.shift(); runner; runner = queue.shift()) {
      const result = await new Promise((resolve, reject) => {
        const w = new Worker(GENERATOR, {
          workerData: { synthetic: true, dir, runner, runners: flags.runners, samples: per, seed: flags.seed },
        });
        w.once('message', resolve);
        w.once('error', reject);
      });
      ops += result.ops;
      for (const [key, v] of Object.entries(result.values)) values.set(key, [...(values.get(key) || []), v]);
      console.log(`runner ${runner}: ${result.ops} operations (${per} samples)`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), flags.runners) }, lane));

  // The exact pooled percentiles, once: a typed array per key, sorted.
  const exact = {};
  const stats = (arrays) => {
    const all = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
    let at = 0;
    for (const a of arrays) {
      all.set(a, at);
      at += a.length;
    }
    all.sort();
    const out = { count: all.length };
    for (const [name, p] of [
      ['p50', 0.5],
      ['p95', 0.95],
      ['p99', 0.99],
    ]) {
      const i = p * (all.length - 1);
      out[name] = percentile(all, p);
      out[`${name}Neighbours`] = [all[Math.floor(i)], all[Math.ceil(i)]];
    }
    return out;
  };
  const steps = new Map();
  for (const row of plan()) {
    exact[rowKey(row)] = stats(values.get(rowKey(row)));
    steps.set(row.scenario, [...(steps.get(row.scenario) || []), ...values.get(rowKey(row))]);
  }
  for (const [scenario, arrays] of steps) exact[stepKey(scenario)] = stats(arrays);

  // The same runs as `k6pack run --no-samples` leaves them: summary.json + histograms.json.gz.
  for (let runner = 1; runner <= flags.runners; runner++) {
    const from = join(dir, `runner-${runner}`);
    const to = join(dir, `hist-${runner}`);
    mkdirSync(to);
    const set = await new SeriesSet().readSamples(join(from, 'samples.json.gz'));
    set.write(join(to, 'histograms.json.gz'), 'samples.json.gz');
    const doc = JSON.parse(readFileSync(join(from, 'summary.json'), 'utf8'));
    doc.run.samples = null;
    doc.run.histograms = 'histograms.json.gz';
    writeFileSync(join(to, 'summary.json'), JSON.stringify(doc));
  }
  const bytes = (prefix, file) =>
    Array.from({ length: flags.runners }, (_, i) => statSync(join(dir, `${prefix}-${i + 1}`, file)).size).reduce(
      (a, b) => a + b,
      0,
    );
  const data = {
    want,
    ops,
    exact,
    samplesMB: round(bytes('runner', 'samples.json.gz') / 2 ** 20, 1),
    histogramsMB: round(bytes('hist', 'histograms.json.gz') / 2 ** 20, 2),
    generateSeconds: round((Date.now() - started) / 1000, 0),
  };
  writeFileSync(manifest, JSON.stringify(data));
  return data;
}

// One `k6pack merge` as a child: { seconds, rssMB, doc, exitCode, stdout }.
async function mergeChild(dir, prefix, runners) {
  const out = join(dir, `merged-${prefix}`);
  rmSync(out, { recursive: true, force: true });
  const rssFile = join(dir, `rss-${prefix}`);
  const parts = Array.from({ length: runners }, (_, i) => join(dir, `${prefix}-${i + 1}`));
  const started = Date.now();
  // --method hdr: what auto picks above 32 MiB of samples (and --quick's runs are smaller).
  const r = await execa(
    process.execPath,
    ['--import', MAX_RSS, CLI, 'merge', ...parts, '--out', out, '--method', 'hdr'],
    { env: { K6PACK_MAX_RSS_FILE: rssFile }, reject: false, timeout: 600000, stdin: 'ignore' },
  );
  const seconds = (Date.now() - started) / 1000;
  if (![0, 99].includes(r.exitCode))
    throw new BenchError(
      `k6pack merge of ${prefix} folders exited ${r.exitCode}: ${r.stderr.trim().split('\n').at(-1)}`,
    );
  return {
    seconds,
    rssMB: Number(readFileSync(rssFile, 'utf8')) / 1024,
    doc: JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')),
    exitCode: r.exitCode,
    stdout: r.stdout.trim(),
  };
}

// Every row's and step's p50/p95/p99 against the exact pooled value: { worst (relative error), within (all within the bound), checked }.
function check(doc, exact) {
  let worst = 0;
  let within = true;
  let checked = 0;
  const cells = [...doc.rows.map((r) => r.latency), ...doc.steps.map((s) => s.latency)];
  for (const cell of cells) {
    const e = exact[cell.key];
    if (!e) throw new BenchError(`no exact values for ${cell.key}`);
    if (cell.count !== e.count) throw new BenchError(`${cell.key}: merged count ${cell.count}, pooled ${e.count}`);
    for (const p of ['p50', 'p95', 'p99']) {
      const bound = RELATIVE_PRECISION * Math.max(...e[`${p}Neighbours`].map(Math.abs)) + 1e-6;
      const err = Math.abs(cell[p] - e[p]);
      worst = Math.max(worst, err / Math.abs(e[p]));
      if (err > bound) within = false;
      checked++;
    }
  }
  return { worst, within, checked };
}

await main(async () => {
  const flags = parseFlags({ samples: 10_000_000, runners: 8, seed: 1, data: '', quick: false });
  if (flags.quick) flags.samples = 200_000;
  if (flags.runners < 2 || flags.samples < flags.runners * 100)
    throw new BenchError('--runners needs at least 2, --samples at least 100 per runner');
  const dir = flags.data || join(tmpdir(), `k6pack-merge-scale-${process.pid}`);
  try {
    const data = await generate(dir, flags);
    console.log(
      `${flags.runners} runner folders: ${flags.samples.toLocaleString('en')} samples, ${data.ops.toLocaleString('en')} operations; samples.json.gz ${data.samplesMB} MB, histograms.json.gz ${data.histogramsMB} MB in all (generated in ${data.generateSeconds} s)`,
    );
    const rows = [];
    for (const prefix of ['runner', 'hist']) {
      const m = await mergeChild(dir, prefix, flags.runners);
      const c = check(m.doc, data.exact);
      const met = m.seconds <= TARGET.seconds && m.rssMB <= TARGET.rssMB && c.within;
      rows.push({
        from: prefix === 'runner' ? 'samples' : 'histograms',
        method: m.doc.run.merged.method,
        seconds: round(m.seconds, 1),
        'peak RSS MB': round(m.rssMB, 0),
        'p50/p95/p99 checked': c.checked,
        'worst rel. error': c.worst.toExponential(2),
        'within precision': c.within,
        verdict: met ? 'met' : 'MISSED',
      });
      console.log(m.stdout);
    }
    console.log(
      `\nmerge of ${flags.runners} runners, ${flags.samples.toLocaleString('en')} samples; target <= ${TARGET.seconds} s, <= ${TARGET.rssMB} MB peak RSS, percentiles within ${RELATIVE_PRECISION * 100} %:`,
    );
    console.log(table(rows, Object.keys(rows[0])));
    recordResult(
      'merge-scale',
      {
        runners: flags.runners,
        samples: flags.samples,
        operations: data.ops,
        samplesMB: data.samplesMB,
        histogramsMB: data.histogramsMB,
        target: TARGET,
        rows,
      },
      { quick: flags.quick },
    );
    if (rows.some((r) => !r['within precision'])) process.exitCode = 1;
  } finally {
    if (!flags.data) rmSync(dir, { recursive: true, force: true });
  }
});
