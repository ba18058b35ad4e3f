// The answer first: what a run says about its transports, in a few sentences that
// open the terminal summary, summary.md and the HTML report.
//
//   3g (R 300 ms) p50 at c1: ws, http2 and http keepalive 305–307 ms; http fresh 612 ms; https fresh 933 ms.
//   Against https fresh: ws, http2 and http keepalive save 626–628 ms (600 ms of it connection
//   set-up by the model: 2 RTT); http fresh saves 321 ms (300 ms of it ...: 1 RTT).
//   Held the budget up to: ws 200 VUs, http2 50 VUs, ... (none: failed at c1)
//
// Computed from a summary.json document (common/results.js): its rows carry the
// model's expectation and their gates' outcome. Plain ES module.

// Lanes are named together when their p50s print the same or lie within 5 % of the
// group's fastest (3g's kept connections: 305 and 307 ms); no absolute floor, so under
// lan 0.6 and 1.2 ms are two figures. Every figure printed for a group is true for each
// of its lanes at the printed precision: one figure when they all print the same, else
// their range (305–307 ms); the same for what a group saves against the slowest.
const SAME = 0.05;
// A step's order: its VUs (c10), its share of the open workload (o90), or 1 (mix).
const stepVus = (step) => (step === 'mix' ? 1 : Number(String(step).replace(/^[co]/, '')) || 1);
const isOpen = (step) => /^o\d+$/.test(step);
const label = (lane) => String(lane).replace(/_/g, ' ');
const num = (ms) => (ms >= 100 ? String(Math.round(ms)) : ms.toFixed(1));
// One figure when every value prints the same, else lowest–highest: true for each.
export function span(values, show = num, unit = ' ms') {
  const lo = show(Math.min(...values));
  const hi = show(Math.max(...values));
  return `${lo === hi ? lo : `${lo}–${hi}`}${unit}`;
}
export const list = (names) =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;

// Items in groups that ran alike (SAME above), lowest first: [{ value, items }], value the
// group's lowest. The verdict's p50 ranking, and scenarios/mobile.js's ranking of its lanes
// by p50 and by energy. show: how a value prints (two that print the same are alike).
export function alikeGroups(items, valueOf, show = num) {
  const groups = [];
  for (const item of [...items].sort((a, b) => valueOf(a) - valueOf(b))) {
    const g = groups.at(-1);
    const v = valueOf(item);
    if (g && (show(v) === show(g.value) || v - g.value <= g.value * SAME)) g.items.push(item);
    else groups.push({ value: v, items: [item] });
  }
  return groups;
}
const matches = (dims, where) => Object.entries(where).every(([k, v]) => String(dims[k]) === String(v));

// The rows the verdict compares: per lane, the rows matching the scenario's
// verdict.where (default: rows without dims; else each lane's first dims).
function candidateRows(doc) {
  const where = doc.run.verdict?.where;
  const rows = doc.rows.filter((r) => r.latency?.count);
  if (where) return rows.filter((r) => matches(r.dims || {}, where));
  const plain = rows.filter((r) => !Object.keys(r.dims || {}).length);
  if (plain.length) return plain;
  const firstDims = {};
  for (const r of rows) firstDims[r.lane] ??= JSON.stringify(r.dims);
  return rows.filter((r) => JSON.stringify(r.dims) === firstDims[r.lane]);
}

// Did every gate of a lane at a step hold? null when the step has no gates or no data.
function stepHeld(doc, lane, step) {
  const rows = doc.rows.filter((r) => r.lane === lane && r.step === step);
  const gated = rows.filter((r) => r.gate);
  if (!gated.length || !rows.some((r) => r.latency?.count)) return null;
  const failureLimit = doc.run.failureLimit ?? 0.01;
  const failed = rows.some((r) => r.failures?.total && r.failures.rate >= failureLimit);
  const s = doc.steps.find((x) => x.lane === lane && x.step === step);
  return !failed && gated.every((r) => r.gate.ok) && (s?.setupGateOk ?? true) && stepGatesHeld(doc, s);
}

// The step's own gates (metric{scenario:<its k6 scenario>}: stepGates such as
// fanout's delivery_missed, an open step's dropped arrivals) all held.
function stepGatesHeld(doc, s) {
  if (!s || !doc.thresholds) return true;
  const suffix = `{scenario:${s.scenario}}`;
  return doc.thresholds.every((t) => t.ok || !t.key.endsWith(suffix));
}

// An open step's arrival rate, per second, from its k6 scenario.
function ratePerSecond(doc, lane, step) {
  const s = doc.steps.find((x) => x.lane === lane && x.step === step);
  if (!s || !s.rate) return null;
  return s.rate / (seconds(s.timeUnit) || 1);
}
const seconds = (unit) =>
  ({ '1s': 1, '1m': 60, '1m0s': 60, '1h': 3600 })[unit] || Number(String(unit).replace(/s$/, '')) || 1;

