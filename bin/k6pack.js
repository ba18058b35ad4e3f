#!/usr/bin/env node
// k6pack: the embedded stack (servers + toxiproxy as plain processes) and the
// commands around it. `k6pack --help` lists them.
//
// Exit codes: 0 ok, 1 failure (one line on stderr), 2 bad usage, k6's own code
// for `run` (99: a threshold failed), 3 for `compare` on a regression, 99 for
// `merge` when a threshold fails on the pooled data, for `gate` a broken run's
// code, else 99, else 3; 130/143 after SIGINT/SIGTERM.
import { Command, CommanderError } from 'commander';
import { InterruptedError, trapSignals, UsageError, UsageError as Usage } from '../lib/cli-support.js';
import * as commands from '../lib/commands.js';
import { GATE_DEFAULTS, GATE_FILES, runGate } from '../lib/gate.js';
import * as results from '../lib/report/cli.js';
import { runScenario } from '../lib/run.js';
import { addApiOptions, apiFlagsIn } from '../lib/api/config.js';
import { runApi, upApi } from '../lib/api/run.js';
import { defaultRunDir } from '../lib/stack.js';
import { installTools } from '../lib/tools.js';
import { DEFAULT_PORTS } from '../common/defaults.js';

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

// Every action returns an exit code; errors become one line on stderr (K6PACK_DEBUG=1 for the stack).
const action =
  (fn) =>
  async (...args) => {
    process.exitCode = await fn(...args);
  };

const program = new Command('k6pack')
  .description('GraphQL over HTTP/WS vs gRPC load-testing pack: stack, profiles, runs')
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

program
  .command('tools')
  .description('install k6 v1.8.1 and toxiproxy-server v2.5.0 (+ the link and handshake toxics) into .tools/bin')
  .action(action(() => (installTools(), 0)));

addApiOptions(
  program
    .command('up')
    .description(
      'start both servers and toxiproxy in the background, populate the proxies, apply a profile; with --api/--graphql/--grpc: proxies in front of your own API',
    )
    .option('-p, --profile <name>', 'network profile, optionally +fault (default: lan)')
    .option('--wait', 'when a run holds the stack, wait for it before changing the profile'),
)
  .addHelpText(
    'after',
    `
Installs the tools if missing. If the stack already runs, says so and applies
--profile (not while a run holds the stack: exit 4, or --wait); if one of its
processes died, names it with the end of its log and restarts just what died.
With your own API (the same flags as \`run api\`): checks and discovers it, puts
Toxiproxy proxies in front of its endpoints (PROXY_API_GRAPHQL_PORT=16000,
PROXY_API_WS_PORT=16001, PROXY_API_GRPC_PORT=16051, on 127.0.0.1; starting
Toxiproxy alone when no stack runs) and writes .run/api-plan.json for
\`k6 run -e API=.run/api-plan.json scenarios/api.js\`.

Examples:
  $ npx k6pack up
  $ npx k6pack up --profile 3g+flaky
  $ GRAPHQL_PORT=5000 PROXY_GRAPHQL_PORT=15000 npx k6pack up
  $ npx k6pack up --api ./api.json --profile 3g`,
  )
  .action(action((opts) => (apiFlagsIn(opts).length ? upApi(opts, ctx) : commands.up(opts, ctx))));

program
  .command('down')
  .description(
    'stop everything `up` started (SIGTERM, SIGKILL after 5 s) and wait until its ports are free; safe to repeat',
  )
  .option('--force', 'stop it even while a run holds the stack')
  .addHelpText(
    'after',
    '\nRefuses (exit 4) while a run holds the stack, unless --force. Returns once every port the stack held can be\nbound again; a port still held 5 s after the stop is named with the pid holding it (exit 1).\n\nExample:\n  $ npx k6pack down',
  )
  .action(action((opts) => commands.down(opts, ctx)));

program
  .command('status')
  .description('show each process, its ports and the toxics per proxy; exit 1 unless all is running')
  .addHelpText('after', '\nExample:\n  $ npx k6pack status || npx k6pack up')
  .action(action((opts) => commands.status(opts, ctx)));

