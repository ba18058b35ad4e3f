// A run's results as data: the summary.json document (docs/results-schema.md,
// checked against docs/results-schema.json), and the renderings every reader
// shares: Markdown (summary.md: a PR comment or $GITHUB_STEP_SUMMARY) and JUnit
// (junit.xml: one test case per threshold, so CI names the budget that failed).
//
// Plain ES module: k6's handleSummary builds the document from its end-of-test
// data (scenarios/lib/summary.js); Node's `k6pack merge`, `compare` and `report`
// read, merge and render the same documents (lib/report/).
import { parseThreshold } from './thresholds.js';
import { verdictOf } from './verdict.js';
import { describeRecording } from './recording.js';

export { parseThreshold, thresholdHolds } from './thresholds.js';

export const SCHEMA_VERSION = 1;

// The files of a run folder.
export const FILES = {
  summary: 'summary.json',
  junit: 'junit.xml',
  markdown: 'summary.md',
  samples: 'samples.json.gz',
  histograms: 'histograms.json.gz',
  dashboard: 'k6-dashboard.html',
  report: 'report.html',
};

// A failed check whose name starts with this carries an operation's first error
// (scenarios/lib/metrics.js keepFirstErrors): '<prefix><op>: <reason>'.
export const FIRST_ERROR_CHECK = 'first error · ';

// [{ op, message }] from k6's end-of-test groups: the first error kept for each operation.
export function firstErrorsOf(group) {
  const out = [];
  const walk = (g) => {
    for (const c of (g && g.checks) || []) {
      if (!c.name.startsWith(FIRST_ERROR_CHECK)) continue;
      const text = c.name.slice(FIRST_ERROR_CHECK.length);
      const at = text.indexOf(': ');
      const op = at === -1 ? text : text.slice(0, at);
      if (!out.some((e) => e.op === op)) out.push({ op, message: at === -1 ? '' : text.slice(at + 2) });
    }
    for (const sub of (g && g.groups) || []) walk(sub);
  };
  walk(group);
  return out;
}

// [{ name, fails }] from k6's end-of-test groups: the checks that failed, and how often.
// The pack records a check only when it fails (scenarios/lib/metrics.js): its name says
// what failed. The api scenario's first errors are listed apart (firstErrorsOf).
export function failedChecksOf(group) {
  const byName = new Map();
  const walk = (g) => {
    for (const c of (g && g.checks) || []) {
      if (!c.fails || c.name.startsWith(FIRST_ERROR_CHECK)) continue;
      byName.set(c.name, (byName.get(c.name) || 0) + c.fails);
    }
    for (const sub of (g && g.groups) || []) walk(sub);
  };
  walk(group);
  return [...byName].map(([name, fails]) => ({ name, fails }));
}

// The failed checks summed by name over several documents' lists (merge).
export function addFailedChecks(lists) {
  const byName = new Map();
  for (const list of lists) for (const c of list || []) byName.set(c.name, (byName.get(c.name) || 0) + c.fails);
  return [...byName].map(([name, fails]) => ({ name, fails }));
}

// 'operations 2890, failed 3 (0.10%): status 200 x2, right shape and count x1': the
// outcome line of the summaries (op_failed is every operation's outcome).
export function outcomeLine(doc) {
  const t = doc.totals;
  if (t.operations === undefined)
    return `checks ${formatRate(doc.checks.rate)} of ${doc.checks.passes + doc.checks.fails}`;
  const failed = t.failedOperations || 0;
  const share = t.operations ? ` (${formatRate(failed / t.operations)})` : '';
  const checks = (doc.failedChecks || []).map((c) => `${c.name} x${c.fails}`).join(', ');
  return `operations ${t.operations}, failed ${failed}${share}${checks ? `; failed checks: ${checks}` : ''}`;
}

// k6's sub-metric keys: 'op_duration{scenario:ws_c1,payload:small}' <-> { metric, tags }.
const tagText = (tags) =>
  Object.entries(tags)
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
export const cellKey = (metric, tags = {}) => (Object.keys(tags).length ? `${metric}{${tagText(tags)}}` : metric);

