// One test split with --execution-segment, as the k6-operator's runners split
// it, all parts at once against one stack.
// Two halves (the second started 2 s late, so its load outlasts the first's),
// then the whole test once:
//   - the iterations of the halves add up to the whole run's, step by step
//     (STEP_ITERATIONS: shared-iterations, whose count k6 splits exactly)
//   - every operation of both halves ran under the profile: the second half
//     waited for the first to apply it, the first cleared it only after the
//     second said it was done; afterwards no toxic and no marker is left
//   - `k6pack merge` of the halves: every percentile equals the one computed
//     here, independently, from the two halves' pooled raw samples.
// The rehearsal of a distributed run, four quarters (0:1/4 ... 3/4:1) at once against
// the same plan in one process (iterations adding up, the merged verdicts as one
// process's, `merge --method hdr` within its precision), ran here too until 2026-11-28
// (50 s of the timed phase; issue 38, the suite in 20 minutes): bench/segments.js runs
// and records it, and lib/report/merge.test.js checks the hdr merge's precision and the
// exact merge's verdicts on fixed samples.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { PROXY_ROUTES } from '../common/defaults.js';
import { runCli } from './helpers/cli-env.js';
import { readSummary, runInto, validSummary } from './helpers/run-folders.js';
import { startTestStack } from '../dev/test-stack.js';

const R = 70; // lte
const SEQ = '0,1/2,1';
const ENV = {
  LOAD: 'smoke',
  PROFILE: 'lte',
  NS: '100',
  EXECUTORS: 'plain',
  STEPS: '2',
  // 5 a VU: about 0.45 s of the 3 s a step may take (an operation here is ~85 ms under lte,
  // 168 ms at most over 80 on 2026-11-29), so a slow or busy machine still finishes every
  // step's iterations (shared-iterations stops at its maxDuration, and a step cut short
  // would not add up).
  STEP_ITERATIONS: '5',
  STEP_SECONDS: '3',
};
let stack;
let tmp;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'k6pack-segments-'));
  stack = await startTestStack();
});
after(async () => {
  await stack?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// k6's percentile, written out again here: linear between the sorted values.
function p(values, q) {
  const v = [...values].sort((x, y) => x - y);
  const i = q * (v.length - 1);
  return v[Math.floor(i)] + (v[Math.ceil(i)] - v[Math.floor(i)]) * (i - Math.floor(i));
}

// op_duration values of one k6 scenario (and dims) from a run folder's samples.
function opValues(dir, scenario, dims) {
  const out = [];
  for (const line of gunzipSync(readFileSync(join(dir, 'samples.json.gz')))
    .toString('utf8')
    .split('\n')) {
    if (!line.startsWith('{"metric":"op_duration"')) continue;
    const { data } = JSON.parse(line);
    if (data.tags.scenario === scenario && Object.entries(dims).every(([k, v]) => data.tags[k] === v))
      out.push(data.value);
  }
  return out;
}

test(
  'two execution segments at once: iterations add up, the profile holds for both, the merge is exact',
  { timeout: 180000 },
  async () => {
    const half = (name, segment) =>
      runInto(
        join(tmp, name),
        'serialization',
        { ...stack.env, ...ENV },
        { args: ['--execution-segment', segment, '--execution-segment-sequence', SEQ] },
      );
    const first = half('first', '0:1/2');
    await sleep(2000);
    const [a, b] = await Promise.all([first, half('second', '1/2:1')]);

    // Nothing left behind: no toxics, no done-markers, just the pack's proxies.
    const proxies = await stack.toxiproxy.proxies();
    assert.deepEqual(Object.keys(proxies).sort(), PROXY_ROUTES.map(([name]) => name).sort());
    for (const proxy of Object.values(proxies)) assert.deepEqual(proxy.toxics, [], proxy.name);

    const whole = await runInto(join(tmp, 'whole'), 'serialization', { ...stack.env, ...ENV });
    assert.equal(a.doc.run.executionSegment, '0:1/2');
    assert.equal(b.doc.run.executionSegment, '1/2:1');
    assert.deepEqual(
      whole.doc.steps.map((s) => s.scenario),
      ['typed_c2', 'json_c2', 'grpc_list_c2', 'grpc_stream_c2'],
    );
    for (const s of whole.doc.steps) {
      const [sa, sb] = [a, b].map((h) => h.doc.steps.find((x) => x.scenario === s.scenario));
      assert.equal(s.iterations, 10, `${s.scenario}: 2 VUs x 5 iterations`);
      assert.deepEqual([sa.iterations, sb.iterations], [5, 5], `${s.scenario}: one VU and half the iterations each`);
    }

    // Every operation of either half paid the round trip: none ran unshaped.
    for (const h of [a, b]) {
      for (const row of h.doc.rows)
        assert.ok(
          row.latency.min >= 0.8 * R,
          `${h.doc.run.executionSegment} ${row.id}: fastest ${row.latency.min} ms < 0.8 R`,
        );
    }

    const merged = join(tmp, 'merged');
    const r = await runCli(['merge', a.dir, b.dir, '--out', merged], { timeoutMs: 60000 });
    const doc = validSummary(readSummary(merged), 'merged summary.json');
    const failed = doc.thresholds.filter((t) => !t.ok);
    assert.equal(r.exitCode, failed.length ? 99 : 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^merged 2 runs \(segments, \d+ samples\) into /);
    assert.equal(doc.run.merged.kind, 'segments');
    for (const row of doc.rows) {
      const pooled = [...opValues(a.dir, row.scenario, row.dims), ...opValues(b.dir, row.scenario, row.dims)];
      assert.equal(row.latency.count, pooled.length, row.id);
      for (const [stat, q] of [
        ['p50', 0.5],
        ['p90', 0.9],
        ['p95', 0.95],
        ['p99', 0.99],
      ])
        assert.equal(row.latency[stat], p(pooled, q), `${row.id} ${stat}`);
      assert.equal(
        row.latency.count,
        whole.doc.rows.find((x) => x.id === row.id).latency.count,
        `${row.id}: as many operations as the whole run`,
      );
    }
    for (const s of doc.steps) assert.equal(s.iterations, 10, s.scenario);
  },
);
