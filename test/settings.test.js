// The one list of settings (common/settings.js): every variable the code reads is on
// it, the k6 side and the pure code read them only through it, each is parsed by its
// kind and bounds, and docs/settings.md and `k6pack list --env` show the list as it is.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import {
  choiceHelp,
  isSettings,
  rawSetting,
  readSettings,
  setting,
  SETTINGS,
  settingNames,
} from '../common/settings.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import declareMobile from '../scenarios/specs/mobile.js';
import declareWsVsHttp from '../scenarios/specs/ws-vs-http.js';
import { LEVELS } from '../common/schedule.js';
import { SETTINGS_DOC, settingsDoc } from '../dev/settings-doc.js';
import { listEnv } from '../lib/commands/k6pack-list.js';
import { ROOT } from '../lib/tools.js';

function sources(dir) {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

// Member reads of an environment object (`__ENV.X`, `env.X`, `process.env.X`, `env['X']`)
// and reads through the parsers (`envInt(env, 'X'`, `setting(env, 'X'`, ...): [name, kind].
// An assignment or a delete (what the CLI gives a child process) is not a read.
function readsIn(text) {
  const code = text.replace(/^\s*(\/\/|\*).*$/gm, '');
  const member = [
    ...code.matchAll(
      /(?<!delete )(?:__ENV|\benv|process\.env)(?:\.([A-Z][A-Z_0-9]+)(?![\w])|\[['"]([A-Z][A-Z_0-9]+)['"]\])(?!\s*=[^=])/g,
    ),
  ];
  const parsed = [...code.matchAll(/\b(?:env\w*|setting|rawSetting|settingNames)\(\s*[\w.]+,\s*'([A-Z][A-Z_0-9]+)'/g)];
  return [...member.map((m) => [m[1] || m[2], 'member']), ...parsed.map((m) => [m[1], 'parsed'])];
}

const FILES = ['common', 'scenarios', 'lib', 'bin', 'servers', 'bench', 'dev'].flatMap(sources);

test('every variable the code reads is on the list', () => {
  const unknown = FILES.flatMap((file) =>
    readsIn(readFileSync(join(ROOT, file), 'utf8'))
      .filter(([name]) => !SETTINGS[name])
      .map(([name]) => `${file}: ${name}`),
  );
  assert.deepEqual(unknown, [], 'add them to common/settings.js');
});

test('no code reads a variable but through the list', () => {
  const raw = FILES.filter((f) => f !== join('common', 'settings.js')).flatMap((file) =>
    readsIn(readFileSync(join(ROOT, file), 'utf8'))
      .filter(([, how]) => how === 'member')
      .map(([name]) => `${file}: ${name}`),
  );
  assert.deepEqual(raw, [], 'read them with setting() or rawSetting() (common/settings.js)');
});

test('a setting is parsed by its kind and bounds; a bad one is one sentence', () => {
  assert.equal(setting({}, 'WS_TIMEOUT_MS'), 30000);
  assert.equal(setting({ WS_TIMEOUT_MS: '5000' }, 'WS_TIMEOUT_MS'), 5000);
  assert.throws(
    () => setting({ WS_TIMEOUT_MS: 'soon' }, 'WS_TIMEOUT_MS'),
    /^WS_TIMEOUT_MS=soon must be a whole number from 100 to 600000$/,
  );
  assert.equal(setting({ HTTP_TIMEOUT: '2m' }, 'HTTP_TIMEOUT'), '2m');
  assert.throws(
    () => setting({ HTTP_TIMEOUT: '2 minutes' }, 'HTTP_TIMEOUT'),
    /HTTP_TIMEOUT=2 minutes must be a duration/,
  );
  assert.deepEqual(setting({ STEPS: '1,10' }, 'STEPS', [1, 4]), [1, 10]);
  assert.deepEqual(setting({}, 'STEPS', [1, 4]), [1, 4]);
  assert.throws(() => setting({}, 'STEPS'), /depends on the run/);
  assert.equal(setting({}, 'TLS'), false);
  assert.equal(setting({ SOAK_DURATION: '15m' }, 'SOAK_DURATION', 3600), 900);
  assert.deepEqual(settingNames({ LANES: 'ws' }, 'LANES', ['ws', 'http2'], ['ws', 'http2']), ['ws']);
  assert.equal(rawSetting({ LOAD: 'ci' }, 'LOAD'), 'ci');
  assert.throws(() => rawSetting({}, 'NO_SUCH_SETTING'), /NO_SUCH_SETTING is not a setting/);
});

test('a choice is one of its values, checked once, here; a bad one is one sentence naming them', () => {
  assert.equal(setting({}, 'WORKLOAD'), 'closed');
  assert.equal(setting({ WORKLOAD: ' open ' }, 'WORKLOAD'), 'open');
  assert.throws(
    () => setting({ WORKLOAD: 'Open' }, 'WORKLOAD'),
    /^WORKLOAD=Open is not a workload: use closed \(VUs in a loop\) or open \(arrival rates\)$/,
  );
  assert.equal(setting({}, 'LOAD', 'soak'), 'soak');
  assert.throws(() => setting({}, 'LOAD'), /LOAD: its default depends on the run/);
  assert.throws(
    () => setting({ LOAD: 'huge' }, 'LOAD', 'ci'),
    /^LOAD=huge is not a load level: use one of smoke, ci, gate, full, soak$/,
  );
  assert.equal(
    choiceHelp('PUBLISH_VIA'),
    "a publisher: use own (each lane's own server), http (GraphQL over HTTP keep-alive) or grpc (gRPC Publish)",
  );
  // Every choice says what it is, and what each value does where it says that at all.
  for (const s of Object.values(SETTINGS).filter((x) => x.kind === 'choice')) {
    assert.ok(s.noun && s.values.length >= 2, s.name);
    if (s.meanings) assert.deepEqual(Object.keys(s.meanings), s.values, s.name);
  }
  // LOAD's values are the schedule's levels, name for name.
  assert.deepEqual(SETTINGS.LOAD.values, Object.keys(LEVELS));
});

test("a run's settings are read once, at its boundary: typed, checked at once, the unset ones absent", () => {
  const env = { LOAD: 'gate', STEPS: '1,10', TLS: 'true', LANES: 'ws,http2', HOME: '/root', PORT_OF_MINE: 'x' };
  const s = readSettings(env);
  assert.ok(isSettings(s) && Object.isFrozen(s));
  // Typed: a list of numbers, a boolean; a list of names stays text (its names are the run's).
  assert.deepEqual({ ...s }, { LOAD: 'gate', STEPS: [1, 10], TLS: true, LANES: 'ws,http2' });
  assert.equal(readSettings(s), s, 'an object already read passes through');
  // setting() looks a value up, or gives the registry's default or the run's fallback.
  assert.deepEqual(setting(s, 'STEPS', [1, 4]), [1, 10]);
  assert.equal(setting(s, 'WORKLOAD'), 'closed');
  assert.equal(setting(s, 'SAMPLE_SECONDS', 5), 5);
  assert.deepEqual(settingNames(s, 'LANES', ['ws', 'http2', 'grpc'], ['ws', 'http2', 'grpc']), ['ws', 'http2']);
  // Only what k6 reads: a server's or a bench's setting is not the run's.
  assert.throws(() => setting(s, 'STREAM_IDLE_MS'), /STREAM_IDLE_MS is not read by k6/);
  // Every value is checked when the settings are read, whichever code would read it: a bad
  // gRPC message size stops ws-vs-http too, before anything is built.
  assert.throws(() => readSettings({ BIG_SIZE: 'abc' }), /^BIG_SIZE=abc must be a whole number from 1 to 16777216$/);
  assert.throws(() => readSettings({ WORKLOAD: 'Open' }), /^WORKLOAD=Open is not a workload/);
  // The plan built from the settings is the plan built from the environment.
  const profile = loadProfile('lte');
  const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');
  const fromEnv = buildScenario(declareWsVsHttp(env), profile, env, policy);
  const fromSettings = buildScenario(declareWsVsHttp(s), profile, s, policy);
  assert.deepEqual(fromSettings.plan, fromEnv.plan);
  assert.deepEqual(fromSettings.thresholds, fromEnv.thresholds);
});

test("LANES: a lane declared once per setting goes by its own name or its base's (mobile's ws_t15, ws)", () => {
  const profile = loadProfile('lte+rrc');
  const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');
  const lanesOf = (env) =>
    buildScenario(declareMobile(readSettings(env)), profile, env, policy)
      .lanes.filter((l) => l.tags.transport)
      .map((l) => l.name);
  const env = { INTERACTION_SECONDS: '5,15' };
  assert.deepEqual(lanesOf({ ...env, LANES: 'ws,http_keepalive_t15' }), ['http_keepalive_t15', 'ws_t5', 'ws_t15']);
  assert.deepEqual(lanesOf({ ...env, LANES: 'ws_ping10' }), ['ws_ping10_t5', 'ws_ping10_t15']);
  assert.throws(
    () => lanesOf({ ...env, LANES: 'wss' }),
    /^LANES=wss: "wss" is not one of http_fresh, http_keepalive, /,
  );
});

test('the pure code never reads the environment itself: common/ and the specs take the settings', () => {
  const pure = [...sources('common'), ...sources(join('scenarios', 'specs'))].filter((f) => !f.endsWith('.test.js'));
  for (const file of pure) {
    const code = readFileSync(join(ROOT, file), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
    assert.doesNotMatch(code, /__ENV|process\.env/, `${file} reads the environment: take the run's settings`);
  }
});

test('docs/settings.md and `k6pack list --env` show the list as it is', () => {
  assert.equal(readFileSync(SETTINGS_DOC, 'utf8'), settingsDoc(), 'run `node dev/settings-doc.js --write`');
  const lines = [];
  assert.equal(listEnv({ out: (l) => lines.push(l) }), 0);
  for (const name of Object.keys(SETTINGS))
    assert.ok(
      lines.some((l) => l.startsWith(`${name} `)),
      `${name} is not in \`k6pack list --env\` (${relative(ROOT, SETTINGS_DOC)})`,
    );
});
