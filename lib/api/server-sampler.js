// What each transport costs your server (`run api --server-pid PID[,PID…]`, `gate --api`):
// the server processes' CPU time (utime + stime, /proc/<pid>/stat, all threads) sampled
// through the k6 runs, then cut at each step's bounds and divided by the step's operations
// (common/server-cost.js); and their resident memory (VmRSS) at the step's end. As
// bench/server-cost.js measures the reference servers, but per lane and step of a real
// run. CPU time, not wall time: little affected by what else runs. Its resolution is a
// clock tick (10 ms), a few percent of a step of a few hundred operations.
// A soak (`run soak --api`) also gates each process's memory growth after the warm-up
// (common/server-cost.js memoryGrowthOf) by thresholds.json's soak block
// (server_rss_growth), here rather than in k6, which cannot read your server's /proc:
// the gate joins the run's thresholds in summary.json, summary.md and junit.xml.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { byThreshold, describeServerCost, FILES, toJunit, toMarkdown } from '../../common/results.js';
import { memoryGrowthOf, serverCostOf } from '../../common/server-cost.js';
import { expressionOf, parseThreshold, policyGates, thresholdHolds } from '../../common/thresholds.js';
import { processCpuMs, processRssBytes } from '../process-cpu.js';
import { UsageError } from '../cli-support.js';

const SAMPLE_MS = 50;

// --server-pid '123' or '123,456' -> [123, 456], each a running process.
export function parseServerPids(text) {
  const pids = String(text)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!pids.length || !pids.every((p) => /^[1-9]\d*$/.test(p)))
    throw new UsageError(
      `--server-pid ${text}: give your server's process id(s), e.g. --server-pid $(pgrep -f my-server)`,
    );
  for (const p of pids)
    if (!existsSync(`/proc/${p}/stat`))
      throw new UsageError(
        `--server-pid ${p}: no such process on this machine: give the pid of your server (it must run here, e.g. pgrep -f my-server)`,
      );
  return [...new Set(pids.map(Number))];
}

// CPU (ms) and RSS (bytes) of the processes together now, and each one's RSS; null
// once one has gone.
function read(pids) {
  try {
    let cpuMs = 0;
    let rssBytes = 0;
    const rssByPid = {};
    for (const pid of pids) {
      cpuMs += processCpuMs(pid);
      rssByPid[pid] = processRssBytes(pid) || 0;
      rssBytes += rssByPid[pid];
    }
    return { t: Date.now(), cpuMs, rssBytes, rssByPid };
  } catch {
    return null;
  }
}

// Samples every SAMPLE_MS until stop(). -> { stop() -> samples [{ t, cpuMs, rssBytes, rssByPid }] }
export function startCostSampler(pids) {
  const samples = [];
  const take = () => {
    const s = read(pids);
    if (s) samples.push(s);
  };
  take();
  const timer = setInterval(take, SAMPLE_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

// The memory gate of a soak under a profile: thresholds.json's (or THRESHOLDS') soak
// block, server_rss_growth. -> ['max<0.5', ...]
export const memoryGateOf = (policy, profile) =>
  (policyGates(policy, 'soak', profile).server_rss_growth || []).map(expressionOf);

// Each process's growth judged by the gate: one threshold per process and expression
// (server_rss_growth{pid:N}) for the run's thresholds, and the process's row with ok
// when all of its hold.
function judgeMemory(growth, gate) {
  const judged = growth.map((g) => {
    const thresholds = gate.map((expr) => {
      const t = parseThreshold(expr);
      return {
        key: `server_rss_growth{pid:${g.pid}}`,
        threshold: expr,
        ok: Boolean(t) && thresholdHolds(t.op, g.growth, t.limit),
        stat: t ? t.stat : null,
        observed: g.growth,
      };
    });
    return { row: { ...g, ok: thresholds.every((t) => t.ok) }, thresholds };
  });
  return { rows: judged.map((j) => j.row), thresholds: judged.flatMap((j) => j.thresholds) };
}

// Adds the cost (and, given a memory gate, the memory growth and its gate) to a run
// folder's summary.json, summary.md and junit.xml. -> { lines, failed (memory gates
// that failed) }; no lines when the run wrote no summary.
export function recordServerCost(dir, samples, pids, memoryGate = null) {
  const file = join(dir, FILES.summary);
  if (!existsSync(file)) return { lines: [], failed: 0 };
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  doc.serverCost = serverCostOf(doc, samples, pids);
  let failed = 0;
  if (memoryGate) {
    const { rows, thresholds: added } = judgeMemory(memoryGrowthOf(doc, samples), memoryGate);
    doc.serverCost.memory = { gate: memoryGate, rows };
    failed = added.filter((t) => !t.ok).length;
    doc.thresholds = [...doc.thresholds, ...added].sort(byThreshold);
    writeFileSync(join(dir, FILES.junit), toJunit(doc));
  }
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(dir, FILES.markdown), toMarkdown(doc));
  return { lines: describeServerCost(doc.serverCost), failed };
}
