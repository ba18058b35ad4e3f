// The comparison rules (compare.js): the fixed rule per measure (relative tolerance, the
// ms floor, a p95's noise from the base row's tail and P95_MIN_MS, failure-rate points),
// new and missing rows, the history's rule when enough comparable runs are given, and
// the text and Markdown tables that name the rule behind every verdict.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { digestOf } from '../../common/history.js';
import { compareDocs, DEFAULTS, P95_MIN_MS, parseShare, renderComparison } from './compare.js';
import { ResultsError } from './runs.js';

// A summary row with what compare reads: its lane's fields, latency and failures.
const row = (id, { p50, p95, rate = 0, count = 100, transport = 'http', tls = false, dims = {} }) => ({
  id,
  lane: id,
  step: 'c1',
  transport,
  tls,
  dims,
  latency: { count, p50, p95, p99: p95 },
  failures: { rate, total: count },
  gate: { ok: true },
});
const docOf = (rows, run = {}) => ({
  schemaVersion: 1,
  run: { scenario: 'ws-vs-http', profile: 'lte', load: 'ci', startedAt: '2026-11-01T00:00:00.000Z', ...run },
  rows,
  thresholds: [],
});
// The verdict of each line, as 'id measure verdict'.
const verdicts = (result) => result.lines.map((l) => `${l.id} ${l.measure} ${l.verdict}`);

test('parseShare: a percentage with or without %, else null', () => {
  assert.equal(parseShare('10%'), 0.1);
  assert.equal(parseShare('10'), 0.1);
  assert.equal(parseShare(' 2.5% '), 0.025);
  assert.equal(parseShare('0'), 0);
  for (const bad of ['', '%', '-5', 'ten', '10%%', 'NaN', 'Infinity']) assert.equal(parseShare(bad), null, bad);
});

test('the fixed rule: p50 beyond both the tolerance and the ms floor, either way', () => {
  const base = docOf([
    row('up', { p50: 100, p95: 103 }),
    row('within', { p50: 100, p95: 103 }),
    row('down', { p50: 100, p95: 103 }),
    // +18 % but under the 1 ms floor; then +30 % and 1.5 ms.
    row('tiny', { p50: 5, p95: 6 }),
    row('small', { p50: 5, p95: 6 }),
  ]);
  const current = docOf([
    row('up', { p50: 111, p95: 103 }),
    row('within', { p50: 109.9, p95: 103 }),
    row('down', { p50: 89, p95: 103 }),
    row('tiny', { p50: 5.9, p95: 6 }),
    row('small', { p50: 6.5, p95: 6 }),
  ]);
  const r = compareDocs(base, current);
  assert.deepEqual(
    verdicts(r).filter((v) => v.includes(' p50 ')),
    ['up p50 regression', 'within p50 same', 'down p50 improvement', 'tiny p50 same', 'small p50 regression'],
  );
  assert.equal(r.regressions, 2);
  assert.deepEqual(r.options, DEFAULTS);
  assert.equal(r.history, null);
  assert.deepEqual(r.lines[0], {
    id: 'up',
    label: 'http tls=false',
    step: 'c1',
    measure: 'p50',
    kind: 'latency',
    base: 100,
    current: 111,
    verdict: 'regression',
    rule: 'fixed',
  });
  // A wider tolerance given: +11 % is the same.
  assert.equal(compareDocs(base, current, { tolerance: 0.2 }).lines[0].verdict, 'same');
});

test("the fixed rule: a p95 also beyond the base row's tail and P95_MIN_MS", () => {
  assert.equal(P95_MIN_MS, 5);
  const base = docOf([
    // Tail 20 ms: +15 ms (15 %) is noise, +21 ms a regression.
    row('tail-in', { p50: 100, p95: 120 }),
    row('tail-out', { p50: 100, p95: 120 }),
    // Tail 1 ms: the floor is P95_MIN_MS: +4 ms (36 %) is noise, +5.5 ms not.
    row('floor-in', { p50: 10, p95: 11 }),
    row('floor-out', { p50: 10, p95: 11 }),
  ]);
  const current = docOf([
    row('tail-in', { p50: 100, p95: 135 }),
    row('tail-out', { p50: 100, p95: 141 }),
    row('floor-in', { p50: 10, p95: 15 }),
    row('floor-out', { p50: 10, p95: 16.5 }),
  ]);
  assert.deepEqual(
    verdicts(compareDocs(base, current)).filter((v) => v.includes(' p95 ')),
    ['tail-in p95 same', 'tail-out p95 regression', 'floor-in p95 same', 'floor-out p95 regression'],
  );
});

