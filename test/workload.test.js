// An open workload beside the closed one (WORKLOAD=open, `--workload open`): the
// same lane against a GraphQL server that slows down with load (test-only:
// dev/server-delay.js adds 60 ms per request in flight). The closed model waits for
// each answer, so it never builds a queue: its p95 stays at R + 60 ms. The open model
// keeps arriving at 150 % of what one connection can do: the queue shows in its p95,
// and what it cannot start is counted in dropped_iterations, which its gate fails.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { OPEN } from '../common/plan.js';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/k6.js';
import { startTestStack } from '../dev/stack.js';

const SCENARIO = join(ROOT, 'scenarios', 'ws-vs-http.js');
const DELAY_PER_INFLIGHT = 60;
const R = 70; // lte

let stack;
const dir = mkdtempSync(join(tmpdir(), 'k6pack-workload-'));
before(async () => {
  const saved = { ...process.env };
  process.env.NODE_OPTIONS = `--import=${pathToFileURL(join(ROOT, 'dev', 'server-delay.js')).href}`;
  process.env.K6PACK_TEST_DELAY_PER_INFLIGHT_MS = String(DELAY_PER_INFLIGHT);
  try {
    stack = await startTestStack();
  } finally {
    process.env = saved;
  }
});
after(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(env) {
  const r = await runK6(SCENARIO, {
    env: { ...stack.env, PROFILE: 'lte', LOAD: 'full', LANES: 'http_keepalive', STEP_SECONDS: '8', ...env },
    timeoutMs: 120000,
  });
  assert.ok(r.code === 0 || r.code === 99, `k6 exited ${r.code}: ${r.stderr.slice(-1500)}`);
  return r;
}
const m = (r, key) => r.summary.metrics[key];

test(
  'closed: the p95 stays flat; open at 150 % of a connection: the queue shows, arrivals are dropped',
  { timeout: 300000 },
  async (t) => {
    const closed = await run({ STEPS: '1' });
    const open = await run({ WORKLOAD: 'open', OPEN_CONNECTIONS: '1', OPEN_SHARES: '50,150' });
    const closedP95 = m(closed, 'op_duration{scenario:http_keepalive_c1}')['p(95)'];
    const closedP50 = m(closed, 'op_duration{scenario:http_keepalive_c1}').med;
    const low = m(open, 'op_duration{scenario:http_keepalive_o50}');
    const high = m(open, 'op_duration{scenario:http_keepalive_o150}');
    const dropped = (name) => m(open, `dropped_iterations{scenario:${name}}`)?.count ?? 0;
    t.diagnostic(
      `closed c1 p50 ${closedP50.toFixed(0)} ms, p95 ${closedP95.toFixed(0)} ms; open 50 % p95 ${low['p(95)'].toFixed(0)} ms (dropped ${dropped('http_keepalive_o50')}); open 150 % p95 ${high['p(95)'].toFixed(0)} ms (dropped ${dropped('http_keepalive_o150')})`,
    );
    // Closed: one request in flight, ever: R + the delay of one, no queue (p95 near p50;
    // the tail is the lane's first request, which opens its connection).
    assert.ok(
      closedP50 >= R + DELAY_PER_INFLIGHT && closedP50 < R + 2 * DELAY_PER_INFLIGHT,
      `closed p50 ${closedP50} ms, not R + ${DELAY_PER_INFLIGHT}`,
    );
    assert.ok(closedP95 < 2.5 * closedP50, `closed p95 ${closedP95} ms is not flat (p50 ${closedP50} ms)`);
    // Open, 150 %: the queue grows (each waiting request slows the next) until the VU
    // pool, sized at four times the model's in-flight, is full.
    assert.ok(
      high['p(95)'] > 3 * closedP50 && high['p(95)'] > 1.8 * closedP95,
      `open 150 % p95 ${high['p(95)']} ms is not far above the closed p50 ${closedP50} / p95 ${closedP95} ms`,
    );
    assert.ok(
      high['p(95)'] > 2 * low['p(95)'],
      `open 150 % p95 ${high['p(95)']} ms not above open 50 % ${low['p(95)']} ms`,
    );
    assert.ok(dropped('http_keepalive_o150') > 0, 'no arrivals were dropped at 150 %');
    // ... and its gate says so: dropped_iterations per step, and k6 exits 99.
    assert.equal(open.code, 99);
    assert.equal(
      m(open, 'dropped_iterations{scenario:http_keepalive_o150}').thresholds[
        Object.keys(m(open, 'dropped_iterations{scenario:http_keepalive_o150}').thresholds)[0]
      ],
      true,
      'the dropped gate failed',
    );
    assert.match(open.stdout, /FAIL dropped_iterations\{scenario:http_keepalive_o150\} count<=\d+/);
    // The server is 60 ms slower than the model at every rate: not even the first step held.
    assert.match(open.stdout, /Held the budget up to: http keepalive none \(failed at its first step\)/);
  },
);

test('an open plan: rates from the model as shares of a connection, the VU pool sized for them, a dropped gate per step', async () => {
  const { default: declare } = await import(pathToFileURL(join(ROOT, 'scenarios', 'plans', 'ws-vs-http.js')).href);
  const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');
  const env = { LOAD: 'full', WORKLOAD: 'open' };
  for (const spec of ['lte', '3g']) {
    const built = buildScenario(declare(env), loadProfile(spec), env, policy);
    assert.equal(built.plan.workload, 'open');
    assert.deepEqual(
      built.plan.steps,
      OPEN.full.shares.map((s) => `o${s}`),
    );
    for (const lane of built.lanes) {
      const steps = OPEN.full.shares.map((share) => built.plan.scenarios[`${lane.name}_o${share}`]);
      const perSecond = steps.map((sc) => sc.rate / 60);
      // A share of what OPEN.full.connections connections do, each taking the model's iteration time.
      OPEN.full.shares.forEach((share, i) => {
        const want = ((share / 100) * OPEN.full.connections) / lane.openSeconds;
        assert.ok(
          Math.abs(perSecond[i] - want) <= 1 / 60 + want * 0.01,
          `${spec} ${lane.name} o${share}: ${perSecond[i]}/s, want ${want}/s`,
        );
        const inFlight = perSecond[i] * lane.openSeconds;
        assert.ok(
          steps[i].preAllocatedVUs >= inFlight && steps[i].maxVUs >= steps[i].preAllocatedVUs,
          `${lane.name} o${share}: pool ${steps[i].preAllocatedVUs}/${steps[i].maxVUs} for ${inFlight} in flight`,
        );
        assert.match(built.thresholds[`dropped_iterations{scenario:${lane.name}_o${share}}`][0], /^count<=\d+$/);
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
  const { default: push } = await import(pathToFileURL(join(ROOT, 'scenarios', 'plans', 'push.js')).href);
  assert.equal(buildScenario(push(env), loadProfile('lte'), env, policy).plan.workload, 'closed');
});
