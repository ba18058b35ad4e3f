// The history's digests and the rule that judges a run against the runs before it
// (common/history.js), through lib/report/compare.js as compare and gate use it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareDocs } from '../lib/report/compare.js';
import {
  comparableBefore,
  comparableKey,
  digestOf,
  HISTORY_RULE,
  judgeByHistory,
  MAD_TO_SD,
  parseHistory,
} from './history.js';

const LANES = ['http_fresh', 'http_keepalive', 'ws', 'https_fresh', 'http2', 'wss'];
const STEPS = ['c1', 'c10'];
// Each lane's p50 (ms) under a shaped link, and its p95 3 ms above (warm lanes under lte:
// ws 72.0 and 73.4 ms).
const BASE = { http_fresh: 140, http_keepalive: 70, ws: 71, https_fresh: 210, http2: 72, wss: 73 };
// The noise: every figure moves by up to ±A between runs on unchanged code, the offsets
// cycling through NOISE (each lane and step from its own point in the cycle), so the
// history's spread is the same whatever the order: a median absolute deviation of A/2.
const A = 2;
const NOISE = [-A, -A / 2, 0, A / 2, A];
const offset = (run, i) => NOISE[(run + i * 2) % NOISE.length];

// A summary document as buildSummary writes it, with only what compare and digests read.
function docOf(run, { step: bump = {} } = {}) {
  const rows = [];
  LANES.forEach((lane, l) =>
    STEPS.forEach((step, s) => {
      // A stepped lane is drawn at its level: the step is what moves it.
      const noise = bump[lane] ? 0 : offset(run, l * STEPS.length + s);
      const p50 = BASE[lane] + noise + (bump[lane] || 0);
      rows.push({
        id: `${lane}_${step}`,
        lane,
        step,
        dims: {},
        latency: { count: 100, p50, p95: p50 + 3, p99: p50 + 5 },
        failures: { rate: 0, total: 100 },
        gate: { ok: true },
      });
    }),
  );
  return {
    schemaVersion: 1,
    run: {
      scenario: 'ws-vs-http',
      profile: 'lte',
      load: 'ci',
      workload: 'closed',
      startedAt: new Date(Date.UTC(2026, 10, 1 + run)).toISOString(),
      gitCommit: `c${run}`,
      k6Version: '1.8.1',
    },
    rows,
    thresholds: [{ key: 'op_failed', ok: true }],
  };
}
const META = { cores: 2, cpu: 'Test CPU', pack: '0.1.0' };

// Runs 0..10 in the history, run 11 judged: twelve runs.
function judge(current) {
  const digests = Array.from({ length: 11 }, (_, run) => digestOf(docOf(run), META));
  const before = comparableBefore(digests, digestOf(current, META));
  assert.equal(before.length, HISTORY_RULE.runs);
  return compareDocs(docOf(10), current, { history: { before, runs: HISTORY_RULE.runs } });
}

test('twelve runs with noise only: no regression, every latency figure judged by the history', () => {
  const result = judge(docOf(11));
  assert.equal(result.regressions, 0);
  const latency = result.lines.filter((l) => l.kind === 'latency');
  assert.equal(latency.length, LANES.length * STEPS.length * 2);
  assert.ok(latency.every((l) => l.rule === 'history'));
  assert.deepEqual(result.history, { runs: HISTORY_RULE.runs, needed: HISTORY_RULE.runs, applied: true });
  // The failure rate keeps the fixed rule.
  assert.ok(result.lines.filter((l) => l.kind === 'rate').every((l) => l.rule === 'fixed'));
});

