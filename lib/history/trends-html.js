// `k6pack history report DIR`: one offline HTML page of trend charts from a history
// folder. Per scenario, profile and run kind (load, workload, machine class: what makes
// runs comparable), one chart per step: each row's p50 (solid) and p95 (dashed) over
// the runs, oldest left; a run whose thresholds failed is marked on every line, and
// hovering a point gives the run's date and commit. Chart.js and the data are inlined
// (lib/report/html.js htmlPage).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { comparableKey, machineClass } from '../../common/history.js';
import { CSS, htmlPage } from '../report/html.js';
import { ResultsError } from '../report/runs.js';
import { readHistory, TRENDS_FILE } from './store.js';

export { TRENDS_FILE };

const PAGE_JS = new URL('./trends-page.js', import.meta.url);

const rowName = (r) => `${r.lane}${r.dims ? ` ${Object.values(r.dims).join(',')}` : ''}`;

// A group of comparable digests -> its charts, one per step.
function chartsOf(digests) {
  const steps = [...new Set(digests.flatMap((d) => d.rows.map((r) => r.step)))];
  return steps.map((step) => {
    const names = [...new Set(digests.flatMap((d) => d.rows.filter((r) => r.step === step).map(rowName)))];
    const series = names.flatMap((name) =>
      ['p50', 'p95'].map((measure) => ({
        label: `${name} ${measure}`,
        row: name,
        dashed: measure === 'p95',
        values: digests.map((d) => d.rows.find((r) => r.step === step && rowName(r) === name)?.[measure] ?? null),
      })),
    );
    return { id: step, title: `step ${step}: p50 (solid) and p95 (dashed), ms`, series };
  });
}

// -> the page's data: { generatedAt, dir, groups: [{ title, runs, charts }] }
export function trendData(files, dir, now = new Date()) {
  const groups = [];
  for (const f of files) {
    const byKind = new Map();
    for (const d of f.digests) {
      const key = comparableKey(d);
      if (!byKind.has(key)) byKind.set(key, []);
      byKind.get(key).push(d);
    }
    for (const digests of byKind.values()) {
      const first = digests[0];
      groups.push({
        title: `${first.scenario} · ${first.profile}`,
        facts: `load ${first.load}, ${first.workload} workload, ${machineClass(first.machine)}: ${digests.length} run${digests.length === 1 ? '' : 's'}, ${digests.filter((d) => !d.passed).length} with failed thresholds`,
        runs: digests.map((d) => ({
          startedAt: d.startedAt,
          commit: d.commit ? d.commit.slice(0, 12) : null,
          passed: d.passed,
          failed: d.thresholds?.failed ?? 0,
          k6: d.k6,
          pack: d.pack,
        })),
        charts: chartsOf(digests),
      });
    }
  }
  return { generatedAt: now.toISOString(), dir, groups };
}

// -> { file, groups, runs }
export function writeTrends(dir, { out, warn } = {}) {
  const files = readHistory(dir, warn);
  if (!files.length)
    throw new ResultsError(
      `the history ${dir} holds no run yet: add runs with \`npx k6pack history add --history ${dir} RUN…\``,
    );
  const data = trendData(files, dir);
  const file = resolve(out || join(dir, TRENDS_FILE));
  try {
    writeFileSync(file, htmlPage({ title: `k6pack trends: ${dir}`, data, script: PAGE_JS, css: CSS }));
  } catch (err) {
    throw new ResultsError(`cannot write ${file}: ${err.message}`);
  }
  return { file, groups: data.groups.length, runs: files.reduce((n, f) => n + f.digests.length, 0) };
}
