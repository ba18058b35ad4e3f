// Calls that end before their step does: a lane starts a call only if the call's
// expected time (common/scenario.js callMs: the model's median with a margin) fits in
// what is left of its step, so a step's gracefulStop need not cover a whole
// iteration of big messages (grpc-vs-graphql). When nothing fits any more, a VU
// of the closed workload waits the step out instead of starting empty iterations.
import { sleep } from 'k6';
import exec from 'k6/execution';
import { linkOf } from '../../common/model.js';
import { callMs } from '../../common/scenario.js';
import { remainingMs } from './load.js';

// built: defineScenario's result. -> fits(laneName, dims) -> boolean
export function fitter(built) {
  const link = linkOf(built.profile);
  const cache = {};
  return (laneName, dims) => {
    const key = `${laneName}|${dims.payload}|${dims.conn}`;
    let ms = cache[key];
    if (ms === undefined) {
      const lane = built.lanes.find((l) => l.name === laneName);
      ms = cache[key] = lane ? callMs(lane, dims, link) : 0;
    }
    return remainingMs() >= ms;
  };
}

// Nothing fits: under the closed workload wait for the step to end (at most 5 s at a
// time); an open step's arrival just ends.
export function waitOutStep(built) {
  if (built.plan.workload === 'open') return;
  sleep(Math.max(0, Math.min(remainingMs(), 5000)) / 1000 + 0.05);
}

// A lane whose iteration is a fixed sequence (serialization's N per request,
// compound-vs-parallel's documents): a VU's first iteration in a step always runs,
// a later one only if the lane's whole iteration (the plan's laneSeconds: the model
// with a margin) fits in what is left of the step; otherwise it waits the step out.
// The step's gracefulStop then need only cover closing (the plan's closeSeconds).
// The margin is callMs's (the model's time x 1.2 and a little): under lte a third
// compound-vs-parallel iteration that started with exactly its model time left was cut
// at the step's end, and its rows kept a sample fewer than the others.
const WHOLE_MARGIN = 1.25;
export function wholeIterations(built, laneName, fn) {
  const lane = built.lanes.find((l) => l.name === laneName);
  const ms = (lane && lane.iterationSeconds ? lane.iterationSeconds : 0) * 1000 * WHOLE_MARGIN;
  return (...args) => {
    if (exec.vu.iterationInScenario > 0 && remainingMs() < ms) return waitOutStep(built);
    return fn(...args);
  };
}
