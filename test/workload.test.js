// An open workload beside the closed one (WORKLOAD=open, `--workload open`), on real runs:
//   - against the unchanged server, the easiest steps hold: the lanes whose first
//     operation on each connection pays its set-up (HTTP keep-alive: TCP; HTTP/2: TCP and
//     TLS) once failed their o50 step on one dropped arrival (1 % of a short step is 0,
//     and the pool was sized for the model's median); the pool is now sized for that
//     worst case and the rule has a floor (thresholds.json open), so nothing drops and
//     the verdict names the rate each lane held;
//   - against a GraphQL server that slows down with load (test-only: dev/server-delay.js
//     adds 15 ms per request in flight, so it serves at most 1000/15 = 67 requests a second
//     whatever the concurrency), the closed model waits for each answer and never builds
//     a queue: its p95 stays at R + 15 ms. The open model keeps arriving: at 30 % of four
//     connections (17/s) the server keeps up and the step holds; at 150 % (84/s) it falls
//     behind: the queue shows in the latency, the pool fills, the arrivals beyond it are
//     dropped, far more than the rule allows, and the verdict's "held up to" stops at the
//     step before (the knee).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { droppedLimit, expectationsOf } from '../common/gates.js';
import { linkOf } from '../common/model.js';
import { OPEN, OPEN_CPU_CEILING } from '../common/schedule.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack } from '../dev/test-stack.js';

const SCENARIO = join(ROOT, 'scenarios', 'ws-vs-http.js');
// Small enough that the low step keeps within its p50 budget (R + 15 ms + the proxies'
// few ms against the model's R x 1.15 + 20 ms), large enough that the server's ceiling
// (1000 / 15 = 67/s) is below the high step's 84/s.
const DELAY_PER_INFLIGHT = 15;
const R = 70; // lte
const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');
const { default: declare } = await import(pathToFileURL(join(ROOT, 'scenarios', 'specs', 'ws-vs-http.js')).href);

