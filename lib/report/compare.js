// Two summaries of one scenario, row by row (lane x step x dims): latency p50
// and p95 and the failure rate, with a verdict per change.
//
//   regression   latency up by more than `tolerance` (relative) AND more than
//                `minMs` (absolute: sub-millisecond noise on lan is not a
//                regression); a p95 also by more than the base row's own tail
//                (its p95 - p50) and P95_MIN_MS: the p95 of one run's short step
//                moves that much on unchanged code (two `gate --api` runs back to
//                back under lan, 2026-11-27: 22 p95s moved -50 % to +100 %, by at
//                most 3.0 ms: gRPC's whole milliseconds, 3 -> 6 at a p50 of 2 both
//                times), and a real slow-down shows in the p50 too;
//                failure rate up by more than `failurePoints`
//                (absolute, in rate units: 0.01 = 1 percentage point)
//   improvement  the same, downwards
//   too few      a percentile of fewer operations, in either run, than the gate's floor
//                for it (common/gates.js SAMPLE_FLOORS: 20 for a p50, 100 for a p95): not
//                judged, as the gate does not gate it. A p95 of a handful is its slowest
//                operation: two `gate --load smoke` runs of push under lan, seconds apart,
//                moved grpc_stream's p95 from 2.1 to 12.6 ms (6 events; 2026-11-29, with
//                other work on the machine), a "regression" of one stall. Never failing.
//   new/missing  a row only in the current / only in the base run (shown, never failing)
//
// With a history (options.history: the comparable runs before the current one, from
// `--history DIR`), a latency figure with HISTORY_RULE.runs values in it is judged
// against their spread instead (common/history.js judgeByHistory); the line says which
// rule judged it, and a regression by how much it passed the limit. With fewer runs the
// fixed rule above applies, and the comparison says so.
import { HISTORY_RULE, judgeByHistory } from '../../common/history.js';
import { SAMPLE_FLOORS, belowFloor } from '../../common/gates.js';
import { formatMs, formatRate, rowLabel } from '../../common/results.js';
import { ResultsError } from './runs.js';

export const DEFAULTS = { tolerance: 0.1, minMs: 1, failurePoints: 0.005 };
// A p95 change no larger is never a regression (see above: 3 ms seen on unchanged code).
export const P95_MIN_MS = 5;

const MEASURES = [
  { name: 'p50', get: (row) => row.latency?.p50, kind: 'latency' },
  // The tail's noise: the base row's p95 over its p50, and at least P95_MIN_MS.
  {
    name: 'p95',
    get: (row) => row.latency?.p95,
    kind: 'latency',
    noise: (row) => Math.max(P95_MIN_MS, row.latency.p95 - row.latency.p50),
    // Judged by a history: never below this either.
    floorMs: P95_MIN_MS,
  },
  { name: 'failed', get: (row) => row.failures?.rate, kind: 'rate' },
];

// '10%' or '10' -> 0.1 (always percent); null when it is not a percentage.
export function parseShare(text) {
  const t = String(text).trim();
  const n = Number(t.replace(/%$/, ''));
  if (t === '' || t === '%' || !Number.isFinite(n) || n < 0) return null;
  return n / 100;
}

// noiseMs: a change no larger is noise (a p95's: its base row's tail).
function verdictOf(kind, base, cur, opts, noiseMs = 0) {
  if (base === null || base === undefined || cur === null || cur === undefined) return 'n/a';
  const delta = cur - base;
  if (kind === 'rate') {
    if (delta > opts.failurePoints) return 'regression';
    if (delta < -opts.failurePoints) return 'improvement';
    return 'same';
  }
  const beyond = Math.abs(delta) > Math.max(opts.minMs, noiseMs || 0) && Math.abs(delta) > opts.tolerance * base;
  if (!beyond) return 'same';
  return delta > 0 ? 'regression' : 'improvement';
}

const hasData = (row) => Boolean(row.latency?.count || row.failures?.total);

// Whether a latency percentile rests on fewer operations than the gate's floor for it, in
// any of the rows given (the base's, when there is one, and the current one's).
const tooFew = (m, rows) => m.kind === 'latency' && rows.some((r) => r && belowFloor(m.name, r.latency?.count ?? 0));

// A row's figure over the history's digests (those that have it): [{ value, row }].
const historyValues = (history, id, measure) =>
  history.before
    .map((d) => d.rows.find((r) => r.id === id))
    .filter((r) => r && typeof r[measure] === 'number' && Number.isFinite(r[measure]))
    .map((row) => ({ value: row[measure], row }));

