#!/usr/bin/env node
/*
 * Gate time: the wall time of the PR gate as CI runs it (.github/workflows/
 * pr-gate.yml): every scenario except soak, `npx k6pack run <scenario>
 * --profile lan,lte --load ci`, one after another against one running stack.
 * Target: <= 5 minutes in total.
 *
 *   node bench/gate.js
 *   node bench/gate.js --profiles lan,3g --load ci --scenarios ws-vs-http,push
 *   node bench/gate.js --quick        # one scenario, lan, smoke, 1 s steps (a check that it runs)
 * Runs on a private stack (free ports), writes the scenarios' summary files
 * into a temp RESULTS_DIR, and appends its figures to bench/results.jsonl.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { scenarioNames } from '../lib/cli-support.js';
import { BenchError, main, parseFlags, recordResult, round, ROOT, table, withStack, withTempDir } from './lib/common.js';

const TARGET_SECONDS = 300;
const CLI = join(ROOT, 'bin', 'k6pack.js');

// The gate's scenarios: all but the soak.
const gateScenarios = () => scenarioNames().filter((s) => s !== 'soak');

await main(async () => {
  const flags = parseFlags({ scenarios: '', profiles: 'lan,lte', load: 'ci', quick: false });
  if (flags.quick) Object.assign(flags, { scenarios: flags.scenarios || 'grpc-vs-graphql', profiles: 'lan', load: 'smoke' });
  const names = flags.scenarios ? flags.scenarios.split(',').map((s) => s.trim()) : gateScenarios();
  for (const n of names) if (!scenarioNames().includes(n)) throw new BenchError(`unknown scenario ${n}: use ${scenarioNames().join(', ')}`);
  const k6Args = flags.quick ? ['--', '-e', 'STEP_SECONDS=1'] : [];

  const rows = [];
  const started = Date.now();
  await withStack((stack) =>
    withTempDir(async (resultsDir) => {
      // `k6pack run` finds the stack on the ports in its environment (as after `k6pack up`).
      const env = { ...Object.fromEntries(Object.entries(stack.ports).map(([k, v]) => [k, String(v)])), K6PACK_RUN_DIR: join(resultsDir, 'run'), K6PACK_RESULTS_DIR: resultsDir };
      for (const scenario of names) {
        const t0 = Date.now();
        const r = await execa(process.execPath, [CLI, 'run', scenario, '--profile', flags.profiles, '--load', flags.load, ...k6Args], {
          env,
          reject: false,
          timeout: 30 * 60 * 1000,
          stdin: 'ignore',
        });
        const seconds = (Date.now() - t0) / 1000;
        const exits = [...r.stdout.matchAll(/^== .*?, (profile \S+|the scenario's default profile): k6 exited (\d+)$/gm)].map((m) => `${m[1].replace('profile ', '')}:${m[2]}`);
        rows.push({ scenario, seconds: round(seconds, 1), 'k6pack exit': r.exitCode, 'k6 exits': exits.join(' ') || '-' });
        console.log(`${scenario}: ${round(seconds, 1)} s, k6pack exit ${r.exitCode} (${exits.join(' ')})`);
        if (r.exitCode !== 0 && r.exitCode !== 99) console.log(r.stderr.slice(-1000));
      }
    }, 'k6pack-gate-'),
  );
  const total = round((Date.now() - started) / 1000, 0);
  const runSeconds = round(rows.reduce((s, r) => s + r.seconds, 0), 0);
  console.log(`\ngate: ${names.length} scenarios x ${flags.profiles} at LOAD=${flags.load}:`);
  console.log(table(rows, Object.keys(rows[0])));
  const verdict = runSeconds <= TARGET_SECONDS ? 'met' : 'MISSED';
  console.log(`\ngate time: ${runSeconds} s of k6pack runs (${total} s with the stack's start-up and stop); target <= ${TARGET_SECONDS} s: ${verdict}`);
  recordResult('gate', { profiles: flags.profiles, load: flags.load, runSeconds, wallSeconds: total, target: TARGET_SECONDS, verdict, rows }, { quick: flags.quick });
});
