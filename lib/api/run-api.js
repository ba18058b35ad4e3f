// `k6pack run api …` and `k6pack up --api …`: a team's own API through the pack.
// Everything that can be checked is checked before anything starts (config, operations,
// variables, .proto, method, request, ports), then discovery against the endpoints,
// then the proxies in front of them on the stack's Toxiproxy (started for the command,
// Toxiproxy only, when no stack runs), then the plan file k6 reads (-e API).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_PLAN_VERSION } from '../../common/your-api.js';
import { planCredentials, redact, secretsOf } from '../../common/credentials.js';
import { targetsFor } from '../../common/defaults.js';
import { levelName } from '../../common/schedule.js';
import { profileList, profileOrUsage, show, UsageError } from '../cli-support.js';
import { describeToxic } from '../stack-profile.js';
import { takeHold } from '../hold.js';
import { resultsRoot } from '../report/run-folder.js';
import { checkMetrics, checkWorkload, runProfiles, withRunStack } from '../runner.js';
import { recordRuns } from '../history/record.js';
import { checkPrometheus, parsePrometheusOut } from '../prometheus.js';
import { clearState, deadLine, deadOf, readState, writeState } from '../runstate.js';
import { StackError, startStack } from '../stack.js';
import { ensureTools, findK6, ROOT } from '../tools.js';
import { Toxiproxy } from '../toxiproxy.js';
import { apiConfig } from './api-config.js';
import { THRESHOLDS_FAILED } from '../k6.js';
import { readPolicyFile } from '../specs.js';
import { memoryGateOf, recordServerCost, startCostSampler } from './server-sampler.js';
import { checkApiInput, describeApi, discoverApi } from './discover.js';
import { apiRoutes, checkApiPorts, endpointsGone, hostsOf, installApiProxies, resolveApiPorts } from './proxies.js';

export const SCRIPT = join(ROOT, 'scenarios', 'api.js');
export const PLAN_FILE = 'api-plan.json';
// Toxiproxy alone: the reference servers need not run for a team's own API.
export const API_STACK = { only: ['toxiproxy'], reference: false };

// What to test, checked, discovered and described. -> { cfg, api, routes }
export async function prepareApi(opts, ctx) {
  const cfg = apiConfig(opts);
  const input = checkApiInput(cfg);
  const routes = apiRoutes(cfg, resolveApiPorts());
  await checkApiPorts(routes, ctx.runDir);
  for (const host of cfg.remote)
    ctx.warn(
      `ALLOW_REMOTE_TARGET=1: the load goes to ${host}, which is not this machine; the proxies still listen on 127.0.0.1 only`,
    );
  const api = await discoverApi(cfg, input, { signal: ctx.trap.signal });
  // What an endpoint answered may echo a credential: nothing printed holds one.
  const secrets = secretsOf(cfg.expanded);
  for (const line of describeApi(api)) ctx.out(redact(line, secrets));
  for (const w of api.warnings) ctx.warn(redact(w, secrets));
  return { cfg, api, routes };
}

// The plan file (common/your-api.js) for a stack's Toxiproxy. Credentials keep their
// ${VAR} references; literal values move to k6's environment. -> { file, env, literal }
function writePlan(file, api, routes, toxiproxyUrl) {
  const { warnings, credentials, ...rest } = api;
  const secret = planCredentials(credentials);
  const plan = {
    version: API_PLAN_VERSION,
    toxiproxy: toxiproxyUrl,
    proxies: routes.map((r) => r.name),
    hosts: hostsOf(routes),
    ...rest,
    credentials: secret.credentials,
  };
  writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
  return { file, env: secret.env, literal: secret.literal };
}

const describeRoutes = (routes) => routes.map((r) => `${r.name} ${r.listen} -> ${r.upstream}`).join(', ');

// The API's proxies on the stack, its plan file, one k6 run per profile, then the proxies
// removed again (on a stack found running) and the plan file deleted. `run api` and
// `gate --api` run it under their hold. prepared: prepareApi()'s; runOpts: runProfiles()'s
// options but env, processEnv and endpointsGone. -> runProfiles()'s { code, runs }
export async function runApiProfiles(stack, prepared, profiles, runOpts, ctx) {
  const { routes, api, cfg } = prepared;
  mkdirSync(ctx.runDir, { recursive: true });
  const planFile = join(ctx.runDir, `api-plan-${process.pid}.json`);
  const restore = await installApiProxies(stack.toxiproxy, routes);
  try {
    ctx.out(`== proxies: ${describeRoutes(routes)}`);
    const written = writePlan(planFile, api, routes, stack.toxiproxy.url);
    const sampler = cfg.serverPids ? startCostSampler(cfg.serverPids) : null;
    const result = await runProfiles(
      stack,
      'api',
      SCRIPT,
      profiles,
      {
        ...runOpts,
        env: { API: planFile },
        // Literal credentials reach k6 through its environment, never its command line.
        processEnv: written.env,
        endpointsGone: () => endpointsGone(routes),
      },
      ctx,
    );
    // Each run's cost to your server, into its summary.json and summary.md; a soak's
    // memory gate with it (a failed one fails the run, as k6's thresholds do).
    const soak = runOpts.load === SOAK_LEVEL;
    if (sampler) {
      const samples = sampler.stop();
      const { policy } = soak ? readPolicyFile() : {};
      for (const run of result.runs.filter((r) => r.dir)) {
        const gate = soak ? memoryGateOf(policy, run.profile) : null;
        const { lines, failed } = recordServerCost(run.dir, samples, cfg.serverPids, gate);
        for (const line of lines) ctx.out(line);
        if (failed && result.code === 0) result.code = THRESHOLDS_FAILED;
      }
    } else if (soak)
      ctx.out(
        "server memory: not gated (give --server-pid PID, your server's process on this machine, to gate its growth)",
      );
    return result;
  } finally {
    rmSync(planFile, { force: true });
    if (!stack.stop) await restore().catch((err) => ctx.warn(`could not remove the API's proxies: ${err.message}`));
  }
}

