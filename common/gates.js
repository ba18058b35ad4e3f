// Latency gates derived from the round-trip model (common/model.js) and the policy
// (thresholds.json, common/thresholds.js): every row of a scenario's plan (a lane
// at one concurrency step, and one value of its dims) gets a p50 and a p95 budget,
// and every set-up phase a lane measures gets a p50 budget. They are ordinary k6
// thresholds, so plain `k6 run` exits 99 by itself; `k6pack thresholds` prints them
// with the model term behind each. Plain ES module (k6 and Node).
import {
  budget,
  contentionMs,
  FRESH,
  K6_BYTE_MS,
  linkOf,
  measuredPhases,
  operation,
  REFERENCE_MACHINE,
  setupOnly,
  setupPhases,
} from './model.js';
import { cellKey as keyOf } from './results.js';
import { LEVELS, laneOfStep } from './schedule.js';
import { overridesFor } from './thresholds.js';

// What one row costs under the model: { p50, p95 }, each operation()'s result.
// lane.model(dims, link, step) gives the operation: { conn, rounds, reqBytes, ... } or
// { p50: {...}, p95: {...} } when the tail is another operation. conn 'mixed' (the
// default for transports that keep their connection): the median operation is warm,
// the tail pays the connection's set-up (a VU's first operation opens it).
// step: { n } the row's step (its concurrency: VUs, or what the lane counts, such
// as fanout's subscribers), for a model that depends on it.
export function expectationsOf(lane, dims, link, step = { n: 1 }) {
  const base = { transport: lane.tags.transport, tls: lane.tags.tls === 'true' };
  const spec = lane.model ? lane.model(dims, link, step) : {};
  if (spec.p50)
    return {
      p50: operation(link, { ...base, ...spec.p50 }),
      p95: operation(link, { ...base, ...(spec.p95 || spec.p50) }),
    };
  const conn = spec.conn || (FRESH.has(base.transport) ? 'cold' : 'mixed');
  if (conn === 'mixed') {
    // The tail is the cold operation, unless the warm one is slower (a long transfer on
    // a lossy link: a kept connection's window sits at the loss sawtooth's mean, a new
    // one's slow start runs up until its first loss).
    const warm = operation(link, { ...base, ...spec, conn: 'warm' });
    const cold = operation(link, { ...base, ...spec, conn: 'cold' });
    return { p50: warm, p95: warm.ms + (warm.tailMs || 0) > cold.ms + (cold.tailMs || 0) ? warm : cold };
  }
  const e = operation(link, { ...base, ...spec, conn });
  return { p50: e, p95: e };
}

// The budgets an override changes, and its reasons.
function applyOverrides(b, overrides) {
  const out = { ...b };
  for (const o of overrides) {
    if (o.plusMs) {
      out.p50 += o.plusMs.p50;
      out.p95 += o.plusMs.p95;
    }
    if (o.p50Ms !== undefined) out.p50 = o.p50Ms;
    if (o.p95Ms !== undefined) out.p95 = o.p95Ms;
  }
  return out;
}

// The floors under a gated percentile: the operations a row's step must hold for its p50
// or p95 to be gated at all (docs/thresholds.md#sample-floors). A step's median of n draws
// lies, 90 % of the time, between the draws of rank n/2 -/+ 0.82 sqrt(n) (binomial): at 20
// between the 32nd and 68th percentiles of the operation's time, at 5 anywhere from its
// 13th to its 87th, which is how a cold c4 row's p50 of 4 operations (68 ms against 65)
// and study 001's lossy rows (p50 of 4-5 operations, a retransmission in two of them)
// failed on unchanged code. A p95 of fewer than 100 draws is one of its top 5 alone: a
// single stall is the row's p95. Below a floor the percentile is not gated, and
// `k6pack thresholds` says so for every row.
export const SAMPLE_FLOORS = { p50: 20, p95: 100 };
// Whether a percentile (which: 'p50' or 'p95') of `samples` operations is too thin to judge:
// the gate's rule, which compare (lib/report/compare.js) applies to a recorded row too.
export const belowFloor = (which, samples) => samples < SAMPLE_FLOORS[which];
// A poll's wait is uniform over its interval, and a step's pollers start together, so
// their deliveries share a few phases: the median is any of them (fanout's 100 polling
// subscribers: 203-284 ms p50 over five clean gates under lan, 2026-11-26). Gated at the tail.
const PHASE_BOUND = new Set(['http-poll']);
const TIME_UNIT_SECONDS = { '1s': 1, '1m': 60 };

