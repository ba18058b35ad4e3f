// `k6pack report RUN...`: one self-contained HTML file from run folders. Runs of
// the same scenario, profile and load are merged first (merge.js: segments of
// one test, or repeats), so the pictures show one test. Chart.js (the pinned npm
// package's UMD build) and the data are inlined: the file opens offline.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describeRecording } from '../../common/recording.js';
import { budgetText, formatMs, formatRate, formatValue, outcomeLine, rowLabel, FILES } from '../../common/results.js';
import { chartsFor, modelRows } from './charts.js';
import { describeMethod, groupKey, mergeRuns } from './merge.js';
import { loadRun, ResultsError } from './runs.js';

// chart.js exports no path to its UMD build: it sits beside the main entry, dist/chart.cjs.
const chartJsFile = () => join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js');
// Chart.js is MIT: its copyright and permission notice (the package's LICENSE.md;
// the build's own banner names the licence only) go with every copy inlined in a report.
const chartJsLicence = () =>
  readFileSync(join(dirname(chartJsFile()), '..', 'LICENSE.md'), 'utf8')
    .trim()
    .replace(/\*\//g, '* /')
    .replace(/<\/script/gi, '<\\/script');
const PAGE_JS = new URL('./report-page.js', import.meta.url);

// Run folders -> [{ doc, runs }] with one document per scenario/profile/load.
// method: merge.js's ('auto' by default).
export async function groupRuns(runs, { method } = {}) {
  const groups = new Map();
  for (const r of runs) {
    const key = groupKey(r.doc);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  const out = [];
  for (const parts of groups.values()) {
    out.push({ doc: parts.length === 1 ? parts[0].doc : await mergeRuns(parts, { method }), runs: parts });
  }
  return out;
}

function section(group, index) {
  const { doc } = group;
  const r = doc.run;
  const rows = doc.rows.filter((row) => row.latency?.count || row.failures?.total);
  const failed = doc.thresholds.filter((t) => !t.ok);
  const facts = [
    `load ${r.load}`,
    r.network && `R ${r.network.rttMs} ms, down ${r.network.downKbps ?? '∞'} / up ${r.network.upKbps ?? '∞'} kbit/s`,
    r.faults.length && `faults ${r.faults.join('+')}`,
    r.k6Version && `k6 ${r.k6Version}`,
    r.gitCommit && `commit ${r.gitCommit.slice(0, 12)}`,
    r.merged
      ? `merged from ${r.merged.parts.length} runs (${r.merged.kind}), every statistic from ${r.merged.samples} samples, percentiles ${describeMethod(r.merged)}`
      : r.executionSegment && `segment ${r.executionSegment}`,
    !r.merged && "percentiles k6's own (exact)",
    r.startedAt && `${r.startedAt} → ${r.endedAt}`,
    `latency metric ${r.latencyMetric}`,
    describeRecording(r.recording),
    doc.totals.operations !== undefined && outcomeLine(doc),
  ].filter(Boolean);
  return {
    id: `run-${index}`,
    title: `${r.scenario} — ${r.profile}`,
    facts: facts.join(' · '),
    charts: chartsFor(doc, `r${index}`),
    verdict: doc.verdict?.lines || [],
    rows: {
      head: ['lane', 'row', 'step', 'ops', 'p50', 'p95', 'p99', 'failed', 'model p50', 'budget p50 / p95'],
      body: rows.map((row) => [
        row.lane,
        rowLabel(row),
        row.step,
        row.latency?.count || 0,
        formatMs(row.latency?.p50),
        formatMs(row.latency?.p95),
        formatMs(row.latency?.p99),
        formatRate(row.failures?.rate),
        row.model ? formatMs(row.model.p50.ms) : '-',
        row.budget ? `${row.gate && !row.gate.ok ? 'FAILED ' : ''}${budgetText(row.budget)}` : '-',
      ]),
    },
    model: modelRows(doc).map((m) => [
      m.label,
      formatMs(m.measuredP50),
      formatMs(m.measuredAvg),
      formatMs(m.model),
      m.formula,
    ]),
    thresholds: {
      verdict: failed.length
        ? `${failed.length} of ${doc.thresholds.length} failed`
        : `all ${doc.thresholds.length} passed`,
      failed: failed.map((t) => [t.key, t.threshold, formatValue(t.observed)]),
    },
  };
}

export const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}
.facts{color:#555}.gate{border:1px solid #ccc;padding:4px 16px 12px}.gate.failed{background:#fff4f4;border-color:#e99}.gate.passed{background:#f4fff4;border-color:#9c9}.verdict{font-size:15px;margin:4px 0}.answer{background:#f4f8ff;border:1px solid #cde;padding:4px 16px 12px}.grid{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0;border:1px solid #ddd;padding:8px}
figcaption{font-weight:600;max-width:560px}small{display:block;color:#666;max-width:560px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:right}
td:first-child,td:nth-child(2),th{text-align:left}`;

// The gate's own verdict and every failed threshold, with the run it failed in: what the
// page opens with when `k6pack gate` draws it (gate: { verdict, code }), as comment.md does.
function gateBlock(gate, sections) {
  if (!gate) return null;
  return {
    verdict: gate.verdict,
    code: gate.code,
    failed: sections.flatMap((s) => s.thresholds.failed.map((row) => [s.title, ...row])),
  };
}

// The HTML for groups from groupRuns(); gate: the gate's { verdict, code } (k6pack gate).
export function renderReport(groups, runs, now = new Date(), gate = null) {
  const sections = groups.map(section);
  const data = {
    generatedAt: now.toISOString(),
    runs: runs.map((r) => ({
      name: r.name,
      scenario: r.doc.run.scenario,
      profile: r.doc.run.profile,
      load: r.doc.run.load,
      segment: r.doc.run.executionSegment,
      startedAt: r.doc.run.startedAt,
    })),
    gate: gateBlock(gate, sections),
    sections,
  };
  const title = `k6pack report: ${[...new Set(groups.map((g) => g.doc.run.scenario))].join(', ')}`;
  return htmlPage({ title, data, script: PAGE_JS, css: CSS });
}

const escapeHtml = (s) => String(s).replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);

// A self-contained page: the data as JSON, Chart.js (with its licence) and the page's
// own script (script: a file URL) inlined, so it opens offline. The script draws into
// <main id="report"> from the data block #k6pack-data.
export function htmlPage({ title, data, script, css }) {
  // </script> inside JSON would end the block: escape '<'.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const inline = (file) => readFileSync(file, 'utf8').replace(/<\/script/gi, '<\\/script');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<main id="report"></main>
<script type="application/json" id="k6pack-data">${json}</script>
<script>/*! Chart.js licence (chart.js/LICENSE.md):
${chartJsLicence()}
*/
${inline(chartJsFile())}</script>
<script>${inline(script)}</script>
</body>
</html>
`;
}

// `k6pack report`: writes the file; returns { file, groups }. gate: the gate's { verdict,
// code }, which the page then opens with (k6pack gate).
export async function writeReport(args, { out, method, gate } = {}) {
  if (!args.length) throw new ResultsError('give at least one run folder (results/<scenario>-<profile>-<time>/)');
  const runs = args.map(loadRun);
  const groups = await groupRuns(runs, { method });
  const file = out || join(runs[0].dir, FILES.report);
  try {
    writeFileSync(file, renderReport(groups, runs, new Date(), gate));
  } catch (err) {
    throw new ResultsError(`cannot write ${file}: ${err.message}`);
  }
  return { file, groups };
}