export function parseKey(key) {
  const m = /^([^{]+)(?:\{(.*)\})?$/.exec(key);
  const tags = {};
  for (const part of m && m[2] ? m[2].split(',') : []) {
    const i = part.indexOf(':');
    tags[part.slice(0, i).trim()] = part
      .slice(i + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { metric: m ? m[1].trim() : key, tags };
}

// A k6 summary value for a threshold's stat ('p(50)' is reported as 'med').
export function statValue(values, stat) {
  if (!values) return null;
  let v = values[stat];
  if (v === undefined && stat === 'p(50)') v = values.med;
  if (v === undefined && stat === 'med') v = values['p(50)'];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

const TREND_STATS = [
  ['count', 'count'],
  ['min', 'min'],
  ['max', 'max'],
  ['avg', 'avg'],
  ['p50', 'med'],
  ['p90', 'p(90)'],
  ['p95', 'p(95)'],
  ['p99', 'p(99)'],
];

// A k6 sub-metric in the schema's names, or null when it has no samples.
export function statsOf(metric) {
  if (!metric) return null;
  const v = metric.values;
  switch (metric.type) {
    case 'trend':
      if (!v.count) return null;
      return Object.fromEntries(TREND_STATS.map(([name, k6]) => [name, statValue(v, k6)]));
    case 'rate': {
      const total = v.passes + v.fails;
      return total ? { rate: v.rate, count: v.passes, total } : null;
    }
    case 'counter':
      return { count: v.count };
    case 'gauge':
      return { value: v.value, min: v.min, max: v.max };
    default:
      return null;
  }
}

// One sub-metric as the document holds it: its key, type and statistics (null: no samples).
export const cell = (key, type, stats) => ({ key, type, ...(stats || { empty: true }) });

// A row's budgets as a table shows them: '105 / 180 ms', '105 / - ms' where its p95 is not
// gated, '-' where neither is (too few operations: docs/thresholds.md#sample-floors).
export const budgetText = (b) => (b.p50 === null && b.p95 === null ? '-' : `${b.p50 ?? '-'} / ${b.p95 ?? '-'} ms`);

// What a gate (common/gates.js) puts in the document: the model behind it and its budget.
const modelOf = (e) => ({ ms: round3(e.ms), setupMs: round3(e.setupMs), roundTrips: e.roundTrips, formula: e.formula });
const round3 = (x) => Math.round(x * 1000) / 1000;
function gateOf(gate, metrics) {
  const verdicts = (metrics[gate.key] && metrics[gate.key].thresholds) || {};
  const ok = gate.thresholds.every((t) => !verdicts[t] || verdicts[t].ok);
  return {
    model: { p50: modelOf(gate.expected.p50), p95: modelOf(gate.expected.p95) },
    budget: gate.budget,
    gate: { ok, thresholds: gate.thresholds, overrides: gate.overrides.map((o) => o.reason) },
  };
}

// summary.json from k6's handleSummary data.
// ctx: { scenario, profile: { name, network, faults }, level, plan, rows, columns,
//        observers, latencyMetric, gates (common/gates.js), verdict ({ where }), recording
//        (common/recording.js),
//        failureLimit, thresholdsFile, hints, meta: { k6Version, gitCommit, samples, histograms,
//        executionSegment, executionSegmentSequence, startedAt, stepsFrom } }
// The order of a document's thresholds: by key, then expression.
export const byThreshold = (a, b) => (a.key + a.threshold).localeCompare(b.key + b.threshold);

export function buildSummary(data, ctx, now = Date.now()) {
  const metrics = data.metrics;
  const gates = new Map((ctx.gates || []).map((g) => [g.key, g]));
  const observers = new Set(ctx.observers);
  const get = (key, type) => {
    const m = metrics[key];
    return cell(key, m ? m.type : type, statsOf(m));
  };
  const count = (key) => (metrics[key] ? metrics[key].values.count : 0);
  const meta = ctx.meta || {};
  const durationMs = data.state ? data.state.testRunDurationMs : null;
  const latency = ctx.latencyMetric;

  const steps = [];
  for (const [name, sc] of Object.entries(ctx.plan.scenarios)) {
    if (!sc.tags.transport) continue;
    steps.push({
      scenario: name,
      ...laneFields(name, sc),
      executor: sc.executor,
      ...(sc.vus !== undefined ? { vus: sc.vus } : {}),
      ...(sc.iterations !== undefined ? { plannedIterations: sc.iterations } : {}),
      ...(sc.rate !== undefined ? { rate: sc.rate, timeUnit: sc.timeUnit } : {}),
      startSeconds: seconds(sc.startTime || '0s'),
      durationSeconds: seconds(sc.duration || sc.maxDuration),
      latency: get(cellKey(latency, { scenario: name }), 'trend'),
      failures: get(cellKey('op_failed', { scenario: name }), 'rate'),
      iterations: count(cellKey('iterations', { scenario: name })),
      droppedIterations: count(cellKey('dropped_iterations', { scenario: name })),
      bytesSent: count(cellKey('data_sent', { scenario: name })),
      bytesReceived: count(cellKey('data_received', { scenario: name })),
      ...setupGatesOf(ctx.gates || [], name, metrics),
    });
  }

  const rows = ctx.rows.map((row) => {
    const sc = ctx.plan.scenarios[row.tags.scenario];
    const { scenario, ...dims } = row.tags;
    const out = {
      id: [scenario, tagText(dims)].filter(Boolean).join(' '),
      scenario,
      ...laneFields(scenario, sc),
      ...(sc.vus !== undefined ? { vus: sc.vus } : {}),
      dims,
      latency: null,
      failures: null,
      metrics: {},
    };
    const seen = new Set();
    for (const c of ctx.columns) {
      const key = cellKey(c.metric, { ...(c.laneOnly ? { scenario } : row.tags), ...(c.tags || {}) });
      if (seen.has(key)) continue;
      seen.add(key);
      const value = get(key, undefined);
      if (c.metric === latency && !c.tags && !out.latency) out.latency = value;
      else if (c.metric === 'op_failed' && !c.tags && !out.failures) out.failures = value;
      else out.metrics[cellKey(c.metric, c.tags || {})] = value;
    }
    if (!out.latency) out.latency = get(cellKey(latency, row.tags), 'trend');
    if (!out.failures) out.failures = get(cellKey('op_failed', row.tags), 'rate');
    const gate = gates.get(cellKey(latency, row.tags));
    return gate ? { ...out, ...gateOf(gate, metrics) } : out;
  });

  const thresholds = [];
  for (const [key, metric] of Object.entries(metrics)) {
    if (observers.has(key)) continue;
    for (const [expr, verdict] of Object.entries(metric.thresholds || {})) {
      const parsed = parseThreshold(expr);
      thresholds.push({
        key,
        threshold: expr,
        ok: verdict.ok,
        stat: parsed ? parsed.stat : null,
        observed: parsed ? statValue(metric.values, parsed.stat) : null,
      });
    }
  }
  thresholds.sort(byThreshold);

  const checks = metrics.checks
    ? { passes: metrics.checks.values.passes, fails: metrics.checks.values.fails, rate: metrics.checks.values.rate }
    : { passes: 0, fails: 0, rate: null };
  // op_failed: a Rate whose non-zero samples ("passes" in k6's data) are the failures.
  const outcomes = metrics.op_failed ? metrics.op_failed.values : { passes: 0, fails: 0 };
  const endedAt = new Date(now).toISOString();
  const startedAt = meta.startedAt || (durationMs !== null ? new Date(now - durationMs).toISOString() : null);
  const doc = {
    schemaVersion: SCHEMA_VERSION,
    run: {
      scenario: ctx.scenario,
      profile: ctx.profile.name,
      network: ctx.profile.network
        ? pick(ctx.profile.network, [
            'name',
            'rttMs',
            'jitterMs',
            'downKbps',
            'upKbps',
            'slowStart',
            'initialWindow',
            'loss',
            'sharedBandwidth',
          ])
        : null,
      modifiers: (ctx.profile.modifiers || []).map((m) => m.name),
      faults: (ctx.profile.faults || []).map((f) => f.name),
      load: ctx.level,
      workload: ctx.plan.workload || 'closed',
      steps: ctx.plan.steps,
      stepSeconds: ctx.plan.stepSeconds,
      latencyMetric: latency,
      k6Version: meta.k6Version || null,
      startedAt,
      endedAt,
      durationMs,
      // Epoch ms when setup() handed over to the steps: their startSeconds count from here.
      ...(typeof meta.stepsFrom === 'number' ? { stepsFrom: meta.stepsFrom } : {}),
      gitCommit: meta.gitCommit || null,
      thresholdsFile: ctx.thresholdsFile,
      executionSegment: meta.executionSegment || null,
      executionSegmentSequence: meta.executionSegmentSequence || null,
      samples: meta.samples || null,
      histograms: meta.histograms || null,
      hints: ctx.hints || {},
      verdict: ctx.verdict || null,
      failureLimit: ctx.failureLimit ?? null,
      recording: ctx.recording || null,
      // The CPU the budgets assumed (common/machine.js): measured by k6pack before the run.
      machine: ctx.machine || null,
    },
    steps,
    rows,
    thresholds,
    checks,
    totals: {
      iterations: count('iterations'),
      droppedIterations: count('dropped_iterations'),
      bytesSent: count('data_sent'),
      bytesReceived: count('data_received'),
      operations: outcomes.passes + outcomes.fails,
      failedOperations: outcomes.passes,
    },
    failedChecks: failedChecksOf(data.root_group),
  };
  const errors = firstErrorsOf(data.root_group);
  if (errors.length) doc.errors = errors;
  doc.verdict = verdictOf(doc);
  return doc;
}

// After thresholds were evaluated again (k6pack merge pools samples): every row's and
// step's gate outcome from the document's thresholds, and the verdict from them.
export function refreshGates(doc) {
  const ok = new Map(doc.thresholds.map((t) => [`${t.key} ${t.threshold}`, t.ok]));
  const held = (key, list) => list.every((t) => ok.get(`${key} ${t}`) !== false);
  // New objects: the parts' documents keep their own outcomes.
  for (const row of doc.rows)
    if (row.gate)
      row.gate = {
        ...row.gate,
        ok: held(cellKey(doc.run.latencyMetric, { scenario: row.scenario, ...row.dims }), row.gate.thresholds),
      };
  for (const step of doc.steps) {
    if (!step.setupGates) continue;
    step.setupGates = step.setupGates.map((g) => ({ ...g, gate: { ...g.gate, ok: held(g.key, g.gate.thresholds) } }));
    step.setupGateOk = step.setupGates.every((g) => g.gate.ok);
  }
  doc.verdict = verdictOf(doc);
  return doc;
}

// The set-up gates of a step (setup_duration{scenario,phase}): each with its model
// and budget, and whether all held.
function setupGatesOf(gates, name, metrics) {
  const own = gates.filter(
    (g) => g.metric === 'setup_duration' && g.key.startsWith(`setup_duration{scenario:${name},`),
  );
  if (!own.length) return {};
  const setupGates = own.map((g) => ({ phase: g.which, key: g.key, ...gateOf(g, metrics) }));
  return { setupGates, setupGateOk: setupGates.every((g) => g.gate.ok) };
}

const pick = (obj, keys) => Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));

function laneFields(name, sc) {
  const t = sc.tags;
  return {
    lane: name.slice(0, name.length - t.step.length - 1),
    transport: t.transport,
    tls: t.tls === 'true',
    ...(t.variant ? { variant: t.variant } : {}),
    step: t.step,
  };
}

// k6 durations: '1m30.5s' / '90s' / '1h' -> seconds (null for none).
export function seconds(d) {
  if (d === undefined || d === null) return null;
  let total = 0;
  for (const m of String(d).matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g))
    total += Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2]];
  return total;
}

