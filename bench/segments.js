#!/usr/bin/env node
/*
 * A distributed run rehearsed on this machine: one plan run by one k6 process,
 * then by four k6 processes at once as execution segments (0:1/4 ... 3/4:1,
 * --execution-segment-sequence, the k6-operator's flags: dev/run-segments.js)
 * against the same stack, merged with `k6pack merge`.
 * Figures: operations per second of the four segments together vs the one
 * process (the same planned step time); iterations per process; the merged
 * thresholds' verdicts vs the single run's; the merge's time and method.
 * Target: the merged verdicts equal the single run's (iterations adding up is
 * test/segments.test.js's check, with fixed iteration counts); the ops/s ratio
 * is a figure: on one 2-core machine four k6 share the cores the one had.
 *
 *   node bench/segments.js                              # ws-vs-http, lan, 4 VUs a step, 10 s steps
 *   node bench/segments.js --profile lte --step-seconds 20
 *   node bench/segments.js --quick                      # serialization (2 lanes) under lte, 1 s steps: a check that it runs
 * Appends its figures to bench/results.jsonl.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { runToFolder } from '../dev/run-k6.js';
import { runSegments } from '../dev/run-segments.js';
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
import { loadRun } from '../lib/report/runs.js';

const CLI = join(ROOT, 'bin', 'k6pack.js');

// A run folder's figures: { iterations, ops, failed, planned seconds, k6 seconds }.
function figures(doc, seconds) {
  const ops = doc.rows.reduce((n, r) => n + (r.latency.count || 0), 0);
  const planned = doc.steps.reduce((n, s) => n + s.durationSeconds, 0);
  return { iterations: doc.totals.iterations, ops, 'ops/s': round(ops / planned, 0), 'k6 s': round(seconds, 1) };
}

await main(async () => {
  const flags = parseFlags({
    scenario: 'ws-vs-http',
    profile: 'lan',
    steps: '4',
    stepSeconds: 10,
    segments: 4,
    quick: false,
  });
  // Quick: under lte, so five k6 processes stay light beside the other benches test/bench.test.js runs at once.
  if (flags.quick) Object.assign(flags, { scenario: 'serialization', profile: 'lte', stepSeconds: 1 });
  // Quick: two of its eight lanes, a GraphQL one and a gRPC one: 4 s of k6 a run instead of 16.
  const lanes = flags.quick ? 'typed,grpc_list' : '';
  if (!Number.isInteger(flags.segments) || flags.segments < 2)
    throw new BenchError('--segments needs a whole number of at least 2');
  const env = {
    LOAD: 'smoke',
    PROFILE: flags.profile,
    STEPS: flags.steps,
    STEP_SECONDS: String(flags.stepSeconds),
    ...(flags.scenario === 'serialization' ? { NS: '100' } : {}),
    ...(lanes ? { LANES: lanes } : {}),
  };
  const timeoutMs = 20 * 60 * 1000;

  const result = await withTempDir(
    (dir) =>
      withStack(async (stack) => {
        const into = async (folder, name, e, opts) => {
          const started = Date.now();
          const r = await runToFolder(folder, join(ROOT, 'scenarios', `${name}.js`), { env: e, ...opts });
          if (![0, 99].includes(r.code))
            throw new BenchError(`k6 ${name} in ${folder} exited ${r.code}: ${r.stderr.slice(-800)}`);
          return { ...r, seconds: (Date.now() - started) / 1000, doc: loadRun(folder).doc };
        };
        console.log(
          `${flags.scenario} under ${flags.profile}, STEPS=${flags.steps}, ${flags.stepSeconds} s steps: one process...`,
        );
        const one = await into(join(dir, 'one'), flags.scenario, { ...stack.env, ...env }, { timeoutMs });
        console.log(`... then ${flags.segments} segments at once`);
        const parts = await runSegments(
          into,
          join(dir, 'segments'),
          flags.scenario,
          { ...stack.env, ...env },
          { total: flags.segments, timeoutMs },
        );
        const started = Date.now();
        const merged = join(dir, 'merged');
        const m = await execa(process.execPath, [CLI, 'merge', ...parts.map((p) => p.dir), '--out', merged], {
          reject: false,
          timeout: 300000,
          stdin: 'ignore',
        });
        if (![0, 99].includes(m.exitCode))
          throw new BenchError(`k6pack merge exited ${m.exitCode}: ${m.stderr.trim()}`);
        return { one, parts, merged: loadRun(merged).doc, mergeSeconds: (Date.now() - started) / 1000 };
      }),
    'k6pack-segments-',
  );

  const { one, parts, merged } = result;
  const rows = [
    { run: 'one process', ...figures(one.doc, one.seconds) },
    ...parts.map((p) => ({ run: `segment ${p.doc.run.executionSegment}`, ...figures(p.doc, p.seconds) })),
    { run: `merged (${merged.run.merged.method})`, ...figures(merged, Math.max(...parts.map((p) => p.seconds))) },
  ];
  const single = new Map(one.doc.thresholds.map((t) => [`${t.key} ${t.threshold}`, t.ok]));
  const differ = merged.thresholds
    .filter((t) => single.get(`${t.key} ${t.threshold}`) !== t.ok)
    .map((t) => `${t.key} ${t.threshold}: merged ${t.ok ? 'ok' : 'failed'}`);
  const ratio = round(rows.at(-1)['ops/s'] / rows[0]['ops/s'], 2);
  const iterationsAdd = parts.reduce((n, p) => n + p.doc.totals.iterations, 0) === merged.totals.iterations;
  const verdict = differ.length === 0 && iterationsAdd ? 'met' : 'MISSED';
  console.log(`\n${flags.segments} segments vs one process (${flags.scenario}, ${flags.profile}):`);
  console.log(table(rows, Object.keys(rows[0])));
  console.log(
    `\nops/s, ${flags.segments} segments / one process: ${ratio}; merge ${round(result.mergeSeconds, 1)} s; thresholds: ${merged.thresholds.length - differ.length} of ${merged.thresholds.length} with the single run's verdict${differ.length ? `; differ: ${differ.join('; ')}` : ''}; target (same verdicts, iterations add up): ${verdict}`,
  );
  recordResult(
    'segments',
    {
      scenario: flags.scenario,
      profile: flags.profile,
      steps: flags.steps,
      stepSeconds: flags.stepSeconds,
      segments: flags.segments,
      ratio,
      mergeSeconds: round(result.mergeSeconds, 1),
      method: merged.run.merged.method,
      thresholds: merged.thresholds.length,
      differ,
      iterationsAdd,
      verdict,
      rows,
    },
    { quick: flags.quick },
  );
});