// The operations a row records in its step, at least, while its operations keep within
// their p50 budgets (slower, and the row fails its gate anyway): what its gated
// percentiles rest on, whatever the machine's speed. lane.samples(dims, { durationMs,
// vus, sc, profile }) when the spec knows better (fan-out and push count events, not operations);
// else each VU runs iterations of iterationMs (slowIterationMs) after leadMs (stepLeadMs:
// its connection's set-up), its first always; an open step's arrivals
// are its iterations (a session lane's each opens a socket for session.ops operations).
// A kept connection's cold row is its connections' first operations: one a VU (an open
// step's pool). Infinity where the plan tells nothing (a test's hand-made lane).
export function rowSamples(lane, sc, durationMs, vus, dims = {}, { iterationMs = 0, leadMs = 0, profile } = {}) {
  if (lane.samples) return lane.samples(dims, { durationMs, vus, sc, profile });
  const seconds = (durationMs || 0) / 1000;
  const kept = !FRESH.has(lane.tags.transport);
  const keptCold = kept && dims.conn === 'cold';
  const perIteration = lane.opsPerIteration || 1;
  if (sc.executor === 'constant-arrival-rate') {
    const arrivals = (sc.rate / (TIME_UNIT_SECONDS[sc.timeUnit] || 1)) * seconds;
    const pool = sc.preAllocatedVUs || 1;
    // With under 2 arrivals a VU, a kept lane's median is a first (cold) operation (http2
    // under 3g at 50 %: 928 ms, its cold operation's 3 R): its p50 is not gated.
    if (keptCold) return Math.min(arrivals, pool);
    if (kept && !lane.session && arrivals / pool < 2) return Math.min(1, arrivals);
    return arrivals * perIteration * (lane.session?.ops || 1);
  }
  const iterationSeconds = iterationMs / 1000;
  let perVu;
  if (sc.executor === 'shared-iterations') perVu = sc.iterations / Math.max(1, sc.vus || vus);
  else if (sc.executor === 'constant-vus' && iterationSeconds && seconds)
    perVu = Math.max(1, Math.floor((seconds - leadMs / 1000) / iterationSeconds));
  else return Infinity;
  const VUs = sc.vus ?? vus;
  if (keptCold) return VUs * (lane.session || lane.coldEachIteration ? perVu : 1);
  return Math.floor(VUs * perVu * perIteration);
}

// k6's own time per operation beyond the model (building, recording, checking:
// bench/overhead.js), and per byte it receives (common/model.js K6_BYTE_MS). They
// matter under lan, where the network costs nothing.
export const K6_OP_MS = 0.2;
export const k6Ms = (lane, d, link) => K6_OP_MS + K6_BYTE_MS * ((lane.model && lane.model(d, link).resBytes) || 0);

// The operations of one iteration of a lane: each of its dims once (a kept connection's
// are warm: a dim that is the cold variant of another is left out, unless all are, or
// the lane opens its connections every iteration: coldEachIteration).
export const iterationDims = (lane) =>
  (lane.dims || [{}]).filter(
    (d) => d.conn !== 'cold' || lane.coldEachIteration || (lane.dims || []).every((x) => x.conn === 'cold'),
  );

// One iteration of a lane at a step of n VUs, in ms, for counting a step's operations
// (rowSamples) and sizing a step for them (floorSeconds): each dim opsPerIteration times,
// each at its p50 budget (the model's median with the policy's margins, on this machine,
// shared with the step's other operations), plus k6's own time. A step whose operations
// take longer fails its p50 gates anyway; one that passes them holds at least this
// many (the model alone is no bound: it leaves out what the margins cover, such as a
// 1 MB JSON answer's encoding under lan, which took 170 ms an iteration, not 2).
export function slowIterationMs(lane, link, lat, machine = REFERENCE_MACHINE, n = 1) {
  const atOnce = lane.atOnce ?? n;
  const opMs = (e) => budget(lat, link, e, n, { machine, transport: lane.tags.transport, atOnce }).p50;
  return (
    (lane.opsPerIteration || 1) *
    iterationDims(lane).reduce((sum, d) => sum + opMs(expectationsOf(lane, d, link, { n })) + k6Ms(lane, d, link), 0)
  );
}

