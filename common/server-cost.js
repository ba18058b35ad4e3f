// What each transport costs your server, from samples of its processes' CPU time and
// memory taken through a run (lib/api/server-sampler.js samples /proc; `run api
// --server-pid`): each step's CPU time divided by its operations, and the lane cheapest
// for the server beside the fastest for the client (common/results.js describeServerCost
// renders it for the terminal and summary.md); and over a soak, each process's memory
// growth after the warm-up. Plain ES module with no k6 or Node imports.

// The sample at or just before t (the CPU used up to then), else null.
function at(samples, t) {
  let found = null;
  for (const s of samples) {
    if (s.t > t) break;
    found = s;
  }
  return found;
}

// Each step's cost from a run's summary.json and the samples. A step's window runs from
// its start to the next step's (the last: the run's end), so what a step's graceful stop
// finishes counts where it began. Steps that start together run at once (a soak's mix):
// the server's CPU cannot be told apart between them, so they make one row, its `lanes`
// listed. -> [{ scenario, lane, step, ops, cpuMs, cpuUsPerOp, rssBytes, lanes? }]
export function stepCosts(doc, samples) {
  const from = doc.run.stepsFrom;
  if (typeof from !== 'number' || samples.length < 2) return [];
  const groups = [];
  for (const s of [...doc.steps].sort((a, b) => a.startSeconds - b.startSeconds)) {
    const g = groups.at(-1);
    if (g && g[0].startSeconds === s.startSeconds) g.push(s);
    else groups.push([s]);
  }
  const end = Date.parse(doc.run.endedAt) || samples[samples.length - 1].t;
  return groups.flatMap((g, i) => {
    const t0 = from + g[0].startSeconds * 1000;
    const t1 = i + 1 < groups.length ? from + groups[i + 1][0].startSeconds * 1000 : end;
    const a = at(samples, t0);
    const b = at(samples, t1);
    const ops = g.reduce((n, s) => n + ((s.latency && s.latency.count) || 0), 0);
    if (!a || !b || b === a || !ops) return [];
    const cpuMs = b.cpuMs - a.cpuMs;
    const together = g.length > 1;
    return [
      {
        scenario: g.map((s) => s.scenario).join('+'),
        lane: together ? 'all lanes at once' : g[0].lane,
        step: g[0].step,
        ops,
        cpuMs: Math.round(cpuMs * 10) / 10,
        cpuUsPerOp: Math.round((cpuMs * 1000) / ops),
        rssBytes: b.rssBytes,
        ...(together ? { lanes: g.map((s) => s.lane) } : {}),
      },
    ];
  });
}

// Each lane's first (lightest) step: where the lanes are compared, as the verdict does.
function firstSteps(steps) {
  const seen = new Set();
  return [...steps]
    .sort((a, b) => a.startSeconds - b.startSeconds)
    .filter((s) => !seen.has(s.lane) && seen.add(s.lane));
}

// The server cost part of summary.json: per step, and the lane cheapest for the server
// (each lane at its first step) beside the verdict's fastest for the client.
export function serverCostOf(doc, samples, pids) {
  const rows = stepCosts(doc, samples);
  const firsts = firstSteps(doc.steps);
  const first = new Set(firsts.map((s) => s.scenario));
  const firstRows = rows.filter((r) => first.has(r.scenario));
  const cheapest = firstRows.length ? firstRows.reduce((x, y) => (y.cpuUsPerOp < x.cpuUsPerOp ? y : x)) : null;
  const top = doc.verdict && doc.verdict.ranking && doc.verdict.ranking[0];
  const topStep = top && firsts.find((s) => s.lane === top.lanes[0]);
  return {
    pids,
    source: '/proc/<pid>/stat utime+stime over each step, VmRSS at its end',
    rows,
    cheapest: cheapest && { lane: cheapest.lane, step: cheapest.step, cpuUsPerOp: cheapest.cpuUsPerOp },
    fastest: top ? { lane: top.lanes[0], step: topStep ? topStep.step : null, p50: top.p50 } : null,
  };
}

// How much of a soak is warm-up (the first 20 % of its steps): a server's memory is
// judged against its first sample after it (scenarios/soak.js for the reference
// servers, memoryGrowthOf below for yours).
export const WARMUP_SHARE = 0.2;

// Each process's resident memory over a soak: its first sample after the warm-up, the
// most after that, and the growth between them as a fraction (what server_rss_growth
// max gates). samples: [{ t, rssByPid: { pid: bytes } }]. -> [{ pid, baselineBytes,
// maxBytes, lastBytes, growth, fromSeconds }], [] without enough samples.
export function memoryGrowthOf(doc, samples) {
  const from = doc.run.stepsFrom;
  if (typeof from !== 'number' || !samples.length) return [];
  const end = Date.parse(doc.run.endedAt) || samples[samples.length - 1].t;
  const t0 = from + WARMUP_SHARE * (end - from);
  const after = samples.filter((s) => s.t >= t0 && s.t <= end && s.rssByPid);
  if (after.length < 2) return [];
  return Object.keys(after[0].rssByPid).flatMap((pid) => {
    const list = after.map((s) => s.rssByPid[pid]).filter((b) => b > 0);
    if (list.length < 2) return [];
    const base = list[0];
    const max = Math.max(...list);
    return [
      {
        pid: Number(pid),
        baselineBytes: base,
        maxBytes: max,
        lastBytes: list.at(-1),
        growth: Math.round(((max - base) / base) * 10000) / 10000,
        fromSeconds: Math.round((t0 - from) / 100) / 10,
      },
    ];
  });
}
