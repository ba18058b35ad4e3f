#!/usr/bin/env node
/*
 * Gate time: the wall time of the PR gate as CI runs it (.github/workflows/
 * pr-gate.yml): one `npx k6pack gate --profile lan,lte --load ci`, every
 * scenario except soak one after another on one stack.
 * Target: <= 5 minutes of scenario runs in total.
 *
 *   node bench/gate.js
 *   node bench/gate.js --profiles lan,3g --load ci --scenarios ws-vs-http,push
 *   node bench/gate.js --quick        # one scenario, lan, smoke, 1 s steps (a check that it runs)
 * The gate starts its own stack on free ports (its start-up and stop count in
 * the wall time, not in the scenarios' time) and writes its gate folder into a
 * temp dir; the rows per scenario are the gate's own timings (gate.json).
 * Appends its figures to bench/results.jsonl.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { GATE_DEFAULTS, GATE_FILES } from '../lib/gate.js';
import { freePortMap } from '../dev/stack.js';
import { BenchError, main, parseFlags, recordResult, round, ROOT, table, withTempDir } from './lib/common.js';

const TARGET_SECONDS = 300;
const CLI = join(ROOT, 'bin', 'k6pack.js');

await main(async () => {
  const flags = parseFlags({ scenarios: '', profiles: GATE_DEFAULTS.profile, load: GATE_DEFAULTS.load, quick: false });
  if (flags.quick) Object.assign(flags, { scenarios: flags.scenarios || 'grpc-vs-graphql', profiles: 'lan', load: 'smoke' });
  const k6Args = flags.quick ? ['--', '-e', 'STEP_SECONDS=1'] : [];

  const started = Date.now();
  const gate = await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    const folder = join(dir, 'gate');
    const args = ['gate', '--profile', flags.profiles, '--load', flags.load, '--results', folder, ...(flags.scenarios ? ['--scenarios', flags.scenarios] : []), ...k6Args];
    const child = execa(process.execPath, [CLI, ...args], {
      env: { ...ports, K6PACK_RUN_DIR: join(dir, 'run') },
      reject: false,
      timeout: 60 * 60 * 1000,
      stdin: 'ignore',
    });
    // The gate's own progress lines, as they come.
    let rest = '';
    child.stdout.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const l of lines) if (/^== gate/.test(l)) console.log(l);
    });
    const r = await child;
    const record = join(folder, GATE_FILES.record);
    if (!existsSync(record)) throw new BenchError(`k6pack gate exited ${r.exitCode} and wrote no ${GATE_FILES.record}: ${r.stderr.trim().split('\n').at(-1)}`);
    if (r.exitCode !== 0 && r.exitCode !== 99) console.log(r.stderr.slice(-1000));
    return { exitCode: r.exitCode, ...JSON.parse(readFileSync(record, 'utf8')) };
  }, 'k6pack-gate-');
  const total = round((Date.now() - started) / 1000, 0);

  const rows = gate.runs.map((s) => ({
    scenario: s.scenario,
    seconds: round(s.seconds, 1),
    'k6pack exit': s.exitCode,
    'k6 exits': s.runs.map((x) => `${x.profile}:${x.exitCode}`).join(' ') || '-',
  }));
  const runSeconds = round(rows.reduce((s, r) => s + r.seconds, 0), 0);
  console.log(`\ngate: ${rows.length} scenarios x ${flags.profiles} at LOAD=${flags.load} (k6pack gate exited ${gate.exitCode}):`);
  console.log(table(rows, Object.keys(rows[0])));
  const verdict = runSeconds <= TARGET_SECONDS ? 'met' : 'MISSED';
  console.log(`\ngate time: ${runSeconds} s of scenario runs (${total} s for the one command, with the stack's start-up and stop); target <= ${TARGET_SECONDS} s: ${verdict}`);
  recordResult('gate', { profiles: flags.profiles, load: flags.load, runSeconds, wallSeconds: total, target: TARGET_SECONDS, verdict, gateExit: gate.exitCode, rows }, { quick: flags.quick });
});