// 95 -> '1m35s'. Rounded to the second first: 59.6 s is '1m00s', not '0m60s'.
export function clock(s) {
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
}

// Execution segments: '1/2:1' (also '0.5:1', '50%:100%') -> [0.5, 1].
const fraction = (text) => {
  const t = String(text).trim();
  if (t.endsWith('%')) return Number(t.slice(0, -1)) / 100;
  const [n, d] = t.split('/');
  return d === undefined ? Number(n) : Number(n) / Number(d);
};
export const segmentRange = (text) => String(text).split(':').map(fraction);

// Do [from, to] ranges cover 0..1 without a gap? With disjoint: true, also without overlap.
export function coversWhole(ranges, { disjoint = false } = {}) {
  let reach = 0;
  for (const [from, to] of [...ranges].sort((x, y) => x[0] - y[0])) {
    if (from > reach + 1e-9 || (disjoint && from < reach - 1e-9)) return false;
    reach = Math.max(reach, to);
  }
  return reach >= 1 - 1e-9;
}

// A row's label as the tables show it: 'http-fresh tls=true' / 'http-keepalive tls=false typed n:100'.
export function rowLabel(row) {
  const dims = Object.entries(row.dims || {})
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
  return [row.transport, `tls=${row.tls}`, row.variant, dims].filter(Boolean).join(' ');
}