const middle = (values) => {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
};

// A row's usual tail over the history: the median of its p95 - p50 (a p95 moves that
// much from one run to the next, as the fixed rule's noise says of one base run).
const usualTail = (past) => middle(past.map((p) => p.row.p95 - p.row.p50));

// How far a row's p50 moves from one run to the next by its own few operations: its
// usual tail over the square root of its usual count (the median of n samples spreads
// as their spread over root n). A row of 3 big client-stream uploads under lte (p95 55
// ms above the p50) moved its p50 from 168 to 190 ms on unchanged code (2026-11-27); a
// row of hundreds of operations is not touched.
const medianSpread = (past) => usualTail(past) / Math.sqrt(Math.max(1, middle(past.map((p) => p.row.ops))));

// -> { base, current, lines: [{ id, label, step, measure, base, current, change, verdict }], regressions }
export function compareDocs(base, current, options = {}) {
  const opts = { ...DEFAULTS, ...options };
  if (base.run.scenario !== current.run.scenario) {
    throw new ResultsError(
      `the base is a ${base.run.scenario} run, the current one ${current.run.scenario}: compare runs of one scenario`,
    );
  }
  const history = opts.history ? { runs: HISTORY_RULE.runs, ...opts.history } : null;
  const baseRows = new Map(base.rows.filter(hasData).map((r) => [r.id, r]));
  const curRows = new Map(current.rows.filter(hasData).map((r) => [r.id, r]));
  const lines = [];
  for (const [id, cur] of curRows) {
    const b = baseRows.get(id);
    for (const m of MEASURES) {
      const bv = b ? m.get(b) : null;
      const cv = m.get(cur);
      if (b && (bv === null || bv === undefined) && (cv === null || cv === undefined)) continue;
      // (a percentile missing from the base run is n/a, not too few)
      const few = typeof cv === 'number' && (!b || typeof bv === 'number') && tooFew(m, [b, cur]);
      const past =
        history && m.kind === 'latency' && typeof cv === 'number' && !few ? historyValues(history, id, m.name) : [];
      const window = past.slice(-history?.runs);
      const judged =
        past.length >= history?.runs
          ? judgeByHistory(
              window.map((p) => p.value),
              cv,
              {
                minMs: Math.max(
                  opts.minMs,
                  m.floorMs || 0,
                  m.name === 'p95' ? usualTail(window) : medianSpread(window),
                ),
                // A p95 (a short step's is one slow operation) keeps the fixed rule's tolerance.
                floorShare:
                  m.name === 'p95' ? Math.max(HISTORY_RULE.floorShare, opts.tolerance) : HISTORY_RULE.floorShare,
              },
            )
          : null;
      const verdict = judged
        ? judged.verdict
        : b && few
          ? 'too few'
          : b
            ? verdictOf(m.kind, bv, cv, opts, m.noise && bv !== null && bv !== undefined ? m.noise(b) : 0)
            : 'new';
      lines.push({
        id,
        label: rowLabel(cur),
        step: cur.step,
        measure: m.name,
        kind: m.kind,
        base: bv ?? null,
        current: cv ?? null,
        verdict,
        rule: judged ? 'history' : 'fixed',
        ...(judged ? { history: judged } : {}),
      });
    }
  }
  for (const [id, b] of baseRows) {
    if (!curRows.has(id))
      lines.push({
        id,
        label: rowLabel(b),
        step: b.step,
        measure: '-',
        kind: 'row',
        base: null,
        current: null,
        verdict: 'missing',
      });
  }
  return {
    base: base.run,
    current: current.run,
    options: opts,
    lines,
    regressions: lines.filter((l) => l.verdict === 'regression').length,
    history: history && {
      runs: history.before.length,
      needed: history.runs,
      applied: lines.some((l) => l.rule === 'history'),
    },
  };
}

