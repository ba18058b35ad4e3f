// Latency gates derived from the round-trip model (common/model.js) and the policy
// (thresholds.json, common/thresholds.js): every row of a scenario's plan (a lane
// at one concurrency step, and one value of its dims) gets a p50 and a p95 budget,
// and every set-up phase a lane measures gets a p50 budget. They are ordinary k6
// thresholds, so plain `k6 run` exits 99 by itself; `k6pack thresholds` prints them
// with the model term behind each. Plain ES module (k6 and Node).
import { budget, contentionMs, FRESH, linkOf, measuredPhases, operation, setupOnly } from './model.js';
import { cellKey as keyOf } from './results.js';
import { laneOfStep } from './schedule.js';
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

// The operations a row's step holds at least, for a lane whose iteration runs each of its
// dims once (the plan's laneSeconds: iterationSeconds): the VU's first iteration always,
// more as they fit; Infinity where the plan does not say (many operations a step).
export const MIN_MEDIAN_SAMPLES = 3;
// A poll's wait is uniform over its interval, and a step's pollers start together, so
// their deliveries share a few phases: the median is any of them (fanout's 100 polling
// subscribers: 203-284 ms p50 over five clean gates under lan, 2026-11-26). Gated at the tail.
const PHASE_BOUND = new Set(['http-poll']);
function rowSamples(lane, sc, durationMs, vus) {
  // An open step spreads its arrivals over its pool of VUs, and each VU's first operation on
  // a lane that keeps its connection opens it: with under 2 arrivals a VU, the median is a
  // first one (http2 under 3g at 50 %: 928 ms, its cold operation's 3 R).
  if (
    sc.executor === 'constant-arrival-rate' &&
    durationMs &&
    sc.preAllocatedVUs &&
    !FRESH.has(lane.tags.transport) &&
    !lane.session
  ) {
    const perVu = ((sc.rate / 60) * (durationMs / 1000)) / sc.preAllocatedVUs;
    return perVu < 2 ? 1 : Infinity;
  }
  if (!lane.dims || !lane.iterationSeconds || !durationMs || sc.executor !== 'constant-vus') return Infinity;
  return Math.max(1, Math.floor(durationMs / 1000 / lane.iterationSeconds)) * vus;
}

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
  for (const row of rows) {
    const { scenario: name, ...dims } = row.tags;
    const sc = plan.scenarios[name];
    const lane = laneOf(name);
    if (!lane) continue;
    const vus = plan.concurrency?.[name] ?? sc.vus ?? 1;
    const rowTags = { ...sc.tags, ...dims, lane: lane.name, profile: profile.name, network: profile.network.name };
    const expected = expectationsOf(lane, dims, link, { n: vus });
    const overrides = overridesFor(policy, scenario, rowTags, latencyMetric);
    // The operations sharing the cores: a step's VUs, or what the lane says (fanout: 1).
    const atOnce = lane.atOnce ?? vus;
    const b0 = applyOverrides(
      budget(lat, link, expected, vus, { machine, transport: lane.tags.transport, atOnce }),
      overrides,
    );
    // A row whose step holds fewer than MIN_MEDIAN_SAMPLES operations has no median to gate
    // tighter than its tail: one slow draw of two is half their mean (compound-vs-parallel's
    // etag row under lte: 74 and 136 ms, a p50 of 105 against 105).
    const samples = rowSamples(lane, sc, plan.durations?.[name], vus);
    const few = samples < MIN_MEDIAN_SAMPLES || PHASE_BOUND.has(lane.tags.transport);
    const b = few ? { ...b0, p50: Math.max(b0.p50, b0.p95) } : b0;
    gates.push({
      key: keyOf(latencyMetric, row.tags),
      metric: latencyMetric,
      which: 'op',
      lane: lane.name,
      step: sc.tags.step,
      vus,
      unit,
      dims,
      expected,
      budget: b,
      // The model's budget before a few-samples row's p50 was widened to its tail's.
      modelBudget: b0,
      atOnce,
      contentionMs: contentionMs(expected.p50, atOnce, machine),
      fewSamples: few ? samples : 0, // Infinity: a polling lane (PHASE_BOUND)
      overrides,
      thresholds: [`p(50)<${b.p50}`, `p(95)<${b.p95}`],
    });
    // The set-up a lane measures apart (setup_duration{phase}), once per step.
    for (const phase of lane.setups || []) {
      const key = keyOf('setup_duration', { scenario: name, phase });
      if (seenSetup.has(key)) continue;
      seenSetup.add(key);
      const e = setupOnly(link, measuredPhases(phase, lane.tags.tls === 'true'));
      const setupOverrides = overridesFor(policy, scenario, { ...rowTags, phase }, 'setup_duration');
      const sb0 = applyOverrides(
        budget(lat, link, { p50: e, p95: e }, vus, { machine, transport: lane.tags.transport }),
        setupOverrides,
      );
      // A closed step opens one connection a VU: at c1 and c2 the set-up's median is one or
      // two handshakes, gated at its tail as an operation row is (wss's upgrade under lan at
      // c1, one core busy: 36.4 ms against a p50 budget of 31, 2026-11-27).
      const setupSamples = sc.executor === 'constant-vus' ? vus : Infinity;
      const fewSetups = setupSamples < MIN_MEDIAN_SAMPLES;
      const sb = fewSetups ? { ...sb0, p50: Math.max(sb0.p50, sb0.p95) } : sb0;
      gates.push({
        key,
        metric: 'setup_duration',
        which: phase,
        lane: lane.name,
        step: sc.tags.step,
        vus,
        dims: {},
        expected: { p50: e, p95: e },
        budget: sb,
        modelBudget: sb0,
        fewSamples: fewSetups ? setupSamples : 0,
        overrides: setupOverrides,
        thresholds: [`p(50)<${sb.p50}`],
      });
    }
  }
  return gates;
}

// { key: [thresholds] } for k6's options.thresholds.
export const gateThresholds = (gates) => Object.fromEntries(gates.map((g) => [g.key, g.thresholds]));

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

// One line per gate, for `k6pack thresholds` and the tests.
export function describeGate(g) {
  const e = g.expected.p50;
  const tail =
    g.expected.p95 !== g.expected.p50 ? `; p95 of ${g.expected.p95.formula} = ${g.expected.p95.ms.toFixed(1)} ms` : '';
  const why = g.overrides.length ? `; override: ${g.overrides.map((o) => o.reason).join('; ')}` : '';
  const shared =
    g.contentionMs >= 0.05 ? `; ${g.atOnce} at once share the cores: +${g.contentionMs.toFixed(1)} ms` : '';
  const few =
    g.fewSamples === Infinity
      ? "; a poll's phase: p50 at the tail's budget"
      : g.fewSamples
        ? `; ${g.fewSamples} ${g.metric === 'setup_duration' ? 'connection' : 'operation'}${g.fewSamples === 1 ? '' : 's'} a step at least: p50 at the tail's budget`
        : '';
  return `${g.key} ${g.thresholds.join(' ')}  (model ${e.formula} = ${e.ms.toFixed(1)} ms${tail}${g.vus > 1 ? `; ${Number.isInteger(g.vus) ? g.vus : g.vus.toFixed(1)} ${g.unit || 'VUs'}` : ''}${shared}${few}${why})`;
}