// What a VU's step spends before its first counted operation, ms: a kept connection's
// set-up (TCP, TLS, a WebSocket's upgrade and init) and a round trip more (a kept lane's
// step first closes the connection the lane before left open: scenarios/lib/http.js).
// A fresh lane pays its set-up in every operation, which its model already counts.
export function stepLeadMs(lane, link) {
  if (FRESH.has(lane.tags.transport)) return 0;
  return laneSetup(lane, link).ms + link.R;
}

// The set-up a new connection of the lane pays, by the model (TCP, TLS, the
// transport's own round trips): common/model.js setupOnly of the lane's phases.
export function laneSetup(lane, link) {
  return setupOnly(link, setupPhases(lane.tags.transport, lane.tags.tls === 'true'));
}

// The seconds a closed step of n VUs needs for its rows' `which` percentile to rest on
// SAMPLE_FLOORS[which] operations (a kept lane's warm rows; its cold row never does);
// for a lane that counts its own (lane.samples: push's events), the shortest that does.
export function floorSeconds(lane, link, lat, machine, n, which = 'p50', profile = undefined) {
  if (lane.samples) {
    // A lane that counts its own (push's events): the shortest step, to a tenth of a second, that holds them.
    for (let tenths = 1; tenths <= 600; tenths++)
      if (lane.samples({}, { durationMs: tenths * 100, vus: n, sc: {}, profile }) >= SAMPLE_FLOORS[which])
        return tenths / 10;
    return Infinity;
  }
  const iterations = Math.ceil(SAMPLE_FLOORS[which] / (n * (lane.opsPerIteration || 1)));
  return (iterations * slowIterationMs(lane, link, lat, machine, n) + stepLeadMs(lane, link)) / 1000;
}

// What one percentile of a row gets: gated, or why not. samples: rowSamples'. plumbing:
// a level whose runs check the pack's plumbing, not a server's speed (smoke: tests, a
// step of seconds on one VU), gates every row, a thin median at its tail's budget.
function percentileVerdict(which, samples, lane, plumbing = false) {
  if (which === 'p50' && PHASE_BOUND.has(lane.tags.transport))
    return plumbing
      ? { gated: true, atTail: true, why: "a poll's phase: p50 at the tail's budget" }
      : { gated: false, why: "a poll's phase: its median is any of a few phases" };
  if (belowFloor(which, samples) && plumbing)
    return which === 'p50'
      ? {
          gated: true,
          atTail: true,
          why: `${fmtSamples(samples)} a step, under the floor of ${SAMPLE_FLOORS.p50}: p50 at the tail's budget`,
        }
      : { gated: true, why: null };
  if (belowFloor(which, samples))
    return {
      gated: false,
      why: `${fmtSamples(samples)} operation${samples === 1 ? '' : 's'} a step, under the ${which} floor of ${SAMPLE_FLOORS[which]}`,
    };
  return { gated: true, why: null };
}
const fmtSamples = (n) => (n === Infinity ? 'unbounded' : String(Math.floor(n)));

