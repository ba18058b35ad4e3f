// What `k6pack run` adds to each k6 run for its results: a run folder
// (results/<scenario>-<profile>-<UTC time>/, git-ignored) passed as RESULTS_DIR,
// k6's samples read as they stream in (sample-stream.js: histograms.json.gz, and
// the raw samples.json.gz unless --no-samples: what `k6pack merge` and `report`
// pool), k6's web dashboard with --dashboard, and the plan (k6 inspect) for the
// header line.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join, relative, resolve } from 'node:path';
import { execa } from 'execa';
import { clock, FILES, seconds } from '../../common/results.js';
import { createRunFolder } from './runs.js';
import { streamSamples } from './sample-stream.js';
import { rawSetting } from '../../common/settings.js';

// The results root: --results, else K6PACK_RESULTS_DIR, else ./results.
export const resultsRoot = (option) => resolve(option || rawSetting(process.env, 'K6PACK_RESULTS_DIR') || 'results');

// The -e NAME=value flags among the user's extra k6 arguments (for k6 inspect).
export function envFlagsOf(k6Args) {
  const out = [];
  k6Args.forEach((a, i) => {
    if ((a === '-e' || a === '--env') && k6Args[i + 1] !== undefined) out.push('-e', k6Args[i + 1]);
    else if (/^(--env=|-e)[^=]+=/.test(a)) out.push('-e', a.replace(/^(--env=|-e)/, ''));
  });
  return out;
}

// A -e RESULTS_DIR=... among the user's extra k6 arguments (the last one wins, as in k6).
const givenResultsDir = (k6Args) =>
  envFlagsOf(k6Args)
    .filter((f) => f.startsWith('RESULTS_DIR='))
    .map((f) => f.slice('RESULTS_DIR='.length))
    .at(-1);

// The commit of the project the run is made from (the current directory: a team's
// repository, or this one in a clone), not of the installed package.
function gitCommit() {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: process.cwd(),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      }).trim() || null
    );
  } catch {
    return null;
  }
}

function freeLoopbackPort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

// The options k6 would run with (profile tag, steps, total duration), or null.
export async function inspectPlan(k6, script, envFlags) {
  // k6 run sees the environment (SOAK_DURATION=2m npx k6pack run soak …); k6 inspect only when told.
  const r = await execa(k6, ['inspect', '--execution-requirements', '--include-system-env-vars', ...envFlags, script], {
    reject: false,
    timeout: 30000,
    stdin: 'ignore',
  });
  if (r.exitCode !== 0) return null;
  try {
    const o = JSON.parse(r.stdout);
    const steps = Object.values(o.scenarios || {}).filter((sc) => sc.tags?.transport).length;
    return { profile: o.tags?.profile || null, steps, totalSeconds: seconds(o.totalDuration) || 0 };
  } catch {
    return null;
  }
}

export const describePlan = (plan) =>
  plan && plan.steps ? `${plan.steps} steps, about ${clock(plan.totalSeconds)}` : '';

// Sets up one k6 run's results. Returns { dir, env (for -e), args (for k6 run),
// processEnv (for k6's own environment), dashboardUrl, finish() (to await once k6
// has exited: the last samples, histograms.json.gz) } or a folder-less setup when
// RESULTS_DIR=none. opts: { root, samples, dashboard, plan (inspectPlan's), warn }.
export async function prepareRunResults(script, profileName, k6Args, opts) {
  const given = givenResultsDir(k6Args);
  if (given === 'none') return { dir: null, env: {}, args: [], processEnv: {}, finish: async () => {} };
  let dir;
  if (given !== undefined) {
    dir = resolve(given);
    mkdirSync(dir, { recursive: true });
  } else {
    dir = createRunFolder(opts.root, basename(script, '.js'), profileName || 'default');
  }
  const keepSamples = opts.samples !== false;
  const stream = streamSamples(dir, { keepSamples, warn: opts.warn });
  const env = { RESULTS_DIR: dir, K6PACK_GIT_COMMIT: gitCommit(), K6PACK_HISTOGRAMS: FILES.histograms };
  if (keepSamples) env.K6PACK_SAMPLES = FILES.samples;
  const args = [...stream.args];
  const processEnv = {};
  if (opts.dashboard) {
    const port = await freeLoopbackPort();
    Object.assign(processEnv, {
      K6_WEB_DASHBOARD: 'true',
      K6_WEB_DASHBOARD_HOST: '127.0.0.1',
      K6_WEB_DASHBOARD_PORT: String(port),
      K6_WEB_DASHBOARD_OPEN: 'false',
      K6_WEB_DASHBOARD_EXPORT: join(dir, FILES.dashboard),
      // The dashboard exports nothing from fewer than two snapshots (10 s apart by
      // default): about 30 per run, at least one a second.
      K6_WEB_DASHBOARD_PERIOD: `${Math.max(1, Math.min(10, Math.floor((opts.plan?.totalSeconds || 300) / 30)))}s`,
    });
  }
  return {
    dir,
    env,
    args,
    processEnv,
    dashboardUrl: opts.dashboard ? `http://127.0.0.1:${processEnv.K6_WEB_DASHBOARD_PORT}` : null,
    finish: stream.finish,
  };
}

export const showPath = (p) => relative(process.cwd(), p) || '.';

// The line after a run: what its folder holds (a script without the pack's
// handleSummary writes no summary.json).
export function resultsSaid(dir) {
  const files = existsSync(dir) ? readdirSync(dir).sort() : [];
  if (!files.length) return `== results: nothing written to ${showPath(dir)}/`;
  const next = files.includes(FILES.summary) ? `; \`npx k6pack report ${showPath(dir)}\` draws them` : '';
  return `== results in ${showPath(dir)}/: ${files.join(', ')}${next}`;
}
