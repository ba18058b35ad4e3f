// Baselines for `k6pack gate --baseline`: each run is compared with the
// baseline run of its scenario and profile, as .github/workflows/scripts/
// baseline.sh does for the soak. A baseline is a summary.json, a run folder, or
// a folder of run folders: a previous gate's folder, or what baseline.sh save
// keeps (<scenario>-<profile>/summary.json).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FILES } from '../../common/results.js';
import { UsageError } from '../cli-support.js';
import { compareDocs } from './compare.js';
import { loadRun, ResultsError } from './runs.js';

export const baselineKey = (doc) => `${doc.run.scenario}-${doc.run.profile}`;

// -> Map(key -> loadRun's run); of several runs with one key, the newest.
export function loadBaselines(arg) {
  const path = resolve(arg);
  if (!existsSync(path))
    throw new UsageError(`no baseline at ${arg}: give a gate folder, a folder of run folders or a summary.json`);
  const single = statSync(path).isFile() || existsSync(join(path, FILES.summary));
  const runs = single
    ? [loadRun(path)]
    : readdirSync(path)
        .sort()
        .map((name) => join(path, name))
        .filter((dir) => existsSync(join(dir, FILES.summary)))
        .map(loadRun);
  if (!runs.length) throw new ResultsError(`the baseline ${arg} holds no run folder with a ${FILES.summary}`);
  const byKey = new Map();
  for (const run of runs) {
    const key = baselineKey(run.doc);
    const held = byKey.get(key);
    if (!held || String(run.doc.run.startedAt) > String(held.doc.run.startedAt)) byKey.set(key, run);
  }
  return byKey;
}

// Each current run against its baseline: [{ key, run, base (null: none yet), result (compareDocs', or null) }].
// historyOf(run): compareDocs' history option for that run (--history), or nothing.
export function compareWithBaselines(runs, baselines, options, historyOf = () => undefined) {
  return runs.map((run) => {
    const key = baselineKey(run.doc);
    const base = baselines.get(key) || null;
    const result = base ? compareDocs(base.doc, run.doc, { ...options, history: historyOf(run) }) : null;
    return { key, run, base, result };
  });
}
