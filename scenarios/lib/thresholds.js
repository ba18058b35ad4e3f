// The gate's policy file for a k6 run: thresholds.json (or -e THRESHOLDS=path),
// read in the init context with open() and parsed by common/thresholds.js; any
// problem stops k6 before the test with one sentence naming the file.
//
// k6 only reports a sub-metric (metric{tag:value}) that has a threshold, so
// scenarios also pass `observe` keys: they get an always-true threshold and show
// in the summary JSON and in the pack's text summary, without gating anything.
import { configError } from '../../common/env.js';
import { resolveFrom } from '../../common/paths.js';
import { parsePolicy } from '../../common/thresholds.js';
import { ENV } from './config.js';
import { rawSetting } from '../../common/settings.js';

export const DEFAULT_FILE = '../../thresholds.json'; // relative to this module

// Where the file is: THRESHOLDS relative to the directory k6 was started in.
export function thresholdsPath(env = ENV) {
  const p = rawSetting(env, 'THRESHOLDS');
  return p ? resolveFrom(rawSetting(env, 'PWD'), p) : DEFAULT_FILE;
}

// The parsed policy of this run.
export function readPolicy(file = thresholdsPath()) {
  let text;
  try {
    text = open(file === DEFAULT_FILE ? import.meta.resolve(DEFAULT_FILE) : file);
  } catch (err) {
    throw configError(`thresholds file ${file}: cannot read it (${String(err.message || err).split('\n')[0]})`);
  }
  return parsePolicy(text, file);
}

// Always-true thresholds that make k6 report a sub-metric.
export const OBSERVE_BY_TYPE = { trend: 'max>=0', rate: 'rate>=0', counter: 'count>=0', gauge: 'value>=0' };
const METRIC_TYPES = {
  op_duration: 'trend',
  setup_duration: 'trend',
  server_duration: 'trend',
  push_latency: 'trend',
  recovery_duration: 'trend',
  event_recovery: 'trend',
  event_slow: 'rate',
  event_recovered: 'counter',
  delivery_undelivered: 'counter',
  server_rss_growth: 'trend',
  op_drift: 'trend',
  first_event: 'trend',
  event_rate: 'trend',
  op_failed: 'rate',
  checks: 'rate',
  push_events: 'counter',
  reconnects: 'counter',
  server_rss_bytes: 'gauge',
  server_heap_bytes: 'gauge',
  op_abandoned: 'counter',
  silent_vus: 'counter',
  vus_completing: 'counter',
  delivery_latency: 'trend',
  delivery_spread: 'trend',
  delivery_missed: 'counter',
  delivery_duplicates: 'counter',
  // the mobile scenario's radio, from the link's event log (scenarios/mobile.js)
  radio_energy_op: 'trend',
  radio_energy_hour: 'trend',
  radio_on_hour: 'trend',
  radio_state_hour: 'trend',
  radio_promotions: 'counter',
  radio_promotion: 'trend',
  radio_timer: 'trend',
  // k6's own, observed per step for summary.json (results.js)
  iterations: 'counter',
  dropped_iterations: 'counter',
  data_sent: 'counter',
  data_received: 'counter',
};

export function observerFor(key) {
  const name = key.replace(/\{.*$/, '');
  const type = METRIC_TYPES[name];
  if (!type) throw configError(`cannot observe ${key}: unknown metric ${name}`);
  return OBSERVE_BY_TYPE[type];
}

// options.thresholds: the gates plus an observer for every key that has none.
export function withObservers(thresholds, observe) {
  const out = { ...thresholds };
  for (const key of observe) if (!out[key]) out[key] = [observerFor(key)];
  return out;
}
