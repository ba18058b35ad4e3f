// The gate's policy file, thresholds.json (or -e THRESHOLDS=path), and the one
// parser of k6 threshold expressions every output uses (terminal, summary.json,
// Markdown, JUnit, merge). Budgets themselves are derived from the round-trip
// model in code (common/gates.js); the file holds only policy, each with a reason:
//
// {
//   "latency": { "p50": { "factor": 1.15, "plusMs": 20 }, "p95": { "factor": 1.5, "plusMs": 50 },
//                "cpuFactor": 2, "stepMs": { "p50": 5, "p95": 10 }, "reason": "..." },
//   "open": { "droppedShare": 0.01, "droppedFloor": 1, "reason": "..." },
//                                                           an open step's dropped arrivals: at most
//                                                           max(share x planned, floor) (common/gates.js
//                                                           droppedLimit; no floor when the file gives none)
//   "gates": { "op_failed": [{ "threshold": "rate<0.01", "abortOnFail": true, "delayAbortEval": "10s" }] },
//   "scenarios": {
//     "<scenario>": {
//       "gates": { "<metric{tags}>": [...] },              more or other non-latency gates
//       "stepGates": { "<metric>": [...] },                 a gate on every step: <metric>{scenario:<lane>_<step>}
//                                                           (a failed one fails the step in the verdict too)
//       "profiles": { "<profile spec>": { "gates": {...} } }, the same for one profile; a key
//                                                           "+flaky" is every network with that fault
//       "overrides": [ { "where": { "transport": "grpc", "payload": "big", "profile": "lan" },
//                        "plusMs": { "p50": 22, "p95": 22 } | "p50Ms": 40 | "p95Ms": 80,
//                        "reason": "..." } ]
//     }
//   }
// }
// Keys starting with $ or _ are notes. Any problem is one sentence naming the file.
import { configError } from './env.js';

const isNote = (k) => k.startsWith('_') || k.startsWith('$');
const METRIC_KEY = /^[A-Za-z_][A-Za-z0-9_]*(\{[^{}]+\})?$/;
const EXPR = /^\s*([a-z]+(?:\(\d+(?:\.\d+)?\))?)\s*(<=|>=|<|>|===|==|!=)\s*(-?\d+(?:\.\d+)?)\s*$/;
const STATS = /^(avg|min|max|med|count|rate|value|p\(\d+(\.\d+)?\))$/;

// 'p(95)<450' -> { stat: 'p(95)', op: '<', limit: 450 }, or null when it is not a k6 threshold.
export function parseThreshold(expr) {
  const m = EXPR.exec(String(expr));
  return m && STATS.test(m[1]) ? { stat: m[1], op: m[2], limit: Number(m[3]) } : null;
}

export function thresholdHolds(op, value, limit) {
  switch (op) {
    case '<':
      return value < limit;
    case '<=':
      return value <= limit;
    case '>':
      return value > limit;
    case '>=':
      return value >= limit;
    case '!=':
      return value !== limit;
    default:
      return value === limit; // == and ===
  }
}

// A threshold as thresholds.json or k6 options write it: 'p(95)<5' or { threshold, abortOnFail, delayAbortEval }.
export const expressionOf = (t) => (typeof t === 'string' ? t : t && t.threshold);

function fail(file, what) {
  throw configError(`thresholds file ${file}: ${what}`);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);

