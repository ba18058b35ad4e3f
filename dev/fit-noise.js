#!/usr/bin/env node
// Fits the gate lint's noise model (common/noise.js) on recorded runs: for every row of
// every run folder given (a summary.json each, e.g. a gate folder's), the operation's
// spread as (p95 - p50) / 1.645 (a normal's), grouped by lane family and profile class
// (lan: no delay; shaped: any other network), over rows with at least 20 operations
// whose p95 is the same operation as their p50 by the model.
// Prints the table common/noise.js keeps: per group the median spread in ms of the rows
// whose p50 is under 5 ms (absMs), and the median spread relative to the p50 of the
// others (rel).
//   node dev/fit-noise.js results/gate-*/ ...
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { classOf, familyOf } from '../common/noise.js';
import { median } from '../common/quantiles.js';

const folders = [];
const walk = (dir) => {
  if (existsSync(join(dir, 'summary.json'))) folders.push(dir);
  else for (const f of readdirSync(dir)) if (statSync(join(dir, f)).isDirectory()) walk(join(dir, f));
};
for (const d of process.argv.slice(2)) walk(d);
const groups = {};
for (const dir of folders) {
  const doc = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  const cls = classOf({ network: { rttMs: doc.run.network?.rttMs ?? 0 } });
  for (const r of doc.rows) {
    const l = r.latency;
    if (!l || !l.count || l.count < 20 || l.p50 === undefined) continue;
    // A row whose tail is another operation by the model (a kept lane's cold first
    // operation, a long transfer's slow start) spreads by design, not by noise.
    if (r.model && r.model.p95.ms > r.model.p50.ms * 1.05 + 1) continue;
    const family = familyOf({ transport: r.transport, variant: r.variant || r.dims?.variant });
    const g = (groups[`${family} ${cls}`] ||= { abs: [], rel: [] });
    const sd = (l.p95 - l.p50) / 1.645;
    if (l.p50 < 5) g.abs.push(sd);
    else g.rel.push(sd / l.p50);
  }
}
for (const [k, g] of Object.entries(groups).sort())
  console.log(
    `${k}: absMs ${median(g.abs)?.toFixed(2) ?? '-'} (${g.abs.length} rows), rel ${median(g.rel)?.toFixed(3) ?? '-'} (${g.rel.length} rows)`,
  );
console.log(`(${folders.length} run folders)`);