test('the fixed rule: the failure rate by absolute points', () => {
  const base = docOf(['up', 'same', 'down', 'custom'].map((id) => row(id, { p50: 10, p95: 12, rate: 0.01 })));
  const current = docOf([
    row('up', { p50: 10, p95: 12, rate: 0.016 }),
    row('same', { p50: 10, p95: 12, rate: 0.014 }),
    row('down', { p50: 10, p95: 12, rate: 0.004 }),
    row('custom', { p50: 10, p95: 12, rate: 0.03 }),
  ]);
  assert.deepEqual(
    verdicts(compareDocs(base, current)).filter((v) => v.includes(' failed ')),
    ['up failed regression', 'same failed same', 'down failed improvement', 'custom failed regression'],
  );
  assert.equal(compareDocs(base, current, { failurePoints: 0.05 }).regressions, 0);
});

test('new, missing, empty and unmeasured rows', () => {
  const base = docOf([
    row('kept', { p50: 10, p95: 12 }),
    row('gone', { p50: 10, p95: 12 }),
    // No operation: not compared at all.
    row('idle', { p50: 10, p95: 12, count: 0 }),
    // A p95 the base lacks.
    { ...row('half', { p50: 10, p95: 12 }), latency: { count: 100, p50: 10, p95: null } },
  ]);
  const current = docOf([
    row('kept', { p50: 10, p95: 12 }),
    row('fresh', { p50: 10, p95: 12 }),
    row('idle', { p50: 50, p95: 60 }),
    row('half', { p50: 10, p95: 12 }),
  ]);
  const r = compareDocs(base, current);
  assert.deepEqual(verdicts(r), [
    'kept p50 same',
    'kept p95 same',
    'kept failed same',
    'fresh p50 new',
    'fresh p95 new',
    'fresh failed new',
    'idle p50 new',
    'idle p95 new',
    'idle failed new',
    'half p50 same',
    'half p95 n/a',
    'half failed same',
    'gone - missing',
  ]);
  assert.equal(r.regressions, 0);
  assert.deepEqual(r.lines.at(-1), {
    id: 'gone',
    label: 'http tls=false',
    step: 'c1',
    measure: '-',
    kind: 'row',
    base: null,
    current: null,
    verdict: 'missing',
  });
  // A measure neither run has is left out.
  const noP95 = (id) => ({ ...row(id, { p50: 10, p95: 12 }), latency: { count: 50, p50: 10 } });
  assert.deepEqual(verdicts(compareDocs(docOf([noP95('x')]), docOf([noP95('x')]))), ['x p50 same', 'x failed same']);
});

test('runs of two scenarios: one line, a ResultsError', () => {
  assert.throws(
    () => compareDocs(docOf([]), docOf([], { scenario: 'serialization' })),
    (err) =>
      err instanceof ResultsError &&
      err.message === 'the base is a ws-vs-http run, the current one serialization: compare runs of one scenario',
  );
});

// Five comparable runs: p50 100, 101, 99, 100, 102 (median 100, MAD 1), each p95 3 ms above.
const HISTORY_P50 = [100, 101, 99, 100, 102];
const historyOf = (values) =>
  values.map((p50, i) =>
    digestOf(docOf([row('r', { p50, p95: p50 + 3 })], { startedAt: `2026-10-0${i + 1}T00:00:00.000Z` })),
  );

test('with a history: latency judged against its spread once enough runs are given', () => {
  const base = docOf([row('r', { p50: 100, p95: 103 })]);
  // The fixed rule calls +6 % the same; the history's limit is its median + 3.5 x 1.4826 x MAD
  // (5.19 ms, above 5 % of 100 and the 1 ms floor) = 105.19 ms.
  const at = (p50, p95 = 103) =>
    compareDocs(base, docOf([row('r', { p50, p95 })]), { history: { before: historyOf(HISTORY_P50), runs: 5 } });
  const up = at(106);
  assert.deepEqual(verdicts(up), ['r p50 regression', 'r p95 same', 'r failed same']);
  assert.deepEqual(
    up.lines.map((l) => l.rule),
    ['history', 'history', 'fixed'],
  );
  const h = up.lines[0].history;
  assert.equal(h.median, 100);
  assert.equal(h.highest, 102);
  assert.equal(h.lowest, 99);
  assert.ok(Math.abs(h.margin - 3.5 * 1.4826) < 1e-9, String(h.margin));
  assert.ok(Math.abs(h.limit - (100 + 3.5 * 1.4826)) < 1e-9, String(h.limit));
  assert.ok(Math.abs(h.by - (106 - 100 - 3.5 * 1.4826)) < 1e-9, String(h.by));
  assert.deepEqual(up.history, { runs: 5, needed: 5, applied: true });
  assert.equal(at(105).lines[0].verdict, 'same');
  assert.equal(at(94).lines[0].verdict, 'improvement');
  // Without the history the same run is the same.
  assert.equal(compareDocs(base, docOf([row('r', { p50: 106, p95: 103 })])).lines[0].verdict, 'same');
  // A p95 keeps the tolerance (10 % of its median 103) and its floors: 113 is within.
  assert.equal(at(100, 113).lines[1].verdict, 'same');
  assert.equal(at(100, 114).lines[1].verdict, 'regression');
});

