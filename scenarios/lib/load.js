// The running k6 scenario: where it is in its step. The plan itself is built by
// common/schedule.js (load levels, steps); scenario.js registers it here.
import exec from 'k6/execution';

// Every k6 scenario of the plan, by name, with its duration in ms.
let DURATIONS = {};
export function registerPlan(plan) {
  DURATIONS = plan.durations || {};
}

// The running scenario's info. exec.scenario builds a new object of accessors
// on every read (~10 µs in k6's JS runtime, and remainingMs() runs before every
// WebSocket operation); the accessors read the VU's current scenario when
// called, so one object serves the VU's whole life, across scenarios.
let info = null;
export function scenarioInfo() {
  if (!info) info = exec.scenario;
  return info;
}

// Milliseconds left in the running step (Infinity outside a planned scenario).
export function remainingMs() {
  const sc = scenarioInfo();
  const duration = DURATIONS[sc.name];
  if (duration === undefined) return Infinity;
  return sc.startTime + duration - Date.now();
}

// Fraction of the running scenario's duration already gone, 0..1 (0 outside a plan).
export function progress() {
  const sc = scenarioInfo();
  const duration = DURATIONS[sc.name];
  if (!duration) return 0;
  return Math.min(1, Math.max(0, (Date.now() - sc.startTime) / duration));
}
