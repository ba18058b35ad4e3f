// `k6pack run api …` and `k6pack up --api …`: a team's own API through the pack.
// Everything that can be checked is checked before anything starts (config, operations,
// variables, .proto, method, request, ports), then discovery against the endpoints,
// then the proxies in front of them on the stack's Toxiproxy (started for the command,
// Toxiproxy only, when no stack runs), then the plan file k6 reads (-e API).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_PLAN_VERSION } from '../../common/api.js';
import { targetsFor } from '../../common/defaults.js';
import { levelName } from '../../common/schedule.js';
import { profileList, profileOrUsage, show, UsageError } from '../cli-support.js';
import { describeToxic } from '../stack-profile.js';
import { takeHold } from '../hold.js';
import { resultsRoot } from '../report/run-folder.js';
import { checkMetrics, checkWorkload, runProfiles, withRunStack } from '../runner.js';
import { clearState, deadLine, deadOf, readState, writeState } from '../runstate.js';
import { StackError, startStack } from '../stack.js';
import { ensureTools, ROOT } from '../tools.js';
import { Toxiproxy } from '../toxiproxy.js';
import { apiConfig } from './config.js';
import { checkApiInput, describeApi, discoverApi } from './discover.js';
import { apiRoutes, checkApiPorts, endpointsGone, hostsOf, installApiProxies, resolveApiPorts } from './proxies.js';

export const SCRIPT = join(ROOT, 'scenarios', 'api.js');
export const PLAN_FILE = 'api-plan.json';
// Toxiproxy alone: the reference servers need not run for a team's own API.
const START = { only: ['toxiproxy'], reference: false };

// What to test, checked, discovered and described. -> { cfg, api, routes }
async function prepare(opts, ctx) {
  const cfg = apiConfig(opts);
  const input = checkApiInput(cfg);
  const routes = apiRoutes(cfg, resolveApiPorts());
  await checkApiPorts(routes, ctx.runDir);
  for (const host of cfg.remote)
    ctx.warn(
      `ALLOW_REMOTE_TARGET=1: the load goes to ${host}, which is not this machine; the proxies still listen on 127.0.0.1 only`,
    );
  const api = await discoverApi(cfg, input, { signal: ctx.trap.signal });
  for (const line of describeApi(api)) ctx.out(line);
  for (const w of api.warnings) ctx.warn(w);
  return { cfg, api, routes };
}

// The plan file (common/api.js) for a stack's Toxiproxy.
function writePlan(file, api, routes, toxiproxyUrl) {
  const { warnings, ...rest } = api;
  const plan = {
    version: API_PLAN_VERSION,
    toxiproxy: toxiproxyUrl,
    proxies: routes.map((r) => r.name),
    hosts: hostsOf(routes),
    ...rest,
  };
  writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
  return file;
}

const describeRoutes = (routes) => routes.map((r) => `${r.name} ${r.listen} -> ${r.upstream}`).join(', ');

// `k6pack run api`: one k6 run per profile against the team's endpoints.
export async function runApi(opts, ctx) {
  const { k6Args = [], load, workload, metrics, results, samples = true, dashboard = false, wait = false } = opts;
  checkWorkload(workload);
  checkMetrics(metrics);
  const profiles = opts.profile === undefined ? [null] : profileList(opts.profile);
  try {
    levelName({ LOAD: load });
  } catch (err) {
    throw new UsageError(String(err.message || err));
  }
  const { routes, api } = await prepare(opts, ctx);
  const { k6 } = ensureTools({ log: ctx.out });
  const root = resultsRoot(results);
  const hold = { kind: 'k6pack run', what: 'api', profile: opts.profile ?? null, wait };
  mkdirSync(ctx.runDir, { recursive: true });
  const planFile = join(ctx.runDir, `api-plan-${process.pid}.json`);
  const { code } = await withRunStack(
    async (stack, held) => {
      const restore = await installApiProxies(stack.toxiproxy, routes);
      try {
        ctx.out(`== proxies: ${describeRoutes(routes)}`);
        writePlan(planFile, api, routes, stack.toxiproxy.url);
        const env = { API: planFile };
        return await runProfiles(
          stack,
          'api',
          SCRIPT,
          profiles,
          {
            k6,
            root,
            load,
            workload,
            metrics,
            k6Args,
            samples,
            dashboard,
            hold: held,
            env,
            endpointsGone: () => endpointsGone(routes),
          },
          ctx,
        );
      } finally {
        rmSync(planFile, { force: true });
        if (!stack.stop) await restore().catch((err) => ctx.warn(`could not remove the API's proxies: ${err.message}`));
      }
    },
    ctx,
    hold,
    START,
  );
  return ctx.trap.received ? ctx.trap.exitCode() : code;
}

// `k6pack up --api …`: the proxies in front of the team's endpoints on the running stack
// (or on a Toxiproxy started for them), a profile applied, and the plan file plain
// `k6 run -e API=… scenarios/api.js` reads.
export async function upApi(opts, ctx) {
  const { runDir, out, trap } = ctx;
  const profile = profileOrUsage(opts.profile || 'lan');
  const { routes, api } = await prepare(opts, ctx);
  const planFile = join(runDir, PLAN_FILE);
  let state = readState(runDir);
  if (state && deadOf(state).some((d) => d.name === 'toxiproxy'))
    throw new StackError(`${deadLine(deadOf(state))}: \`npx k6pack down\`, then try again`);
  let started = null;
  if (!state) {
    started = await startStack({ runDir, detached: true, log: out, signal: trap.signal, ...START });
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
    writePlan(planFile, api, routes, tp.url);
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
  out(`  .tools/bin/k6 run -e API=${show(planFile)} -e PROFILE=3g scenarios/api.js`);
  return 0;
}
