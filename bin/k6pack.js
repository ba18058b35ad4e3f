#!/usr/bin/env node
// k6pack: the embedded stack (servers + toxiproxy as plain processes) and the
// commands around it, one file each in lib/commands/. `k6pack --help` lists them.
//
// Exit codes: 0 ok, 1 failure (one line on stderr), 2 bad usage, k6's own code
// for `run` (99: a threshold failed), 3 for `compare` on a regression, 99 for
// `merge` when a threshold fails on the pooled data, for `gate` a broken run's
// code, else 99, else 3; 130/143 after SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { DEFAULT_PORTS } from '../common/defaults.js';
import { InterruptedError, trapSignals, UsageError } from '../lib/cli-support.js';
import { COMMANDS } from '../lib/commands/index.js';
import { defaultRunDir } from '../lib/stack.js';
import { rawSetting } from '../common/settings.js';

const trap = trapSignals();
const ctx = {
  runDir: defaultRunDir(),
  out: (line) => console.log(line),
  warn: (line) => console.error(`k6pack: ${line}`),
  trap,
};

function exitCodeFor(err) {
  if (trap.received || err instanceof InterruptedError) return trap.exitCode() ?? 130;
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
  if (Number.isInteger(err.exitCode)) return err.exitCode; // e.g. 4: the stack is in use (lib/hold.js)
  return err instanceof UsageError ? 2 : 1;
}

const program = new Command('k6pack')
  .description('GraphQL over HTTP/WS vs gRPC load-testing pack: stack, profiles, runs')
  .version(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version)
  .exitOverride()
  .showHelpAfterError('(add --help for usage)')
  .addHelpText(
    'after',
    `
Ports, each overridden by its env var:
  ${Object.entries(DEFAULT_PORTS)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
    .replace(/(.{1,90})(?: |$)/g, '$1\n  ')
    .trim()}
Logs and pid files: .run/ (K6PACK_RUN_DIR moves it).

Examples:
  $ npx k6pack up --profile 3g
  $ npx k6pack run ws-vs-http --profile lan,3g,3g+flaky --load smoke
  $ npx k6pack report results/ws-vs-http-3g-*
  $ npx k6pack gate
  $ npx k6pack down`,
  );

for (const register of COMMANDS) register(program, ctx);

try {
  await program.parseAsync();
} catch (err) {
  process.exitCode = exitCodeFor(err);
  if (!(err instanceof CommanderError)) {
    if (rawSetting(process.env, 'K6PACK_DEBUG')) console.error(err);
    else if (!trap.received) ctx.warn(String(err.message || err).split('\n')[0]);
    else ctx.warn(`stopped (${trap.received})`);
  }
}
// Idle keep-alive sockets (fetch) must not hold the exit; stdout/stderr writes are synchronous here.
process.exit(trap.received ? trap.exitCode() : (process.exitCode ?? 0));