// The step: 3A on one lane, against a margin of K x 1.4826 x A/2 = 2.6A (and 5 % of 71 ms,
// 3.6 ms = 1.8A). A run whose own
// noise pulled the stepped lane down by A would show only 2A and pass: the rule gives
// that up for no false flag among a gate's few hundred figures (K in common/history.js).
test('a step of three times the noise on one lane: that lane flagged at every step, and only it', () => {
  const result = judge(docOf(11, { step: { ws: 3 * A } }));
  const flagged = result.lines.filter((l) => l.verdict === 'regression');
  assert.deepEqual(
    flagged.map((l) => `${l.id} ${l.measure}`),
    // Its p95s (6 ms on 74) stay under the fixed rule's 10 %, which a p95 keeps as its floor.
    ['ws_c1 p50', 'ws_c10 p50'],
  );
  for (const l of flagged) {
    assert.equal(l.rule, 'history');
    // It says by how much: over the median by more than the margin.
    assert.ok(l.history.by > 0 && l.current - l.history.median > l.history.margin, JSON.stringify(l.history));
  }
});

test('fewer comparable runs than the rule needs: the fixed rule, and the result says so', () => {
  const digests = Array.from({ length: 4 }, (_, run) => digestOf(docOf(run), META));
  const current = docOf(11, { step: { ws: 3 * A } });
  const before = comparableBefore(digests, digestOf(current, META));
  const result = compareDocs(docOf(3), current, { history: { before, runs: HISTORY_RULE.runs } });
  assert.ok(result.lines.every((l) => l.rule === 'fixed'));
  assert.deepEqual(result.history, { runs: 4, needed: HISTORY_RULE.runs, applied: false });
});

test('judgeByHistory: the robust spread, the floor, and which way', () => {
  const values = [100, 101, 99, 100, 102, 98, 100, 101, 99, 100];
  const j = judgeByHistory(values, 106);
  assert.equal(j.median, 100);
  assert.equal(j.sd, MAD_TO_SD * 1);
  // 3.5 sd = 5.19 ms > 3 % of 100: the spread sets the margin.
  assert.ok(Math.abs(j.margin - HISTORY_RULE.k * MAD_TO_SD) < 1e-9);
  assert.equal(j.verdict, 'regression');
  assert.equal(judgeByHistory(values, 105).verdict, 'same');
  assert.equal(judgeByHistory(values, 94).verdict, 'improvement');
  // One wild run does not widen the spread (a standard deviation would: 31 ms)...
  const wild = judgeByHistory([...values.slice(1), 200], 106);
  assert.equal(wild.sd, j.sd);
  // ...but a figure within what a clean run has shown is not a regression.
  assert.equal(wild.verdict, 'same');
  assert.equal(wild.limit, 200);
  assert.equal(judgeByHistory([...values.slice(1), 104], 106).verdict, 'regression');
  // No spread at all: the floor, 3 % of the median and minMs.
  assert.equal(judgeByHistory([50, 50, 50], 52.4).verdict, 'same');
  assert.equal(judgeByHistory([50, 50, 50], 52.6).verdict, 'regression');
  assert.equal(judgeByHistory([1, 1, 1], 1.9, { minMs: 1 }).verdict, 'same');
});

test('digests: what a run is, per row; comparable runs are the same scenario, profile, load, workload and machine', () => {
  const d = digestOf(docOf(0), META);
  assert.equal(d.rows.length, LANES.length * STEPS.length);
  assert.deepEqual(Object.keys(d.rows[0]).sort(), [
    'failed',
    'id',
    'lane',
    'ok',
    'ops',
    'p50',
    'p95',
    'p99',
    'serverMs',
    'step',
  ]);
  assert.equal(d.commit, 'c0');
  assert.equal(d.passed, true);
  assert.equal(comparableKey(d), 'ws-vs-http | lte | ci | closed | 2 cores, Test CPU');
  const other = digestOf(docOf(1), { ...META, cpu: 'Another CPU' });
  assert.deepEqual(comparableBefore([d, other], digestOf(docOf(5), META)), [d]);
});

test('parseHistory: lines in date order whatever order a union merge left them in; a broken line named, not fatal', () => {
  const lines = [1, 0, 2].map((run) => JSON.stringify(digestOf(docOf(run), META)));
  const { digests, bad } = parseHistory([lines[0], '{"half a line', lines[1], '', lines[2], '[]'].join('\n'));
  assert.deepEqual(
    digests.map((d) => d.commit),
    ['c0', 'c1', 'c2'],
  );
  assert.deepEqual(
    bad.map((b) => b.line),
    [2, 6],
  );
});
