// What every scenario file shares: the profile, the plan of lanes and steps,
// options (TLS, trend stats, thresholds), setup/teardown around the network
// profile, and the summary. A scenario file then only says what its lanes do:
//
//   const s = defineScenario('ws-vs-http', { defaultProfile: '3g', lanes, iterationSeconds });
//   export const { options, setup, teardown, handleSummary } = s;
import exec from 'k6/execution';
import http from 'k6/http';
import { networkProfile, profileTags, toxiproxyUrl } from './network.js';
import { levelName, plan as buildPlan } from './load.js';
import { trackSteps } from './progress.js';
import { prepareNetwork, releaseNetwork } from './segments.js';
import { settleSilentVus, silentVuNotes, watchedKeys, watchVus } from './silent-vus.js';
import { DEFAULT_COLUMNS, latencyMetricOf, makeHandleSummary, observeKeys, summaryRows } from './summary.js';
import { DEFAULT_FILE, loadThresholds, thresholdsPath } from './thresholds.js';

export const rttOf = (profile) => profile.network.rttMs;

// One lane of a scenario: lane('http_keepalive', 'http-keepalive', false) runs
// the scenario's exported httpKeepalive() tagged transport:http-keepalive, tls:false.
// more: { exec, tags (more tags), dims, iterationSeconds, rate, timeUnit, maxVUs,
//   vuCheck (every VU must record an operation in every step: silent-vus.js) }.
export function lane(name, transport, tls, more = {}) {
  const { tags = {}, ...rest } = more;
  return {
    name,
    exec: name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()),
    tags: { transport, tls: String(tls), ...tags },
    ...rest,
  };
}

// Seconds to move `bytes` at a profile's rate (kbit/s), 0 when unlimited.
export function transferSeconds(profile, bytes, direction = 'down') {
  const kbps = direction === 'down' ? profile.network.downKbps : profile.network.upKbps;
  return kbps ? (bytes * 8) / (kbps * 1000) : 0;
}

// name: the key in thresholds.json and in result file names.
// spec: {
//   defaultProfile, lanes, steps (the scenario's own concurrency steps, if any),
//   iterationSeconds(profile) -> expected seconds of one iteration (sizes the steps),
//   laneSeconds(laneName, profile) -> the same per lane, when lanes differ a lot,
//   minIterations -> iterations per VU every step holds at least (more than the
//     level's when an iteration is a single operation: see ws-vs-http),
//   closeSeconds(profile) -> for iterations that end themselves before their step
//     does: the time they need to close (gracefulStop; default 1.5 iterations),
//   columns, notes(data) -> extra summary lines, observe (more sub-metrics to report),
//   options (merged into k6 options),
//   setup(data) -> extra setup data (after the network profile is applied),
//   beforeNetwork() -> setup data gathered before the profile applies (e.g. clock calibration),
//   level (default LOAD fallback for this scenario), mix (lanes at once, at constant arrival rates),
//   hints (for `k6pack report`, kept in summary.json's run.hints: e.g. sizes: { dim, bytes, where }) }
export function defineScenario(name, spec) {
  const profile = networkProfile(spec.defaultProfile);
  const iterationSeconds = spec.iterationSeconds ? spec.iterationSeconds(profile) : 0;
  const lanes = spec.laneSeconds ? spec.lanes.map((l) => ({ ...l, iterationSeconds: spec.laneSeconds(l.name, profile) })) : spec.lanes;
  const closeSeconds = spec.closeSeconds ? spec.closeSeconds(profile) : undefined;
  const plan = buildPlan(lanes, { iterationSeconds, closeSeconds, minIterations: spec.minIterations, steps: spec.steps, mix: spec.mix }, levelFor(spec));
  const columns = spec.columns || DEFAULT_COLUMNS;
  const rows = summaryRows(plan, lanes);
  watchVus(plan, lanes);
  const observers = [...observeKeys(rows, columns), ...laneKeys(plan, latencyMetricOf(columns)), ...watchedKeys(), ...(spec.observe || [])];
  trackSteps(plan, `${name} (${profile.name})`);
  // The profile tags go on every k6 scenario too: a command-line --tag (the
  // k6-operator always passes one) replaces options.tags, not scenario tags.
  for (const sc of Object.values(plan.scenarios)) sc.tags = { ...profileTags(profile), ...sc.tags };
  const options = {
    scenarios: plan.scenarios,
    thresholds: loadThresholds(name, profile.name, observers),
    // The servers use a self-signed certificate; this covers https, wss and gRPC over TLS.
    insecureSkipTLSVerify: true,
    summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
    tags: profileTags(profile),
    setupTimeout: '60s',
    teardownTimeout: '30s',
    ...(spec.options || {}),
  };

  // Under --execution-segment only one instance applies and clears the profile (segments.js).
  function setup() {
    const k6pack = runMeta();
    const before = spec.beforeNetwork ? spec.beforeNetwork() : {};
    const network = prepareNetwork(profile);
    const extra = spec.setup ? spec.setup() : {};
    // The scenarios' startTimes count from here (silent-vus.js).
    return { network, ...before, ...extra, k6pack, stepsFrom: Date.now() };
  }

  function teardown(data) {
    settleSilentVus(data && data.stepsFrom);
    releaseNetwork();
  }

  const handleSummary = makeHandleSummary({
    scenario: name,
    profile,
    level: plan.level,
    plan,
    hints: spec.hints,
    rows,
    columns,
    observers,
    notes: (data) => [...(spec.notes ? spec.notes(data) : []), ...silentVuNotes(data)],
    thresholdsFile: thresholdsPath() === DEFAULT_FILE ? 'thresholds.json' : thresholdsPath(),
  });

  return { profile, plan, options, setup, teardown, handleSummary, rows };
}

// Every lane at every step, and every transport, whatever the rows show: the
// summary JSON always has op_duration/op_failed{scenario:<lane>_<step>} and
// op_duration/op_failed{transport:<t>,tls:<bool>}, the latency metric per step,
// and k6's iterations, dropped_iterations, data_sent, data_received per step.
function laneKeys(plan, latencyMetric) {
  const keys = [];
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    if (!sc.tags.transport) continue;
    const { transport, tls } = sc.tags;
    for (const metric of ['op_duration', 'op_failed']) keys.push(`${metric}{scenario:${name}}`, `${metric}{transport:${transport},tls:${tls}}`);
    for (const metric of [latencyMetric, 'iterations', 'dropped_iterations', 'data_sent', 'data_received']) keys.push(`${metric}{scenario:${name}}`);
  }
  return [...new Set(keys)];
}

// What summary.json says about the run that only setup() can see: k6's version
// (from the User-Agent k6 sends by default, 'Grafana k6/1.8.1', on one request to
// Toxiproxy's /version), the execution segment, the start.
function runMeta() {
  const o = exec.test.options;
  const res = http.get(`${toxiproxyUrl()}/version`, { timeout: '5s', tags: { name: 'toxiproxy', k6pack: 'control' } });
  const ua = /k6\/([0-9][^\s)]*)/.exec(String((res.request && res.request.headers['User-Agent']) || ''));
  return {
    k6Version: __ENV.K6PACK_K6_VERSION || (ua ? ua[1] : null),
    executionSegment: o.executionSegment || null,
    executionSegmentSequence: o.executionSegmentSequence || null,
    startedAt: new Date().toISOString(),
  };
}

function levelFor(spec) {
  return levelName(__ENV, spec.level || 'ci');
}