program
  .command('profile')
  .description('switch the running stack to another network profile (removes the old toxics)')
  .argument('<name>', "profile, e.g. lan, 3g, 3g+flaky ('npx k6pack list' shows them)")
  .option('--wait', 'when a run holds the stack, wait for it to end first')
  .addHelpText(
    'after',
    '\nRefuses (exit 4) while a run holds the stack, naming it, unless --wait.\n\nExamples:\n  $ npx k6pack profile 3g\n  $ npx k6pack profile lan',
  )
  .action(action((name, opts) => commands.profile(name, opts, ctx)));

addApiOptions(
  program
    .command('run')
    .description(
      'run a scenario once per profile; starts (and afterwards stops) the stack if it is not up; `run api` runs your own API',
    )
    .argument('<scenario>', 'scenario name from scenarios/ (e.g. ws-vs-http) or a path to a k6 script')
    .argument('[k6args...]', 'extra arguments for `k6 run`, after --')
    .option('-p, --profile <names>', "comma-separated profiles, one k6 run each (default: the scenario's own)")
    .option('-l, --load <level>', 'load level, passed to k6 as -e LOAD=<level>')
    .option('--results <dir>', 'where run folders go (default: ./results, or K6PACK_RESULTS_DIR)')
    .option('--no-samples', 'keep no raw samples (samples.json.gz); the histograms (histograms.json.gz) still merge')
    .option('--dashboard', "k6's web dashboard on a free 127.0.0.1 port, saved as k6-dashboard.html in the run folder")
    .option('--wait', 'when another run holds the stack, wait for it to end (default: refuse, exit 4)')
    .option(
      '-w, --workload <kind>',
      'closed (VUs in a loop, the default) or open (rising arrival rates from the model), passed as -e WORKLOAD',
    )
    .option(
      '-m, --metrics <mode>',
      'full (every figure the summary reports, the default) or lean (op_duration and op_failed only, for the most load one k6 drives), passed as -e METRICS',
    ),
)
  .addHelpText(
    'after',
    `
k6 gets the targets, PROFILE and LOAD as -e variables. The run holds the stack
while it runs: another run, gate or profile change on it is refused (exit 4)
or, with --wait, waits. Each profile's toxics are applied before its k6 run;
the toxics found on a running stack are put back at the end (a proxy that
already carries them is not touched). The exit code is k6's (99: a threshold
failed); with several profiles, the first non-zero one; 1 if a server or
toxiproxy died during the run (named with the end of its log; later profiles
do not run); 4 if another run holds the stack.
Each k6 run gets a run folder, results/<scenario>-<profile>-<UTC time>/, with
summary.json, junit.xml, summary.md, histograms.json.gz (built while k6's
samples stream in) and samples.json.gz (-e RESULTS_DIR=<dir> after -- picks
the folder, RESULTS_DIR=none keeps nothing); the scenarios log a line as each
step starts.
Ctrl-C stops k6 gracefully (teardown runs), removes the toxics and stops what
this command started.

Examples:
  $ npx k6pack run ws-vs-http
  $ npx k6pack run ws-vs-http --profile lan,3g --load smoke
  $ npx k6pack run ./my-test.js --profile 3g -- --vus 5 --duration 30s

Your own API (README "Your own API"): \`run api\` checks the operations, variables,
.proto and request, discovers what the endpoints speak, measures their server time
under lan at one VU, and runs every lane that applies through proxies in front of
them (Toxiproxy alone is started when no stack runs). Bad input: one line, exit 2.
  $ npx k6pack run api --graphql http://127.0.0.1:4100/graphql --operations ./ops.graphql --profile lan,3g
  $ npx k6pack run api --grpc 127.0.0.1:9090 --proto ./svc.proto --call pkg.Service/Method --request '{"id": 1}'
  $ npx k6pack run api --api ./api.json --profile lan,3g --load ci`,
  )
  .action(
    action((scenario, k6Args, opts) => {
      const given = apiFlagsIn(opts);
      if (scenario === 'api') return runApi({ ...opts, k6Args }, ctx);
      if (given.length)
        throw new Usage(
          `${given.join(', ')} belong${given.length === 1 ? 's' : ''} to \`run api\` (your own API), not to ${scenario}`,
        );
      return runScenario(scenario, { ...opts, k6Args }, ctx);
    }),
  );

