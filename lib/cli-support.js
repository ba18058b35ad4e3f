// Pieces the CLI commands share: usage errors (exit 2), signal trapping,
// profile and scenario lookup.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { WORKLOADS } from '../common/schedule.js';
import { choiceHelp } from '../common/settings.js';
import { loadProfile } from './profiles.js';
import { ROOT } from './tools.js';

// A path as messages show it: relative inside the package or the current directory, else as it is.
export const show = (path) =>
  path.startsWith(ROOT) || path === process.cwd() || path.startsWith(process.cwd() + sep)
    ? relative(process.cwd(), path) || '.'
    : path;

// A command's action: it returns the exit code; errors become one line on stderr
// (bin/k6pack.js; K6PACK_DEBUG=1 for the stack).
export const action =
  (fn) =>
  async (...args) => {
    process.exitCode = await fn(...args);
  };

// Bad input on the command line: one line on stderr, exit 2.
export class UsageError extends Error {}

export class InterruptedError extends Error {}

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

// Traps SIGINT/SIGTERM/SIGHUP for the whole command: the first one aborts
// `signal` (long waits give up, cleanup runs), every one goes to the
// listeners (to forward to k6). exitCode() is 128 + the first signal's number.
export function trapSignals() {
  const controller = new AbortController();
  const listeners = new Set();
  const trap = {
    received: null,
    signal: controller.signal,
    onSignal(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    exitCode: () => SIGNAL_EXIT[trap.received],
  };
  for (const sig of Object.keys(SIGNAL_EXIT)) {
    process.on(sig, () => {
      if (!trap.received) {
        trap.received = sig;
        controller.abort(new InterruptedError(`interrupted by ${sig}`));
      }
      for (const fn of listeners) fn(sig);
    });
  }
  return trap;
}

// A profile spec ('3g', '3g+flaky') loaded, or a UsageError with the profiles module's message.
export function profileOrUsage(spec) {
  try {
    return loadProfile(spec);
  } catch (err) {
    throw new UsageError(err.message);
  }
}

// 'lan,3g+flaky' -> [profile, profile]; every spec checked before anything starts.
export function profileList(specs) {
  const list = String(specs)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.length) throw new UsageError('--profile needs at least one profile name');
  return list.map(profileOrUsage);
}

const SCENARIO_DIR = join(ROOT, 'scenarios');

// The scenario names: scenarios/*.js without the extension.
export function scenarioNames() {
  if (!existsSync(SCENARIO_DIR)) return [];
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.js'))
    .map((f) => basename(f, '.js'))
    .sort();
}

// A name from scenarios/ or a path to a script; anything else is a UsageError listing the names.
export function resolveScenario(arg) {
  if (/[/\\]/.test(arg) || arg.endsWith('.js')) {
    const file = resolve(arg);
    if (existsSync(file)) return file;
    if (/[/\\]/.test(arg)) throw new UsageError(`no k6 script at ${arg}`);
  }
  const name = arg.replace(/\.js$/, '');
  if (scenarioNames().includes(name)) return join(SCENARIO_DIR, `${name}.js`);
  const known = scenarioNames();
  throw new UsageError(
    `unknown scenario '${arg}': choose one of ${known.length ? known.join(', ') : '(none yet in scenarios/)'} or give a path to a k6 script`,
  );
}

// The first line of a script's leading comment, as its one-line description.
export function scenarioDescription(name) {
  const text = readFileSync(join(SCENARIO_DIR, `${name}.js`), 'utf8');
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (!/^(\/\/|\/\*|\*)/.test(line)) return '';
    const content = line
      .replace(/^(\/\/+|\/\*+|\*+\/?)/, '')
      .replace(/\*\/$/, '')
      .trim();
    if (content) return content;
  }
  return '';
}

// --workload, checked before anything starts.
export function checkWorkload(workload) {
  if (workload !== undefined && !WORKLOADS.includes(workload))
    throw new UsageError(`--workload ${workload} is not ${choiceHelp('WORKLOAD')}`);
}
