// `k6pack compare`: two runs row by row; exit 3 on a regression (lib/report/).
import { action } from '../cli-support.js';
import * as results from '../report/cli.js';

export function register(program, ctx) {
  program
    .command('compare')
    .description('compare two runs row by row; exit 3 on a latency or failure-rate regression')
    .argument('<base>', 'the baseline: a run folder or summary.json')
    .argument('<current>', 'the run to judge: a run folder or summary.json')
    .option('-t, --tolerance <pct>', 'latency p50/p95 change allowed, relative (default 10%)')
    .option('--min-ms <ms>', 'and absolute: smaller latency changes never count (default 1)')
    .option('--failure-tolerance <pct>', 'failure-rate rise allowed, in percentage points (default 0.5%)')
    .option('--markdown', 'a Markdown table (PR comment, $GITHUB_STEP_SUMMARY)')
    .option('--changes-only', 'leave out unchanged lines')
    .addHelpText(
      'after',
      `
Rows are matched by lane, step and dims; improvements and new or missing rows
are shown and never fail. Exit 0: no regression; 3: at least one; 1: a file
could not be read.

Examples:
  $ npx k6pack compare results/base results/ws-vs-http-3g-20250101T120000Z
  $ npx k6pack compare base/summary.json results/latest --tolerance 5% --markdown >> "$GITHUB_STEP_SUMMARY"`,
    )
    .action(action((base, current, opts) => results.compare(base, current, opts, ctx)));
}
