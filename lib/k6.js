// Running the pinned k6: the command line (targets as explicit -e flags, so a
// scenario sees the same values whatever the caller's environment holds).
import { findK6, ToolError } from './tools.js';
import { K6_VERSION } from '../common/defaults.js';

// k6's exit code when a threshold failed (`k6 run`); the pack's own gates exit with it too.
export const THRESHOLDS_FAILED = 99;

export function requireK6() {
  const k6 = findK6();
  if (!k6) throw new ToolError(`k6 ${K6_VERSION} is not installed: run \`npx k6pack tools\``);
  return k6;
}

// ['run', '-e', 'K=V', ..., ...args, script]; undefined/null env values are left out.
export function k6RunArgs(script, { env = {}, args = [] } = {}) {
  const envFlags = Object.entries(env)
    .filter(([, v]) => v !== undefined && v !== null)
    .flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  return ['run', ...envFlags, ...args, script];
}
