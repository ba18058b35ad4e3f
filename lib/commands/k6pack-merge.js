// `k6pack merge`: runs of one scenario and profile merged from their samples or
// histograms (lib/report/).
import { action } from '../cli-support.js';
import * as results from '../report/results-commands.js';

export function register(program, ctx) {
  program
    .command('merge')
    .description(
      'merge runs of one scenario and profile (segments, k6-operator runners) from their samples or histograms',
    )
    .argument('<runs...>', 'two or more run folders with samples.json.gz or histograms.json.gz')
    .requiredOption('-o, --out <dir>', 'a new (or empty) folder for the merged summary.json, junit.xml, summary.md')
    .option('--method <m>', 'auto, exact (pool every raw sample) or hdr (merge histograms)', 'auto')
    .addHelpText(
      'after',
      `
Every statistic is computed again from the runs' samples, and the thresholds
are evaluated on the merged data: exit 99 if one fails. auto pools the raw
samples exactly when every run has samples.json.gz and they add up to at most
32 MiB; otherwise it merges the runs' HdrHistograms (histograms.json.gz, or
built from samples.json.gz while reading it): percentiles within 0.1 %
(3 significant digits), counts, rates, min, max and avg exact. summary.json's
run.merged.method says which.

Example:
  $ npx k6pack merge results/run-a results/run-b --out results/merged`,
    )
    .action(action((runs, opts) => results.merge(runs, opts, ctx)));
}
