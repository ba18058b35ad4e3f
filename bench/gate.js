#!/usr/bin/env node
/*
 * Gate time: the wall time of the PR gate as CI runs it (.github/workflows/
 * pr-gate.yml): one `npx k6pack gate --profile lan,lte --load ci`, every
 * scenario except soak one after another on one stack.
 * Target: <= 5 minutes of scenario runs in total.
 *
 *   node bench/gate.js
 *   node bench/gate.js --profiles lan,3g --load ci --scenarios ws-vs-http,push
 *   node bench/gate.js --quick        # one scenario (push), lan, smoke, 1 s steps (a check that it runs)
 * The gate starts its own stack on free ports (its start-up and stop count in
 * the wall time, not in the scenarios' time) and writes its gate folder into a
 * temp dir; the rows per scenario are the gate's own timings (gate.json).
 * Appends its figures to bench/results.jsonl.
 */
import { join } from 'node:path';
import { GATE_DEFAULTS } from '../lib/gate-defaults.js';
import { freePortMap } from '../dev/test-stack.js';
import { main, parseFlags, recordResult, round, table, withTempDir } from './lib/common.js';
import { GATE_TARGET_SECONDS, runGate } from './lib/gate-runs.js';

await main(async () => {
  const flags = parseFlags({ scenarios: '', profiles: GATE_DEFAULTS.profile, load: GATE_DEFAULTS.load, quick: false });
  if (flags.quick)
    // push: three lanes, 6 s of k6 at 1 s steps (grpc-vs-graphql's thirteen took 26 s); the gate's code is the same.
    Object.assign(flags, { scenarios: flags.scenarios || 'push', profiles: 'lan', load: 'smoke' });
  const k6Args = flags.quick ? ['-e', 'STEP_SECONDS=1'] : [];

  const started = Date.now();
  const gate = await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    return runGate({
      profiles: flags.profiles,
      load: flags.load,
      scenarios: flags.scenarios,
      folder: join(dir, 'gate'),
      env: { ...ports, K6PACK_RUN_DIR: join(dir, 'run') },
      k6Args,
    });
  }, 'k6pack-gate-');
  const total = round((Date.now() - started) / 1000, 0);

  const rows = gate.runs.map((s) => ({
    scenario: s.scenario,
    seconds: round(s.seconds, 1),
    'k6pack exit': s.exitCode,
    'k6 exits': s.runs.map((x) => `${x.profile}:${x.exitCode}`).join(' ') || '-',
  }));
  const runSeconds = round(
    rows.reduce((s, r) => s + r.seconds, 0),
    0,
  );
  console.log(
    `\ngate: ${rows.length} scenarios x ${flags.profiles} at LOAD=${flags.load} (k6pack gate exited ${gate.exitCode}):`,
  );
  console.log(table(rows, Object.keys(rows[0])));
  const verdict = runSeconds <= GATE_TARGET_SECONDS ? 'met' : 'MISSED';
  console.log(
    `\ngate time: ${runSeconds} s of scenario runs (${total} s for the one command, with the stack's start-up and stop); target <= ${GATE_TARGET_SECONDS} s: ${verdict}`,
  );
  recordResult(
    'gate',
    {
      profiles: flags.profiles,
      load: flags.load,
      runSeconds,
      wallSeconds: total,
      target: GATE_TARGET_SECONDS,
      verdict,
      gateExit: gate.exitCode,
      rows,
    },
    { quick: flags.quick },
  );
});
