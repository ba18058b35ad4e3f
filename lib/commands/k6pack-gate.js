// `k6pack gate`: the PR gate in one command. Every scenario but mobile, soak, unstable and api (or
// --scenarios), one after another, under each gate profile at the gate's load
// level, on one stack (started for the gate if it is not up, as `run` does),
// then one gate folder with:
//   <scenario>-<profile>-<time>/  the run folders (`k6pack run`'s)
//   report.html                   `k6pack report` over all of them
//   junit.xml                     every run's test suite (a test case per threshold)
//   gate.md                       every run's Markdown table (and the comparison)
//   comment.md                    the verdict, the runs and what changed (the PR comment)
//   gate.json                     per scenario and run: seconds and exit codes
// With --baseline each run is compared with its scenario and profile's
// baseline run, as `k6pack compare` does. With --api (or --graphql/--grpc, as `run api`
// takes them) the gate runs your API alone, the api scenario, under the same profiles.
// With --history DIR every run's digest is appended to that history folder as the gate
// ends, after the comparison, which with --baseline judges latency against the
// folder's last comparable runs (lib/report/compare.js).
//
// Exit code: a broken run's (k6's or 1; the gate stops there), else 99 if a
// threshold failed, else 3 on a regression, else 0.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import {
  clock,
  FILES,
  formatValue,
  junitDocument,
  junitSuite,
  junitSuiteOf,
  toMarkdown,
} from '../../common/results.js';
import { action, profileList, UsageError } from '../cli-support.js';
import { HISTORY_RULE } from '../../common/history.js';
import { recordRuns } from '../history/record.js';
import { checkPrometheus, parsePrometheusOut } from '../prometheus.js';
import { historyFor } from '../history/store.js';
import { compareWithBaselines, loadBaselines } from '../report/baseline.js';
import { compareOptions, REGRESSION_EXIT, THRESHOLDS_FAILED } from '../report/results-commands.js';
import { renderComparison } from '../report/compare.js';
import { writeReport } from '../report/html.js';
import { envFlagsOf, resultsRoot, showPath } from '../report/run-folder.js';
import { loadRun, stamp } from '../report/runs.js';
import { checkMetrics, checkWorkload, runProfiles, withRunStack } from '../runner.js';
import { addApiOptions, apiFlagsIn } from '../api/api-config.js';
import { API_STACK, prepareApi, runApiProfiles } from '../api/run-api.js';
import { GATE_DEFAULTS, GATE_FILES, gateScenarios } from '../gate-defaults.js';
import { specGate } from '../specs.js';
import { ensureTools, ROOT } from '../tools.js';

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const runName = (r) => `${r.scenario} (${r.profile || 'default'})`;

// Everything checked before a stack starts: -> the gate's job (its scenarios,
// profiles, load, results folder and what it compares against).
async function checkGate(opts) {
  const api = apiFlagsIn(opts).length > 0;
  if (api && opts.scenarios !== undefined)
    throw new UsageError('--scenarios and --api: the gate runs the studies or your API, not both in one gate');
  const scenarios = api ? ['api'] : await gateScenarios(opts.scenarios);
  const profiles = profileList(opts.profile ?? GATE_DEFAULTS.profile);
  const k6Args = opts.k6Args || [];
  if (envFlagsOf(k6Args).some((f) => f.startsWith('RESULTS_DIR='))) {
    throw new UsageError('the gate keeps its run folders in --results: leave -e RESULTS_DIR out');
  }
  if (opts.tolerance !== undefined && opts.baseline === undefined)
    throw new UsageError('--tolerance applies to the comparison: give --baseline too');
  if (opts.historyRuns !== undefined && opts.baseline === undefined)
    throw new UsageError('--history-runs applies to the comparison: give --baseline and --history too');
  const compare = compareOptions({ tolerance: opts.tolerance, history: opts.history, historyRuns: opts.historyRuns });
  const baselines = opts.baseline === undefined ? null : loadBaselines(opts.baseline);
  const dir = resolve(opts.results ?? join(resultsRoot(), `gate-${stamp(new Date())}`));
  checkWorkload(opts.workload);
  checkMetrics(opts.metrics);
  return {
    api,
    scenarios,
    profiles,
    // Each scenario's own load level (its GATE), unless --load names one for all.
    loads: Object.fromEntries(
      await Promise.all(
        scenarios.map(async (s) => [
          s,
          opts.loadGiven || api ? (opts.load ?? GATE_DEFAULTS.load) : ((await specGate(s)).load ?? GATE_DEFAULTS.load),
        ]),
      ),
    ),
    workload: opts.workload,
    metrics: opts.metrics,
    k6Args,
    compare,
    baselines,
    history: opts.history,
    dir,
    dashboard: Boolean(opts.dashboard),
    wait: Boolean(opts.wait),
    prometheus: parsePrometheusOut(opts.out),
  };
}

