#!/usr/bin/env node
/*
 * Does the open workload hold every step it can hold, and only those? On one stack:
 *   clean   `k6pack run ws-vs-http --workload open --load ci` under each profile
 *           (lan, lte, 3g), --runs times each, on unchanged servers. Target: every run
 *           exits 0 (no step dropped more arrivals than its rule allows, no budget failed).
 *   knee    the same servers slowed by K6PACK_TEST_DELAY_PER_INFLIGHT_MS (dev/server-delay.js:
 *           a request waits that long for every request in flight, a server that slows
 *           with load), under lte with OPEN_SHARES=30,150 on HTTP keep-alive: the 30 % step
 *           holds and the 150 % step falls behind (dropped past its limit), and the
 *           verdict's "held up to" stops at 30 %. Target: the knee shows in every run.
 *
 *   node bench/open-workload.js                  # 5 runs a profile, 2 knee runs, ~10 minutes
 *   node bench/open-workload.js --profiles lte --runs 2 --knee-runs 0
 *   node bench/open-workload.js --quick          # lte, 1 run (2 lanes, 1 s steps), 1 knee run (a check that it runs)
 * Appends its figures to bench/results.jsonl.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { freePortMap } from '../dev/test-stack.js';
import { BenchError, main, parseFlags, recordResult, ROOT, table, withTempDir } from './lib/common.js';
import { CLI } from './lib/gate-runs.js';

const DELAY_PER_INFLIGHT_MS = 15; // as test/workload.test.js: a ceiling of ~67 requests/s
const KNEE_SHARES = '30,150';

async function k6pack(args, env, { allow = [0] } = {}) {
  const r = await execa(process.execPath, [CLI, ...args], { env, reject: false, timeout: 600000, stdin: 'ignore' });
  if (!allow.includes(r.exitCode))
    throw new BenchError(`k6pack ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n').at(-1)}`);
  return r;
}

// The one run folder a `k6pack run --results DIR` wrote, and its summary.
function summaryIn(dir) {
  const sub = existsSync(dir) ? readdirSync(dir).find((d) => existsSync(join(dir, d, 'summary.json'))) : null;
  return sub ? JSON.parse(readFileSync(join(dir, sub, 'summary.json'), 'utf8')) : null;
}

// Per open step: arrivals planned, dropped, and whether its dropped gate held.
function stepsOf(doc) {
  const gate = (name) => doc.thresholds.find((t) => t.key === `dropped_iterations{scenario:${name}}`);
  return doc.steps.map((s) => ({
    step: s.scenario,
    done: s.iterations,
    dropped: s.droppedIterations,
    held: gate(s.scenario) ? gate(s.scenario).ok : null,
  }));
}

await main(async () => {
  const flags = parseFlags({ runs: 5, kneeRuns: 2, profiles: 'lan,lte,3g', quick: false });
  if (flags.quick) Object.assign(flags, { runs: 1, kneeRuns: 1, profiles: 'lte' });
  // --quick's clean run: HTTP keep-alive and WebSocket, 1 s steps (4 steps, 6 s of k6; every lane at
  // ci's budget took 27 s). The knee run is as in the full mode.
  const cleanArgs = flags.quick ? ['-e', 'LANES=http_keepalive,ws', '-e', 'STEP_SECONDS=1'] : [];
  const profiles = flags.profiles.split(',').filter(Boolean);
  await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    const env = { ...process.env, ...ports, K6PACK_RUN_DIR: join(dir, 'run') };
    const rows = [];
    const run = async (name, profile, extra, k6Args = []) => {
      const results = join(dir, name);
      const t0 = Date.now();
      const r = await k6pack(
        [
          'run',
          'ws-vs-http',
          '--profile',
          profile,
          '--load',
          'ci',
          '--workload',
          'open',
          '--results',
          results,
          '--',
          ...k6Args,
        ],
        extra,
        { allow: [0, 99] },
      );
      const doc = summaryIn(results);
      if (!doc) throw new BenchError(`${name}: no summary.json (k6pack exited ${r.exitCode})`);
      const steps = stepsOf(doc);
      const held = r.stdout.split('\n').find((l) => l.startsWith('Held the budget up to:'));
      const failed = doc.thresholds.filter((t) => !t.ok).map((t) => `${t.key} ${t.threshold} (${t.observed})`);
      return { exit: r.exitCode, seconds: Math.round((Date.now() - t0) / 1000), steps, held, failed };
    };
    try {
      await k6pack(['up'], env);
      for (const profile of profiles) {
        for (let i = 1; i <= flags.runs; i++) {
          console.log(`== ${profile} ${i}/${flags.runs}`);
          const r = await run(`${profile}-${i}`, profile, env, cleanArgs);
          rows.push({
            part: 'clean',
            profile,
            run: i,
            exit: r.exit,
            seconds: r.seconds,
            dropped: r.steps.map((s) => `${s.step}:${s.dropped}`).join(' '),
            failed: r.failed.length ? r.failed.join('; ') : '-',
            held: r.held,
          });
        }
      }
      if (flags.kneeRuns > 0) {
        await k6pack(['down'], env);
        const slow = {
          ...env,
          NODE_OPTIONS: `--import=${pathToFileURL(join(ROOT, 'dev', 'server-delay.js')).href}`,
          K6PACK_TEST_DELAY_PER_INFLIGHT_MS: String(DELAY_PER_INFLIGHT_MS),
        };
        await k6pack(['up'], slow);
        for (let i = 1; i <= flags.kneeRuns; i++) {
          console.log(`== knee ${i}/${flags.kneeRuns} (servers +${DELAY_PER_INFLIGHT_MS} ms per request in flight)`);
          const r = await run(`knee-${i}`, 'lte', slow, [
            '-e',
            'LANES=http_keepalive',
            '-e',
            `OPEN_SHARES=${KNEE_SHARES}`,
          ]);
          const [low, high] = r.steps;
          const shows = low && high && low.held === true && high.held === false;
          rows.push({
            part: 'knee',
            profile: 'lte',
            run: i,
            exit: r.exit,
            seconds: r.seconds,
            dropped: r.steps.map((s) => `${s.step}:${s.dropped}`).join(' '),
            failed: r.failed.length ? r.failed.join('; ') : '-',
            held: r.held,
            knee: shows ? 'shows' : 'NOT SHOWN',
          });
        }
      }
    } finally {
      await k6pack(['down', '--force'], env, { allow: [0, 1, 2] }).catch(() => {});
    }
    console.log(table(rows, ['part', 'profile', 'run', 'exit', 'seconds', 'dropped', 'knee', 'held']));
    for (const r of rows.filter((x) => x.failed !== '-' && x.part === 'clean'))
      console.log(`${r.profile} ${r.run}: ${r.failed}`);
    const clean = rows.filter((r) => r.part === 'clean');
    const knee = rows.filter((r) => r.part === 'knee');
    const passed = clean.filter((r) => r.exit === 0).length;
    const shown = knee.filter((r) => r.knee === 'shows').length;
    const verdict = {
      clean: passed === clean.length ? 'met' : 'MISSED',
      knee: knee.length ? (shown === knee.length ? 'met' : 'MISSED') : 'not run',
    };
    console.log(`\nclean: ${passed} of ${clean.length} open runs exited 0 (target all): ${verdict.clean}`);
    if (knee.length)
      console.log(`knee: shown in ${shown} of ${knee.length} runs with the slowed servers: ${verdict.knee}`);
    recordResult(
      'open-workload',
      {
        profiles,
        runs: flags.runs,
        passed,
        cleanRuns: clean.length,
        kneeShown: shown,
        kneeRuns: knee.length,
        verdict,
        rows,
      },
      { quick: flags.quick },
    );
  }, 'k6pack-open-');
});