test('with too short a history: the fixed rule, and the comparison says so', () => {
  const base = docOf([row('r', { p50: 100, p95: 103 })]);
  const r = compareDocs(base, docOf([row('r', { p50: 106, p95: 103 })]), {
    history: { before: historyOf([100, 101]) },
  });
  assert.deepEqual(verdicts(r), ['r p50 same', 'r p95 same', 'r failed same']);
  assert.deepEqual(r.history, { runs: 2, needed: 10, applied: false });
  assert.ok(
    renderComparison(r).includes('history: 2 comparable runs, 10 needed: the fixed rule above applies\n'),
    renderComparison(r),
  );
});

test('renderComparison: the text table, every line or only the changed ones', () => {
  const base = docOf([row('a', { p50: 100, p95: 110, rate: 0.01 }), row('gone', { p50: 5, p95: 6 })]);
  const current = docOf(
    [row('a', { p50: 120, p95: 110, rate: 0.01, transport: 'ws', tls: true }), row('b', { p50: 7.25, p95: 8 })],
    { profile: 'lan', startedAt: '2026-11-02T00:00:00.000Z' },
  );
  const r = compareDocs(base, current);
  assert.equal(
    renderComparison(r),
    [
      'ws-vs-http: lte (base, 2026-11-01T00:00:00.000Z) -> lan (current, 2026-11-02T00:00:00.000Z)',
      "tolerance: latency +-10% and > 1 ms (a p95 also > the base's p95 - p50 and 5 ms), failure rate +-0.50 pt",
      '',
      'lane            step  measure  base    current  change    verdict       rule',
      'ws tls=true     c1    p50      100 ms  120 ms   +20.0%    ❌ regression  fixed',
      'ws tls=true     c1    p95      110 ms  110 ms   +0.0%     same          fixed',
      'ws tls=true     c1    failed   1.00%   1.00%    +0.00 pt  same          fixed',
      'http tls=false  c1    p50      -       7.3 ms             new',
      'http tls=false  c1    p95      -       8.0 ms             new',
      'http tls=false  c1    failed   -       0.00%              new',
      'http tls=false  c1    -        -       -                  missing',
      '',
      '1 regression',
      '',
    ].join('\n'),
  );
  const changed = renderComparison(r, { all: false });
  assert.ok(changed.endsWith('\n1 regression (2 unchanged lines not shown)\n'), changed);
  assert.ok(!changed.includes('same'), changed);
});

test('renderComparison: Markdown, its cells escaped, and a note when nothing moved', () => {
  const base = docOf([row('a', { p50: 100, p95: 110, dims: { op: 'a|b' } })]);
  const up = compareDocs(base, docOf([row('a', { p50: 130, p95: 110, dims: { op: 'a|b' } })]));
  assert.equal(
    renderComparison(up, { markdown: true, all: false }),
    [
      '### k6pack compare ws-vs-http: lte (base, 2026-11-01T00:00:00.000Z) -> lte (current, 2026-11-01T00:00:00.000Z) — 1 regression',
      '',
      "tolerance: latency +-10% and > 1 ms (a p95 also > the base's p95 - p50 and 5 ms), failure rate +-0.50 pt",
      '',
      '| lane | step | measure | base | current | change | verdict | rule |',
      '|---|---|---|--:|--:|--:|---|---|',
      '| http tls=false op:a\\|b | c1 | p50 | 100 ms | 130 ms | +30.0% | ❌ regression | fixed |',
      '',
    ].join('\n'),
  );
  const same = compareDocs(base, base);
  assert.ok(
    renderComparison(same, { markdown: true, all: false }).endsWith(
      '— no regression\n\n' +
        "tolerance: latency +-10% and > 1 ms (a p95 also > the base's p95 - p50 and 5 ms), failure rate +-0.50 pt\n\n" +
        'No figure moved beyond its rule (3 lines compared).\n',
    ),
  );
});

