// `k6pack compare`: two runs row by row; exit 3 on a regression (lib/report/).
import { HISTORY_RULE } from '../../common/history.js';
import { action } from '../cli-support.js';
import * as results from '../report/results-commands.js';

export function register(program, ctx) {
  program
    .command('compare')
    .description('compare two runs row by row; exit 3 on a latency or failure-rate regression')
    .argument('<base>', 'the baseline: a run folder or summary.json')
    .argument('<current>', 'the run to judge: a run folder or summary.json')
    .option('-t, --tolerance <pct>', 'latency p50/p95 change allowed, relative (default 10%)')
    .option('--min-ms <ms>', 'and absolute: smaller latency changes never count (default 1)')
    .option('--failure-tolerance <pct>', 'failure-rate rise allowed, in percentage points (default 0.5%)')
    .option(
      '--history <dir>',
      "judge latency against the spread of the current run's last comparable runs in this history folder",
    )
    .option(
      '--history-runs <n>',
      `with --history: how many comparable runs the rule needs and looks at (default ${HISTORY_RULE.runs})`,
    )
    .option('--markdown', 'a Markdown table (PR comment, $GITHUB_STEP_SUMMARY)')
    .option('--changes-only', 'leave out unchanged lines and those with too few operations to judge')
    .addHelpText(
      'after',
      `
Rows are matched by lane, step and dims; improvements and new or missing rows
are shown and never fail. Exit 0: no regression; 3: at least one; 1: a file
could not be read.

With --history DIR (\`k6pack history add\`, \`gate --history\`), each latency figure
is judged against the last ${HISTORY_RULE.runs} comparable runs that passed (same scenario, profile,
load, workload and machine class): a regression is above their median by more than
${HISTORY_RULE.k} robust standard deviations, ${HISTORY_RULE.floorShare * 100} % and the ms floors, and above every one of
them. With fewer runs the fixed rule applies and the output says so. Each line
names the rule that judged it (docs/history.md).

Examples:
  $ npx k6pack compare results/base results/ws-vs-http-3g-20250101T120000Z
  $ npx k6pack compare base/summary.json results/latest --tolerance 5% --markdown >> "$GITHUB_STEP_SUMMARY"
  $ npx k6pack compare results/main results/latest --history k6pack-history`,
    )
    .action(action((base, current, opts) => results.compare(base, current, opts, ctx)));
}
