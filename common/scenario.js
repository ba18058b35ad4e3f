// A scenario's declaration, built into what k6 runs and what the pack gates on:
// the schedule of lanes and steps (common/schedule.js), the rows of its summary, the
// sub-metrics to observe, and the latency gates derived from the round-trip
// model (common/gates.js). Plain ES module: k6 (scenarios/lib/scenario.js) and
// Node (`k6pack thresholds`, the tests over every spec) build the same thing from
// the specs in scenarios/specs/.
//
// A declaration (scenarios/specs/<name>.js: declare(env) returns it): {
//   name, defaultProfile, lanes, steps (the scenario's own concurrency steps, if any),
//   iterationSeconds(profile) -> expected seconds of one iteration (sizes the steps),
//   laneSeconds(laneName, profile) -> the same per lane, when lanes differ a lot,
//   laneVus(laneName, n, profile) -> the VUs that run a step of concurrency n (default n),
//   minIterations -> iterations per VU every step holds at least (or a function of the profile),
//   lossIterations -> the same under a loss modifier (default LOSS_MIN_ITERATIONS),
//   closeSeconds(profile) -> for iterations that end themselves before their step
//     does: the time they need to close (gracefulStop; default 1.5 iterations),
//   columns, observe (more sub-metrics to report), options (merged into k6 options),
//   level (the scenario's LOAD fallback), mix (lanes at once, at constant arrival rates),
//   verdict: { where: dims } the rows the verdict ranks (default: rows without dims),
//     { unit } what a step's concurrency counts when not VUs (fanout: 'subscribers'),
//   serverTimingEvery: server time from every Nth operation of each VU (common/recording.js;
//     1 where server time is the study's question),
//   hints (for `k6pack report`, kept in summary.json's run.hints),
//   lanesFor(profile) -> the lanes under this profile (default: lanes),
//   slotSeconds(profile) -> every step's slot, graceful stop included (unstable: the
//     events' period), gates(profile, plan, lanes) -> thresholds of the scenario's own,
//   policy: the scenario whose block of thresholds.json applies (default: name; api's
//     soak takes soak's), unrecorded: metrics of that block this scenario does not
//     record, so k6 gets no gate on them (api's soak: server_rss_growth, which the CLI
//     gates from your server's /proc: lib/api/server-sampler.js) }
import {
  deriveGates,
  droppedGates,
  expectationsOf,
  floorSeconds,
  gateThresholds,
  iterationDims,
  k6Ms,
  laneSetup,
} from './gates.js';
import { atTls, laneEntry } from './lanes/catalogue.js';
import { budget, cpuMsOf, LOSS_SAMPLES, linkOf } from './model.js';
import { cellKey } from './results.js';
import { readSettings, settingNames } from './settings.js';
import { machineOf } from './machine.js';
import { laneOfStep, levelName, schedule } from './schedule.js';
import { policyGates, stepGatesOf } from './thresholds.js';
import { recordingOf, serverPartsOf } from './recording.js';

export const rttOf = (profile) => profile.network.rttMs;

// One lane of a scenario, from the lane catalogue (common/lanes/): lane('http_keepalive')
// is tagged with the lane's transport and TLS (transport:http-keepalive, tls:false) and
// its variant, if any, and runs the scenario file's one exec, runLane (scenarios/lib/
// scenario.js dispatch: the client of the lane's family).
// more: { tls (the scenario's TLS: a kept HTTP/1.1 lane becomes http2 over it,
// common/lanes/catalogue.js atTls), transport (with tls: as `run api`'s discovery chose
// them for your endpoint), on (a lane of the scenario's own, such as
// serialization's `typed`, runs on this catalogue lane's transport and TLS), setups: true
// (gate the set-up phases its client measures apart: ws_upgrade, ws_init, grpc_connect;
// or a list of them),
// exec (another exported function, for a lane outside the catalogue), tags (more tags), dims, model(dims, link) (common/gates.js), vuCheck (every
// VU must record an outcome in every step: scenarios/lib/silent-vus.js), opsPerIteration
// (operations of each dim an iteration runs, default 1), session: { ops } (under an
// open workload an iteration opens a socket for `ops` operations), iterationSeconds,
// rate, timeUnit, maxVUs }.
export const LANE_EXEC = 'runLane';
export function lane(name, more = {}) {
  const { tags = {}, tls, transport, on, setups, ...rest } = more;
  const entry = laneEntry(on ?? name);
  const at = transport ? { transport, tls } : tls === undefined ? entry : atTls(entry, tls);
  return {
    name,
    family: entry.family,
    ...(entry.protocol ? { protocol: entry.protocol } : {}),
    exec: LANE_EXEC,
    tags: {
      transport: at.transport,
      tls: String(at.tls),
      ...(entry.variant ? { variant: entry.variant } : {}),
      ...tags,
    },
    ...(setups ? { setups: setups === true ? entry.setups : setups } : {}),
    ...rest,
  };
}

