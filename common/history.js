// A run history: each run's digest (one JSON line), and regressions judged against the
// spread of the runs before it. Plain ES module, no I/O: lib/history/ reads and writes
// the files, lib/report/compare.js applies the rule.
//
// A digest holds, per row (lane x step x dims), the p50, p95 and p99, the operations,
// the failed share, the server's time and the row's gate; and, for the run, what makes
// runs comparable (scenario, profile, load, workload, machine class) and what tells
// them apart (commit, date, k6's and the pack's versions).
import { median } from './quantiles.js';

export const HISTORY_VERSION = 1;

// The rule with a history (`compare --history`, `gate --baseline … --history`):
//   - the last RUNS comparable runs that passed their thresholds (same scenario, profile,
//     load, workload and machine class); with fewer, the fixed rule applies and the
//     comparison says so;
//   - a latency figure regresses when it is above their median by more than K robust
//     standard deviations (1.4826 x the median absolute deviation, which is the standard
//     deviation for normal noise and ignores one wild run) and by more than the floor:
//     floorShare of the median (a p95: the fixed rule's --tolerance, 10 %) and --min-ms
//     (a p95: P95_MIN_MS and the row's usual tail,
//     p95 - p50, too; a p50: that tail over the root of the row's operations, how far the
//     median of a few moves: lib/report/compare.js); and when it is above every one of
//     those runs: a figure within what clean runs have shown is not a regression.
//   K: a clean run's figure beyond 3.5 deviations is one in ~4000 for normal noise, and
//   a gate judges a few hundred figures. The noise is not normal, though: 10 clean gates
//   under lte (bench/history-trust.js, 2026-11-27) held rows whose p50 or p95 jumped 5 to
//   10 % in one run of ten (143 ms rows at 150, a client stream's 164 ms at 181): the
//   MAD ignores such a run, so without the highest-run guard the next one like it was
//   flagged (3 figures in 1 of 5 clean gates). With a floor of 3 % the third run still
//   flagged 2 of 5 clean gates, by 0.2 to 0.8 ms: a p50 of two operations at 75 ms among
//   runs at 72, a p95 of forty at 79 among runs up to 77 (one slow operation makes it).
//   A p50's floor is 5 %, half the fixed rule's 10 %, which is what a p95 keeps: 5 % of
//   a 72 ms p50 is 3.6 ms, and half of the 7 ms (10 % of lte's RTT) a slower server adds.
export const HISTORY_RULE = { runs: 10, k: 3.5, floorShare: 0.05 };
export const MAD_TO_SD = 1.4826;
// Fewer runs cannot tell a spread (`--history-runs`' least).
export const MIN_HISTORY_RUNS = 5;

// values: the history's figures (oldest first); current: this run's.
// -> { median, sd (robust), margin, highest, lowest, limit (above it: a regression),
//      verdict: 'regression' | 'improvement' | 'same', by (past the limit, ms) }
export function judgeByHistory(
  values,
  current,
  { k = HISTORY_RULE.k, floorShare = HISTORY_RULE.floorShare, minMs = 0 } = {},
) {
  const m = median(values);
  const sd = MAD_TO_SD * median(values.map((v) => Math.abs(v - m)));
  const margin = Math.max(k * sd, floorShare * m, minMs);
  const highest = Math.max(...values);
  const lowest = Math.min(...values);
  const limit = Math.max(m + margin, highest);
  const floor = Math.min(m - margin, lowest);
  const verdict = current > limit ? 'regression' : current < floor ? 'improvement' : 'same';
  return {
    median: m,
    sd,
    margin,
    highest,
    lowest,
    limit,
    verdict,
    by: current > limit ? current - limit : floor - current,
  };
}

// What makes two runs comparable: the key of a history file's line.
export const comparableKey = (d) =>
  [d.scenario, d.profile, d.load, d.workload || 'closed', machineClass(d.machine)].join(' | ');
export const machineClass = (m) => (m ? `${m.cores} cores, ${m.cpu || 'unknown CPU'}` : 'unknown machine');

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const round = (v) => (v === null ? null : Math.round(v * 1000) / 1000);

// doc: a summary.json document; meta: { cpu (model name), cores, pack (version), addedAt }.
export function digestOf(doc, meta = {}) {
  const r = doc.run;
  const rows = doc.rows
    .filter((row) => row.latency?.count || row.failures?.total)
    .map((row) => {
      const server = row.metrics?.['server_duration{part:total}'];
      return {
        id: row.id,
        lane: row.lane,
        step: row.step,
        ...(row.dims && Object.keys(row.dims).length ? { dims: row.dims } : {}),
        p50: round(num(row.latency?.p50)),
        p95: round(num(row.latency?.p95)),
        p99: round(num(row.latency?.p99)),
        ops: row.failures?.total ?? row.latency?.count ?? 0,
        failed: num(row.failures?.rate),
        serverMs: server && !server.empty ? round(num(server.p50)) : null,
        ok: row.gate ? Boolean(row.gate.ok) : null,
      };
    });
  const failedThresholds = doc.thresholds.filter((t) => !t.ok).length;
  return {
    v: HISTORY_VERSION,
    scenario: r.scenario,
    profile: r.profile,
    load: r.load,
    workload: r.workload || 'closed',
    startedAt: r.startedAt,
    commit: r.gitCommit || null,
    machine: { cores: meta.cores ?? r.machine?.cores ?? null, cpu: meta.cpu || null },
    k6: r.k6Version || null,
    pack: meta.pack || null,
    passed: failedThresholds === 0,
    thresholds: { total: doc.thresholds.length, failed: failedThresholds },
    answer: doc.verdict?.lines?.[0] || null,
    rows,
  };
}

// A history file's text -> { digests, bad: [{ line, message }] }: a line that is not a
// digest (a merge gone wrong, a hand edit) is reported, not fatal.
export function parseHistory(text) {
  const digests = [];
  const bad = [];
  String(text)
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const d = JSON.parse(line);
        if (d?.v !== HISTORY_VERSION || !d.scenario || !Array.isArray(d.rows)) throw new Error('not a digest');
        digests.push(d);
      } catch (err) {
        bad.push({ line: i + 1, message: err.message.split('\n')[0] });
      }
    });
  // Lines from two branches merged by union come in any order: by date.
  digests.sort((a, b) => String(a.startedAt).localeCompare(String(b.startedAt)));
  return { digests, bad };
}

// The history a digest is judged against: the last `runs` comparable ones before it that
// passed their thresholds (a failed night is on the trends, not in what is normal).
export function comparableBefore(digests, current, runs = HISTORY_RULE.runs) {
  const key = comparableKey(current);
  return digests
    .filter((d) => d.passed !== false && comparableKey(d) === key && String(d.startedAt) < String(current.startedAt))
    .slice(-runs);
}