// The load level of your API's soak (scenarios/specs/api.js): `run soak --api`, or
// `run api --load soak`.
export const SOAK_LEVEL = 'soak';

// `run soak --api` runs LOAD=soak; its length is SOAK_DURATION's, not another level's.
function soakLoad(load) {
  if (load !== undefined && load !== SOAK_LEVEL)
    throw new UsageError(
      `run soak --api runs at load soak (every lane at SOAK_RATE for SOAK_DURATION): drop --load ${load} and set its length with SOAK_DURATION (e.g. SOAK_DURATION=2m)`,
    );
  return SOAK_LEVEL;
}

// `k6pack run api` (and `run soak --api`: opts.soak): one k6 run per profile against the
// team's endpoints.
export async function runApi(opts, ctx) {
  const { k6Args = [], workload, metrics, results, samples = true, dashboard = false, wait = false } = opts;
  const load = opts.soak ? soakLoad(opts.load) : opts.load;
  if (load === SOAK_LEVEL && workload !== undefined)
    throw new UsageError(
      `--workload ${workload}: a soak runs every lane at a constant arrival rate already: drop --workload`,
    );
  checkWorkload(workload);
  checkMetrics(metrics);
  const profiles = opts.profile === undefined ? [null] : profileList(opts.profile);
  try {
    levelName({ LOAD: load });
  } catch (err) {
    throw new UsageError(String(err.message || err));
  }
  const prometheus = parsePrometheusOut(opts.out);
  await checkPrometheus(prometheus);
  const prepared = await prepareApi(opts, ctx);
  const { k6 } = ensureTools({ log: ctx.out });
  const root = resultsRoot(results);
  const hold = {
    kind: 'k6pack run',
    what: load === SOAK_LEVEL ? 'soak --api' : 'api',
    profile: opts.profile ?? null,
    wait,
  };
  const { code, runs } = await withRunStack(
    (stack, held) =>
      runApiProfiles(
        stack,
        prepared,
        profiles,
        { k6, root, load, workload, metrics, k6Args, samples, dashboard, hold: held, prometheus },
        ctx,
      ),
    ctx,
    hold,
    API_STACK,
  );
  if (ctx.trap.received) return ctx.trap.exitCode();
  return opts.history === undefined ? code : recordRuns(opts.history, runs, code, ctx);
}

// `k6pack up --api …`: the proxies in front of the team's endpoints on the running stack
// (or on a Toxiproxy started for them), a profile applied, and the plan file plain
// `k6 run -e API=… scenarios/api.js` reads.
export async function upApi(opts, ctx) {
  const { runDir, out, trap } = ctx;
  const profile = profileOrUsage(opts.profile || 'lan');
  const { routes, api } = await prepareApi(opts, ctx);
  const planFile = join(runDir, PLAN_FILE);
  let state = readState(runDir);
  if (state && deadOf(state).some((d) => d.name === 'toxiproxy'))
    throw new StackError(`${deadLine(deadOf(state))}: \`npx k6pack down\`, then try again`);
  let started = null;
  if (!state) {
    started = await startStack({ runDir, detached: true, log: out, signal: trap.signal, ...API_STACK });
    state = {
      ports: started.ports,
      pids: started.pids,
      markers: started.markers,
      logs: started.logs,
      startedAt: new Date().toISOString(),
      profile: null,
      reference: false,
    };
    writeState(runDir, state);
  }
  const tp = started ? started.toxiproxy : new Toxiproxy(targetsFor(state.ports).TOXIPROXY_URL);
  try {
    // The proxies change under the stack's hold: not under another run.
    const hold = await takeHold(tp, { kind: 'k6pack up --api', profile: profile.name, wait: opts.wait }, ctx);
    try {
      await installApiProxies(tp, routes);
      await tp.applyToxics(profile.toxics);
    } finally {
      await hold.release();
    }
    const written = writePlan(planFile, api, routes, tp.url);
    if (written.literal.length)
      ctx.warn(
        `${written.literal.join(', ')}: given as a literal value, which the plan file does not keep: for \`k6 run\`, give ${written.literal.length === 1 ? 'it' : 'them'} as \${VAR} (e.g. --header 'Authorization: Bearer \${API_TOKEN}') and export the variable`,
      );
    writeState(runDir, {
      ...readState(runDir),
      profile: profile.spec,
      api: { plan: planFile, proxies: routes.map((r) => r.name) },
    });
    trap.signal.throwIfAborted();
  } catch (err) {
    if (started) {
      await started.stop().catch(() => {}); // the error that stopped it says more
      clearState(runDir, readState(runDir));
    }
    throw err;
  }
  out(`== proxies: ${describeRoutes(routes)}`);
  out(`profile ${profile.name}: ${profile.toxics.map(describeToxic).join('; ') || 'no toxics'}`);
  out(`the plan for k6: ${show(planFile)}; stop everything with \`npx k6pack down\``);
  out(`  ${show(findK6() || 'k6')} run -e API=${show(planFile)} -e PROFILE=3g ${show(SCRIPT)}`);
  return 0;
}
