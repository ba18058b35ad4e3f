// The machine the budgets assume: { cores, cpuScale } from CPU_CORES and CPU_SCALE
// (k6's -e, or Node's env). `k6pack run` and `gate` measure both before each k6 run
// (lib/calibrate.js) and pass them on; a plain `k6 run` without them assumes the
// pack's reference machine (common/model.js REFERENCE_MACHINE: 2 cores, scale 1).
// How the budgets use them: common/model.js budget().
import { SETTINGS, setting } from './settings.js';
import { REFERENCE_MACHINE } from './model.js';

// Bounds: a scale past 20 means the machine cannot run a load test at all.
export const CPU_SCALE_MAX = SETTINGS.CPU_SCALE.max;

export function machineOf(env) {
  return {
    cores: setting(env, 'CPU_CORES', REFERENCE_MACHINE.cores),
    cpuScale: setting(env, 'CPU_SCALE', REFERENCE_MACHINE.cpuScale),
  };
}

export const describeMachine = (m) => `${m.cores} cores, CPU x${m.cpuScale.toFixed(2)} of the reference machine's time`;