export function formatMs(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  return v >= 100 ? `${v.toFixed(0)} ms` : `${v.toFixed(1)} ms`;
}
export const formatRate = (v) => (v === null || v === undefined ? '-' : `${(v * 100).toFixed(2)}%`);
export const formatValue = (v) =>
  v === null || v === undefined ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(2);

const mbOf = (b) => (b ? `${(b / 1048576).toFixed(1)} MB` : '-');
const laneName = (name) => name.replace(/_/g, ' ');

// A run's server cost (common/server-cost.js serverCostOf) as lines: the terminal's, and
// summary.md's section.
export function describeServerCost(cost) {
  const lines = [
    `server cost (pid ${cost.pids.join(', ')}; CPU per operation from ${cost.source}):`,
    `  ${'lane'.padEnd(18)}${'step'.padEnd(6)}${'ops'.padStart(7)}${'CPU/op'.padStart(10)}${'RSS'.padStart(11)}`,
    ...cost.rows.map(
      (r) =>
        `  ${r.lane.padEnd(18)}${r.step.padEnd(6)}${String(r.ops).padStart(7)}${`${r.cpuUsPerOp} us`.padStart(10)}${mbOf(r.rssBytes).padStart(11)}`,
    ),
  ];
  if (cost.rows.some((r) => r.lanes))
    lines.push(
      'The lanes ran at once (a soak): the server spends its CPU on all of them together, so no lane is cheaper than another here; `run api` compares them one at a time.',
    );
  else if (cost.cheapest)
    lines.push(
      `Cheapest for the server: ${laneName(cost.cheapest.lane)} (${cost.cheapest.cpuUsPerOp} us of CPU an operation at ${cost.cheapest.step})${cost.fastest ? `; fastest for the client: ${laneName(cost.fastest.lane)} (p50 ${formatMs(cost.fastest.p50)} at ${cost.fastest.step})` : ''}.`,
    );
  else lines.push('No step held enough samples to cost (the run ended early, or a server stopped).');
  if (cost.memory) lines.push(...describeMemory(cost.memory));
  return lines;
}

