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
import { DEFAULT_COLUMNS, cellKeyOf } from '../../common/scenario.js';
import { describeRecording } from '../../common/recording.js';
import { buildSummary, errorLines, FILES, outcomeLine, toJunit, toMarkdown } from '../../common/results.js';
import { expressionOf, parseThreshold } from '../../common/thresholds.js';
import { rawSetting } from '../../common/settings.js';

// p50 of a reported sub-metric, null when it has no samples (for notes under the table).
export function p50Of(data, key) {
  const m = data.metrics[key];
  return m && m.values.count ? m.values.med : null;
}

function fmt(v, unit) {
  if (v === undefined || v === null || Number.isNaN(v)) return '-';
  if (unit === '%') return `${(v * 100).toFixed(1)}%`;
  if (unit === 'x') return `${v.toFixed(2)}x`;
  if (unit === 'ms') return v >= 100 ? `${v.toFixed(0)}ms` : `${v.toFixed(1)}ms`;
  if (unit === '/s') return `${v.toFixed(1)}/s`;
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
  return [header, ...body]
    .map((r) =>
      r
        .map((c, i) => pad(c, widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

// The thresholds that gate, with their verdicts and the value behind them: the
// summary document's list (one list for the terminal, summary.md and junit.xml).
export function gateLines(doc) {
  const lines = doc.thresholds.map(
    (t) =>
      `  ${t.ok ? 'ok  ' : 'FAIL'} ${t.key} ${t.threshold}  (${t.stat}=${t.observed === null ? '-' : Number(t.observed).toFixed(2)})`,
  );
  return { lines, failed: doc.thresholds.filter((t) => !t.ok).length };
}

// Where the files go, as the text summary's last line says.
export function resultsLine(dir) {
  if (!dir)
    return 'results: not saved: plain `k6 run` writes summary.json, junit.xml and summary.md only with -e RESULTS_DIR=<an existing folder> (`npx k6pack run` makes one per run)';
  return `results: ${dir}/ (${FILES.summary}, ${FILES.junit}, ${FILES.markdown})`;
}

// The failure-rate limit of the op_failed gate (the verdict's "held" uses it per step).
function failureLimitOf(thresholds) {
  const t = (thresholds.op_failed || [])
    .map((x) => parseThreshold(expressionOf(x)))
    .find((x) => x && x.stat === 'rate');
  return t ? t.limit : 0.01;
}

// handleSummary for a scenario. ctx: { scenario, profile, level, plan, rows, columns,
// observers, gates, thresholds, verdict, notes(data), thresholdsFile, hints, recording };
// setup() hands the run's metadata (k6 version, segment, start) over in
// data.setup_data.k6pack.
export function makeHandleSummary(ctx) {
  const columns = ctx.columns || DEFAULT_COLUMNS;
  return (data) => {
    const m = data.metrics;
    const dropped = m.dropped_iterations ? m.dropped_iterations.values.count : 0;
    // k6 cannot create directories: RESULTS_DIR must exist.
    const given = rawSetting(__ENV, 'RESULTS_DIR');
    const dir = given ? given.replace(/\/+$/, '') : '';
    const setupMeta = (data.setup_data && data.setup_data.k6pack) || {};
    const meta = {
      ...setupMeta,
      gitCommit:
        rawSetting(__ENV, 'K6PACK_GIT_COMMIT') ||
        rawSetting(__ENV, 'GITHUB_SHA') ||
        rawSetting(__ENV, 'GIT_COMMIT') ||
        null,
      samples: rawSetting(__ENV, 'K6PACK_SAMPLES') || null,
      histograms: rawSetting(__ENV, 'K6PACK_HISTOGRAMS') || null,
    };
    const doc = buildSummary(data, { ...ctx, columns, failureLimit: failureLimitOf(ctx.thresholds || {}), meta });
    const gates = gateLines(doc);
    const text = [
      '',
      `k6pack ${ctx.scenario}: profile ${ctx.profile.name}, load ${ctx.level}`,
      '',
      ...(doc.verdict ? [...doc.verdict.lines, ''] : []),
      ...(doc.errors ? [...errorLines(doc), ''] : []),
      table(data, ctx.rows, columns),
      '',
      `${outcomeLine(doc)}    dropped_iterations: ${dropped}    interrupted iterations end the step, not the test`,
      describeRecording(doc.run.recording),
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
      out[`${dir}/${FILES.summary}`] = `${JSON.stringify(doc, null, 2)}\n`;
      out[`${dir}/${FILES.junit}`] = toJunit(doc);
      out[`${dir}/${FILES.markdown}`] = toMarkdown(doc);
    }
    return out;
  };
}
