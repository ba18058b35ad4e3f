// The scenarios' plans and inputs, without a stack: `k6 inspect` shows the
// options each load level builds (lanes one after another, rising steps, a
// CI budget), and bad input stops k6 with one sentence.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { execa } from 'execa';
import { gateScenarios } from '../lib/gate-defaults.js';
import { specGate } from '../lib/specs.js';
import { requireK6 } from '../lib/k6.js';
import { ROOT } from '../lib/tools.js';
import { resolveTargets } from '../scenarios/lib/config.js';
import { TARGET_DEFAULTS } from '../common/defaults.js';
import { runK6 } from '../dev/run-k6.js';

const SCENARIOS = readdirSync(join(ROOT, 'scenarios'))
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.replace(/\.js$/, ''));
const STEPPED = SCENARIOS.filter((s) => s !== 'soak');
const TRANSPORTS = [
  'http-fresh',
  'http-keepalive',
  'http2',
  'ws',
  'grpc',
  'grpc-fresh',
  'grpc-stream',
  'grpc-bidi',
  'grpc-client-stream',
  'http-poll',
];
// Concurrency steps at LOAD=full: 1 -> 10 -> 50 -> 200 VUs; fanout's steps are its
// subscriber counts, 10 -> 100 -> 1000 (several subscribers to a VU).
// unstable: one client per lane at every level (what one user meets on a failing link).
// mobile: one phone per lane and interaction rate (the radio is the device's).
const FULL_STEPS = { fanout: 3, unstable: 1, mobile: 1 };
// The PR gate's scenarios must fit its time; the others (unstable: one period of the
// link's events per lane) are not in it.
const GATED = new Set(await gateScenarios());

async function inspect(name, env = {}) {
  const args = [
    'inspect',
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    join(ROOT, 'scenarios', `${name}.js`),
  ];
  const r = await execa(requireK6(), args, { reject: false, timeout: 30000, stdin: 'ignore' });
  assert.equal(r.exitCode, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// k6 durations: 1h2m3.5s, 500ms.
const seconds = (d) =>
  [...String(d).matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)].reduce(
    (sum, [, n, u]) => sum + Number(n) * { h: 3600, m: 60, s: 1, ms: 0.001 }[u],
    0,
  );

function lanesOf(options) {
  return Object.entries(options.scenarios)
    .map(([name, sc]) => ({
      name,
      ...sc,
      start: seconds(sc.startTime || '0s'),
      end: seconds(sc.startTime || '0s') + seconds(sc.duration) + seconds(sc.gracefulStop),
    }))
    .sort((a, b) => a.start - b.start);
}

// Each scenario says whether the gate runs it (GATE in its spec); the gate's --help names
// the ones it leaves out, and must say what the declarations say.
test('the gate runs the scenarios whose declaration says so, at their load; its --help names the others', async () => {
  const names = readdirSync(join(ROOT, 'scenarios', 'specs')).map((f) => f.replace(/\.js$/, ''));
  const gates = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await specGate(n)])));
  const left = names.filter((n) => !gates[n].runs).sort();
  for (const n of left) assert.match(gates[n].why, /\S/, `${n}: GATE says why the gate leaves it out`);
  for (const n of GATED) assert.equal(gates[n].load, 'gate', n);
  assert.deepEqual([...GATED].sort(), names.filter((n) => gates[n].runs).sort());
  const help = await execa(process.execPath, [join(ROOT, 'bin', 'k6pack.js'), 'gate', '--help']);
  const said = /every scenario but ([\w-]+(?:, [\w-]+)* and [\w-]+)/
    .exec(help.stdout)[1]
    .split(/, | and /)
    .sort();
  assert.deepEqual(said, left);
});

describe('load levels', () => {
  for (const name of STEPPED) {
    test(`${name}: lanes run one after another, concurrency rises within each`, async () => {
      const ci = lanesOf(await inspect(name, { LOAD: 'ci' }));
      for (let i = 1; i < ci.length; i++)
        assert.ok(ci[i].start >= ci[i - 1].end - 1e-6, `${ci[i].name} starts before ${ci[i - 1].name} ends`);
      for (const sc of ci) {
        assert.ok(TRANSPORTS.includes(sc.tags.transport), `${sc.name}: transport ${sc.tags.transport}`);
        assert.match(sc.tags.tls, /^(true|false)$/);
        assert.equal(sc.name, `${sc.name.replace(/_c\d+$/, '')}_${sc.tags.step}`);
      }
      // The gate's time: test/gate-plan.test.js bounds the plan it runs (LOAD=gate).
      const full = lanesOf(await inspect(name, { LOAD: 'full' }));
      const lane = full[0].name.replace(/_c\d+$/, '');
      const steps = full
        .filter((sc) => sc.name.replace(/_c\d+$/, '') === lane)
        .map((sc) => Number(sc.tags.step.slice(1)));
      assert.ok(steps.length >= (FULL_STEPS[name] ?? 4), `${lane}: ${steps.length} steps`);
      if (steps.length < 2) return;
      assert.deepEqual(
        steps,
        [...steps].sort((a, b) => a - b),
        `${lane}: steps ${steps} do not rise`,
      );
      assert.ok(new Set(steps).size === steps.length, `${lane}: steps ${steps} repeat`);
    });
  }

  test('soak: every lane at once at a constant arrival rate for SOAK_DURATION (default 1h)', async () => {
    const plain = await inspect('soak');
    for (const sc of Object.values(plain.scenarios)) {
      assert.equal(sc.executor, 'constant-arrival-rate');
      assert.equal(seconds(sc.duration), 3600);
    }
    const short = await inspect('soak', { SOAK_DURATION: '15m', SOAK_RATE: '7' });
    const lanes = Object.values(short.scenarios).filter((sc) => sc.tags.transport);
    assert.ok(lanes.length >= 4);
    for (const sc of lanes) {
      assert.equal(seconds(sc.duration), 900);
      assert.equal(sc.rate, 7);
    }
  });

  test('every scenario runs with no flags: TLS trust, thresholds and a default profile tag', async () => {
    for (const name of SCENARIOS) {
      const o = await inspect(name);
      // api runs a team's own API: an untrusted certificate only with --insecure (its plan file says), never by default.
      assert.equal(o.insecureSkipTLSVerify, name !== 'api', name);
      assert.ok(Object.keys(o.thresholds).length > 0, name);
      assert.ok(o.tags.profile, name);
    }
  });
});