// A soak's memory gate on your server: each process's RSS after the warm-up, its most
// since, and the growth against the gate.
function describeMemory({ gate, rows }) {
  if (!rows.length) return ['server memory: too few samples after the warm-up to judge its growth (not gated)'];
  const pct = (g) => `${g >= 0 ? '+' : ''}${(g * 100).toFixed(1)} %`;
  return [
    `server memory (VmRSS from the first sample after the warm-up, ${rows[0].fromSeconds} s in; gate server_rss_growth ${gate.join(', ')}):`,
    ...rows.map(
      (r) =>
        `  pid ${r.pid}: ${mbOf(r.baselineBytes)} -> most ${mbOf(r.maxBytes)}, last ${mbOf(r.lastBytes)}: ${pct(r.growth)} ${r.ok ? 'ok' : 'FAILED'}`,
    ),
  ];
}

const mdEscape = (s) => String(s).replace(/\|/g, '\\|');

// summary.md: a heading with the verdict, the rows, the thresholds (failed ones first).
export function toMarkdown(doc) {
  const r = doc.run;
  const failed = doc.thresholds.filter((t) => !t.ok);
  const verdict = failed.length
    ? `❌ ${failed.length} of ${doc.thresholds.length} thresholds failed`
    : `✅ ${doc.thresholds.length} thresholds passed`;
  const facts = [
    r.k6Version && `k6 ${r.k6Version}`,
    r.gitCommit && `commit ${String(r.gitCommit).slice(0, 12)}`,
    r.executionSegment && `segment ${r.executionSegment}`,
    r.merged &&
      `merged from ${r.merged.parts.length} runs (${r.merged.kind}; percentiles ${r.merged.method || 'exact'})`,
    r.startedAt && `${r.startedAt} → ${r.endedAt}`,
    `thresholds: ${r.thresholdsFile}`,
  ].filter(Boolean);
  const lines = [`### k6pack ${r.scenario}: profile ${r.profile}, load ${r.load} — ${verdict}`, ''];
  if (doc.verdict) lines.push(...doc.verdict.lines.map((l) => `> ${mdEscape(l)}`), '');
  if (doc.errors) lines.push(...errorLines(doc).map((l) => `> ${mdEscape(l)}`), '');
  lines.push(facts.join(' · '), '');
  lines.push(
    `| lane | step | ops | p50 | p95 | p99 | failed | model p50 | budget p50 / p95 |`,
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const row of doc.rows) {
    const l = row.latency || {};
    if (!l.count && !(row.failures && row.failures.total)) continue;
    const model = row.model ? formatMs(row.model.p50.ms) : '-';
    const budget = row.budget ? `${row.gate && !row.gate.ok ? '❌ ' : ''}${budgetText(row.budget)}` : '-';
    lines.push(
      `| ${mdEscape(rowLabel(row))} | ${row.step} | ${l.count || 0} | ${formatMs(l.p50)} | ${formatMs(l.p95)} | ${formatMs(l.p99)} | ${formatRate(row.failures && row.failures.rate)} | ${model} | ${budget} |`,
    );
  }
  lines.push(
    '',
    `latency: ${r.latencyMetric}; ${outcomeLine(doc)}; dropped iterations ${doc.totals.droppedIterations}`,
  );
  if (r.recording) lines.push('', describeRecording(r.recording));
  if (doc.serverCost) lines.push('', '```', ...describeServerCost(doc.serverCost), '```');
  const table = (list) => [
    '| | metric | threshold | observed |',
    '|---|---|---|--:|',
    ...list.map(
      (t) =>
        `| ${t.ok ? '✅' : '❌'} | \`${mdEscape(t.key)}\` | \`${mdEscape(t.threshold)}\` | ${formatValue(t.observed)} |`,
    ),
  ];
  if (failed.length) lines.push('', '**Failed thresholds**', '', ...table(failed));
  const passed = doc.thresholds.filter((t) => t.ok);
  if (passed.length)
    lines.push(
      '',
      `<details><summary>${passed.length} passed thresholds</summary>`,
      '',
      ...table(passed),
      '',
      '</details>',
    );
  return `${lines.join('\n')}\n`;
}

