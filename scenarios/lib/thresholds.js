// Pass/fail gates from one versioned file, thresholds.json (or -e THRESHOLDS=path).
//
// Layout: { "<scenario>": { "default": {...}, "<profile spec>": {...} } } where a
// block maps a metric (with tag filters) to k6 thresholds:
//   "op_duration{transport:ws}": ["p(95)<450"],
//   "op_failed": [{ "threshold": "rate<0.01", "abortOnFail": true, "delayAbortEval": "10s" }]
// Keys starting with _ or $ are notes (the round-trip model behind the numbers).
// The block used is { ...default, ...<PROFILE> }: a profile overrides the
// default metric by metric. Read in the init context with open(); any problem
// stops k6 before the test with one sentence naming the file.
//
// k6 only reports a sub-metric (metric{tag:value}) that has a threshold, so
// scenarios also pass `observe` keys: they get an always-true threshold and show
// in the summary JSON and in the pack's text summary, without gating anything.
import { configError, ENV } from './config.js';

export const DEFAULT_FILE = '../../thresholds.json'; // relative to this module
const METRIC_KEY = /^[A-Za-z_][A-Za-z0-9_]*(\{[^{}]+\})?$/;
const AGG = /^\s*(avg|min|max|med|count|rate|value|p\(\d+(\.\d+)?\))\s*(<=|>=|<|>|===|==|!=)\s*-?\d+(\.\d+)?\s*$/;
const isNote = (k) => k.startsWith('_') || k.startsWith('$');

// Where the file is: THRESHOLDS relative to the directory k6 was started in.
export function thresholdsPath(env = ENV) {
  const p = env.THRESHOLDS;
  if (!p) return DEFAULT_FILE;
  if (p.startsWith('/') || !env.PWD) return p;
  return normalize(`${env.PWD}/${p}`);
}

// '/a/b/../c/./d' -> '/a/c/d' (k6 has no path module).
function normalize(path) {
  const out = [];
  for (const part of path.split('/')) {
    if (part === '..') out.pop();
    else if (part !== '.' && part !== '') out.push(part);
  }
  return `/${out.join('/')}`;
}

function fail(file, what) {
  throw configError(`thresholds file ${file}: ${what}`);
}

function checkThreshold(file, where, t) {
  const expr = typeof t === 'string' ? t : t && t.threshold;
  if (typeof expr !== 'string' || !AGG.test(expr)) {
    fail(file, `${where}: "${typeof expr === 'string' ? expr : JSON.stringify(t)}" is not a k6 threshold such as "p(95)<300" or "rate<0.01"`);
  }
  if (typeof t === 'object') {
    const extra = Object.keys(t).find((k) => !['threshold', 'abortOnFail', 'delayAbortEval'].includes(k));
    if (extra) fail(file, `${where}: unknown field "${extra}" (allowed: threshold, abortOnFail, delayAbortEval)`);
  }
}

// Parses and validates the whole file; returns the object.
export function parseThresholds(text, file) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    fail(file, `not valid JSON (${String(err.message || err).split('\n')[0]})`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) fail(file, 'must be a JSON object keyed by scenario name');
  for (const [scenario, profiles] of Object.entries(doc)) {
    if (isNote(scenario)) continue;
    if (!profiles || typeof profiles !== 'object' || Array.isArray(profiles)) {
      fail(file, `"${scenario}" must be an object keyed by profile ("default", "3g", ...)`);
    }
    for (const [profile, block] of Object.entries(profiles)) {
      if (isNote(profile)) continue;
      if (!block || typeof block !== 'object' || Array.isArray(block)) fail(file, `"${scenario}"."${profile}" must be an object of metric -> thresholds`);
      for (const [metric, list] of Object.entries(block)) {
        if (isNote(metric)) continue;
        const where = `"${scenario}"."${profile}"."${metric}"`;
        if (!METRIC_KEY.test(metric)) fail(file, `${where}: not a metric name with optional {tag:value} filters`);
        if (!Array.isArray(list) || list.length === 0) fail(file, `${where}: must be a non-empty array of thresholds`);
        list.forEach((t) => checkThreshold(file, where, t));
      }
    }
  }
  return doc;
}

function readFile(file) {
  try {
    return open(file === DEFAULT_FILE ? import.meta.resolve(DEFAULT_FILE) : file);
  } catch (err) {
    return fail(file, `cannot read it (${String(err.message || err).split('\n')[0]})`);
  }
}

const stripNotes = (block) => Object.fromEntries(Object.entries(block || {}).filter(([k]) => !isNote(k)));

// The thresholds for one scenario under one profile spec, from an already parsed file.
export function selectThresholds(doc, file, scenario, profile) {
  const entry = doc[scenario];
  if (!entry || isNote(scenario)) {
    const known = Object.keys(doc).filter((k) => !isNote(k));
    fail(file, `no entry for scenario "${scenario}" (it has: ${known.join(', ') || 'none'})`);
  }
  return { ...stripNotes(entry.default), ...stripNotes(entry[profile]) };
}

// Always-true thresholds that make k6 report a sub-metric.
export const OBSERVE_BY_TYPE = { trend: 'max>=0', rate: 'rate>=0', counter: 'count>=0', gauge: 'value>=0' };
const METRIC_TYPES = {
  op_duration: 'trend', setup_duration: 'trend', server_duration: 'trend', push_latency: 'trend', recovery_duration: 'trend',
  server_rss_growth: 'trend', op_drift: 'trend', op_failed: 'rate', checks: 'rate', push_events: 'counter', reconnects: 'counter',
  server_rss_bytes: 'gauge', server_heap_bytes: 'gauge', op_abandoned: 'counter', silent_vus: 'counter', vus_completing: 'counter',
  // k6's own, observed per step for summary.json (results.js)
  iterations: 'counter', dropped_iterations: 'counter', data_sent: 'counter', data_received: 'counter',
};

export function observerFor(key) {
  const name = key.replace(/\{.*$/, '');
  const type = METRIC_TYPES[name];
  if (!type) throw configError(`cannot observe ${key}: unknown metric ${name}`);
  return OBSERVE_BY_TYPE[type];
}

// options.thresholds for (scenario, profile): the file's gates plus observers.
export function loadThresholds(scenario, profile, observe = []) {
  const file = thresholdsPath();
  const gates = selectThresholds(parseThresholds(readFile(file), file), file, scenario, profile);
  const out = { ...gates };
  for (const key of observe) {
    if (!out[key]) out[key] = [observerFor(key)];
  }
  return out;
}
