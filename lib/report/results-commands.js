// The results commands of bin/k6pack.js: report, compare, merge. Each returns
// the process exit code; errors are thrown as one-line ResultsErrors (exit 1).
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { HISTORY_RULE, MIN_HISTORY_RUNS } from '../../common/history.js';
import { historyFor } from '../history/store.js';
import { compareDocs, DEFAULTS, parseShare, renderComparison } from './compare.js';
import { writeReport } from './html.js';
import { describeMethod, mergeRuns, METHODS, writeRunFiles } from './merge.js';
import { showPath } from './run-folder.js';
import { UsageError } from '../cli-support.js';
import { THRESHOLDS_FAILED } from '../k6.js';
import { loadRun, ResultsError } from './runs.js';

// compare exits 3 on a regression (1 is an error, 2 bad usage); merge exits 99,
// as k6 does, when a threshold fails on the pooled data.
export const REGRESSION_EXIT = 3;
export { THRESHOLDS_FAILED };

const checkMethod = (method) => {
  if (method !== undefined && !METHODS.includes(method))
    throw new UsageError(`--method ${method}: choose one of ${METHODS.join(', ')}`);
};

export async function report(runArgs, opts, { out }) {
  checkMethod(opts.method);
  const { file, groups } = await writeReport(runArgs, { out: opts.out && resolve(opts.out), method: opts.method });
  const merged = groups.filter((g) => g.runs.length > 1);
  for (const g of merged)
    out(
      `merged ${g.runs.length} runs of ${g.doc.run.scenario} (${g.doc.run.profile}): ${g.doc.run.merged.kind}, percentiles ${describeMethod(g.doc.run.merged)}`,
    );
  out(`report: ${showPath(file)} (${groups.length} run${groups.length === 1 ? '' : 's'}; opens offline)`);
  return 0;
}

// compareDocs' options from the command line's --tolerance, --failure-tolerance
// and --min-ms (each optional); a bad value is a UsageError.
export function compareOptions(opts) {
  const share = (flag, value, fallback) => {
    if (value === undefined) return fallback;
    const v = parseShare(value);
    if (v === null) throw new UsageError(`${flag} ${value} is not a percentage such as 10%`);
    return v;
  };
  const options = {
    tolerance: share('--tolerance', opts.tolerance, DEFAULTS.tolerance),
    failurePoints: share('--failure-tolerance', opts.failureTolerance, DEFAULTS.failurePoints),
    minMs: opts.minMs === undefined ? DEFAULTS.minMs : Number(opts.minMs),
  };
  if (!Number.isFinite(options.minMs) || options.minMs < 0)
    throw new UsageError(`--min-ms ${opts.minMs} is not a number of milliseconds`);
  if (opts.historyRuns !== undefined) {
    const n = Number(opts.historyRuns);
    if (opts.history === undefined) throw new UsageError('--history-runs applies to a history: give --history DIR too');
    if (!Number.isInteger(n) || n < MIN_HISTORY_RUNS || n > 1000)
      throw new UsageError(`--history-runs ${opts.historyRuns}: a whole number from ${MIN_HISTORY_RUNS} to 1000`);
    options.historyRuns = n;
  } else options.historyRuns = HISTORY_RULE.runs;
  return options;
}

export async function compare(baseArg, currentArg, opts, { out, warn }) {
  const options = compareOptions(opts);
  const current = loadRun(currentArg);
  if (opts.history !== undefined) options.history = historyFor(opts.history, current, options.historyRuns, warn);
  const result = compareDocs(loadRun(baseArg).doc, current.doc, options);
  out(renderComparison(result, { markdown: Boolean(opts.markdown), all: !opts.changesOnly }).trimEnd());
  return result.regressions ? REGRESSION_EXIT : 0;
}

export async function merge(runArgs, opts, { out }) {
  if (runArgs.length < 2) throw new UsageError('merge needs at least two run folders');
  checkMethod(opts.method);
  const target = resolve(opts.out);
  if (existsSync(target) && readdirSync(target).length)
    throw new ResultsError(`${opts.out} is not empty: merge into a new folder`);
  const doc = await mergeRuns(runArgs.map(loadRun), { method: opts.method });
  mkdirSync(target, { recursive: true });
  writeRunFiles(target, doc);
  const failed = doc.thresholds.filter((t) => !t.ok).length;
  const m = doc.run.merged;
  out(
    `merged ${runArgs.length} runs (${m.kind}, ${m.samples} samples) into ${showPath(target)}/: summary.json, junit.xml, summary.md; percentiles ${describeMethod(m)}; thresholds on the merged data: ${doc.thresholds.length - failed} passed, ${failed} failed`,
  );
  return failed ? THRESHOLDS_FAILED : 0;
}
