// The end-of-test summary: a short table per lane and step on the terminal,
// and, with -e RESULTS_DIR=<an existing folder>, the run's files in it (k6
// cannot create folders; `npx k6pack run` makes one per run):
//   summary.json  the results document (results.js; docs/results-schema.md)
//   junit.xml     one test case per threshold, failures with the observed value
//   summary.md    a Markdown table for a PR comment or $GITHUB_STEP_SUMMARY
//
// Rows and columns come from the scenario: a row is one k6 scenario (a lane at
// one step) and optionally one value of a tag (n:1000, payload:big, ...); a
// column is a statistic of a metric filtered to that row. Every cell is a
// sub-metric, which k6 only reports when it has a threshold, so the cells are
// also the `observe` list given to thresholds.js.
import { buildSummary, cellKey, FILES, toJunit, toMarkdown } from '../../common/results.js';

export { cellKey };

export const DEFAULT_COLUMNS = [
  { title: 'ops', metric: 'op_duration', stat: 'count', unit: '' },
  { title: 'p50', metric: 'op_duration', stat: 'med', unit: 'ms' },
  { title: 'p95', metric: 'op_duration', stat: 'p(95)', unit: 'ms' },
  { title: 'failed', metric: 'op_failed', stat: 'rate', unit: '%' },
  { title: 'server p50', metric: 'server_duration', tags: { part: 'total' }, stat: 'med', unit: 'ms' },
];

const tagText = (tags) => Object.entries(tags).map(([k, v]) => `${k}:${v}`).join(',');
// A column with laneOnly: true ignores the row's dims (set-up is per lane, not per payload).
const cellKeyOf = (row, c) => cellKey(c.metric, { ...(c.laneOnly ? { scenario: row.tags.scenario } : row.tags), ...(c.tags || {}) });

// Rows for a plan: every k6 scenario x every dim of its lane.
export function summaryRows(plan, lanes) {
  const rows = [];
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    if (!sc.tags.transport) continue; // helpers such as soak's memory sampler
    const lane = lanes.find((l) => l.exec === sc.exec && name.startsWith(`${l.name}_`));
    const dims = (lane && lane.dims) || [{}];
    const label = [sc.tags.transport, `tls=${sc.tags.tls}`, sc.tags.variant].filter(Boolean).join(' ');
    for (const dim of dims) {
      rows.push({ label: [label, tagText(dim)].filter(Boolean).join(' '), step: sc.tags.step, tags: { scenario: name, ...dim } });
    }
  }
  return rows;
}

// p50 of a reported sub-metric, null when it has no samples (for notes under the table).
export function p50Of(data, key) {
  const m = data.metrics[key];
  return m && m.values.count ? m.values.med : null;
}

export function observeKeys(rows, columns = DEFAULT_COLUMNS) {
  const keys = new Set();
  for (const row of rows) for (const c of columns) keys.add(cellKeyOf(row, c));
  return [...keys];
}

function fmt(v, unit) {
  if (v === undefined || v === null || Number.isNaN(v)) return '-';
  if (unit === '%') return `${(v * 100).toFixed(1)}%`;
  if (unit === 'x') return `${v.toFixed(2)}x`;
  if (unit === 'ms') return v >= 100 ? `${v.toFixed(0)}ms` : `${v.toFixed(1)}ms`;
  return String(Math.round(v));
}

// A sub-metric without samples (k6 reports zeros for it).
function isEmpty(m) {
  if (!m) return true;
  const v = m.values;
  if (m.type === 'trend') return !v.count;
  if (m.type === 'rate') return v.passes + v.fails === 0;
  return false;
}

// A statistic of a sub-metric; 'total' is a Rate's number of samples.
const statOf = (m, stat) => (stat === 'total' ? m.values.passes + m.values.fails : m.values[stat]);

const pad = (s, n) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

export function table(data, rows, columns = DEFAULT_COLUMNS) {
  const header = ['lane', 'step', ...columns.map((c) => c.title)];
  const body = rows
    .map((row) => {
      const cells = columns.map((c) => {
        const m = data.metrics[cellKeyOf(row, c)];
        return fmt(isEmpty(m) ? null : statOf(m, c.stat), c.unit);
      });
      return [row.label, row.step, ...cells];
    })
    // A row shows when it has data of its own (lane-wide columns do not count).
    .filter((r) => r.slice(2).some((c, i) => c !== '-' && !columns[i].laneOnly));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  return [header, ...body].map((r) => r.map((c, i) => pad(c, widths[i])).join('  ').trimEnd()).join('\n');
}