// Seconds to move `bytes` at a profile's rate (kbit/s), 0 when unlimited.
export function transferSeconds(profile, bytes, direction = 'down') {
  const kbps = direction === 'down' ? profile.network.downKbps : profile.network.upKbps;
  return kbps ? (bytes * 8) / (kbps * 1000) : 0;
}

// Iterations per VU every step holds under a loss modifier (buildScenario; the
// model's medianSpreadMs counts on them).
export const LOSS_MIN_ITERATIONS = LOSS_SAMPLES;

// Seconds one iteration of a lane takes by the round-trip model: its operations'
// medians, one per value of its dims (what an iteration runs through), so steps are
// sized for slow start and loss as the gates are. by: a dim whose values are the
// iteration's operations, the other dims being variants of one (conn: cold or
// warm): the slowest variant of each counts.
export function laneModelSeconds(lane, profile, { by } = {}) {
  const link = linkOf(profile);
  const slowest = new Map();
  (lane.dims || [{}]).forEach((dims, i) => {
    const key = by ? dims[by] : i;
    slowest.set(key, Math.max(slowest.get(key) || 0, expectationsOf(lane, dims, link).p50.ms));
  });
  return [...slowest.values()].reduce((a, b) => a + b, 0) / 1000;
}

// The set-up a lane's kept connection pays once, in its first iteration of a step, by
// the model, in seconds (TCP, TLS, the transport's own round trips): a step of one
// iteration must hold it too. Under 3g a gRPC channel's connect is 0.6 s, and
// serialization's grpc_list step ended inside its last call without it.
export function laneSetupSeconds(lane, profile) {
  if (!lane.tags.transport) return 0;
  return laneSetup(lane, linkOf(profile)).ms / 1000;
}

export const DEFAULT_COLUMNS = [
  { title: 'ops', metric: 'op_duration', stat: 'count', unit: '' },
  { title: 'p50', metric: 'op_duration', stat: 'med', unit: 'ms' },
  { title: 'p95', metric: 'op_duration', stat: 'p(95)', unit: 'ms' },
  { title: 'failed', metric: 'op_failed', stat: 'rate', unit: '%' },
  { title: 'server p50', metric: 'server_duration', tags: { part: 'total' }, stat: 'med', unit: 'ms' },
];

// A set-up phase's p50, one per lane (set-up is per connection, not per payload or operation).
export const setupColumn = (title, phase) => ({
  title,
  metric: 'setup_duration',
  tags: { phase },
  stat: 'med',
  unit: 'ms',
  laneOnly: true,
});

const tagText = (tags) =>
  Object.entries(tags)
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
// A column with laneOnly: true ignores the row's dims (set-up is per lane, not per payload).
export const cellKeyOf = (row, c) =>
  cellKey(c.metric, { ...(c.laneOnly ? { scenario: row.tags.scenario } : row.tags), ...(c.tags || {}) });

// The first latency column's metric is the run's latency (op_duration; push_latency for push).
export const latencyMetricOf = (columns) =>
  (columns.find((c) => c.unit === 'ms' && !c.tags) || { metric: 'op_duration' }).metric;

export { cellKey };

// Rows for a plan: every k6 scenario x every dim of its lane.
export function summaryRows(plan, lanes) {
  const rows = [];
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    if (!sc.tags.transport) continue; // helpers such as soak's memory sampler
    const lane = laneOfStep(lanes, name, sc);
    const dims = (lane && lane.dims) || [{}];
    // What tells the lanes apart: transport, TLS, variant, and a lane's executor
    // (serialization) or resolution strategy (compound-vs-parallel).
    const label = [sc.tags.transport, `tls=${sc.tags.tls}`, sc.tags.variant, sc.tags.executor, sc.tags.resolve]
      .filter(Boolean)
      .join(' ');
    for (const dim of dims) {
      rows.push({
        label: [label, tagText(dim)].filter(Boolean).join(' '),
        step: sc.tags.step,
        tags: { scenario: name, ...dim },
      });
    }
  }
  return rows;
}