// Every latency gate of a plan. ctx: { policy, scenario, profile (resolved), plan,
// lanes, rows (summaryRows'), latencyMetric, unit (what a step counts: VUs, or
// fanout's subscribers), machine (common/machine.js; default: the reference machine) }.
// -> [{ key, metric, which ('op' | phase), lane, step, vus, dims, expected: { p50, p95 },
//       budget: { p50, p95 }, overrides: [{ reason, ... }], thresholds: [...] }]
export function deriveGates({ policy, scenario, profile, plan, lanes, rows, latencyMetric, unit = 'VUs', machine }) {
  const link = linkOf(profile);
  const lat = policy.latency;
  const gates = [];
  const laneOf = (name) => laneOfStep(lanes, name, plan.scenarios[name]);
  const seenSetup = new Set();
  const plumbing = Boolean(LEVELS[plan.level]?.plumbing);
  const budgets = rows.map((row) => rowBudget(row));
  // One iteration of each k6 scenario (slowIterationMs): what its rows' operations are counted by.
  const iterationMs = {};
  for (const r of budgets)
    if (r && iterationMs[r.name] === undefined)
      iterationMs[r.name] = slowIterationMs(r.lane, link, lat, machine, r.vus);
  function rowBudget(row) {
    const { scenario: name, ...dims } = row.tags;
    const sc = plan.scenarios[name];
    const lane = laneOf(name);
    if (!lane) return null;
    const vus = plan.concurrency?.[name] ?? sc.vus ?? 1;
    const rowTags = { ...sc.tags, ...dims, lane: lane.name, profile: profile.name, network: profile.network.name };
    const expected = expectationsOf(lane, dims, link, { n: vus });
    const overrides = overridesFor(policy, scenario, rowTags, latencyMetric);
    // The operations sharing the cores: a step's VUs, or what the lane says (fanout: 1).
    const atOnce = lane.atOnce ?? vus;
    const raw = budget(lat, link, expected, vus, { machine, transport: lane.tags.transport, atOnce });
    return { name, dims, sc, lane, vus, rowTags, expected, overrides, atOnce, raw, b0: applyOverrides(raw, overrides) };
  }
  for (const [i, r] of budgets.entries()) {
    if (!r) continue;
    const row = rows[i];
    const { name, dims, sc, lane, vus, rowTags, expected, overrides, atOnce, raw, b0 } = r;
    // What each percentile rests on, and whether it is gated (SAMPLE_FLOORS).
    const lead = stepLeadMs(lane, link);
    const counting = { iterationMs: iterationMs[name], leadMs: lead, profile };
    const samples = rowSamples(lane, sc, plan.durations?.[name], vus, dims, counting);
    const verdicts = {
      p50: percentileVerdict('p50', samples, lane, plumbing),
      p95: percentileVerdict('p95', samples, lane, plumbing),
    };
    // A thin median at its tail's budget; an override's budget still wins (a test's impossible one).
    const b1 = verdicts.p50.atTail ? applyOverrides({ ...raw, p50: Math.max(raw.p50, raw.p95) }, overrides) : b0;
    gates.push({
      key: keyOf(latencyMetric, row.tags),
      metric: latencyMetric,
      which: 'op',
      lane: lane.name,
      transport: lane.tags.transport,
      variant: lane.tags.variant,
      step: sc.tags.step,
      vus,
      unit,
      dims,
      expected,
      budget: gatedBudget(b1, verdicts),
      // The model's budgets, gated or not (the lint's margins).
      modelBudget: b0,
      atOnce,
      contentionMs: contentionMs(expected.p50, atOnce, machine),
      samples,
      verdicts,
      overrides,
      thresholds: ['p50', 'p95'].filter((w) => verdicts[w].gated).map((w) => `p(${w.slice(1)})<${b1[w]}`),
    });
    // The set-up a lane measures apart (setup_duration{phase}), once per step.
    for (const phase of lane.setups || []) {
      const key = keyOf('setup_duration', { scenario: name, phase });
      if (seenSetup.has(key)) continue;
      seenSetup.add(key);
      const e = setupOnly(link, measuredPhases(phase, lane.tags.tls === 'true'));
      const setupOverrides = overridesFor(policy, scenario, { ...rowTags, phase }, 'setup_duration');
      const sraw = budget(lat, link, { p50: e, p95: e }, vus, { machine, transport: lane.tags.transport });
      const sb0 = applyOverrides(sraw, setupOverrides);
      // A step opens one connection a VU (a kept lane's) or one an operation (a fresh one's).
      const setupSamples = FRESH.has(lane.tags.transport)
        ? rowSamples(lane, sc, plan.durations?.[name], vus, {}, counting)
        : rowSamples(lane, sc, plan.durations?.[name], vus, { conn: 'cold' }, counting);
      const setupVerdicts = { p50: percentileVerdict('p50', setupSamples, { tags: {} }, plumbing) };
      const sb1 = setupVerdicts.p50.atTail
        ? applyOverrides({ ...sraw, p50: Math.max(sraw.p50, sraw.p95) }, setupOverrides)
        : sb0;
      gates.push({
        key,
        metric: 'setup_duration',
        which: phase,
        lane: lane.name,
        transport: lane.tags.transport,
        variant: lane.tags.variant,
        step: sc.tags.step,
        vus,
        dims: {},
        expected: { p50: e, p95: e },
        budget: gatedBudget({ ...sb1, p95: null }, setupVerdicts),
        modelBudget: sb0,
        samples: setupSamples,
        verdicts: setupVerdicts,
        overrides: setupOverrides,
        thresholds: setupVerdicts.p50.gated ? [`p(50)<${sb1.p50}`] : [],
      });
    }
  }
  return gates;
}