program
  .command('gate')
  .description(
    'the PR gate in one command: every scenario but soak and api, per profile; HTML report, JUnit and Markdown in one folder',
  )
  .argument('[k6args...]', 'extra arguments for every `k6 run`, after --')
  .option('-p, --profile <names>', 'comma-separated profiles, one k6 run each per scenario', GATE_DEFAULTS.profile)
  .option('-l, --load <level>', 'load level, passed to k6 as -e LOAD=<level>', GATE_DEFAULTS.load)
  .option('-s, --scenarios <names>', 'comma-separated scenarios (default: every one but soak and api)')
  .option(
    '--results <dir>',
    'the gate folder for its run folders and files (default: results/gate-<UTC time>/, or under K6PACK_RESULTS_DIR)',
  )
  .option(
    '--baseline <path>',
    'compare each run with the baseline run of its scenario and profile: a gate folder, a folder of run folders, or a summary.json',
  )
  .option('-t, --tolerance <pct>', 'with --baseline: latency p50/p95 change allowed, relative (default 10%)')
  .option('--dashboard', "k6's web dashboard per run, saved as k6-dashboard.html in its run folder")
  .option('--wait', 'when another run holds the stack, wait for it to end (default: refuse, exit 4)')
  .option('-w, --workload <kind>', 'closed (VUs in a loop, the default) or open (rising arrival rates from the model)')
  .option('-m, --metrics <mode>', 'full (the default) or lean (op_duration and op_failed only), passed as -e METRICS')
  .addHelpText(
    'after',
    `
Starts the stack if it is not up (and stops it afterwards), runs the scenarios
one after another (k6pack run's output, with a progress line per scenario),
then writes into the gate folder, beside the run folders:
  ${GATE_FILES.report}  the HTML report of every run (\`k6pack report\`)
  ${GATE_FILES.junit}    one test suite per run, one test case per threshold
  ${GATE_FILES.markdown}      every run's Markdown table, and the comparison (for $GITHUB_STEP_SUMMARY)
  ${GATE_FILES.record}    seconds and exit codes per scenario and run
Exit code: 0 all passed; 99 a threshold failed (the other runs still run);
3 a regression against --baseline; another code when a run broke (k6's, or 1
if a server or toxiproxy died: the gate stops there); 2 bad usage.
Ctrl-C stops k6 gracefully and stops what this command started.

Examples:
  $ npx k6pack gate
  $ npx k6pack gate --scenarios ws-vs-http,push --profile lan --load smoke
  $ npx k6pack gate --results results/pr --baseline results/main --tolerance 5%`,
  )
  .action(action((k6Args, opts) => runGate({ ...opts, k6Args }, ctx)));

program
  .command('report')
  .description('one self-contained HTML report (charts, tables) from run folders; opens offline')
  .argument('<runs...>', 'run folders (results/<scenario>-<profile>-<time>/) or summary.json files')
  .option('-o, --out <file>', 'where to write it (default: <first run folder>/report.html)')
  .option('--method <m>', 'how runs of one test are merged: auto, exact or hdr (as merge)', 'auto')
  .addHelpText(
    'after',
    `
Runs of the same scenario, profile and load (e.g. --execution-segment halves)
are merged first, as \`k6pack merge\` merges them. Pictures: latency vs concurrency per
lane, latency vs message size, the serialization ratio vs N per executor, study
001's document split into generation time and the rest, push latency, and
measured vs the round-trip model of the profile.

Examples:
  $ npx k6pack report results/ws-vs-http-3g-20250101T120000Z
  $ npx k6pack report results/*-lte-* --out lte.html`,
  )
  .action(action((runs, opts) => results.report(runs, opts, ctx)));