export function observeKeys(rows, columns = DEFAULT_COLUMNS) {
  const keys = new Set();
  for (const row of rows) for (const c of columns) keys.add(cellKeyOf(row, c));
  return [...keys];
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
    for (const metric of ['op_duration', 'op_failed'])
      keys.push(`${metric}{scenario:${name}}`, `${metric}{transport:${transport},tls:${tls}}`);
    for (const metric of [latencyMetric, 'iterations', 'dropped_iterations', 'data_sent', 'data_received'])
      keys.push(`${metric}{scenario:${name}}`);
  }
  return [...new Set(keys)];
}

// decl: a declaration; profile: resolveProfile's result; settings: the run's settings
// (common/settings.js readSettings, made once where the run begins: k6's init context or
// the CLI; an environment given instead is read here); policy: parsePolicy's result. -> { name, profile, plan, lanes, rows,
// columns, latencyMetric, observers, gates, thresholds, recording }: thresholds is
// options.thresholds but for the observers (k6's side adds them: they need metric types).
export function buildScenario(decl, profile, env, policy) {
  const settings = readSettings(env);
  const iterationSeconds = decl.iterationSeconds ? decl.iterationSeconds(profile) : 0;
  const link = linkOf(profile);
  const machine = machineOf(settings);
  // LANES=ws,http2 runs only those lanes (names as the scenario's summary shows them). A lane
  // declared once per setting (mobile's ws_t15, its `base` ws) goes by its own name or its
  // base's: LANES=ws runs it at every T.
  const declared = decl.lanesFor ? decl.lanesFor(profile) : decl.lanes;
  const measured = declared.filter((l) => l.tags.transport);
  const names = measured.map((l) => l.name);
  const bases = [...new Set(measured.map((l) => l.base).filter((b) => b && !names.includes(b)))];
  const only = settingNames(settings, 'LANES', names, [...bases, ...names]);
  const lanes = declared
    .filter((l) => !l.tags.transport || only.includes(l.name) || (l.base && only.includes(l.base)))
    .map((l) => ({
      ...l,
      ...(decl.laneSeconds ? { iterationSeconds: decl.laneSeconds(l.name, profile) } : {}),
      ...(decl.laneVus ? { vus: (n) => decl.laneVus(l.name, n, profile) } : {}),
      openSeconds: modelIterationSeconds(l, link),
      openCpuSeconds: modelIterationSeconds(l, link, { cpuOnly: true }),
      openWorstSeconds: worstIterationSeconds(l, link, policy.latency, machine),
    }));
  const closeSeconds = decl.closeSeconds ? decl.closeSeconds(profile) : undefined;
  const level = levelName(settings, decl.level || 'ci');
  // Under loss, a step's median needs a few operations to stand on: one in 10 or so
  // waits for a retransmission, and the median of one or two is a coin toss.
  // A scenario whose one iteration holds many operations (fanout: a step's events)
  // says how many iterations it needs under loss (decl.lossIterations).
  const own = typeof decl.minIterations === 'function' ? decl.minIterations(profile) : decl.minIterations || 0;
  const lossIterations = decl.lossIterations ?? LOSS_MIN_ITERATIONS;
  const minIterations = Math.max(own, linkOf(profile).loss ? lossIterations : 0);
  const plan = schedule(
    lanes,
    {
      iterationSeconds,
      closeSeconds,
      minIterations,
      steps: decl.steps,
      slotSeconds: decl.slotSeconds ? decl.slotSeconds(profile) : 0,
      mix: decl.mix,
      open: decl.open,
      machine,
      rttMs: link.R,
      noDelayBudget: decl.noDelayBudget,
      // The seconds a step of n VUs needs for its gates' floors (the gate's level sizes its steps by them).
      floorSeconds: (l, n, which) => floorSeconds(l, link, policy.latency, machine, n, which, profile),
    },
    level,
    settings,
  );
  // The profile tags go on every k6 scenario too: a command-line --tag (the
  // k6-operator always passes one) replaces options.tags, not scenario tags.
  for (const sc of Object.values(plan.scenarios)) sc.tags = { profile: profile.name, ...sc.tags };
  const columns = decl.columns || DEFAULT_COLUMNS;
  const latencyMetric = latencyMetricOf(columns);
  const rows = summaryRows(plan, lanes);
  const reported = [...observeKeys(rows, columns), ...(decl.observe || [])];
  // What the clients record (common/recording.js): the server-timing parts are the ones
  // the scenario reports; METRICS=lean records neither server time nor set-up phases,
  // so it neither gates nor observes them.
  const recording = recordingOf(settings, {
    serverTimingEvery: decl.serverTimingEvery,
    serverParts: serverPartsOf(reported),
  });
  const recorded = (key) => recording.metrics !== 'lean' || !/^(server_duration|setup_duration)(\{|$)/.test(key);
  const policyName = decl.policy || decl.name;
  const gates = deriveGates({
    policy,
    scenario: policyName,
    profile,
    plan,
    lanes,
    rows,
    latencyMetric,
    unit: decl.verdict?.unit,
    machine,
  }).filter((g) => recorded(g.key));
  const unrecorded = new Set(decl.unrecorded || []);
  const thresholds = Object.fromEntries(
    Object.entries({
      ...policyGates(policy, policyName, profile.name),
      ...gateThresholds(gates),
      ...droppedGates(policy, plan),
      ...stepGates(policy, policyName, plan),
      ...(decl.gates ? decl.gates(profile, plan, lanes) : {}),
    }).filter(([key]) => !unrecorded.has(key.replace(/\{.*$/, ''))),
  );
  // Keys to report without gating them (a key with a gate is reported anyway).
  const observers = [...new Set([...reported, ...laneKeys(plan, latencyMetric)])].filter(
    (k) => !thresholds[k] && recorded(k),
  );
  return {
    name: decl.name,
    profile,
    machine,
    plan,
    lanes,
    rows,
    columns,
    latencyMetric,
    observers,
    gates,
    thresholds,
    recording,
  };
}

// The policy's stepGates on every step of the plan: <metric>{scenario:<lane>_<step>}.
function stepGates(policy, scenario, plan) {
  const gates = {};
  const own = Object.entries(stepGatesOf(policy, scenario));
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    if (!sc.tags.transport) continue;
    for (const [metric, list] of own) gates[cellKey(metric, { scenario: name })] = list;
  }
  return gates;
}

// A call's expected time with a margin: the model's median (common/gates.js) x 1.2
// + 25 ms. A lane whose calls end before their step does (scenarios/lib/fit.js)
// starts one only if this fits in what is left of the step, and its plan sizes its
// steps by the same numbers, so gracefulStop need not cover a whole iteration.
export function callMs(lane, dims, link) {
  return expectationsOf(lane, dims, link).p50.ms * 1.2 + 25;
}

// One iteration of a lane under the model, in seconds: what an open step's rate is a
// share of. An iteration runs each of the lane's dims once (a kept connection's are
// warm); a session lane (a WebSocket for \`session.ops\` operations) also opens its socket.
// cpuOnly: the CPU part of it alone (the server's, k6's: what n connections share the
// machine's cores for; common/schedule.js openStep caps a step's rate by it).
function modelIterationSeconds(lane, link, { cpuOnly = false } = {}) {
  if (!lane.tags.transport) return 0;
  const ms = (e) => (cpuOnly ? cpuMsOf(e) : e.ms);
  const opMs =
    (lane.opsPerIteration || 1) *
    iterationDims(lane).reduce((s, d) => s + ms(expectationsOf(lane, d, link).p50) + k6Ms(lane, d, link), 0);
  if (!lane.session) return opMs / 1000;
  const setup = ms(laneSetup(lane, link));
  return (setup + lane.session.ops * opMs) / 1000;
}

// The longest one iteration of a lane may take while its open step keeps up, in seconds,
// as a function of the step's iterations in flight (what sizes the step's VU pool:
// common/schedule.js openStep). Every operation of the iteration at its p95 budget
// (common/model.js budget, as its p95 gate has it but for overrides): the model's tail
// operation, which for a lane that keeps its connection is the connection's first,
// paying its set-up (TCP, and TLS where the lane has it), within the policy's p95
// margins and the step's queueing allowance; a session lane's socket set-up too, at
// the same margins. An iteration that outlives this is one its step's p95 gate does not
// accept either: when it keeps the pool full and arrivals are dropped, the step fell behind.
function worstIterationSeconds(lane, link, latency, machine) {
  if (!lane.tags.transport) return () => 0;
  const dims = iterationDims(lane);
  return (inFlight) => {
    const p95 = (e) => budget(latency, link, e, inFlight, { machine }).p95;
    const opMs =
      (lane.opsPerIteration || 1) *
      dims.reduce((s, d) => s + p95(expectationsOf(lane, d, link)) + k6Ms(lane, d, link), 0);
    if (!lane.session) return opMs / 1000;
    const setup = laneSetup(lane, link);
    return (p95({ p50: setup, p95: setup }) + lane.session.ops * opMs) / 1000;
  };
}