// { key: [thresholds] } for k6's options.thresholds.
// A row none of whose percentiles is gated has no k6 threshold (its figures are still reported).
export const gateThresholds = (gates) =>
  Object.fromEntries(gates.filter((g) => g.thresholds.length).map((g) => [g.key, g.thresholds]));

// A row's budgets as its thresholds have them: null where the percentile is not gated.
const gatedBudget = (b, verdicts) =>
  Object.fromEntries(['p50', 'p95'].map((w) => [w, verdicts[w]?.gated ? b[w] : null]));

// The most arrivals an open step may drop and still count as keeping up (policy.open,
// thresholds.json, which gives the reasons): a share of its planned arrivals, and never
// fewer than a floor of whole arrivals, so that one drop in a small step (1 % of 36 is
// 0) cannot fail it while a step that falls behind, dropping every arrival its full
// pool cannot take, still does. The one place the rule is computed: the k6 threshold
// below carries it, and the verdict's "held up to" reads that threshold's outcome.
export function droppedLimit(open, planned) {
  const share = open?.droppedShare ?? 0.01;
  const floor = open?.droppedFloor ?? 0;
  return Math.max(Math.floor(planned * share + 1e-9), floor);
}

// An open step's gate on the arrivals it could not start (the VU pool was busy: the
// system fell behind the rate): at most droppedLimit of its planned iterations.
export function droppedGates(policy, plan) {
  const gates = {};
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    if (sc.executor !== 'constant-arrival-rate' || !sc.tags.transport || plan.workload !== 'open') continue;
    const planned = (sc.rate / 60) * (plan.durations[name] / 1000);
    gates[`dropped_iterations{scenario:${name}}`] = [`count<=${droppedLimit(policy.open, planned)}`];
  }
  return gates;
}

// One line per open step, for `k6pack thresholds --workload open`: its arrivals, the VU
// pool sized for them and its dropped-arrivals gate with the rule behind it.
export function describeOpenStep(policy, plan, name) {
  const sc = plan.scenarios[name];
  const pool = plan.pools?.[name];
  const perSecond = sc.rate / 60;
  const planned = perSecond * (plan.durations[name] / 1000);
  const share = policy.open?.droppedShare ?? 0.01;
  const floor = policy.open?.droppedFloor ?? 0;
  const fmt = (x) => (x >= 10 ? String(Math.round(x)) : x.toFixed(1));
  const sized = pool
    ? ` (every iteration at its worst, ${Math.round(pool.worstSeconds * 1000)} ms; ${fmt(pool.inFlight)} in flight at the median)`
    : '';
  return `${name}: ${fmt(perSecond)} arrivals/s for ${plan.durations[name] / 1000} s (${Math.round(planned)}); VU pool ${sc.preAllocatedVUs} pre-allocated${sized}, ${sc.maxVUs} at most; dropped_iterations count<=${droppedLimit(policy.open, planned)} (${share * 100} % of ${Math.round(planned)} is ${fmt(planned * share)}, floor ${floor})`;
}

// One line per gate, for `k6pack thresholds` and the tests: its thresholds, the model
// term behind them, and each percentile that is not gated with the reason.
export function describeGate(g) {
  const e = g.expected.p50;
  const tail =
    g.expected.p95 !== g.expected.p50 ? `; p95 of ${g.expected.p95.formula} = ${g.expected.p95.ms.toFixed(1)} ms` : '';
  const why = g.overrides.length ? `; override: ${g.overrides.map((o) => o.reason).join('; ')}` : '';
  const shared =
    g.contentionMs >= 0.05 ? `; ${g.atOnce} at once share the cores: +${g.contentionMs.toFixed(1)} ms` : '';
  const ungated = Object.entries(g.verdicts || {})
    .filter(([, v]) => v.why)
    .map(([w, v]) => (v.gated ? `; ${v.why}` : `; ${w} not gated: ${v.why}`))
    .join('');
  const head = g.thresholds.length ? g.thresholds.join(' ') : 'not gated';
  return `${g.key} ${head}  (model ${e.formula} = ${e.ms.toFixed(1)} ms${tail}${g.vus > 1 ? `; ${Number.isInteger(g.vus) ? g.vus : g.vus.toFixed(1)} ${g.unit || 'VUs'}` : ''}${shared}${ungated}${why})`;
}
