#!/usr/bin/env node
/*
 * Regressions judged against a history (issue 24), on one stack:
 *   history   N gates on unchanged code, each appended (`gate --history H`).
 *   clean     M more gates on unchanged code, each with `--baseline <the first gate>
 *             --history H`: how many report a regression. Target: 0 of M.
 *   slowed    the servers restarted with a test-only delay of 10 % of lte's RTT on every
 *             request (dev/server-delay.js: 7 ms; the fixed rule's bench, gate-trust.js,
 *             needs 20 %), then M gates judged as above, each against its own copy of H
 *             (a pull request is judged against main's history, never another PR's): how
 *             many catch it. Target: M of M.
 *   size      bytes a run adds to the history, the time `k6pack history add` takes for
 *             one gate, and the time `history report` takes to draw 100 runs (the real
 *             digests repeated, one a day).
 * The gates run --scenarios (default ws-vs-http,grpc-vs-graphql) under lte at LOAD=ci:
 * 20 full gates would take 80 minutes on this machine.
 *
 *   node bench/history-trust.js                       # 10 + 5 + 5 gates, ~25 minutes
 *   node bench/history-trust.js --quick               # 5 + 1 + 1 smoke gates of push's two streams, 2 s steps (a check that it runs)
 * Appends its figures to bench/results.jsonl.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { HISTORY_RULE, MIN_HISTORY_RUNS } from '../common/history.js';
import { loadProfile } from '../lib/profiles.js';
import { freePortMap } from '../dev/test-stack.js';
import { BenchError, main, median, parseFlags, recordResult, round, ROOT, table, withTempDir } from './lib/common.js';
import { CLI, runGate } from './lib/gate-runs.js';

const PROFILE = 'lte';
const SLOW_SHARE = 0.1;
const TREND_RUNS = 100;

async function k6pack(args, env) {
  const t0 = Date.now();
  const r = await execa(process.execPath, [CLI, ...args], { env, reject: false, timeout: 600000, stdin: 'ignore' });
  if (r.exitCode !== 0)
    throw new BenchError(`k6pack ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n').at(-1)}`);
  return { ...r, ms: Date.now() - t0 };
}

const filesIn = (dir) =>
  (existsSync(dir) ? readdirSync(dir, { recursive: true }) : [])
    .map((f) => join(dir, String(f)))
    .filter((f) => f.endsWith('.jsonl'));
const bytesIn = (dir) => filesIn(dir).reduce((n, f) => n + statSync(f).size, 0);
const linesIn = (dir) => filesIn(dir).reduce((n, f) => n + readFileSync(f, 'utf8').trim().split('\n').length, 0);

await main(async () => {
  const flags = parseFlags({
    history: HISTORY_RULE.runs,
    runs: 5,
    slowRuns: 5,
    scenarios: 'ws-vs-http,grpc-vs-graphql',
    load: 'ci',
    quick: false,
  });
  if (flags.quick)
    Object.assign(flags, { history: MIN_HISTORY_RUNS, runs: 1, slowRuns: 1, scenarios: 'push', load: 'smoke' });
  if (flags.history < MIN_HISTORY_RUNS) throw new BenchError(`--history must be at least ${MIN_HISTORY_RUNS}`);
  // --quick: push's two streams (ws, grpc_stream) in 2 s steps, 6 s of k6 a gate as its three
  // lanes' 1 s steps took; http_poll, left out, held no event in most 1 s steps. On a loaded
  // machine (load 13-20) a 1 s step could end without an event (2 of 5 history gates of ws
  // alone; one lane of two in 3 of 5), and the history rule applies where a row is in all
  // five runs.
  const k6Args = flags.quick ? ['-e', 'STEP_SECONDS=2', '-e', 'LANES=ws,grpc_stream'] : [];
  const delayMs = Math.round(loadProfile(PROFILE).network.rttMs * SLOW_SHARE);

  await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    const env = { ...ports, K6PACK_RUN_DIR: join(dir, 'run') };
    const history = join(dir, 'history');
    const gate = (name, opts) =>
      runGate({
        profiles: PROFILE,
        load: flags.load,
        scenarios: flags.scenarios,
        folder: join(dir, name),
        env,
        k6Args,
        historyRuns: flags.history,
        ...opts,
      });
    const regressionsOf = (g) => (g.comparisons || []).reduce((n, c) => n + (c.regressions || 0), 0);
    // The rule a gate's comparisons were under: the history's; the history's, where every
    // latency figure was too few operations to judge (--quick's smoke steps: lib/report/compare.js);
    // or the fixed one, the history too short.
    const ruleOf = (g) => {
      const comparisons = g.comparisons || [];
      if (comparisons.every((c) => c.history?.applied)) return 'history';
      if (comparisons.every((c) => c.history && c.history.runs >= c.history.needed))
        return 'history (too few to judge)';
      return 'fixed (history too short)';
    };
    const rows = [];
    const addMs = [];
    try {
      await k6pack(['up'], env);
      for (let i = 1; i <= flags.history; i++) {
        console.log(`== history gate ${i}/${flags.history}`);
        const before = bytesIn(history);
        const g = await gate(`history-${i}`, { history });
        rows.push({
          part: 'history',
          run: i,
          exit: g.exitCode,
          seconds: round(g.seconds, 0),
          added: bytesIn(history) - before,
        });
        // The time `history add` takes for one gate, into a scratch copy (the gate added it already).
        const scratch = join(dir, `add-${i}`);
        addMs.push((await k6pack(['history', 'add', '--history', scratch, join(dir, `history-${i}`)], env)).ms);
      }
      for (let i = 1; i <= flags.runs; i++) {
        console.log(`== clean gate ${i}/${flags.runs}, judged by the history`);
        const g = await gate(`clean-${i}`, { history, baseline: join(dir, 'history-1') });
        const n = regressionsOf(g);
        rows.push({
          part: 'clean',
          run: i,
          exit: g.exitCode,
          seconds: round(g.seconds, 0),
          regressions: n,
          rule: ruleOf(g),
          flagged: n ? 'YES' : 'no',
        });
      }
      if (flags.slowRuns > 0) {
        await k6pack(['down'], env);
        await k6pack(['up'], {
          ...env,
          NODE_OPTIONS: `--import=${pathToFileURL(join(ROOT, 'dev', 'server-delay.js')).href}`,
          K6PACK_TEST_DELAY_MS: String(delayMs),
        });
      }
      for (let i = 1; i <= flags.slowRuns; i++) {
        console.log(`== slowed gate ${i}/${flags.slowRuns} (servers +${delayMs} ms a request)`);
        const copy = join(dir, `history-copy-${i}`);
        cpSync(history, copy, { recursive: true });
        const g = await gate(`slow-${i}`, { history: copy, baseline: join(dir, 'history-1') });
        const n = regressionsOf(g);
        rows.push({
          part: 'slowed',
          run: i,
          exit: g.exitCode,
          seconds: round(g.seconds, 0),
          regressions: n,
          rule: ruleOf(g),
          flagged: n ? 'yes' : 'NO',
        });
      }
    } finally {
      await k6pack(['down', '--force'], env).catch(() => {});
    }

    // 100 runs for the trend page: the real digests, one a day.
    const hundred = join(dir, 'hundred');
    for (const file of filesIn(history)) {
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const out = [];
      for (let i = 0; i < TREND_RUNS; i++) {
        const d = lines[i % lines.length];
        out.push(JSON.stringify({ ...d, startedAt: new Date(Date.UTC(2026, 0, 1) + i * 86400000).toISOString() }));
      }
      const target = join(hundred, file.slice(history.length + 1));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, `${out.join('\n')}\n`);
    }
    const draw = await k6pack(['history', 'report', hundred, '--out', join(dir, 'trends-100.html')], env);

    console.log(table(rows, ['part', 'run', 'exit', 'seconds', 'added', 'regressions', 'rule', 'flagged']));
    const clean = rows.filter((r) => r.part === 'clean');
    const slowed = rows.filter((r) => r.part === 'slowed');
    const falseFlags = clean.filter((r) => r.regressions > 0).length;
    const caught = slowed.filter((r) => r.regressions > 0).length;
    const perRun = Math.round(bytesIn(history) / linesIn(history));
    const figures = {
      scenarios: flags.scenarios,
      profile: PROFILE,
      load: flags.load,
      historyRuns: flags.history,
      falseFlags,
      cleanRuns: clean.length,
      caught,
      slowRuns: slowed.length,
      delayMs,
      bytesPerRun: perRun,
      addMsMedian: median(addMs),
      trendRuns: TREND_RUNS,
      trendMs: draw.ms,
      trendBytes: statSync(join(dir, 'trends-100.html')).size,
      rows,
    };
    figures.verdict = {
      clean: falseFlags === 0 ? 'met' : 'MISSED',
      slowed: caught === slowed.length ? 'met' : 'MISSED',
    };
    console.log(
      `\nclean: ${falseFlags} of ${clean.length} gates judged by a history of ${flags.history} flagged a regression (target 0): ${figures.verdict.clean}`,
    );
    console.log(
      `slowed: ${caught} of ${slowed.length} gates with the servers ${delayMs} ms slower (${SLOW_SHARE * 100} % of ${PROFILE}'s RTT) flagged it (target all): ${figures.verdict.slowed}`,
    );
    console.log(
      `size: ${perRun} bytes a run (a digest line per scenario and profile); history add: ${figures.addMsMedian} ms a gate (median, the CLI's start included); trends of ${TREND_RUNS} runs: ${draw.ms} ms, ${Math.round(figures.trendBytes / 1024)} KB`,
    );
    recordResult('history-trust', figures, { quick: flags.quick });
  }, 'k6pack-history-trust-');
});