function checkGates(file, where, gates) {
  if (!isObject(gates)) fail(file, `${where} must be an object of metric -> thresholds`);
  for (const [metric, list] of Object.entries(gates)) {
    if (isNote(metric)) continue;
    const at = `${where}."${metric}"`;
    if (!METRIC_KEY.test(metric)) fail(file, `${at}: not a metric name with optional {tag:value} filters`);
    // The clients record a check only when it fails (common/recording.js): k6's checks rate
    // is 0 whenever anything failed, so a gate on it means nothing.
    if (/^checks(\{|$)/.test(metric))
      fail(
        file,
        `${at}: k6's checks are recorded only when they fail, so they cannot be gated: gate op_failed instead (every operation's outcome, a failed check included), e.g. "op_failed": ["rate<0.01"]`,
      );
    if (!Array.isArray(list) || list.length === 0) fail(file, `${at}: must be a non-empty array of thresholds`);
    for (const t of list) {
      const expr = expressionOf(t);
      if (typeof expr !== 'string' || !parseThreshold(expr)) {
        fail(
          file,
          `${at}: "${typeof expr === 'string' ? expr : JSON.stringify(t)}" is not a k6 threshold such as "p(95)<300" or "rate<0.01"`,
        );
      }
      if (isObject(t)) {
        const extra = Object.keys(t).find((k) => !['threshold', 'abortOnFail', 'delayAbortEval'].includes(k));
        if (extra) fail(file, `${at}: unknown field "${extra}" (allowed: threshold, abortOnFail, delayAbortEval)`);
      }
    }
  }
}

function checkMargin(file, where, m, fields) {
  if (!isObject(m)) fail(file, `${where} must be an object with ${fields.join(', ')}`);
  for (const f of fields) if (!isNumber(m[f]) || m[f] < 0) fail(file, `${where}.${f} must be a number >= 0`);
}

const needsReason = (file, where, obj) => {
  if (typeof obj.reason !== 'string' || !obj.reason.trim())
    fail(file, `${where} needs a "reason": say why, so a reviewer sees it`);
};

function checkOverride(file, where, o) {
  if (!isObject(o)) fail(file, `${where} must be an object with where, a change and a reason`);
  const allowed = ['where', 'metric', 'plusMs', 'p50Ms', 'p95Ms', 'reason'];
  const extra = Object.keys(o).find((k) => !allowed.includes(k) && !isNote(k));
  if (extra) fail(file, `${where}: unknown field "${extra}" (allowed: ${allowed.join(', ')})`);
  if (!isObject(o.where))
    fail(
      file,
      `${where}.where must be an object of tag -> value (transport, tls, lane, step, profile, or a row's tags such as payload)`,
    );
  for (const [k, v] of Object.entries(o.where))
    if (typeof v !== 'string') fail(file, `${where}.where.${k} must be a string`);
  if (o.plusMs !== undefined) checkMargin(file, `${where}.plusMs`, o.plusMs, ['p50', 'p95']);
  for (const f of ['p50Ms', 'p95Ms'])
    if (o[f] !== undefined && (!isNumber(o[f]) || o[f] <= 0)) fail(file, `${where}.${f} must be a number of ms > 0`);
  if (o.plusMs === undefined && o.p50Ms === undefined && o.p95Ms === undefined)
    fail(file, `${where} changes nothing: give plusMs, p50Ms or p95Ms`);
  needsReason(file, where, o);
}

// Parses and validates the whole policy; returns it.
export function parsePolicy(text, file) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    fail(file, `not valid JSON (${String(err.message || err).split('\n')[0]})`);
  }
  if (!isObject(doc)) fail(file, 'must be a JSON object with latency, gates and scenarios');
  const extra = Object.keys(doc).find((k) => !isNote(k) && !['latency', 'open', 'gates', 'scenarios'].includes(k));
  if (extra)
    fail(
      file,
      `unknown top-level field "${extra}" (allowed: latency, open, gates, scenarios; a file of the older layout keyed by scenario must be rewritten: see docs/gating.md)`,
    );
  if (doc.open !== undefined) {
    if (
      !isObject(doc.open) ||
      !isNumber(doc.open.droppedShare) ||
      doc.open.droppedShare < 0 ||
      doc.open.droppedShare > 1
    )
      fail(
        file,
        "open.droppedShare must be a number from 0 to 1 (the share of an open step's arrivals that may be dropped)",
      );
    const floor = doc.open.droppedFloor;
    if (floor !== undefined && !(Number.isInteger(floor) && floor >= 0))
      fail(
        file,
        'open.droppedFloor must be a whole number >= 0 (the arrivals any open step may drop, whatever its share says)',
      );
    needsReason(file, 'open', doc.open);
  }
  const lat = doc.latency;
  if (!isObject(lat)) fail(file, 'latency must be an object with p50, p95, stepMs and a reason');
  checkMargin(file, 'latency.p50', lat.p50, ['factor', 'plusMs']);
  checkMargin(file, 'latency.p95', lat.p95, ['factor', 'plusMs']);
  checkMargin(file, 'latency.stepMs', lat.stepMs, ['p50', 'p95']);
  if (typeof lat.cpuFactor !== 'number' || !(lat.cpuFactor >= 1))
    fail(file, "latency.cpuFactor must be a number >= 1 (the margin on the server's and k6's time)");
  needsReason(file, 'latency', lat);
  checkGates(file, 'gates', doc.gates || {});
  const scenarios = doc.scenarios || {};
  if (!isObject(scenarios)) fail(file, 'scenarios must be an object keyed by scenario name');
  for (const [name, s] of Object.entries(scenarios)) {
    if (isNote(name)) continue;
    const at = `scenarios."${name}"`;
    if (!isObject(s)) fail(file, `${at} must be an object (gates, profiles, overrides)`);
    const bad = Object.keys(s).find(
      (k) => !isNote(k) && !['gates', 'stepGates', 'profiles', 'overrides', 'reason'].includes(k),
    );
    if (bad) fail(file, `${at}: unknown field "${bad}" (allowed: gates, stepGates, profiles, overrides, reason)`);
    if (s.gates) checkGates(file, `${at}.gates`, s.gates);
    if (s.stepGates) {
      checkGates(file, `${at}.stepGates`, s.stepGates);
      const tagged = Object.keys(s.stepGates).find((k) => !isNote(k) && k.includes('{'));
      if (tagged)
        fail(file, `${at}.stepGates."${tagged}": give the metric alone; each step adds {scenario:<lane>_<step>}`);
    }
    for (const [p, block] of Object.entries(s.profiles || {})) {
      if (isNote(p)) continue;
      if (!isObject(block) || !block.gates) fail(file, `${at}.profiles."${p}" must be an object with gates`);
      checkGates(file, `${at}.profiles."${p}".gates`, block.gates);
    }
    if (s.overrides !== undefined && !Array.isArray(s.overrides)) fail(file, `${at}.overrides must be an array`);
    (s.overrides || []).forEach((o, i) => checkOverride(file, `${at}.overrides[${i}]`, o));
  }
  return doc;
}

