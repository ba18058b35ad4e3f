// The gate lint: can each gated percentile of a built scenario (common/scenario.js
// buildScenario) hold on unchanged code? For every row's p50 and p95 it gives the
// operations the percentile rests on (common/gates.js rowSamples), its budget's margin
// over the model, the spread a percentile of that many draws is expected to show (the
// noise model, common/noise.js) and a verdict. A gated percentile fails the lint when
// it rests on fewer operations than its floor (SAMPLE_FLOORS), when its margin is under
// MARGIN_SPREADS times its expected spread, or when a whole-millisecond timing's budget
// sits on the integer the model lands on. `k6pack thresholds --lint` prints the table;
// the unit tier runs it over every scenario and built-in profile (test/gate-lint.test.js).
// Plain ES module (k6 and Node).
import { SAMPLE_FLOORS } from './gates.js';
import { wholeMsOf } from './lanes/catalogue.js';
import { expectedSpreadMs, familyOf } from './noise.js';

// How many expected spreads a margin must span: a percentile that drifts that far on
// unchanged code does so about once in 700 runs (a normal's one-sided 3 sd), so a gate
// of a few hundred percentiles sees a false failure in well under one run of twenty.
export const MARGIN_SPREADS = 3;
// A whole-millisecond reading lands up to 1 ms late (common/model.js WHOLE_MS_QUANTUM):
// its budget keeps at least this many whole ms above the model's integer.
export const WHOLE_MS_CLEARANCE = 2;

// built: buildScenario's result. -> [{ key, lane, step, which ('p50' | 'p95'), samples,
//   floor, gated, budget, modelMs, marginMs, spreadMs, verdict ('gated' | 'not gated' |
//   'FAIL'), why }]
export function lintGates(built) {
  const plumbing = built.plan.level === 'smoke';
  const out = [];
  for (const g of built.gates) {
    const family = familyOf(g);
    for (const which of g.metric === 'setup_duration' ? ['p50'] : ['p50', 'p95']) {
      const v = g.verdicts?.[which] || { gated: true };
      const e = g.expected[which];
      const budget = g.budget[which];
      const samples = g.samples;
      const row = {
        key: g.key,
        lane: g.lane,
        step: g.step,
        which,
        family,
        samples,
        floor: SAMPLE_FLOORS[which],
        gated: v.gated,
        budget,
        modelMs: e.ms,
        marginMs: budget === null ? null : budget - e.ms,
        spreadMs: expectedSpreadMs(family, built.profile, which, e.ms, samples),
        verdict: v.gated ? 'gated' : 'not gated',
        why: v.why || '',
      };
      if (v.gated && !plumbing) {
        const problems = [];
        if (samples < row.floor) problems.push(`${Math.floor(samples)} operations, under the floor of ${row.floor}`);
        if (row.marginMs < MARGIN_SPREADS * row.spreadMs)
          problems.push(
            `margin ${row.marginMs.toFixed(1)} ms, under ${MARGIN_SPREADS} x the expected spread of ${row.spreadMs.toFixed(1)} ms`,
          );
        if (wholeMsOf(g.transport) && budget - Math.ceil(e.ms) < WHOLE_MS_CLEARANCE)
          problems.push(
            `a whole-ms timing whose budget ${budget} is within ${WHOLE_MS_CLEARANCE} ms of the model's ${Math.ceil(e.ms)}`,
          );
        if (problems.length) Object.assign(row, { verdict: 'FAIL', why: problems.join('; ') });
      }
      out.push(row);
    }
  }
  return out;
}

const fmt = (x, digits = 1) => (x === null || x === undefined ? '-' : x === Infinity ? '∞' : x.toFixed(digits));

// The lint's table, one line a percentile: row, samples, margin, expected spread, verdict.
export function lintTable(rows) {
  const lines = [
    `${'row'.padEnd(72)} ${'pct'.padEnd(3)} ${'samples'.padStart(7)} ${'budget'.padStart(7)} ${'model'.padStart(8)} ${'margin'.padStart(8)} ${'spread'.padStart(7)}  verdict`,
  ];
  for (const r of rows)
    lines.push(
      `${r.key.padEnd(72)} ${r.which.padEnd(3)} ${fmt(Math.floor(r.samples), 0).padStart(7)} ${fmt(r.budget, 0).padStart(7)} ${fmt(r.modelMs).padStart(8)} ${fmt(r.marginMs).padStart(8)} ${fmt(r.spreadMs).padStart(7)}  ${r.verdict}${r.why ? `: ${r.why}` : ''}`,
    );
  return lines;
}

// { rows, gated, notGated, failed } over lintGates' rows.
export function lintCounts(rows) {
  return {
    rows: rows.length,
    gated: rows.filter((r) => r.verdict === 'gated').length,
    notGated: rows.filter((r) => r.verdict === 'not gated').length,
    failed: rows.filter((r) => r.verdict === 'FAIL').length,
  };
}
