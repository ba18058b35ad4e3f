// Every VU of a watched step must report. A VU whose WebSocket lane records
// nothing in a step (no completed, failed or abandoned operation, no failed
// connect) is one that k6 wedged (docs/known-limits.md), and that has to show as
// a failure, not as a step with fewer operations.
//
//   silent_vus      teardown adds each watched step's VUs, and each VU takes
//                   itself off (-1) at its first outcome in that step, so what is
//                   left is the number of VUs that stayed silent: thresholds.json
//                   gates it at 0 ("silent_vus": ["count==0"]); per step it is
//                   silent_vus{scenario:<lane>_<step>}.
//   vus_completing  +1 per VU and step, at the VU's first completed operation.
//
// Watched: the steps of lanes declared with vuCheck (lane(..., { vuCheck: true }))
// that run a fixed number of VUs (constant-vus). Off under --execution-segment:
// no instance knows how many of a step's VUs are its own.
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { seconds } from '../../common/results.js';
import { laneOfStep } from '../../common/schedule.js';
import { scenarioInfo } from './load.js';

export const silentVus = new Counter('silent_vus');
export const vusCompleting = new Counter('vus_completing');

const WATCHED = {}; // k6 scenario name -> { vus, offsetMs, tags }

// Init context: the watched steps of a plan (load.js) of these lanes.
export function watchVus(plan, lanes) {
  for (const [name, sc] of Object.entries(plan.scenarios)) {
    const lane = laneOfStep(lanes, name, sc);
    if (!lane || !lane.vuCheck || sc.executor !== 'constant-vus') continue;
    WATCHED[name] = {
      vus: sc.vus,
      offsetMs: seconds(sc.startTime || '0s') * 1000,
      tags: { ...sc.tags, scenario: name },
    };
  }
}

// The per-step sub-metrics to report (thresholds.js observers).
export function watchedKeys() {
  return Object.keys(WATCHED).flatMap((name) =>
    ['silent_vus', 'vus_completing', 'op_abandoned'].map((m) => `${m}{scenario:${name}}`),
  );
}

const splitTest = () => {
  const segment = exec.test.options.executionSegment;
  return Boolean(segment) && String(segment) !== '0:1';
};

// Per VU: the steps it has reported in (and completed an operation in).
let split = null;
const reported = {};
const completedIn = {};

// A VU's outcome in the running step: completed (true) or not (failed, abandoned).
// Cheap after the first call per step; sessions.js calls it at most twice a session.
export function reportVu(completed) {
  const name = scenarioInfo().name;
  if (!WATCHED[name]) return;
  if (split === null) split = splitTest();
  if (split) return;
  if (!reported[name]) {
    reported[name] = true;
    silentVus.add(-1);
  }
  if (completed && !completedIn[name]) {
    completedIn[name] = true;
    vusCompleting.add(1);
  }
}

// teardown(): every watched step that started since `stepsFrom` (epoch ms, the
// end of setup: scenario start times count from there) adds its VUs.
export function settleSilentVus(stepsFrom) {
  if (splitTest() || typeof stepsFrom !== 'number') return;
  const elapsed = Date.now() - stepsFrom;
  for (const w of Object.values(WATCHED)) {
    if (w.offsetMs < elapsed) silentVus.add(w.vus, w.tags);
  }
}

// Summary lines: per watched step, how many VUs completed operations and how many stayed silent.
export function silentVuNotes(data) {
  const names = Object.keys(WATCHED);
  if (!names.length) return [];
  const count = (key) => (data.metrics[key] ? data.metrics[key].values.count : 0);
  const cells = names.map((name) => {
    const silent = count(`silent_vus{scenario:${name}}`);
    return `${name} ${count(`vus_completing{scenario:${name}}`)}/${WATCHED[name].vus} completed${silent ? `, ${silent} SILENT` : ''}`;
  });
  return [
    `VUs per step (every VU must record an operation in every step; a silent one fails silent_vus): ${cells.join('; ')}`,
  ];
}