const stripNotes = (block) => Object.fromEntries(Object.entries(block || {}).filter(([k]) => !isNote(k)));

// The non-latency gates of one scenario under one profile spec: the file's gates,
// then the scenario's, then the profile's, metric by metric.
export function policyGates(policy, scenario, profile) {
  const s = (policy.scenarios || {})[scenario] || {};
  const p = (profileBlock(s.profiles, profile) || {}).gates;
  return { ...stripNotes(policy.gates), ...stripNotes(s.gates), ...stripNotes(p) };
}

// A scenario's block for a profile spec: the spec's own ("4g+flaky"), else the
// one for its faults on any network ("+flaky").
function profileBlock(profiles = {}, spec) {
  if (profiles[spec]) return profiles[spec];
  const plus = String(spec).indexOf('+');
  return plus > 0 ? profiles[String(spec).slice(plus)] : undefined;
}

// The gates a scenario puts on every step: { metric: [thresholds] } (stepGates).
export const stepGatesOf = (policy, scenario) => stripNotes(((policy.scenarios || {})[scenario] || {}).stepGates);

// The overrides of a scenario that apply to a row. rowTags: every tag the row's
// samples carry (transport, tls, step, lane, dims), plus profile (the spec) and network.
export function overridesFor(policy, scenario, rowTags, metric = 'op_duration') {
  const list = ((policy.scenarios || {})[scenario] || {}).overrides || [];
  return list.filter(
    (o) =>
      (o.metric || 'op_duration') === metric && Object.entries(o.where).every(([k, v]) => String(rowTags[k]) === v),
  );
}
