#!/usr/bin/env node
/*
 * Every gated scenario under slow and lossy networks at ci load, on unchanged code:
 * does a thin row still fail a run that is not a regression? One `k6pack gate` with
 * --profile lte,3g,4g+shared+loss3 --load ci (the scenarios the gate runs: not soak,
 * unstable, api or mobile; one k6 run each per profile) on a stack of its own: each run's exit code and the
 * thresholds it failed. Target: every run exits 0 (a row too thin to gate is not gated:
 * docs/thresholds.md#sample-floors).
 *
 *   node bench/profile-sweep.js
 *   node bench/profile-sweep.js --profiles 4g+shared+loss3 --scenarios compound-vs-parallel
 * Appends its figures to bench/results.jsonl.
 */
import { join } from 'node:path';
import { freePortMap } from '../dev/test-stack.js';
import { main, parseFlags, recordResult, round, table, withTempDir } from './lib/common.js';
import { calibrationSummary, failedGates, gateCalibrations, runGate } from './lib/gate-runs.js';

await main(async () => {
  const flags = parseFlags({ profiles: 'lte,3g,4g+shared+loss3', load: 'ci', scenarios: '', quick: false });
  if (flags.quick) Object.assign(flags, { profiles: 'lte', scenarios: flags.scenarios || 'push', load: 'smoke' });
  await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    const env = { ...process.env, ...ports, K6PACK_RUN_DIR: join(dir, 'run') };
    const folder = join(dir, 'sweep');
    const g = await runGate({ profiles: flags.profiles, load: flags.load, scenarios: flags.scenarios, folder, env });
    const failed = failedGates(g, folder);
    const rows = g.runs.flatMap((s) =>
      s.runs.map((r) => ({
        scenario: s.scenario,
        profile: r.profile,
        exit: r.exitCode,
        seconds: round(r.seconds, 1),
        failed: failed.filter((f) => f.startsWith(`${s.scenario} ${r.profile}:`)).length,
      })),
    );
    console.log(table(rows, ['scenario', 'profile', 'exit', 'seconds', 'failed']));
    for (const f of failed) console.log(`  failed: ${f}`);
    const red = rows.filter((r) => r.exit !== 0).length;
    const verdict = red === 0 ? 'met' : 'MISSED';
    const calibrations = gateCalibrations(g, folder);
    console.log(
      `\n${rows.length - red} of ${rows.length} runs exited 0 under ${flags.profiles} at ${flags.load} (target all): ${verdict}`,
    );
    recordResult(
      'profile-sweep',
      {
        profiles: flags.profiles,
        load: flags.load,
        runs: rows.length,
        red,
        failed,
        rows,
        calibration: calibrationSummary(calibrations),
        verdict,
      },
      { quick: flags.quick },
    );
  }, 'k6pack-profile-sweep-');
});
