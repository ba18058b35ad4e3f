// How much slower this machine runs than the reference one, for a test's waits: a wait
// (a hang guard, never an assertion) that held on the reference machine is scaled by
// the CPU factor lib/calibrate.js measures (the figure `k6pack run` prints as
// "CPU x1.82 of the reference machine's time"), so that a slower or busier machine
// waits longer instead of failing.
//
// Measured once per test process (node --test runs each file in its own), when this
// module is first imported: three rounds, about 0.2 s. The factor is never below 1 (a
// faster machine keeps the waits as written) and never above WAIT_SCALE_MAX: the
// calibration reads the load of the moment (x9.5 to x18 inside runs with four test
// files at once on two cores), and a wait stretched twentyfold would only delay the
// report of a real hang. CPU_SCALE in the environment replaces the measurement (as it
// does for a k6 run: common/machine.js).
import { measureMachine } from '../../lib/calibrate.js';

export const WAIT_SCALE_MAX = 4;

async function measure() {
  const given = Number(process.env.CPU_SCALE);
  if (Number.isFinite(given) && given > 0) return given;
  return (await measureMachine({ rounds: 3 })).cpuScale;
}

// The machine's CPU factor against the reference machine (>= 1), as measured.
export const CPU_FACTOR = await measure();

// `ms` on the reference machine -> ms on this one (at least ms, at most WAIT_SCALE_MAX x ms).
export const scaled = (ms) => Math.round(ms * Math.min(WAIT_SCALE_MAX, Math.max(1, CPU_FACTOR)));