// A run of the gate, with its summary loaded when it wrote one.
function loadGateRun(run) {
  try {
    return { ...run, loaded: run.dir ? loadRun(run.dir) : null };
  } catch {
    return { ...run, loaded: null };
  }
}

function junitOf(runs) {
  return junitDocument(
    runs.map((r) =>
      r.loaded
        ? junitSuiteOf(r.loaded.doc)
        : junitSuite({
            name: runName(r),
            classname: `k6pack.${r.scenario}.${r.profile || 'default'}`,
            cases: [{ name: 'k6 run', error: `k6 exited ${r.exitCode} and wrote no ${FILES.summary}` }],
            seconds: r.seconds,
          }),
    ),
  );
}

// brief: the pull request's comment (comment.md): the verdict, the runs, and of the
// comparison only what changed; gate.md has every run's table too.
function markdownOf(gate, runs, comparisons, { brief = false } = {}) {
  const lines = [
    `## k6pack gate — ${gate.verdict}`,
    '',
    `${plural(gate.scenarios.length, 'scenario')} × ${gate.profiles.join(', ')}, load ${gate.load}, ${clock(gate.seconds)}`,
    '',
  ];
  lines.push('| scenario | profile | k6 exit | time | thresholds |', '|---|---|--:|--:|---|');
  for (const r of runs) {
    const t = r.loaded?.doc.thresholds;
    const verdict = !t
      ? `no ${FILES.summary}`
      : t.every((x) => x.ok)
        ? `✅ ${t.length} passed`
        : `❌ ${t.filter((x) => !x.ok).length} of ${t.length} failed`;
    lines.push(`| ${r.scenario} | ${r.profile || 'default'} | ${r.exitCode} | ${clock(r.seconds)} | ${verdict} |`);
  }
  lines.push('');
  // Each failed threshold, named with its run, as the report opens with them too.
  const failed = runs.flatMap((r) =>
    (r.loaded?.doc.thresholds || []).filter((t) => !t.ok).map((t) => ({ run: runName(r), t })),
  );
  if (failed.length) {
    lines.push(`Failed thresholds (${failed.length}):`, '');
    for (const { run, t } of failed)
      lines.push(`- ${run}: \`${t.key}\` \`${t.threshold}\`, observed ${formatValue(t.observed)}`);
    lines.push('');
  }
  if (!brief) for (const r of runs) if (r.loaded) lines.push(toMarkdown(r.loaded.doc));
  if (comparisons) {
    lines.push('## Compared with the baseline', '');
    for (const c of comparisons) {
      lines.push(
        c.result
          ? renderComparison(c.result, { markdown: true, all: !brief })
          : `- ${c.key}: no baseline yet, gated on its thresholds only\n`,
      );
    }
  } else if (brief) lines.push('No baseline: gated on thresholds only.');
  if (brief) lines.push('', `Every run's table: ${GATE_FILES.markdown} in the job summary and the artifact.`);
  return `${lines.join('\n').trimEnd()}\n`;
}

// The exit code and a one-line verdict.
function verdictOf(scenarios, runs, regressions) {
  const broken = scenarios.find((s) => s.exitCode !== 0 && s.exitCode !== THRESHOLDS_FAILED);
  if (broken)
    return {
      code: broken.exitCode,
      verdict: `${broken.scenario} broke (exit ${broken.exitCode}); the scenarios after it did not run`,
    };
  const failed = runs.filter((r) => r.exitCode === THRESHOLDS_FAILED);
  const regressed = regressions ? `; ${plural(regressions, 'regression')} against the baseline` : '';
  if (failed.length)
    return { code: THRESHOLDS_FAILED, verdict: `thresholds failed in ${failed.map(runName).join(', ')}${regressed}` };
  if (regressions)
    return { code: REGRESSION_EXIT, verdict: `${plural(regressions, 'regression')} against the baseline` };
  return {
    code: 0,
    verdict: `${runs.length === 1 ? 'the run' : `all ${runs.length} runs`} passed${regressions === 0 ? ', no regression' : ''}`,
  };
}

