// What every scenario file shares: the profile, the plan and gates built from the
// scenario's declaration (scenarios/specs/<name>.js, common/scenario.js), options
// (TLS, trend stats, thresholds), setup/teardown around the stack's hold and the
// network profile, and the summary. A scenario file then only says what its lanes do:
//
//   import declare from './specs/ws-vs-http.js';
//   const s = defineScenario(declare(SETTINGS), { notes });   // SETTINGS: ./lib/config.js
//   export const { options, setup, teardown, handleSummary } = s;
import exec from 'k6/execution';
import http from 'k6/http';
import { buildScenario } from '../../common/scenario.js';
import { laneOfStep } from '../../common/schedule.js';
import { registerPlan } from './load.js';
import { configureRecording } from './metrics.js';
import { fatal, networkProfile, profileTags, toxiproxyUrl } from './network.js';
import { trackSteps } from './progress.js';
import { prepareNetwork, releaseNetwork } from './segments.js';
import { settleSilentVus, silentVuNotes, watchedKeys, watchVus } from './silent-vus.js';
import { makeHandleSummary } from './summary.js';
import { DEFAULT_FILE, readPolicy, thresholdsPath, withObservers } from './thresholds.js';
import { rawSetting } from '../../common/settings.js';
import { SETTINGS } from './config.js';

// decl: the scenario's declaration; extra: { notes(data) -> extra summary lines,
// setup() -> extra setup data (after the network profile is applied) }.
export function defineScenario(decl, extra = {}) {
  const profile = networkProfile(decl.defaultProfile);
  const built = buildScenario(decl, profile, SETTINGS, readPolicy());
  const { plan } = built;
  registerPlan(plan);
  configureRecording(built.recording);
  trackSteps(plan, `${decl.name} (${profile.name})`);
  watchVus(plan, built.lanes);
  const options = {
    scenarios: plan.scenarios,
    thresholds: withObservers(built.thresholds, [...built.observers, ...watchedKeys()]),
    // The servers use a self-signed certificate; this covers https, wss and gRPC over TLS.
    insecureSkipTLSVerify: true,
    summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
    tags: profileTags(profile),
    setupTimeout: '60s',
    teardownTimeout: '30s',
    ...(decl.options || {}),
  };

  // The stack's hold first (hold.js: a stack another run holds is left as it is),
  // then the profile. Under --execution-segment only one instance holds, applies
  // and restores (segments.js).
  const holdInfo = { what: decl.name, profile: profile.name, script: `${decl.name}.js`, seconds: plan.totalSeconds };
  function setup() {
    const k6pack = runMeta();
    if (decl.refuse) fatal(decl.refuse);
    const { network, hold } = prepareNetwork(profile, holdInfo, fatal, decl.proxies);
    const more = extra.setup ? extra.setup() : {};
    // The scenarios' startTimes count from here (silent-vus.js; summary.json's run.stepsFrom).
    const stepsFrom = Date.now();
    return { network, ...more, k6pack: { ...k6pack, hold, stepsFrom }, stepsFrom };
  }

  function teardown(data) {
    settleSilentVus(data && data.stepsFrom);
    releaseNetwork({ network: data && data.network, hold: data && data.k6pack && data.k6pack.hold });
  }

  const handleSummary = makeHandleSummary({
    ...built,
    scenario: decl.name,
    level: plan.level,
    hints: decl.hints,
    verdict: decl.verdict,
    notes: (data) => [...(extra.notes ? extra.notes(data) : []), ...silentVuNotes(data)],
    thresholdsFile: thresholdsPath() === DEFAULT_FILE ? 'thresholds.json' : thresholdsPath(),
  });

  // The scenario file's one exec for every lane (`export const runLane = s.dispatch({ … })`,
  // common/scenario.js lane()): the k6 scenario running names its lane (`<lane>_<step>`,
  // common/schedule.js laneOfStep), and its family's client runs it with the lane:
  // { name, family, protocol, transport, tls (a boolean), ... }. clients: { <family>:
  // (lane, data) => ... }, data being setup()'s.
  const running = {};
  const laneNow = () => {
    const name = exec.scenario.name;
    if (!running[name]) {
      const l = laneOfStep(built.lanes, name, plan.scenarios[name]);
      running[name] = { ...l, transport: l.tags.transport, tls: l.tags.tls === 'true' };
    }
    return running[name];
  };
  const dispatch = (clients) => (data) => {
    const l = laneNow();
    if (!clients[l.family]) fatal(`${decl.name}: no client for ${l.name}'s family ${l.family}`);
    return clients[l.family](l, data);
  };

  return { ...built, options, setup, teardown, handleSummary, dispatch };
}

// What summary.json says about the run that only setup() can see: k6's version
// (from the User-Agent k6 sends by default, 'Grafana k6/1.8.1', on one request to
// Toxiproxy's /version), the execution segment, the start.
function runMeta() {
  const o = exec.test.options;
  const res = http.get(`${toxiproxyUrl()}/version`, { timeout: '5s', tags: { name: 'toxiproxy', k6pack: 'control' } });
  const ua = /k6\/([0-9][^\s)]*)/.exec(String((res.request && res.request.headers['User-Agent']) || ''));
  return {
    k6Version: rawSetting(__ENV, 'K6PACK_K6_VERSION') || (ua ? ua[1] : null),
    executionSegment: o.executionSegment || null,
    executionSegmentSequence: o.executionSegmentSequence || null,
    startedAt: new Date().toISOString(),
  };
}