function changeText(l) {
  if (l.base === null || l.current === null) return '';
  if (l.kind === 'rate')
    return `${(l.current - l.base) * 100 >= 0 ? '+' : ''}${((l.current - l.base) * 100).toFixed(2)} pt`;
  if (!l.base) return '';
  const pct = ((l.current - l.base) / l.base) * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%`;
}

const fmt = (l, v) => (v === null ? '-' : l.kind === 'rate' ? formatRate(v) : formatMs(v));
const MARK = {
  regression: '❌ regression',
  improvement: '✅ improvement',
  same: 'same',
  new: 'new',
  missing: 'missing',
  'n/a': 'n/a',
  'too few': 'too few to judge',
};

// The history's part of the rules: which rule judged, or why the fixed one did.
function historyLine(h) {
  if (!h) return '';
  const { k, floorShare } = HISTORY_RULE;
  if (!h.applied && h.runs >= h.needed)
    return `history: ${h.runs} comparable runs, but no latency figure holds the operations the gate's floors ask to be judged (too few to judge)`;
  if (!h.applied)
    return `history: ${h.runs} comparable run${h.runs === 1 ? '' : 's'}, ${h.needed} needed: the fixed rule above applies`;
  return `history: latency judged against the last ${h.needed} comparable runs that passed: a regression is above their median by more than ${k} robust sd (1.4826 x MAD), ${floorShare * 100} % of it (a p95: the tolerance) and the ms floors (a p95: its usual p95 - p50 too; a p50: that over the root of its operations), and above every one of them`;
}

// Which rule judged a line; for the history's, its limit, and by how much a change passed it.
function ruleText(l) {
  if (l.verdict === 'new' || l.verdict === 'missing' || l.verdict === 'n/a') return '';
  if (l.verdict === 'too few') return `floor: ${SAMPLE_FLOORS[l.measure]} operations`;
  if (l.rule !== 'history') return 'fixed';
  const h = l.history;
  if (l.verdict === 'regression')
    return `history: ${formatMs(h.by)} over ${formatMs(h.limit)} (median ${formatMs(h.median)} + ${formatMs(h.margin)}; highest run ${formatMs(h.highest)})`;
  if (l.verdict === 'improvement')
    return `history: ${formatMs(h.by)} under ${formatMs(Math.min(h.median - h.margin, h.lowest))} (median - margin; lowest run ${formatMs(h.lowest)})`;
  return `history: within ${formatMs(h.limit)}`;
}

// ' (5 unchanged lines and 2 with too few operations to judge not shown)', or ''.
function hiddenText(lines, shown) {
  const kept = new Set(shown);
  const hidden = lines.filter((l) => !kept.has(l));
  if (!hidden.length) return '';
  const few = hidden.filter((l) => l.verdict === 'too few').length;
  const same = hidden.length - few;
  const parts = [
    ...(same ? [`${same} unchanged line${same === 1 ? '' : 's'}`] : []),
    ...(few ? [`${few} with too few operations to judge`] : []),
  ];
  return ` (${parts.join(' and ')} not shown)`;
}

// A text table (or Markdown with markdown: true); `all: false` leaves out unchanged lines
// and those with too few operations to judge.
export function renderComparison(result, { markdown = false, all = true } = {}) {
  const o = result.options;
  const head = `${result.current.scenario}: ${result.base.profile} (base, ${result.base.startedAt || '?'}) -> ${result.current.profile} (current, ${result.current.startedAt || '?'})`;
  const rules = [
    `tolerance: latency +-${(o.tolerance * 100).toFixed(0)}% and > ${o.minMs} ms (a p95 also > the base's p95 - p50 and ${P95_MIN_MS} ms), failure rate +-${(o.failurePoints * 100).toFixed(2)} pt`,
    historyLine(result.history),
  ]
    .filter(Boolean)
    .join(markdown ? '  \n' : '\n');
  const quiet = (l) => l.verdict === 'same' || l.verdict === 'too few';
  const shown = result.lines.filter((l) => all || !quiet(l));
  const verdict = result.regressions
    ? `${result.regressions} regression${result.regressions === 1 ? '' : 's'}`
    : 'no regression';
  const rows = shown.map((l) => [
    l.label,
    l.step,
    l.measure,
    fmt(l, l.base),
    fmt(l, l.current),
    changeText(l),
    MARK[l.verdict],
    ruleText(l),
  ]);
  const header = ['lane', 'step', 'measure', 'base', 'current', 'change', 'verdict', 'rule'];
  if (markdown) {
    const esc = (s) => String(s).replace(/\|/g, '\\|');
    return [
      `### k6pack compare ${head} — ${verdict}`,
      '',
      rules,
      '',
      ...(rows.length
        ? [
            `| ${header.join(' | ')} |`,
            '|---|---|---|--:|--:|--:|---|---|',
            ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
          ]
        : [`No figure moved beyond its rule (${result.lines.length} lines compared).`]),
      '',
    ].join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) =>
    r
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    head,
    rules,
    '',
    line(header),
    ...rows.map(line),
    '',
    `${verdict}${hiddenText(result.lines, shown)}`,
    '',
  ].join('\n');
}
