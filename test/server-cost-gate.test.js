// Your API's soak gates your server's memory in the CLI (lib/api/server-sampler.js): k6
// cannot read its /proc. The gate comes from thresholds.json's soak block and joins the
// run's thresholds in summary.json, summary.md and junit.xml, as a k6 threshold does.
// No stack, k6 or CLI: a run folder written here.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { memoryGateOf, recordServerCost } from '../lib/api/server-sampler.js';
import { readPolicyFile } from '../lib/specs.js';

const FROM = Date.parse('2026-11-27T06:00:00Z');
const MB = 1048576;
const summary = () => ({
  run: {
    scenario: 'api',
    profile: 'lte',
    load: 'soak',
    stepsFrom: FROM,
    endedAt: new Date(FROM + 100_000).toISOString(),
    durationMs: 100_000,
    latencyMetric: 'op_duration',
    thresholdsFile: 'thresholds.json',
  },
  steps: [
    {
      scenario: 'grpc_mix',
      lane: 'grpc',
      step: 'mix',
      startSeconds: 0,
      latency: { count: 200, p50: 71 },
    },
  ],
  rows: [],
  thresholds: [{ key: 'op_drift', threshold: 'p(50)<1.5', ok: true, stat: 'p(50)', observed: 1.01 }],
  totals: { operations: 200, failedOperations: 0, droppedIterations: 0 },
  checks: { passes: 0, fails: 0, rate: null },
  verdict: { lines: ['lte p50 at mix: grpc 71 ms.'], ranking: [{ lanes: ['grpc'], p50: 71 }] },
});

// A process that grows `growth` MB a 10 s after the warm-up (the first 20 s), from 100 MB.
const samplesOf = (pid, growth) =>
  Array.from({ length: 11 }, (_, i) => ({
    t: FROM + i * 10_000,
    cpuMs: i * 100,
    rssBytes: 0,
    rssByPid: { [pid]: (100 + Math.max(0, i - 2) * growth) * MB },
  }));

function runFolder(t) {
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-memory-gate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary()));
  return dir;
}

test("the memory gate is thresholds.json's soak block: server_rss_growth", () => {
  const { policy } = readPolicyFile();
  assert.deepEqual(memoryGateOf(policy, 'lte'), ['max<0.5']);
});

test('a server that grows 80 % after the warm-up fails the gate: in summary.json, summary.md and junit.xml', (t) => {
  const dir = runFolder(t);
  // 100 MB at 20 s, then +10 MB every 10 s: 180 MB at the end, +80 %.
  const { lines, failed } = recordServerCost(dir, samplesOf(4242, 10), [4242], ['max<0.5']);
  assert.equal(failed, 1);
  assert.match(lines.at(-1), /^ {2}pid 4242: 100\.0 MB -> most 180\.0 MB, last 180\.0 MB: \+80\.0 % FAILED$/);
  const doc = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  assert.deepEqual(
    doc.thresholds.find((x) => x.key === 'server_rss_growth{pid:4242}'),
    { key: 'server_rss_growth{pid:4242}', threshold: 'max<0.5', ok: false, stat: 'max', observed: 0.8 },
  );
  assert.equal(doc.serverCost.memory.rows[0].ok, false);
  assert.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /❌ 1 of 2 thresholds failed/);
  assert.match(
    readFileSync(join(dir, 'junit.xml'), 'utf8'),
    /<failure message="server_rss_growth\{pid:4242\}: max=0\.80, threshold max&lt;0\.5"/,
  );
});

test('a server that stays flat passes; without a gate (not a soak) nothing is added', (t) => {
  const dir = runFolder(t);
  const { lines, failed } = recordServerCost(dir, samplesOf(4242, 0), [4242], ['max<0.5']);
  assert.equal(failed, 0);
  assert.match(lines.at(-1), /\+0\.0 % ok$/);
  const plain = runFolder(t);
  assert.equal(recordServerCost(plain, samplesOf(4242, 10), [4242]).failed, 0);
  const doc = JSON.parse(readFileSync(join(plain, 'summary.json'), 'utf8'));
  assert.equal(doc.serverCost.memory, undefined);
  assert.equal(doc.thresholds.length, 1);
});
