// `k6pack report`: one self-contained HTML report from run folders (lib/report/).
import { action } from '../cli-support.js';
import * as results from '../report/results-commands.js';

export function register(program, ctx) {
  program
    .command('report')
    .description('one self-contained HTML report (charts, tables) from run folders; opens offline')
    .argument('<runs...>', 'run folders (results/<scenario>-<profile>-<time>/) or summary.json files')
    .option('-o, --out <file>', 'where to write it (default: <first run folder>/report.html)')
    .option('--method <m>', 'how runs of one test are merged: auto, exact or hdr (as merge)', 'auto')
    .addHelpText(
      'after',
      `
Runs of the same scenario, profile and load (e.g. --execution-segment halves)
are merged first, as \`k6pack merge\` merges them. Pictures: latency vs concurrency per
lane, latency vs message size, the serialization ratio vs N per executor, study
001's document split into generation time and the rest, push latency, and
measured vs the round-trip model of the profile.

Examples:
  $ npx k6pack report results/ws-vs-http-3g-20250101T120000Z
  $ npx k6pack report results/*-lte-* --out lte.html`,
    )
    .action(action((runs, opts) => results.report(runs, opts, ctx)));
}
