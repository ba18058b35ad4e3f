// The commands of bin/k6pack.js, one file each, in the order `k6pack --help` lists them.
// Each file's register(program, ctx) adds its command (flags, help, action) to commander.
import { register as tools } from './tools.js';
import { register as up } from './up.js';
import { register as down } from './down.js';
import { register as status } from './status.js';
import { register as profile } from './profile.js';
import { register as run } from './run.js';
import { register as gate } from './gate.js';
import { register as report } from './report.js';
import { register as compare } from './compare.js';
import { register as merge } from './merge.js';
import { register as history } from './history.js';
import { register as thresholds } from './thresholds.js';
import { register as plan } from './plan.js';
import { register as list } from './list.js';

export const COMMANDS = [
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
