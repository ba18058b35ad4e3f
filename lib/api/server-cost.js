// What each transport costs your server (`run api --server-pid PID[,PID…]`, `gate --api`):
// the server processes' CPU time (utime + stime, /proc/<pid>/stat, all threads) sampled
// through the k6 runs, then cut at each step's bounds and divided by the step's operations
// (common/server-cost.js); and their resident memory (VmRSS) at the step's end. As
// bench/server-cost.js measures the reference servers, but per lane and step of a real
// run. CPU time, not wall time: little affected by what else runs. Its resolution is a
// clock tick (10 ms), a few percent of a step of a few hundred operations.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeServerCost, FILES, toMarkdown } from '../../common/results.js';
import { serverCostOf } from '../../common/server-cost.js';
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

// CPU (ms) and RSS (bytes) of the processes together now; null once one has gone.
function read(pids) {
  try {
    let cpuMs = 0;
    let rssBytes = 0;
    for (const pid of pids) {
      cpuMs += processCpuMs(pid);
      rssBytes += processRssBytes(pid) || 0;
    }
    return { t: Date.now(), cpuMs, rssBytes };
  } catch {
    return null;
  }
}

// Samples every SAMPLE_MS until stop(). -> { stop() -> samples [{ t, cpuMs, rssBytes }] }
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

// Adds the cost to a run folder's summary.json and summary.md. -> the lines, or [] when
// the run wrote no summary.
export function recordServerCost(dir, samples, pids) {
  const file = join(dir, FILES.summary);
  if (!existsSync(file)) return [];
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  doc.serverCost = serverCostOf(doc, samples, pids);
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(dir, FILES.markdown), toMarkdown(doc));
  return describeServerCost(doc.serverCost);
}
