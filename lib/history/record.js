// Adding runs to a history folder from the commands: `history add`, and run and gate
// with --history DIR as they end.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FILES } from '../../common/results.js';
import { loadRun } from '../report/runs.js';
import { showPath } from '../report/run-folder.js';
import { addRuns } from './store.js';

// Appends runs and says, per run, where it went. -> addRuns' list.
export function addToHistory(dir, runs, { out }) {
  const added = addRuns(dir, runs);
  for (const a of added)
    out(
      `== history: ${a.digest.scenario} (${a.digest.profile}) ${a.added ? 'added to' : 'already in'} ${showPath(a.file)}${a.added ? '' : ' (same start and commit): not added again'}`,
    );
  return added;
}

// After a run or a gate: every run that wrote a summary goes into the history. A history
// that cannot be written is one line, and a run that passed then exits 1: the results
// are in their run folders, the history lacks them. -> the exit code.
export function recordRuns(dir, runs, code, ctx) {
  const done = runs.filter((r) => r.dir && existsSync(join(r.dir, FILES.summary)));
  try {
    addToHistory(
      dir,
      done.map((r) => r.loaded || loadRun(r.dir)),
      ctx,
    );
    return code;
  } catch (err) {
    ctx.warn(`history ${dir}: ${String(err.message || err).split('\n')[0]}; the run folders keep the results`);
    return code === 0 ? 1 : code;
  }
}
