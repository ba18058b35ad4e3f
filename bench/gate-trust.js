#!/usr/bin/env node
/*
 * Can a team trust the gate? Two figures, on one stack:
 *   cry wolf  the PR gate (`k6pack gate`, every scenario but soak, lan + lte, load ci)
 *             run N times in a row on unchanged code: how many runs fail (exit 99 or
 *             broken). Target: 0 of 5.
 *   drift     the same servers restarted with a test-only delay of 20 % of lte's RTT on
 *             every request (dev/server-delay.js: 14 ms), then `k6pack gate --profile lte
 *             --baseline <the first clean gate> --tolerance 10%` N times: how many report
 *             the regression (a comparison with regressions). Target: 5 of 5.
 *   spread    over the clean gates, each gated figure's run-to-run spread: its mean,
 *             standard deviation and coefficient of variation, and its budget's margin
 *             (limit - mean) in standard deviations. Target: every margin >= 3 sd; the
 *             gates below it are listed.
 * The stack is `k6pack up` on free ports; between the two parts only the servers'
 * start-up environment changes. --busy keeps one core busy for the whole bench (a
 * bounded busy loop in a child process), as a loaded CI runner would. --one-core runs
 * the whole bench pinned to the first core (`taskset -c 0`: a machine half as fast, k6,
 * the servers and toxiproxy sharing one core). Each record keeps the calibration every
 * run read (CPU x… of the reference machine) and the cores it ran on, so that runs on
 * different machines can be told apart.
 *
 *   node bench/gate-trust.js                 # 5 + 5 gates, ~25 minutes
 *   node bench/gate-trust.js --busy --drift-runs 0
 *   node bench/gate-trust.js --runs 2 --drift-runs 2 --scenarios ws-vs-http,push
 *   node bench/gate-trust.js --one-core --runs 3 --drift-runs 0
 *   node bench/gate-trust.js --quick         # one scenario, smoke, 1 + 1 runs; ws-vs-http on 2 lanes (a check that it runs)
 * Appends its figures to bench/results.jsonl.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { busyCore } from './lib/busy.js';
import { spreadOf } from '../dev/spread.js';
import { GATE_DEFAULTS } from '../lib/gate-defaults.js';
import { loadProfile } from '../lib/profiles.js';
import { freePortMap } from '../dev/test-stack.js';
import {
  BenchError,
  main,
  parseFlags,
  recordResult,
  round,
  ROOT,
  runPinnedToOneCore,
  table,
  withTempDir,
} from './lib/common.js';
import {
  CLI,
  failedGates,
  GATE_TARGET_SECONDS,
  calibrationSummary,
  gateCalibrations,
  gateFigures,
  runGate,
} from './lib/gate-runs.js';

const DRIFT_SHARE = 0.2;
const DRIFT_PROFILE = 'lte';
const MARGIN_SDS = 3;
async function k6pack(args, env) {
  const r = await execa(process.execPath, [CLI, ...args], { env, reject: false, timeout: 300000, stdin: 'ignore' });
  if (r.exitCode !== 0)
    throw new BenchError(`k6pack ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n').at(-1)}`);
}

await main(async () => {
  const flags = parseFlags({
    runs: 5,
    driftRuns: 5,
    scenarios: '',
    load: GATE_DEFAULTS.load,
    quick: false,
    busy: false,
    oneCore: false,
  });
  // --one-core: the same bench again, pinned to the first core with everything it starts.
  if (flags.oneCore && (await runPinnedToOneCore(import.meta.url))) return;
  if (flags.quick)
    Object.assign(flags, { runs: 1, driftRuns: 1, scenarios: flags.scenarios || 'ws-vs-http', load: 'smoke' });
  if (flags.runs < 1 || (flags.driftRuns > 0 && flags.runs < 1))
    throw new BenchError('--runs must be at least 1 (the drift gates compare with the first clean gate)');
  // --quick's ws-vs-http on two of its lanes, HTTP keep-alive and WebSocket: the drift (a
  // delay on every request) lands on both; the other seven lanes only lengthened the gates.
  const quickLanes = flags.scenarios === 'ws-vs-http' ? ['-e', 'LANES=http_keepalive,ws'] : [];
  const k6Args = flags.quick ? ['-e', 'STEP_SECONDS=1', ...quickLanes] : [];
  const delayMs = Math.round(loadProfile(DRIFT_PROFILE).network.rttMs * DRIFT_SHARE);

  await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    const env = { ...ports, K6PACK_RUN_DIR: join(dir, 'run') };
    const gate = (name, opts) =>
      runGate({ load: flags.load, scenarios: flags.scenarios, folder: join(dir, name), env, k6Args, ...opts });
    const rows = [];
    const figures = [];
    const calibrations = [];
    const stopBusy = flags.busy ? busyCore() : () => {};
    try {
      await k6pack(['up'], env);
      // ---- cry wolf: unchanged code, N gates ----
      for (let i = 1; i <= flags.runs; i++) {
        console.log(`== clean gate ${i}/${flags.runs}`);
        const g = await gate(`clean-${i}`, { profiles: GATE_DEFAULTS.profile });
        calibrations.push(...gateCalibrations(g, join(dir, `clean-${i}`)));
        const failed = failedGates(g, join(dir, `clean-${i}`));
        figures.push(...gateFigures(g, join(dir, `clean-${i}`)).map((f) => ({ ...f, run: i })));
        rows.push({
          part: 'clean',
          run: i,
          exit: g.exitCode,
          seconds: round(g.seconds, 0),
          failed: failed.length,
          first: failed[0] || '-',
        });
      }
      // ---- drift: the same servers, 20 % of lte's RTT slower ----
      if (flags.driftRuns > 0) await k6pack(['down'], env);
      const driftEnv = {
        ...env,
        NODE_OPTIONS: `--import=${pathToFileURL(join(ROOT, 'dev', 'server-delay.js')).href}`,
        K6PACK_TEST_DELAY_MS: String(delayMs),
      };
      if (flags.driftRuns > 0) await k6pack(['up'], driftEnv);
      for (let i = 1; i <= flags.driftRuns; i++) {
        console.log(`== drift gate ${i}/${flags.driftRuns} (servers +${delayMs} ms a request)`);
        const g = await gate(`drift-${i}`, {
          profiles: DRIFT_PROFILE,
          baseline: join(dir, 'clean-1'),
          tolerance: '10%',
        });
        const regressions = (g.comparisons || []).reduce((n, c) => n + (c.regressions || 0), 0);
        rows.push({
          part: 'drift',
          run: i,
          exit: g.exitCode,
          seconds: round(g.seconds, 0),
          regressions,
          detected: regressions > 0 ? 'yes' : 'NO',
        });
      }
    } finally {
      stopBusy();
      await k6pack(['down', '--force'], env).catch(() => {});
    }
    console.log(table(rows, ['part', 'run', 'exit', 'seconds', 'failed', 'regressions', 'detected', 'first']));
    const clean = rows.filter((r) => r.part === 'clean');
    const drift = rows.filter((r) => r.part === 'drift');
    const falseFailures = clean.filter((r) => r.exit !== 0).length;
    const detected = drift.filter((r) => r.detected === 'yes').length;
    const verdict = {
      cryWolf: falseFailures === 0 ? 'met' : 'MISSED',
      drift: detected === drift.length ? 'met' : 'MISSED',
    };
    console.log(`\ncry wolf: ${falseFailures} of ${clean.length} clean gates failed (target 0): ${verdict.cryWolf}`);
    console.log(
      `drift: ${detected} of ${drift.length} gates with the servers ${delayMs} ms slower (20 % of ${DRIFT_PROFILE}'s RTT) reported the regression (target all): ${verdict.drift}`,
    );
    const slowest = Math.max(...clean.map((r) => r.seconds));
    console.log(
      `gate time: ${clean.map((r) => r.seconds).join(', ')} s (target <= ${GATE_TARGET_SECONDS} s): ${slowest <= GATE_TARGET_SECONDS ? 'met' : 'MISSED'}`,
    );
    const spread = spreadOf(figures, MARGIN_SDS);
    if (spread.rows.length) {
      console.log(
        `\nspread over ${clean.length} clean gates: ${spread.gates} latency gates, CV median ${spread.cvMedian} %, max ${spread.cvMax} %; ` +
          `${spread.below.length} with a margin under ${MARGIN_SDS} sd (target 0)`,
      );
      console.log(
        table(spread.worst, [
          'scenario',
          'profile',
          'key',
          'stat',
          'limit',
          'values',
          'mean',
          'sd',
          'cv %',
          'margin sd',
        ]),
      );
    }
    verdict.spread = clean.length < 2 ? 'n/a (one run)' : spread.below.length === 0 ? 'met' : 'MISSED';
    verdict.gateSeconds = slowest <= GATE_TARGET_SECONDS ? 'met' : 'MISSED';
    recordResult(
      'gate-trust',
      {
        load: flags.load,
        scenarios: flags.scenarios || 'all but soak',
        falseFailures,
        cleanRuns: clean.length,
        detected,
        driftRuns: drift.length,
        delayMs,
        gateSeconds: clean.map((r) => r.seconds),
        busy: flags.busy,
        cores: availableParallelism(),
        calibration: calibrationSummary(calibrations),
        verdict,
        rows,
        spread: {
          gates: spread.gates,
          cvMedian: spread.cvMedian,
          cvMax: spread.cvMax,
          marginSds: MARGIN_SDS,
          below: spread.below,
          all: spread.rows,
        },
      },
      { quick: flags.quick },
    );
  }, 'k6pack-gate-trust-');
});
