// One `k6pack gate` as CI runs it, for the benches: on its own stack (free ports,
// its own run dir) or on one already up (env with its ports and K6PACK_RUN_DIR),
// its progress lines printed as they come. Resolves the gate's gate.json with its
// exit code.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseThreshold } from '../../common/thresholds.js';
import { GATE_FILES } from '../../lib/gate-defaults.js';
import { BenchError, ROOT } from './common.js';

export const CLI = join(ROOT, 'bin', 'k6pack.js');
export { GATE_TARGET_SECONDS } from '../../lib/gate-defaults.js';

// opts: { profiles, load, scenarios, folder (the gate folder), baseline, tolerance, history
// (a history folder: appended, and with a baseline the judge), historyRuns, env, k6Args }
export async function runGate({
  profiles,
  load,
  scenarios,
  folder,
  baseline,
  tolerance,
  history,
  historyRuns,
  env,
  k6Args = [],
}) {
  const args = [
    'gate',
    '--profile',
    profiles,
    '--load',
    load,
    '--results',
    folder,
    ...(scenarios ? ['--scenarios', scenarios] : []),
    ...(baseline ? ['--baseline', baseline, '--tolerance', tolerance || '10%'] : []),
    ...(history ? ['--history', history] : []),
    ...(history && baseline && historyRuns ? ['--history-runs', String(historyRuns)] : []),
    ...(k6Args.length ? ['--', ...k6Args] : []),
  ];
  const child = execa(process.execPath, [CLI, ...args], {
    env,
    reject: false,
    timeout: 60 * 60 * 1000,
    stdin: 'ignore',
  });
  let rest = '';
  child.stdout.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const l of lines) if (/^== (gate|compare)/.test(l)) console.log(l);
  });
  const r = await child;
  const record = join(folder, GATE_FILES.record);
  if (!existsSync(record))
    throw new BenchError(
      `k6pack gate exited ${r.exitCode} and wrote no ${GATE_FILES.record}: ${r.stderr.trim().split('\n').at(-1)}`,
    );
  if (r.exitCode !== 0 && r.exitCode !== 99 && r.exitCode !== 3) console.log(r.stderr.slice(-1000));
  return { exitCode: r.exitCode, stdout: r.stdout, ...JSON.parse(readFileSync(record, 'utf8')) };
}

// Every threshold a gate's runs evaluated, with what was observed:
// [{ scenario, profile, key, stat, threshold, limit, observed, ok }] (limit: the
// number after the threshold's < or <=, so a margin can be taken).
export function gateFigures(gate, folder) {
  const out = [];
  for (const s of gate.runs) {
    for (const run of s.runs) {
      if (!run.dir) continue;
      const file = join(folder, run.dir, 'summary.json');
      if (!existsSync(file)) continue;
      const doc = JSON.parse(readFileSync(file, 'utf8'));
      for (const t of doc.thresholds) {
        const parsed = parseThreshold(t.threshold);
        out.push({
          scenario: s.scenario,
          profile: run.profile,
          key: t.key,
          stat: t.stat,
          threshold: t.threshold,
          limit: parsed ? parsed.limit : null,
          observed: t.observed === null ? null : Number(t.observed),
          ok: t.ok,
        });
      }
    }
  }
  return out;
}

// The calibration each of a gate's runs read before it started (summary.json run.machine):
// [cpuScale, ...], in run order.
export function gateCalibrations(gate, folder) {
  const out = [];
  for (const s of gate.runs)
    for (const run of s.runs) {
      const file = run.dir && join(folder, run.dir, 'summary.json');
      if (!file || !existsSync(file)) continue;
      const scale = JSON.parse(readFileSync(file, 'utf8')).run.machine?.cpuScale;
      if (typeof scale === 'number') out.push(scale);
    }
  return out;
}

// What a record keeps of the calibrations its runs read: their range and count, or null.
export const calibrationSummary = (scales) =>
  scales.length ? { cpuScaleMin: Math.min(...scales), cpuScaleMax: Math.max(...scales), runs: scales.length } : null;

// The thresholds a gate's runs failed: ['ws-vs-http lte: op_duration{scenario:ws_c1} p(50)<105 (p(50)=120.1)'].
export function failedGates(gate, folder) {
  return gateFigures(gate, folder)
    .filter((f) => !f.ok)
    .map(
      (f) =>
        `${f.scenario} ${f.profile}: ${f.key} ${f.threshold} (${f.stat}=${f.observed === null ? '-' : f.observed.toFixed(1)})`,
    );
}