describe('bad input stops k6 before the test, in one sentence', () => {
  const SCRIPT = join(ROOT, 'scenarios', 'ws-vs-http.js');
  const cases = [
    [
      { GRAPHQL_HTTP_URL: 'http://10.1.2.3:4000/graphql' },
      'GRAPHQL_HTTP_URL=http://10.1.2.3:4000/graphql is not a loopback address',
    ],
    [{ LOAD: 'huge' }, 'LOAD=huge is not a load level: use one of smoke, ci, gate, full, soak'],
    [{ STEPS: '1,x' }, 'STEPS=1,x: item 2 must be a whole number'],
    [{ STEP_SECONDS: '-3' }, 'STEP_SECONDS=-3 must be a whole number'],
  ];
  for (const [env, message] of cases) {
    test(Object.keys(env)[0], async () => {
      const r = await runK6(SCRIPT, { env, timeoutMs: 30000 });
      assert.equal(r.code, 107, r.stderr);
      assert.ok(r.stderr.includes(message), r.stderr);
    });
  }
});

test('targets: loopback by default, a remote host only with ALLOW_REMOTE_TARGET=1', () => {
  assert.deepEqual(resolveTargets({}), TARGET_DEFAULTS);
  assert.equal(resolveTargets({ GRPC_ADDR: '[::1]:5000' }).GRPC_ADDR, '[::1]:5000');
  assert.equal(
    resolveTargets({ GRAPHQL_WS_URL: 'ws://localhost:1/graphql' }).GRAPHQL_WS_URL,
    'ws://localhost:1/graphql',
  );
  assert.throws(
    () => resolveTargets({ GRPC_ADDR: 'grpc.example.com:443' }),
    /GRPC_ADDR=grpc\.example\.com:443 is not a loopback address/,
  );
  assert.equal(
    resolveTargets({ GRPC_ADDR: 'grpc.example.com:443', ALLOW_REMOTE_TARGET: '1' }).GRPC_ADDR,
    'grpc.example.com:443',
  );
});

// `k6pack plan` prints what k6 gets: every k6 scenario of `k6 inspect`'s options, with
// the same executor, VUs or rate, start, duration and graceful stop.
describe('k6pack plan matches k6 inspect', () => {
  const cases = [
    ['ws-vs-http', { PROFILE: 'lte', LOAD: 'ci' }],
    ['ws-vs-http', { PROFILE: 'lte', LOAD: 'ci', WORKLOAD: 'open' }],
    ['fanout', { PROFILE: '3g', LOAD: 'full' }],
    ['serialization', { PROFILE: 'lan', LOAD: 'ci', STEP_ITERATIONS: '3' }],
    ['soak', { PROFILE: 'lan', LOAD: 'ci' }],
  ];
  for (const [name, env] of cases) {
    test(`${name} ${Object.values(env).join(' ')}`, async () => {
      const { PROFILE, LOAD, WORKLOAD, ...rest } = env;
      const flags = ['--profile', PROFILE, '--load', LOAD, ...(WORKLOAD ? ['--workload', WORKLOAD] : [])];
      const cli = await execa('node', [join(ROOT, 'bin', 'k6pack.js'), 'plan', name, ...flags], {
        reject: false,
        env: rest,
        timeout: 30000,
      });
      assert.equal(cli.exitCode, 0, cli.stderr);
      const lines = cli.stdout.split('\n');
      const head = lines.findIndex((l) => l.startsWith('  k6 scenario'));
      const end = lines.indexOf('where the figures come from:');
      const printed = Object.fromEntries(
        lines.slice(head + 1, end).map((l) => {
          const [scenario, executor, load, start, duration, graceful] = l.trim().split(/\s{2,}/);
          return [scenario, { executor, load, start, duration, graceful }];
        }),
      );
      const { scenarios } = await inspect(name, env);
      assert.deepEqual(Object.keys(printed).sort(), Object.keys(scenarios).sort());
      for (const [key, sc] of Object.entries(scenarios)) {
        const p = printed[key];
        assert.equal(p.executor, sc.executor, key);
        assert.equal(seconds(p.start), seconds(sc.startTime || '0s'), `${key} start`);
        assert.equal(seconds(p.duration), seconds(sc.duration || sc.maxDuration), `${key} duration`);
        assert.equal(seconds(p.graceful), seconds(sc.gracefulStop), `${key} graceful stop`);
        const numbers = p.load.match(/\d+/g).map(Number);
        if (sc.executor === 'constant-vus') assert.deepEqual(numbers, [sc.vus], key);
        else if (sc.executor === 'shared-iterations') assert.deepEqual(numbers, [sc.vus, sc.iterations], key);
        else {
          assert.equal(numbers[0], sc.rate, `${key} rate`);
          assert.equal(seconds(p.load.split('/')[1].split(' ')[0]), seconds(sc.timeUnit), `${key} time unit`);
          assert.deepEqual(numbers.slice(-2), [sc.preAllocatedVUs, sc.maxVUs], `${key} VUs`);
        }
      }
    });
  }
});