// The first error of each operation that failed, one line each.
export const errorLines = (doc) => (doc.errors || []).map((e) => `First error of ${e.op}: ${e.message}`);

const xmlEscape = (s) =>
  String(s).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]);

// A JUnit <testsuite>: cases [{ name, failure?, error? }] (failure/error: the message).
export function junitSuite({ name, classname, cases, seconds }) {
  const body = cases.map((c) => {
    const head = `  <testcase name="${xmlEscape(c.name)}" classname="${xmlEscape(classname)}"`;
    const problem =
      c.failure !== undefined
        ? ['failure', c.failure, 'threshold']
        : c.error !== undefined
          ? ['error', c.error, 'run']
          : null;
    if (!problem) return `${head}/>`;
    const [tag, text, type] = problem;
    return `${head}><${tag} message="${xmlEscape(text)}" type="${type}">${xmlEscape(text)}</${tag}></testcase>`;
  });
  const count = (key) => cases.filter((c) => c[key] !== undefined).length;
  const time = seconds ? ` time="${seconds.toFixed(3)}"` : '';
  return `<testsuite name="${xmlEscape(name)}" tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}"${time}>\n${body.join('\n')}\n</testsuite>`;
}

export const junitDocument = (suites) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join('\n')}\n</testsuites>\n`;

// A run's <testsuite>: one test case per threshold; a failure says what was observed.
export function junitSuiteOf(doc) {
  const r = doc.run;
  const cases = doc.thresholds.map((t) => {
    const c = { name: `${t.key} ${t.threshold}` };
    if (!t.ok)
      c.failure = `${t.key}: ${t.observed === null ? 'no value' : `${t.stat}=${formatValue(t.observed)}`}, threshold ${t.threshold}`;
    return c;
  });
  return junitSuite({
    name: `${r.scenario} (${r.profile})`,
    classname: `k6pack.${r.scenario}.${r.profile}`,
    cases,
    seconds: r.durationMs ? r.durationMs / 1000 : 0,
  });
}

// junit.xml of one run.
export const toJunit = (doc) => junitDocument([junitSuiteOf(doc)]);
