// The commands of bin/k6pack.js, one file each, in the order `k6pack --help` lists them.
// Each file's register(program, ctx) adds its command (flags, help, action) to commander.
import { register as init } from './k6pack-init.js';
import { register as tools } from './k6pack-tools.js';
import { register as up } from './k6pack-up.js';
import { register as down } from './k6pack-down.js';
import { register as status } from './k6pack-status.js';
import { register as profile } from './k6pack-profile.js';
import { register as run } from './k6pack-run.js';
import { register as gate } from './k6pack-gate.js';
import { register as report } from './k6pack-report.js';
import { register as compare } from './k6pack-compare.js';
import { register as merge } from './k6pack-merge.js';
import { register as history } from './k6pack-history.js';
import { register as thresholds } from './k6pack-thresholds.js';
import { register as plan } from './k6pack-plan.js';
import { register as list } from './k6pack-list.js';

export const COMMANDS = [
  init,
  tools,
  up,
  down,
  status,
  profile,
  run,
  gate,
  report,
  compare,
  merge,
  history,
  thresholds,
  plan,
  list,
];
