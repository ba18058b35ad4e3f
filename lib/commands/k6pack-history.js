// `k6pack history add|report`: a run history kept in a folder (lib/history/).
import { relative } from 'node:path';
import { action } from '../cli-support.js';
import { addToHistory } from '../history/record.js';
import { runsIn } from '../history/store.js';
import { TRENDS_FILE, writeTrends } from '../history/trends-html.js';

export const HISTORY_DIR = 'k6pack-history';

export function register(program, ctx) {
  const history = program
    .command('history')
    .description('a run history in a folder: add runs, draw their trends (compare and gate judge against it)');
  history
    .command('add')
    .description("append each run's digest to the history folder")
    .argument('<runs...>', 'run folders, summary.json files or gate folders')
    .option('--history <dir>', 'the history folder', HISTORY_DIR)
    .addHelpText(
      'after',
      `
Each run becomes one JSON line in <dir>/<scenario>/<profile>.jsonl: per lane,
step and dims its p50, p95, p99, operations, failed share, server time and gate;
with the commit, the date, this machine's class (cores, CPU model) and the
versions of k6 and the pack. Lines are only appended, and the folder's
.gitattributes merges them by union, so branches merge without conflicts.
A run already there (same start and commit) is not added twice.

Examples:
  $ npx k6pack history add results/gate-20260101T120000Z
  $ npx k6pack history add --history ../history results/ws-vs-http-lte-*`,
    )
    .action(
      action((runs, opts) => {
        const added = addToHistory(opts.history, runsIn(runs), ctx);
        ctx.out(`== history: ${added.filter((a) => a.added).length} of ${added.length} runs added to ${opts.history}/`);
        return 0;
      }),
    );
  history
    .command('report')
    .description('an offline HTML page of trend charts from a history folder')
    .argument('[dir]', 'the history folder', HISTORY_DIR)
    .option('-o, --out <file>', `where to write it (default: <dir>/${TRENDS_FILE})`)
    .addHelpText(
      'after',
      `
Per scenario, profile and run kind (load, workload, machine class), one chart
per step: each row's p50 (solid) and p95 (dashed) over the runs. A run whose
thresholds failed is a red cross; a point's tooltip gives its date and commit.

Example:
  $ npx k6pack history report k6pack-history --out trends.html`,
    )
    .action(
      action((dir, opts) => {
        const { file, groups, runs } = writeTrends(dir, { out: opts.out, warn: ctx.warn });
        ctx.out(`trends: ${relative(process.cwd(), file) || file} (${groups} series, ${runs} runs; opens offline)`);
        return 0;
      }),
    );
}