// The thresholds that gate (from the file), with their verdicts and the value behind them.
export function gateLines(data, observers) {
  const lines = [];
  let failed = 0;
  for (const [key, metric] of Object.entries(data.metrics)) {
    for (const [expr, verdict] of Object.entries(metric.thresholds || {})) {
      if (observers.has(key)) continue;
      const stat = expr.replace(/\s*(<=|>=|<|>|===|==|!=).*$/, '').trim();
      const value = stat === 'p(50)' && metric.values[stat] === undefined ? metric.values.med : metric.values[stat];
      if (!verdict.ok) failed++;
      lines.push(`  ${verdict.ok ? 'ok  ' : 'FAIL'} ${key} ${expr}  (${stat}=${value === undefined ? '-' : Number(value).toFixed(2)})`);
    }
  }
  return { lines: lines.sort(), failed };
}

// The first latency column's metric is the run's latency (op_duration; push_latency for push).
export const latencyMetricOf = (columns) => (columns.find((c) => c.unit === 'ms' && !c.tags) || { metric: 'op_duration' }).metric;

// Where the files go, as the text summary's last line says.
export function resultsLine(dir) {
  if (!dir) return 'results: not saved: plain `k6 run` writes summary.json, junit.xml and summary.md only with -e RESULTS_DIR=<an existing folder> (`npx k6pack run` makes one per run)';
  return `results: ${dir}/ (${FILES.summary}, ${FILES.junit}, ${FILES.markdown})`;
}

// handleSummary for a scenario. ctx: { scenario, profile, level, plan, rows, columns,
// observers, notes(data), thresholdsFile, hints }; setup() hands the run's metadata
// (k6 version, segment, start) over in data.setup_data.k6pack.
export function makeHandleSummary(ctx) {
  const columns = ctx.columns || DEFAULT_COLUMNS;
  const observers = new Set(ctx.observers);
  return (data) => {
    const gates = gateLines(data, observers);
    const m = data.metrics;
    const checks = m.checks ? `${(m.checks.values.rate * 100).toFixed(1)}% of ${m.checks.values.passes + m.checks.values.fails}` : '-';
    const dropped = m.dropped_iterations ? m.dropped_iterations.values.count : 0;
    // k6 cannot create directories: RESULTS_DIR must exist.
    const dir = __ENV.RESULTS_DIR ? __ENV.RESULTS_DIR.replace(/\/+$/, '') : '';
    const text = [
      '',
      `k6pack ${ctx.scenario}: profile ${ctx.profile.name}, load ${ctx.level}`,
      '',
      table(data, ctx.rows, columns),
      '',
      `checks passed: ${checks}    dropped_iterations: ${dropped}    interrupted iterations end the step, not the test`,
      ...(ctx.notes ? ctx.notes(data) : []),
      '',
      `thresholds (${ctx.thresholdsFile}): ${gates.lines.length - gates.failed} passed, ${gates.failed} failed`,
      ...gates.lines,
      '',
      resultsLine(dir),
      '',
    ].join('\n');
    const out = { stdout: text };
    if (dir) {
      const setupMeta = (data.setup_data && data.setup_data.k6pack) || {};
      const meta = {
        ...setupMeta,
        gitCommit: __ENV.K6PACK_GIT_COMMIT || __ENV.GITHUB_SHA || __ENV.GIT_COMMIT || null,
        samples: __ENV.K6PACK_SAMPLES || null,
      };
      const doc = buildSummary(data, { ...ctx, columns, observers: [...observers], latencyMetric: latencyMetricOf(columns), meta });
      out[`${dir}/${FILES.summary}`] = `${JSON.stringify(doc, null, 2)}\n`;
      out[`${dir}/${FILES.junit}`] = toJunit(doc);
      out[`${dir}/${FILES.markdown}`] = toMarkdown(doc);
    }
    return out;
  };
}