// { lane: highest VUs held (0 = not even the first step) } over the lanes' steps in order;
// for an open workload the highest arrival rate held, per second.
export function heldUpTo(doc) {
  const out = {};
  const lanes = [...new Set(doc.steps.map((s) => s.lane))];
  for (const lane of lanes) {
    const steps = [...new Set(doc.steps.filter((s) => s.lane === lane).map((s) => s.step))].sort(
      (a, b) => stepVus(a) - stepVus(b),
    );
    let held = 0;
    let known = false;
    for (const step of steps) {
      const ok = stepHeld(doc, lane, step);
      if (ok === null) continue;
      known = true;
      if (!ok) break;
      held = isOpen(step) ? ratePerSecond(doc, lane, step) : stepVus(step);
    }
    if (known) out[lane] = held;
  }
  return out;
}

// -> { lines: [...], ranking: [{ lanes, p50, setupMs, rtts }], held: { lane: vus } } or null
export function verdictOf(doc) {
  const R = doc.run.network?.rttMs || 0;
  const lowest = Math.min(...doc.steps.map((s) => stepVus(s.step)));
  const rows = candidateRows(doc).filter((r) => stepVus(r.step) === lowest);
  const byLane = new Map();
  for (const r of rows) if (!byLane.has(r.lane)) byLane.set(r.lane, r);
  const ranked = [...byLane.values()].sort((a, b) => a.latency.p50 - b.latency.p50);
  const held = heldUpTo(doc);
  if (!ranked.length) return null;
  // Groups of lanes that ran alike (SAME above); g.p50 is the fastest member's.
  const groups = alikeGroups(ranked, (r) => r.latency.p50).map((g) => ({ p50: g.value, rows: g.items }));
  const p50s = (g) => g.rows.map((r) => r.latency.p50);
  const where = `${doc.run.profile}${R ? ` (R ${R} ms)` : ''}`;
  const metric = doc.run.latencyMetric === 'op_duration' ? '' : ` ${doc.run.latencyMetric}`;
  const lines = [
    `${where}${metric} p50 at ${rows[0]?.step}: ${groups.map((g) => `${list(g.rows.map((r) => label(r.lane)))} ${span(p50s(g))}`).join('; ')}.`,
  ];
  const slowest = groups.at(-1);
  if (groups.length > 1) {
    const setupOf = (r) => r.model?.p50?.setupMs ?? null;
    const parts = groups.slice(0, -1).map((g) => {
      // Every pair (a lane of the group, a lane of the slowest): what it saves, and
      // how much of that the model calls connection set-up.
      const pairs = g.rows.flatMap((r) =>
        slowest.rows.map((w) => ({
          saved: w.latency.p50 - r.latency.p50,
          diff: setupOf(w) !== null && setupOf(r) !== null ? setupOf(w) - setupOf(r) : null,
        })),
      );
      const diffs = pairs.map((p) => p.diff);
      const ofIt = pairs.map((p) => Math.min(p.diff, p.saved));
      const setup = diffs.every((d) => d > 0)
        ? ` (${pairs.every((p) => p.diff >= p.saved) ? 'all' : span(ofIt)} of it connection set-up by the model${R ? `: ${span(diffs, (d) => String(Math.round(d / R)), ' RTT')}` : ''})`
        : '';
      const saved = span(pairs.map((p) => p.saved));
      return `${list(g.rows.map((r) => label(r.lane)))} save${g.rows.length === 1 ? 's' : ''} ${saved}${setup}`;
    });
    lines.push(`Against ${list(slowest.rows.map((r) => label(r.lane)))}: ${parts.join('; ')}.`);
  }
  const heldLanes = Object.entries(held);
  const open = doc.steps.some((s) => isOpen(s.step));
  // A scenario whose steps count something else than VUs names it (fanout: subscribers).
  const unit = doc.run.verdict?.unit;
  const amount = (v) =>
    open
      ? `${v >= 10 ? Math.round(v) : v.toFixed(1)} arrivals/s`
      : unit
        ? `${v} ${unit}`
        : `${v} VU${v === 1 ? '' : 's'}`;
  if (heldLanes.length) {
    lines.push(
      `Held the budget up to: ${heldLanes.map(([lane, v]) => `${label(lane)} ${v ? amount(v) : 'none (failed at its first step)'}`).join(', ')}.`,
    );
  }
  return {
    lines,
    ranking: groups.map((g) => ({
      lanes: g.rows.map((r) => r.lane),
      p50: g.p50,
      setupMs: g.rows[0].model?.p50?.setupMs ?? null,
    })),
    held,
  };
}