let delayed;
const dir = mkdtempSync(join(tmpdir(), 'k6pack-workload-'));
before(async () => {
  const saved = { ...process.env };
  process.env.NODE_OPTIONS = `--import=${pathToFileURL(join(ROOT, 'dev', 'server-delay.js')).href}`;
  process.env.K6PACK_TEST_DELAY_PER_INFLIGHT_MS = String(DELAY_PER_INFLIGHT);
  try {
    delayed = await startTestStack();
  } finally {
    process.env = saved;
  }
});
after(async () => {
  await delayed?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ENV = { PROFILE: 'lte', LANES: 'http_keepalive' };
async function run(stack, env) {
  const r = await runK6(SCENARIO, { env: { ...stack.env, ...ENV, ...env }, timeoutMs: 120000 });
  assert.ok(r.code === 0 || r.code === 99, `k6 exited ${r.code}: ${r.stderr.slice(-1500)}`);
  return r;
}
const m = (r, key) => r.summary.metrics[key];
const dropped = (r, name) => m(r, `dropped_iterations{scenario:${name}}`)?.count ?? 0;
// k6's summary export: a threshold's value is true when it was crossed.
const crossed = (r, name) => Object.values(m(r, `dropped_iterations{scenario:${name}}`).thresholds)[0];
// The plan k6 ran, built the same way here: its rates, pools and dropped-arrivals limits.
const planOf = (env) => buildScenario(declare(env), loadProfile('lte'), { ...ENV, ...env }, policy).plan;
const limitOf = (plan, name) =>
  droppedLimit(policy.open, (plan.scenarios[name].rate / 60) * (plan.durations[name] / 1000));
const rate = (plan, name) => Math.round(plan.scenarios[name].rate / 60);

test(
  "an unchanged server: the easy steps hold, a kept connection's first operation and all",
  { timeout: 180000 },
  async (t) => {
    const plain = await startTestStack();
    try {
      const env = { LOAD: 'ci', WORKLOAD: 'open', LANES: 'http_keepalive,http2' };
      const r = await run(plain, env);
      const plan = planOf(env);
      const steps = Object.keys(plan.scenarios);
      t.diagnostic(
        steps
          .map(
            (s) =>
              `${s}: ${rate(plan, s)}/s, pool ${plan.scenarios[s].preAllocatedVUs}/${plan.scenarios[s].maxVUs}, dropped ${dropped(r, s)} (at most ${limitOf(plan, s)}), p95 ${m(r, `op_duration{scenario:${s}}`)['p(95)'].toFixed(0)} ms`,
          )
          .join('; '),
      );
      for (const s of steps) {
        assert.ok(dropped(r, s) <= limitOf(plan, s), `${s} dropped ${dropped(r, s)}`);
        assert.equal(crossed(r, s), false, `${s}: the dropped gate failed`);
      }
      assert.equal(r.code, 0, `k6 exited ${r.code}: ${r.stdout.slice(-3000)}`);
      assert.match(
        r.stdout,
        new RegExp(
          `Held the budget up to: http keepalive ${rate(plan, 'http_keepalive_o90')} arrivals/s, http2 ${rate(plan, 'http2_o90')} arrivals/s\\.`,
        ),
      );
    } finally {
      await plain.stop();
    }
  },
);

test(
  'a server that slows with load: closed, the p95 stays flat; open, the step past its ceiling falls behind and is the knee',
  { timeout: 300000 },
  async (t) => {
    const closed = await run(delayed, { LOAD: 'full', STEP_SECONDS: '8', STEPS: '1' });
    const env = { LOAD: 'full', STEP_SECONDS: '8', WORKLOAD: 'open', OPEN_CONNECTIONS: '4', OPEN_SHARES: '30,150' };
    const open = await run(delayed, env);
    const plan = planOf(env);
    const closedP95 = m(closed, 'op_duration{scenario:http_keepalive_c1}')['p(95)'];
    const closedP50 = m(closed, 'op_duration{scenario:http_keepalive_c1}').med;
    const low = m(open, 'op_duration{scenario:http_keepalive_o30}');
    const high = m(open, 'op_duration{scenario:http_keepalive_o150}');
    t.diagnostic(
      `closed c1 p50 ${closedP50.toFixed(0)} ms, p95 ${closedP95.toFixed(0)} ms; open 30 % (${rate(plan, 'http_keepalive_o30')}/s) p50 ${low.med.toFixed(0)} ms, p95 ${low['p(95)'].toFixed(0)} ms, dropped ${dropped(open, 'http_keepalive_o30')} (at most ${limitOf(plan, 'http_keepalive_o30')}); open 150 % (${rate(plan, 'http_keepalive_o150')}/s, pool ${plan.scenarios.http_keepalive_o150.preAllocatedVUs}/${plan.scenarios.http_keepalive_o150.maxVUs}) p50 ${high.med.toFixed(0)} ms, p95 ${high['p(95)'].toFixed(0)} ms, dropped ${dropped(open, 'http_keepalive_o150')} (at most ${limitOf(plan, 'http_keepalive_o150')})`,
    );
    // Closed: one request in flight, ever: R + the delay of one, no queue (p95 near p50;
    // the tail is the lane's first request, which opens its connection).
    assert.ok(
      closedP50 >= R + DELAY_PER_INFLIGHT && closedP50 < R + 2 * DELAY_PER_INFLIGHT,
      `closed p50 ${closedP50} ms, not R + ${DELAY_PER_INFLIGHT}`,
    );
    assert.ok(closedP95 < 2.5 * closedP50, `closed p95 ${closedP95} ms is not flat (p50 ${closedP50} ms)`);
    // Open, 30 %: below the server's ceiling, the step keeps up: nothing dropped beyond the
    // rule, and the verdict counts it as held.
    assert.equal(crossed(open, 'http_keepalive_o30'), false, 'the 30 % step failed its dropped gate');
    // Open, 150 %: the queue grows (each waiting request slows the next) until the VU pool
    // is full, then the arrivals beyond what the server serves are dropped.
    assert.ok(
      high['p(95)'] > 3 * closedP50 && high['p(95)'] > 1.8 * closedP95,
      `open 150 % p95 ${high['p(95)']} ms is not far above the closed p50 ${closedP50} / p95 ${closedP95} ms`,
    );
    assert.ok(high.med > 2 * low.med, `open 150 % p50 ${high.med} ms not above open 30 % ${low.med} ms`);
    // It really fell behind: many times what the rule lets a step drop.
    assert.ok(
      dropped(open, 'http_keepalive_o150') > 3 * limitOf(plan, 'http_keepalive_o150'),
      `150 % dropped ${dropped(open, 'http_keepalive_o150')}, at most ${limitOf(plan, 'http_keepalive_o150')} allowed`,
    );
    // ... and its gate says so: dropped_iterations per step, and k6 exits 99.
    assert.equal(open.code, 99);
    assert.equal(crossed(open, 'http_keepalive_o150'), true, 'the 150 % dropped gate held');
    assert.match(open.stdout, /FAIL dropped_iterations\{scenario:http_keepalive_o150\} count<=\d+/);
    // The knee: held the 30 % step's rate, not the 150 % one's.
    assert.match(
      open.stdout,
      new RegExp(`Held the budget up to: http keepalive ${rate(plan, 'http_keepalive_o30')} arrivals/s\\.`),
    );
  },
);

test('an open plan: rates from the model as shares of a connection, the VU pool sized for the worst case, a dropped gate per step', async () => {
  const env = { LOAD: 'full', WORKLOAD: 'open' };
  for (const spec of ['lte', '3g']) {
    const profile = loadProfile(spec);
    const link = linkOf(profile);
    const built = buildScenario(declare(env), profile, env, policy);
    assert.equal(built.plan.workload, 'open');
    assert.deepEqual(
      built.plan.steps,
      OPEN.full.shares.map((s) => `o${s}`),
    );
    for (const lane of built.lanes) {
      OPEN.full.shares.forEach((share) => {
        const name = `${lane.name}_o${share}`;
        const sc = built.plan.scenarios[name];
        const perSecond = sc.rate / 60;
        // A share of what OPEN.full.connections connections do, each taking the model's iteration
        // time, and at most of OPEN_CPU_CEILING of what the cores do (the reference machine:
        // 2 cores, scale 1), which binds fifty connections' fresh TLS lanes under lte.
        const byCpu = lane.openCpuSeconds > 0 ? (OPEN_CPU_CEILING * 2) / lane.openCpuSeconds : Infinity;
        const want = (share / 100) * Math.min(OPEN.full.connections / lane.openSeconds, byCpu);
        assert.ok(
          Math.abs(perSecond - want) <= 1 / 60 + want * 0.01,
          `${spec} ${name}: ${perSecond}/s, want ${want}/s`,
        );
        // The pool holds every arrival in flight at its worst: for a lane that keeps its
        // connection, no shorter than the connection's first operation (its set-up paid).
        const { worstSeconds } = built.plan.pools[name];
        assert.ok(worstSeconds > lane.openSeconds, `${spec} ${name}: worst ${worstSeconds} s`);
        if (!lane.session)
          assert.ok(
            worstSeconds * 1000 >= expectationsOf(lane, {}, link).p95.ms,
            `${spec} ${name}: worst ${worstSeconds} s is shorter than a connection's first operation`,
          );
        assert.ok(
          sc.preAllocatedVUs >= Math.min(1000, perSecond * worstSeconds + 1) && sc.maxVUs >= sc.preAllocatedVUs,
          `${spec} ${name}: pool ${sc.preAllocatedVUs}/${sc.maxVUs} for ${perSecond}/s of up to ${worstSeconds} s`,
        );
        assert.deepEqual(built.thresholds[`dropped_iterations{scenario:${name}}`], [
          `count<=${droppedLimit(policy.open, perSecond * (built.plan.durations[name] / 1000))}`,
        ]);
      });
    }
    // 3g's round trips are longer: the same shares are fewer arrivals.
    if (spec === '3g')
      assert.ok(
        built.plan.scenarios.ws_o50.rate <
          buildScenario(declare(env), loadProfile('lte'), env, policy).plan.scenarios.ws_o50.rate,
      );
  }
  // push's subscriptions stay open for their step: an open workload does not apply.
  const { default: push } = await import(pathToFileURL(join(ROOT, 'scenarios', 'specs', 'push.js')).href);
  assert.equal(buildScenario(push(env), loadProfile('lte'), env, policy).plan.workload, 'closed');
});