export async function runGate(opts, ctx) {
  const { out, warn, trap } = ctx;
  const job = await checkGate(opts);
  const loads = [...new Set(Object.values(job.loads))].join(', ');
  // Your API: checked and discovered before anything starts (lib/api/run-api.js).
  await checkPrometheus(job.prometheus);
  const prepared = job.api ? await prepareApi(opts, ctx) : null;
  const { k6 } = ensureTools({ log: out });
  mkdirSync(job.dir, { recursive: true });
  const startedAt = new Date();
  const elapsed = () => (Date.now() - startedAt.getTime()) / 1000;
  const names = job.profiles.map((p) => p.name);
  out(
    `== gate: ${plural(job.scenarios.length, 'scenario')} (${job.scenarios.join(', ')}) × ${names.join(', ')}, load ${loads}; results in ${showPath(job.dir)}/`,
  );
  const scenarios = [];
  const hold = { kind: 'k6pack gate', what: job.scenarios.join(','), profile: names.join(','), wait: job.wait };
  await withRunStack(
    async (stack, held) => {
      for (const [i, scenario] of job.scenarios.entries()) {
        if (trap.received) break;
        out(`== gate ${i + 1}/${job.scenarios.length}: ${scenario}, ${clock(elapsed())} elapsed`);
        const t0 = Date.now();
        const script = join(ROOT, 'scenarios', `${scenario}.js`);
        const opts = {
          k6,
          root: job.dir,
          load: job.loads[scenario],
          workload: job.workload,
          metrics: job.metrics,
          k6Args: job.k6Args,
          samples: true,
          dashboard: job.dashboard,
          hold: held,
          prometheus: job.prometheus,
        };
        const { code, runs } = prepared
          ? await runApiProfiles(stack, prepared, job.profiles, opts, ctx)
          : await runProfiles(stack, scenario, script, job.profiles, opts, ctx);
        scenarios.push({ scenario, seconds: (Date.now() - t0) / 1000, exitCode: code, runs });
        // A failed threshold is a result: the gate goes on. Anything else is a broken run.
        if (code !== 0 && code !== THRESHOLDS_FAILED) break;
      }
    },
    ctx,
    hold,
    job.api ? API_STACK : {},
  );
  if (trap.received) {
    out(
      `== gate stopped (${trap.received}) after ${plural(scenarios.length, 'scenario')}; their run folders are in ${showPath(job.dir)}/`,
    );
    return trap.exitCode();
  }

  const runs = scenarios.flatMap((s) => s.runs).map(loadGateRun);
  const done = runs.filter((r) => r.loaded);
  const comparisons =
    job.baselines &&
    compareWithBaselines(
      done.map((r) => r.loaded),
      job.baselines,
      job.compare,
      (run) => job.history !== undefined && historyFor(job.history, run, job.compare.historyRuns, warn),
    );
  const regressions = comparisons ? comparisons.reduce((n, c) => n + (c.result?.regressions || 0), 0) : null;
  const verdicted = verdictOf(scenarios, runs, regressions);
  const { verdict } = verdicted;
  // Judged first, then added: a run is never part of its own history.
  const code = job.history === undefined ? verdicted.code : recordRuns(job.history, runs, verdicted.code, ctx);
  const gate = { scenarios: job.scenarios, profiles: names, load: loads, seconds: elapsed(), verdict };

  const file = (name) => join(job.dir, name);
  if (done.length)
    await writeReport(
      done.map((r) => r.loaded.dir),
      { out: file(GATE_FILES.report), gate: { verdict, code } },
    );
  writeFileSync(file(GATE_FILES.junit), junitOf(runs));
  writeFileSync(file(GATE_FILES.markdown), markdownOf(gate, runs, comparisons));
  writeFileSync(file(GATE_FILES.comment), markdownOf(gate, runs, comparisons, { brief: true }));
  const record = {
    ...gate,
    startedAt: startedAt.toISOString(),
    exitCode: code,
    runs: scenarios.map((s) => ({
      scenario: s.scenario,
      seconds: s.seconds,
      exitCode: s.exitCode,
      runs: s.runs.map((r) => ({
        profile: r.profile,
        dir: r.dir && relative(job.dir, r.dir),
        exitCode: r.exitCode,
        seconds: r.seconds,
      })),
    })),
    comparisons:
      comparisons?.map((c) => ({
        key: c.key,
        base: c.base?.file ?? null,
        regressions: c.result?.regressions ?? null,
        history: c.result?.history ?? null,
      })) ?? null,
  };
  writeFileSync(file(GATE_FILES.record), `${JSON.stringify(record, null, 2)}\n`);

  for (const c of comparisons || []) {
    if (!c.result) out(`== compare ${c.key}: no baseline yet, gated on its thresholds only`);
    else if (!c.result.regressions) out(`== compare ${c.key}: no regression`);
    else out(renderComparison(c.result, { all: false }).trimEnd());
  }
  const cases = done.reduce((n, r) => n + r.loaded.doc.thresholds.length, 0) + (runs.length - done.length);
  const failures = done.reduce((n, r) => n + r.loaded.doc.thresholds.filter((t) => !t.ok).length, 0);
  out(`== gate: ${plural(runs.length, 'run')} in ${clock(gate.seconds)}: ${verdict}`);
  out(`== gate results in ${showPath(job.dir)}/:`);
  if (done.length) out(`   ${GATE_FILES.report}  the HTML report of ${plural(done.length, 'run')} (opens offline)`);
  else out(`   (no ${GATE_FILES.report}: no run wrote a ${FILES.summary})`);
  out(
    `   ${GATE_FILES.junit}    ${plural(runs.length, 'test suite')}, ${plural(cases, 'test case')}, ${plural(failures, 'failure')}`,
  );
  out(`   ${GATE_FILES.markdown}      the Markdown tables (cat it >> "$GITHUB_STEP_SUMMARY")`);
  out(`   ${GATE_FILES.comment}   the verdict and what changed, for a pull request's comment`);
  out(`   ${GATE_FILES.record}    seconds and exit codes per scenario and run; the run folders beside them`);
  if (code !== 0) warn(`gate failed: ${verdict}`);
  return code;
}

