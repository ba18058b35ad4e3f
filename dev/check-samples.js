#!/usr/bin/env node
// Checks the gate's sample counting against what a run recorded: for every run folder
// given (a summary.json each, e.g. a gate folder's), every gated percentile's row must
// have recorded at least its floor's operations (common/gates.js SAMPLE_FLOORS). Prints
// each row that did not, and one line of counts; exit 1 when a gated percentile rested
// on fewer operations than its floor.
//   node dev/check-samples.js results/gate-*/
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLE_FLOORS } from '../common/gates.js';

const folders = [];
const walk = (dir) => {
  if (existsSync(join(dir, 'summary.json'))) folders.push(dir);
  else for (const f of readdirSync(dir)) if (statSync(join(dir, f)).isDirectory()) walk(join(dir, f));
};
for (const d of process.argv.slice(2)) walk(d);
let gated = 0;
let thin = 0;
let slack = Infinity;
for (const dir of folders) {
  const doc = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  for (const r of doc.rows) {
    const list = r.gate?.thresholds || [];
    const count = r.latency?.count ?? 0;
    for (const which of ['p50', 'p95']) {
      if (!list.some((t) => t.startsWith(`p(${which.slice(1)})<`))) continue;
      gated += 1;
      slack = Math.min(slack, count / SAMPLE_FLOORS[which]);
      if (count < SAMPLE_FLOORS[which]) {
        thin += 1;
        console.log(
          `${doc.run.scenario} ${doc.run.profile}: ${r.id} ${which} rests on ${count} (floor ${SAMPLE_FLOORS[which]})`,
        );
      }
    }
  }
}
console.log(
  `${folders.length} runs: ${gated} gated percentiles, ${thin} below their floor; the thinnest held ${slack === Infinity ? '-' : slack.toFixed(2)} x its floor`,
);
process.exit(thin ? 1 : 0);