program
  .command('compare')
  .description('compare two runs row by row; exit 3 on a latency or failure-rate regression')
  .argument('<base>', 'the baseline: a run folder or summary.json')
  .argument('<current>', 'the run to judge: a run folder or summary.json')
  .option('-t, --tolerance <pct>', 'latency p50/p95 change allowed, relative (default 10%)')
  .option('--min-ms <ms>', 'and absolute: smaller latency changes never count (default 1)')
  .option('--failure-tolerance <pct>', 'failure-rate rise allowed, in percentage points (default 0.5%)')
  .option('--markdown', 'a Markdown table (PR comment, $GITHUB_STEP_SUMMARY)')
  .option('--changes-only', 'leave out unchanged lines')
  .addHelpText(
    'after',
    `
Rows are matched by lane, step and dims; improvements and new or missing rows
are shown and never fail. Exit 0: no regression; 3: at least one; 1: a file
could not be read.

Examples:
  $ npx k6pack compare results/base results/ws-vs-http-3g-20250101T120000Z
  $ npx k6pack compare base/summary.json results/latest --tolerance 5% --markdown >> "$GITHUB_STEP_SUMMARY"`,
  )
  .action(action((base, current, opts) => results.compare(base, current, opts, ctx)));

program
  .command('merge')
  .description(
    'merge runs of one scenario and profile (segments, k6-operator runners) from their samples or histograms',
  )
  .argument('<runs...>', 'two or more run folders with samples.json.gz or histograms.json.gz')
  .requiredOption('-o, --out <dir>', 'a new (or empty) folder for the merged summary.json, junit.xml, summary.md')
  .option('--method <m>', 'auto, exact (pool every raw sample) or hdr (merge histograms)', 'auto')
  .addHelpText(
    'after',
    `
Every statistic is computed again from the runs' samples, and the thresholds
are evaluated on the merged data: exit 99 if one fails. auto pools the raw
samples exactly when every run has samples.json.gz and they add up to at most
32 MiB; otherwise it merges the runs' HdrHistograms (histograms.json.gz, or
built from samples.json.gz while reading it): percentiles within 0.1 %
(3 significant digits), counts, rates, min, max and avg exact. summary.json's
run.merged.method says which.

Example:
  $ npx k6pack merge results/run-a results/run-b --out results/merged`,
  )
  .action(action((runs, opts) => results.merge(runs, opts, ctx)));

program
  .command('thresholds')
  .description("a scenario's gates under a profile and load level, each with the model term behind it")
  .argument('<scenario>', 'scenario name (e.g. ws-vs-http)')
  .option(
    '-p, --profile <name>',
    "profile, a fault combination, or a file of your own (./my-network.json) (default: the scenario's)",
  )
  .option('-l, --load <level>', 'load level (default: ci; the steps follow it)')
  .option(
    '-w, --workload <kind>',
    "closed (the default) or open: then also each open step's arrivals, VU pool and dropped-arrivals gate",
  )
  .option('--file <path>', 'the policy file (default: THRESHOLDS, else thresholds.json)')
  .addHelpText(
    'after',
    `
Every lane at every step gets p50 and p95 budgets from the round-trip model
(docs/model.md) and the margins of thresholds.json; this prints them as k6
would get them, with the model's formula and expected time behind each.

Examples:
  $ npx k6pack thresholds ws-vs-http --profile 5g
  $ npx k6pack thresholds grpc-vs-graphql --profile ./my-network.json --load full
  $ npx k6pack thresholds ws-vs-http --profile lte --workload open`,
  )
  .action(action((scenario, opts) => commands.thresholds(scenario, opts, ctx)));

program
  .command('list')
  .alias('scenarios')
  .alias('profiles')
  .description('list the scenarios and the profiles with one-line descriptions')
  .action(action((opts) => commands.list(opts, ctx)));

try {
  await program.parseAsync();
} catch (err) {
  process.exitCode = exitCodeFor(err);
  if (!(err instanceof CommanderError)) {
    if (process.env.K6PACK_DEBUG) console.error(err);
    else if (!trap.received) ctx.warn(String(err.message || err).split('\n')[0]);
    else ctx.warn(`stopped (${trap.received})`);
  }
}
// Idle keep-alive sockets (fetch) must not hold the exit; stdout/stderr writes are synchronous here.
process.exit(trap.received ? trap.exitCode() : (process.exitCode ?? 0));