test('renderComparison: the history rule named per line, with its limit and margin', () => {
  const base = docOf([row('r', { p50: 100, p95: 103 })]);
  const text = (p50) =>
    renderComparison(
      compareDocs(base, docOf([row('r', { p50, p95: 103 })]), { history: { before: historyOf(HISTORY_P50), runs: 5 } }),
    );
  const head = [
    'ws-vs-http: lte (base, 2026-11-01T00:00:00.000Z) -> lte (current, 2026-11-01T00:00:00.000Z)',
    "tolerance: latency +-10% and > 1 ms (a p95 also > the base's p95 - p50 and 5 ms), failure rate +-0.50 pt",
    'history: latency judged against the last 5 comparable runs that passed: a regression is above their median by more than 3.5 robust sd (1.4826 x MAD), 5 % of it (a p95: the tolerance) and the ms floors (a p95: its usual p95 - p50 too; a p50: that over the root of its operations), and above every one of them',
    '',
  ];
  assert.equal(
    text(106),
    [
      ...head,
      'lane            step  measure  base    current  change    verdict       rule',
      'http tls=false  c1    p50      100 ms  106 ms   +6.0%     ❌ regression  history: 0.8 ms over 105 ms (median 100 ms + 5.2 ms; highest run 102 ms)',
      'http tls=false  c1    p95      103 ms  103 ms   +0.0%     same          history: within 113 ms',
      'http tls=false  c1    failed   0.00%   0.00%    +0.00 pt  same          fixed',
      '',
      '1 regression',
      '',
    ].join('\n'),
  );
  assert.equal(
    text(90),
    [
      ...head,
      'lane            step  measure  base    current  change    verdict        rule',
      'http tls=false  c1    p50      100 ms  90.0 ms  -10.0%    ✅ improvement  history: 4.8 ms under 94.8 ms (median - margin; lowest run 99.0 ms)',
      'http tls=false  c1    p95      103 ms  103 ms   +0.0%     same           history: within 113 ms',
      'http tls=false  c1    failed   0.00%   0.00%    +0.00 pt  same           fixed',
      '',
      'no regression',
      '',
    ].join('\n'),
  );
});

test('a percentile of fewer operations than the gate floors it is too few to judge, never a regression', () => {
  // SAMPLE_FLOORS (common/gates.js): 20 operations for a p50, 100 for a p95, in both runs.
  const base = docOf([
    row('tiny', { p50: 2, p95: 2.1, count: 6 }),
    row('mid', { p50: 10, p95: 12, count: 50 }),
    row('thin-base', { p50: 10, p95: 12, count: 10 }),
    row('big', { p50: 10, p95: 12, count: 100 }),
  ]);
  const current = docOf([
    row('tiny', { p50: 0.3, p95: 12.6, count: 6 }),
    row('mid', { p50: 20, p95: 40, count: 50 }),
    row('thin-base', { p50: 20, p95: 40, count: 200 }),
    row('big', { p50: 20, p95: 40, count: 100 }),
  ]);
  const r = compareDocs(base, current);
  assert.deepEqual(
    verdicts(r).filter((v) => !v.includes(' failed ')),
    [
      'tiny p50 too few',
      'tiny p95 too few',
      'mid p50 regression',
      'mid p95 too few',
      'thin-base p50 too few',
      'thin-base p95 too few',
      'big p50 regression',
      'big p95 regression',
    ],
  );
  assert.equal(r.regressions, 3);
  const text = renderComparison(r, { all: false });
  assert.match(text, /^3 regressions \(4 unchanged lines and 5 with too few operations to judge not shown\)$/m);
  assert.match(renderComparison(r), /p95 +2\.1 ms +12\.6 ms +\+500\.0% +too few to judge +floor: 100 operations$/m);
});

test('a history long enough whose every latency figure is too few operations says so, not that it is too short', () => {
  const thin = (p50) => docOf([row('x', { p50, p95: p50 + 1, count: 6 })]);
  const history = { before: Array.from({ length: 5 }, () => digestOf(thin(10))), runs: 5 };
  const r = compareDocs(thin(10), thin(30), { history });
  assert.equal(r.regressions, 0);
  assert.deepEqual(r.history, { runs: 5, needed: 5, applied: false });
  assert.match(
    renderComparison(r),
    /^history: 5 comparable runs, but no latency figure holds the operations the gate's floors ask to be judged \(too few to judge\)$/m,
  );
});
