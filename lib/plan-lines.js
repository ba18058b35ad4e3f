// A scenario's plan as lines of text (`k6pack plan`, and each scenario file's header:
// dev/plan-headers.js): every k6 scenario of a run, one line each, and where each figure
// comes from. Here rather than in the command, so dev/ and the tests need no command.
import { buildSpec, describeLink } from './specs.js';

// The lines `k6pack plan` prints; env: the environment it reads (the scenario files'
// headers show the plan of an empty one: dev/plan-headers.js).
export async function planLines(scenario, opts, env = process.env) {
  const lines = [];
  const { built, profile } = await buildSpec(scenario, opts, { out: (line) => lines.push(line) }, env);
  return [...lines, ...describeSchedule(scenario, describeLink(profile), built.plan)];
}

const loadOf = (sc) => {
  if (sc.executor === 'constant-vus') return `${sc.vus} VU${sc.vus === 1 ? '' : 's'}`;
  if (sc.executor === 'shared-iterations') return `${sc.vus} VUs, ${sc.iterations} iterations`;
  return `${sc.rate}/${sc.timeUnit || '1s'} (VUs ${sc.preAllocatedVUs}..${sc.maxVUs})`;
};

// A lane's k6 scenarios are <lane>_<step>.
const laneOf = (name) => name.slice(0, name.lastIndexOf('_'));

export function describeSchedule(scenario, link, schedule) {
  const rows = Object.entries(schedule.scenarios).map(([name, sc]) => [
    name,
    sc.executor,
    loadOf(sc),
    sc.startTime || '0s',
    sc.duration || sc.maxDuration,
    sc.gracefulStop,
  ]);
  const head = ['k6 scenario', 'executor', 'VUs or rate', 'start', 'duration', 'graceful stop'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    `  ${cells
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd()}`;
  const lines = [
    `${scenario} under ${link}, load ${schedule.level}, ${schedule.workload} workload: ${rows.length} k6 scenarios, ${schedule.totalSeconds.toFixed(1)} s in all`,
    line(head),
    ...rows.map(line),
    'where the figures come from:',
  ];
  // Each figure once when every k6 scenario agrees, else once per lane, else per step.
  const names = Object.keys(schedule.scenarios);
  const lanes = [...new Set(names.map(laneOf))];
  for (const [field, label] of [
    ['load', 'VUs or rate'],
    ['duration', 'duration'],
    ['graceful', 'graceful stop'],
  ]) {
    const text = (n) => schedule.why[n][field];
    const same = (list) => new Set(list.map(text)).size === 1;
    if (same(names)) lines.push(`  ${label}: ${text(names[0])}`);
    else
      for (const lane of lanes) {
        const steps = names.filter((n) => laneOf(n) === lane);
        if (same(steps)) lines.push(`  ${label}, ${lane}: ${text(steps[0])}`);
        else for (const n of steps) lines.push(`  ${label}, ${n}: ${text(n)}`);
      }
  }
  if (schedule.workload === 'closed' || schedule.workload === 'open')
    lines.push('  start: each step after the one before and its graceful stop (lanes run alone, one after another)');
  else lines.push('  start: every lane at once (a mix)');
  return lines;
}
