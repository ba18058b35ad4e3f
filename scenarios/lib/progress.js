// Progress on long runs: one log line when a step starts, e.g.
//   k6pack ws-vs-http (3g): step 3/12 http_keepalive_c1 (1 VU) starts at 0m24s, ~1m36s left
// Times come from the plan's startTimes. Only the VU running the step's first
// iteration logs (at most once per step, also across execution segments),
// from the first operation it records (metrics.js, sessions.js, grpc.js call stepStarted()).
// k6's own progress bar is untouched.
import { scenarioInfo } from './load.js';
import { clock, seconds } from '../../common/results.js';

let label = '';
let order = {}; // k6 scenario name -> { index, offset, vus }
let count = 0;
let total = 0;
const announced = {};

// Init context: the plan (load.js) and a label such as 'ws-vs-http (3g)'.
export function trackSteps(plan, name) {
  label = name;
  const steps = Object.entries(plan.scenarios)
    .filter(([, sc]) => sc.tags && sc.tags.transport)
    .map(([n, sc]) => ({ name: n, offset: seconds(sc.startTime || '0s'), vus: sc.vus, rate: sc.rate }))
    .sort((a, b) => a.offset - b.offset);
  order = Object.fromEntries(steps.map((s, i) => [s.name, { ...s, index: i + 1 }]));
  count = steps.length;
  total = plan.totalSeconds || 0;
}

export function stepStarted() {
  const info = scenarioInfo();
  const name = info.name;
  if (announced[name]) return;
  announced[name] = true;
  const step = order[name];
  if (!step || info.iterationInTest !== 0) return;
  const load = step.vus !== undefined ? `${step.vus} VU${step.vus === 1 ? '' : 's'}` : `${step.rate}/s`;
  console.log(
    `k6pack ${label}: step ${step.index}/${count} ${name} (${load}) starts at ${clock(step.offset)}, ~${clock(Math.max(0, total - step.offset))} left`,
  );
}
