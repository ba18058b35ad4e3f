// thresholds.json and scenarios/lib/thresholds.js: the file is valid and its
// numbers follow the round-trip model; a broken file or a missing scenario
// stops k6 with one sentence naming the file; an unmeetable file makes k6 exit 99.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import { loadProfile } from '../lib/profiles.js';
import { parseThresholds, selectThresholds } from '../scenarios/lib/thresholds.js';
import { runK6 } from '../dev/k6.js';
import { startTestStack } from '../dev/stack.js';

const FILE = join(ROOT, 'thresholds.json');
const doc = parseThresholds(readFileSync(FILE, 'utf8'), FILE);
const isNote = (k) => k.startsWith('_') || k.startsWith('$');
const SCENARIO = join(ROOT, 'scenarios', 'ws-vs-http.js');

// k6 logs the error's text with its quotes escaped.
const unquote = (text) => text.replace(/\\"/g, '"');

const dir = mkdtempSync(join(tmpdir(), 'k6pack-thresholds-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function file(name, text) {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('thresholds.json', () => {
  test('names only scenarios that exist and profiles that resolve', () => {
    const scenarios = readdirSync(join(ROOT, 'scenarios')).filter((f) => f.endsWith('.js')).map((f) => f.replace(/\.js$/, ''));
    for (const [name, profiles] of Object.entries(doc)) {
      if (isNote(name)) continue;
      assert.ok(scenarios.includes(name), `thresholds.json has "${name}" but there is no scenarios/${name}.js`);
      assert.ok(profiles.default, `"${name}" has no default block`);
      for (const profile of Object.keys(profiles)) {
        if (isNote(profile) || profile === 'default') continue;
        assert.doesNotThrow(() => loadProfile(profile), `"${name}"."${profile}" is not a profile`);
      }
    }
    for (const s of scenarios) assert.ok(doc[s], `scenarios/${s}.js has no entry in thresholds.json`);
  });

  test('every failure-rate gate aborts a runaway test, after a delay', () => {
    for (const [name, profiles] of Object.entries(doc)) {
      if (isNote(name)) continue;
      for (const [profile, block] of Object.entries(profiles)) {
        if (isNote(profile)) continue;
        for (const t of block.op_failed || []) {
          assert.equal(t.abortOnFail, true, `${name}.${profile}.op_failed`);
          assert.match(t.delayAbortEval, /^\d+s$/, `${name}.${profile}.op_failed`);
        }
      }
    }
  });

  test('a profile block overrides the default metric by metric; an unlisted profile gets the default', () => {
    const d = { s: { default: { a: ['rate<0.1'], b: ['p(95)<5'] }, '3g': { b: ['p(95)<9'], $model: 'x' } } };
    assert.deepEqual(selectThresholds(d, 'f', 's', '3g'), { a: ['rate<0.1'], b: ['p(95)<9'] });
    assert.deepEqual(selectThresholds(d, 'f', 's', 'edge'), { a: ['rate<0.1'], b: ['p(95)<5'] });
    assert.throws(() => selectThresholds(d, 'f', 'nope', '3g'), /thresholds file f: no entry for scenario "nope" \(it has: s\)/);
  });
});

// The latency gates must be reachable under the model and tight enough to mean
// something: model <= bound <= 1.5 x model + 60 ms (NETWORK.md round trips).
describe('thresholds follow the round-trip model', () => {
  const bound = (list, stat) => {
    const t = list.find((x) => typeof x === 'string' && x.startsWith(`${stat}<`));
    return t ? Number(t.slice(stat.length + 1)) : null;
  };
  // key -> round trips (small messages: transfer is a few ms at every profile)
  const MODEL = {
    'ws-vs-http': {
      'op_duration{transport:ws,tls:false,step:c1}': 1,
      'op_duration{transport:http-keepalive,tls:false,step:c1}': 1,
      'op_duration{transport:http-fresh,tls:false,step:c1}': 2,
      'op_duration{transport:ws,tls:true,step:c1}': 1,
      'op_duration{transport:http2,tls:true,step:c1}': 1,
      'op_duration{transport:http-fresh,tls:true,step:c1}': 3,
      'setup_duration{phase:ws_upgrade,tls:false,step:c1}': 2,
      'setup_duration{phase:ws_upgrade,tls:true,step:c1}': 3,
      'setup_duration{phase:ws_init,step:c1}': 1,
    },
    'grpc-vs-graphql': {
      'op_duration{transport:grpc,tls:false,payload:small,conn:warm,step:c1}': 1,
      'op_duration{transport:grpc-fresh,tls:false,payload:small,conn:cold,step:c1}': 3,
      'op_duration{transport:http-keepalive,tls:false,payload:small,conn:warm,step:c1}': 1,
      'op_duration{transport:http-fresh,tls:false,payload:small,conn:cold,step:c1}': 2,
    },
    push: { 'push_latency{transport:ws,step:c1}': 0.5, 'push_latency{transport:grpc-stream,step:c1}': 0.5 },
  };
  for (const [scenario, keys] of Object.entries(MODEL)) {
    test(scenario, () => {
      const profiles = Object.keys(doc[scenario]).filter((p) => !isNote(p) && p !== 'default');
      assert.ok(profiles.length >= 4, `${scenario}: gates for several profiles`);
      for (const profile of profiles) {
        const rtt = loadProfile(profile).network.rttMs;
        for (const [key, rtts] of Object.entries(keys)) {
          const p50 = bound(doc[scenario][profile][key] || [], 'p(50)');
          assert.ok(p50 !== null, `${scenario}.${profile}: no p(50) gate on ${key}`);
          const model = rtts * rtt;
          assert.ok(p50 >= model, `${scenario}.${profile} ${key}: p(50)<${p50} is below the model's ${model} ms`);
          assert.ok(p50 <= model * 1.5 + 60, `${scenario}.${profile} ${key}: p(50)<${p50} is far above the model's ${model} ms`);
        }
      }
    });
  }
});

describe('a broken thresholds file stops k6 before the test, in one sentence', () => {
  const cases = [
    ['not JSON', '{oops', /thresholds file .*bad-json\.json: not valid JSON/],
    ['not a threshold', JSON.stringify({ 'ws-vs-http': { default: { op_duration: ['p(50)<abc'] } } }), /"ws-vs-http"\."default"\."op_duration": "p\(50\)<abc" is not a k6 threshold/],
    ['unknown field', JSON.stringify({ 'ws-vs-http': { default: { op_failed: [{ threshold: 'rate<0.1', abort: true }] } } }), /unknown field "abort"/],
    ['no such scenario', JSON.stringify({ push: { default: { op_failed: ['rate<0.1'] } } }), /no entry for scenario "ws-vs-http" \(it has: push\)/],
  ];
  for (const [what, text, message] of cases) {
    test(what, async () => {
      const path = file(`bad-${what === 'not JSON' ? 'json' : what.replace(/ /g, '-')}.json`, text);
      const r = await runK6(SCENARIO, { env: { THRESHOLDS: path, LOAD: 'smoke' }, timeoutMs: 30000 });
      assert.equal(r.code, 107, r.stderr);
      const err = unquote(r.stderr);
      assert.match(err, message);
      assert.ok(err.includes(`thresholds file ${path}: `), err);
    });
  }

  test('a missing file, given relative to the working directory', async () => {
    const rel = relative(process.cwd(), join(dir, 'missing.json'));
    const r = await runK6(SCENARIO, { env: { THRESHOLDS: rel, LOAD: 'smoke', PWD: process.cwd() }, timeoutMs: 30000 });
    assert.equal(r.code, 107, r.stderr);
    assert.ok(unquote(r.stderr).includes(`thresholds file ${join(dir, 'missing.json')}: cannot read it`), r.stderr);
    assert.doesNotMatch(r.stderr, /panic|goroutine/);
  });
});

describe('thresholds gate a real run', () => {
  let stack;
  before(async () => {
    stack = await startTestStack();
  });
  after(async () => {
    await stack?.stop();
  });

  test('a thresholds file that cannot be met makes k6 exit 99, and says which gate failed', async () => {
    const path = file('unmeetable.json', JSON.stringify({ 'ws-vs-http': { default: { 'op_duration{transport:ws}': ['p(50)<0.001'] } } }));
    const results = join(dir, 'results');
    mkdirSync(results);
    const r = await runK6(SCENARIO, {
      env: { ...stack.env, THRESHOLDS: path, LOAD: 'smoke', PROFILE: 'lan', STEP_SECONDS: '1', RESULTS_DIR: results },
      timeoutMs: 90000,
    });
    assert.equal(r.code, 99, r.stderr);
    assert.match(r.stdout, /FAIL op_duration\{transport:ws\} p\(50\)<0\.001/);
    assert.equal(r.summary.metrics['op_duration{transport:ws}'].thresholds['p(50)<0.001'], true);
    // The JUnit file beside the JSON says the same.
    const junit = readFileSync(join(results, 'junit.xml'), 'utf8');
    assert.match(junit, /failures="1"/);
    assert.match(junit, /<testcase name="op_duration\{transport:ws\} p\(50\)&lt;0\.001" [^>]*><failure message="op_duration\{transport:ws\}: p\(50\)=[\d.]+, threshold p\(50\)&lt;0\.001"/);
    const json = JSON.parse(readFileSync(join(results, 'summary.json'), 'utf8'));
    assert.ok(json.rows.some((row) => row.latency.count > 0));
    assert.equal(json.thresholds.find((t) => t.key === 'op_duration{transport:ws}').ok, false);
  });
});