export function register(program, ctx) {
  const command = program
    .command('gate')
    .description(
      'the PR gate in one command: every scenario but mobile, soak, unstable and api (or your API: --api), per profile; HTML report, JUnit and Markdown in one folder',
    )
    .argument('[k6args...]', 'extra arguments for every `k6 run`, after --')
    .option('-p, --profile <names>', 'comma-separated profiles, one k6 run each per scenario', GATE_DEFAULTS.profile)
    .option('-l, --load <level>', 'load level, passed to k6 as -e LOAD=<level>', GATE_DEFAULTS.load)
    .option(
      '-s, --scenarios <names>',
      'comma-separated scenarios (default: every one but mobile, soak, unstable and api)',
    )
    .option(
      '--results <dir>',
      'the gate folder for its run folders and files (default: results/gate-<UTC time>/, or under K6PACK_RESULTS_DIR)',
    )
    .option(
      '--baseline <path>',
      'compare each run with the baseline run of its scenario and profile: a gate folder, a folder of run folders, or a summary.json',
    )
    .option('-t, --tolerance <pct>', 'with --baseline: latency p50/p95 change allowed, relative (default 10%)')
    .option(
      '--history <dir>',
      "append each run's digest to this history folder; with --baseline, judge latency against its last comparable runs",
    )
    .option(
      '--history-runs <n>',
      `with --baseline and --history: the comparable runs the rule needs (default ${HISTORY_RULE.runs})`,
    )
    .option('--dashboard', "k6's web dashboard per run, saved as k6-dashboard.html in its run folder")
    .option(
      '--out <prometheus=URL>',
      "also write every run's metrics to a Prometheus remote-write endpoint, trends as native histograms",
    )
    .option('--wait', 'when another run holds the stack, wait for it to end (default: refuse, exit 4)')
    .option(
      '-w, --workload <kind>',
      'closed (VUs in a loop, the default) or open (rising arrival rates from the model)',
    )
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
  ${GATE_FILES.comment}   the verdict, the runs and what changed (a pull request's comment)
  ${GATE_FILES.record}    seconds and exit codes per scenario and run
Exit code: 0 all passed; 99 a threshold failed (the other runs still run);
3 a regression against --baseline; another code when a run broke (k6's, or 1
if a server or toxiproxy died: the gate stops there); 2 bad usage.
Ctrl-C stops k6 gracefully and stops what this command started.

Examples:
  $ npx k6pack gate
  $ npx k6pack gate --scenarios ws-vs-http,push --profile lan --load smoke
  $ npx k6pack gate --results results/pr --baseline results/main --tolerance 5%
  $ npx k6pack gate --baseline results/main --history k6pack-history   # judged against the nights' spread
  $ npx k6pack gate --api api.json --baseline results/main-api   # your API (docs/your-api.md)`,
    );
  // loadGiven: --load on the command line (or its environment), not the option's default.
  addApiOptions(command).action(
    action((k6Args, opts) =>
      runGate({ ...opts, k6Args, loadGiven: command.getOptionValueSource('load') !== 'default' }, ctx),
    ),
  );
}
