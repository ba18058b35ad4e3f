// `k6pack run`: one k6 run of a scenario per profile against the embedded
// stack, which it starts for the run if it is not up and stops afterwards
// (lib/runner.js); `run api` runs your own API (lib/api/run-api.js).
import { addApiOptions, apiFlagsIn } from '../api/api-config.js';
import { runApi } from '../api/run-api.js';
import {
  action,
  profileList,
  profileOrUsage,
  resolveScenario,
  UsageError,
  UsageError as Usage,
} from '../cli-support.js';
import { recordRuns } from '../history/record.js';
import { checkPrometheus, parsePrometheusOut } from '../prometheus.js';
import { envFlagsOf, resultsRoot } from '../report/run-folder.js';
import { checkMetrics, checkWorkload, runProfiles, withRunStack } from '../runner.js';
import { ensureTools } from '../tools.js';
import { checkDeclaration } from '../specs.js';

export function register(program, ctx) {
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
      .option('--history <dir>', "append each run's digest to this history folder (`k6pack history`)")
      .option(
        '--out <prometheus=URL>',
        "also write k6's metrics to a Prometheus remote-write endpoint, trends as native histograms (docs/history.md)",
      )
      .option(
        '--dashboard',
        "k6's web dashboard on a free 127.0.0.1 port, saved as k6-dashboard.html in the run folder",
      )
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

Your own API (docs/your-api.md): \`run api\` checks the operations, variables,
.proto and request, discovers what the endpoints speak, measures their server time
under lan at one VU, and runs every lane that applies through proxies in front of
them (Toxiproxy alone is started when no stack runs). Bad input: one line, exit 2.
  $ npx k6pack run api --graphql http://127.0.0.1:4100/graphql --operations ./ops.graphql --profile lan,3g
  $ npx k6pack run api --grpc 127.0.0.1:9090 --proto ./svc.proto --call pkg.Service/Method --request '{"id": 1}'
  $ npx k6pack run api --api ./api.json --profile lan,3g --load ci
  $ SOAK_DURATION=2m npx k6pack run soak --api ./api.json --server-pid $(pgrep -f my-server)`,
    )
    .action(
      action((scenario, k6Args, opts) => {
        const given = apiFlagsIn(opts);
        if (scenario === 'api') return runApi({ ...opts, k6Args }, ctx);
        // Your API's soak: every lane at once at a constant arrival rate (docs/your-api.md).
        if (scenario === 'soak' && given.length) return runApi({ ...opts, k6Args, soak: true }, ctx);
        if (given.length)
          throw new Usage(
            `${given.join(', ')} belong${given.length === 1 ? 's' : ''} to \`run api\` (your own API), not to ${scenario}`,
          );
        return runScenario(scenario, { ...opts, k6Args }, ctx);
      }),
    );
}

// Without --profile, k6 runs once with no PROFILE: a scenario applies its own
// default profile in setup() (scenarios/lib/network.js), a plain script runs
// through whatever toxics the stack has.
// opts.results: the folder that holds the run folders; opts.samples: false
// (--no-samples) keeps no raw samples; opts.dashboard: k6's web dashboard,
// exported into the run folder.
export async function runScenario(
  scenario,
  {
    profile,
    load,
    workload,
    metrics,
    k6Args = [],
    results,
    samples = true,
    dashboard = false,
    wait = false,
    history,
    out: prometheusOut,
  },
  ctx,
) {
  if (scenario === 'api')
    throw new UsageError(
      'the api scenario runs your own API: give --graphql URL --operations FILE and/or --grpc ADDR --proto FILE --call pkg.Service/Method, or --api ./api.json (docs/your-api.md)',
    );
  const script = resolveScenario(scenario);
  checkWorkload(workload);
  checkMetrics(metrics);
  const profiles = profile === undefined ? [null] : profileList(profile);
  // A profile given to k6 itself (`-- -e PROFILE=lte+trace=./my.trace`) is checked here
  // too: a bad one is one line and exit 2 before the stack starts, not k6's error after.
  for (const flag of envFlagsOf(k6Args)) if (flag.startsWith('PROFILE=')) profileOrUsage(flag.slice('PROFILE='.length));
  // The scenario's own settings, from the environment and `-- -e NAME=value`, likewise.
  const given = envFlagsOf(k6Args).filter((f) => f !== '-e' && f.includes('='));
  await checkDeclaration(scenario, {
    ...process.env,
    ...Object.fromEntries(given.map((f) => [f.slice(0, f.indexOf('=')), f.slice(f.indexOf('=') + 1)])),
  });
  const prometheus = parsePrometheusOut(prometheusOut);
  await checkPrometheus(prometheus);
  const { k6 } = ensureTools({ log: ctx.out });
  const root = resultsRoot(results);
  const hold = { kind: 'k6pack run', what: scenario, profile: profile ?? null, wait };
  const { code, runs } = await withRunStack(
    (stack, held) =>
      runProfiles(
        stack,
        scenario,
        script,
        profiles,
        { k6, root, load, workload, metrics, k6Args, samples, dashboard, hold: held, prometheus },
        ctx,
      ),
    ctx,
    hold,
  );
  if (ctx.trap.received) return ctx.trap.exitCode();
  return history === undefined ? code : recordRuns(history, runs, code, ctx);
}
