// The WebSocket lanes never leave k6 an iteration to cut with a socket and a
// timer pending (the state in which k6 v1.8.1 can wedge a VU), and a VU that
// records nothing in a step fails the run. `faults` under 3g+stall and
// lte+jitter: every WebSocket VU completes operations in every step, no timer
// is stopped by an interrupted iteration, silent_vus holds at 0. A probe
// (test/k6/ws-deadlines.js) shows the two edges: a session whose upgrade never
// completes gives up at its deadline and k6 cuts that iteration with nothing
// else pending, after which the same VU works normally; and a VU kept silent
// in a step makes k6 exit 99 on silent_vus. Real servers, toxiproxy and k6.
// About 25 s.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { startTestStack, useTestStack } from '../dev/test-stack.js';
import { assertPassedButLatency, crossedInSummary } from './helpers/exits.js';
import { scaled } from './helpers/waits.js';

const FAULTS = join(ROOT, 'scenarios', 'faults.js');
const PROBE = join(ROOT, 'test', 'k6', 'ws-deadlines.js');
const stack = useTestStack();

// k6 logs this for every timer still pending when it cuts an iteration.
const TIMER_CUT = /was stopped because the VU iteration was interrupted/;
const CRASH = /Uncaught|source=stacktrace|panic:|goroutine \d+ \[/;

const count = (m, key) => m[key]?.count ?? 0;
// k6's summary export counts a Rate's non-zero samples (failures) as "passes".
const ops = (m, key) => (m[key] ? m[key].passes + m[key].fails : 0);
// ...and marks a threshold true when it failed.
const held = (m, metric, expr) => m[metric]?.thresholds?.[expr] === false;

// Steps of 5 s at 1 and 3 VUs, three operations per connection and a 1.5 s
// timeout (a 3g connect takes 0.9 s), so a VU whose connects stall retries
// several times per step: P(every connect of a VU-step stalls) < 1e-4.
// Only the WebSocket lane runs (LANES=ws): what this file checks is that lane's VUs;
// the other lanes under every fault are faults-matrix.test.js's.
const STEPS = [1, 3];
const FAULT_ENV = {
  LOAD: 'ci',
  LANES: 'ws',
  STEPS: STEPS.join(','),
  STEP_SECONDS: '5',
  CONN_OPS: '3',
  FAULT_TIMEOUT_MS: '1500',
};

// The two fault runs and the probes run at once: each fault run against a stack of its
// own (a run holds its stack: scenarios/lib/hold.js), the probes one after the other
// on the file's.
describe('faults-ws', { concurrency: true }, () => {
  describe('faults: every WebSocket VU works in every step', { concurrency: true }, () => {
    for (const profile of ['3g+stall', 'lte+jitter']) {
      test(profile, { timeout: scaled(150000) }, async (t) => {
        const own = await startTestStack();
        t.after(() => own.stop());
        const run = await runK6(FAULTS, {
          env: { ...own.env, ...FAULT_ENV, PROFILE: profile },
          timeoutMs: scaled(120000),
        });
        const output = `${run.stdout.slice(-2500)}\n${run.stderr.slice(-2500)}`;
        assert.ok(!run.timedOut, `k6 hung under ${profile}\n${output}`);
        assert.ok([0, 99].includes(run.code), `k6 exited ${run.code} under ${profile}\n${output}`);
        assert.doesNotMatch(run.stderr, CRASH, output);
        assert.doesNotMatch(run.stderr, TIMER_CUT, `an iteration was cut with a timer pending\n${output}`);
        const m = run.summary.metrics;
        // The run was the WebSocket lane's alone: its steps and no other lane's.
        assert.deepEqual(
          Object.keys(m)
            .map((k) => /^op_failed\{scenario:(\w+)\}$/.exec(k)?.[1])
            .filter(Boolean)
            .sort(),
          STEPS.map((vus) => `ws_c${vus}`),
          output,
        );
        assert.ok(held(m, 'silent_vus', 'count==0'), `silent_vus failed under ${profile}\n${output}`);
        const cells = [];
        for (const vus of STEPS) {
          const step = `ws_c${vus}`;
          assert.equal(
            count(m, `vus_completing{scenario:${step}}`),
            vus,
            `${profile} ${step}: VUs that completed an operation\n${output}`,
          );
          assert.equal(count(m, `silent_vus{scenario:${step}}`), 0, `${profile} ${step}: silent VUs`);
          assert.ok(ops(m, `op_failed{scenario:${step}}`) >= vus, `${profile} ${step}: operations recorded`);
          cells.push(
            `${step}: ${ops(m, `op_failed{scenario:${step}}`)} ops, ${m[`op_failed{scenario:${step}}`].passes} failed, ${count(m, `op_abandoned{scenario:${step}}`)} abandoned`,
          );
        }
        t.diagnostic(`${profile} (exit ${run.code}): ${cells.join('; ')}`);
      });
    }
  });

  describe("the session's edges (probe)", { concurrency: 1 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-ws-probe-'));
    const thresholds = join(dir, 'thresholds.json');
    const policy = JSON.parse(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'));
    writeFileSync(
      thresholds,
      JSON.stringify({ ...policy, scenarios: { 'ws-probe': { gates: { silent_vus: ['count==0'] } } } }),
    );
    // A listener that accepts connections and never answers: a WebSocket upgrade to it stalls.
    const sockets = new Set();
    let accepted = 0;
    const blackhole = net.createServer((socket) => {
      accepted++;
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    });
    after(() => {
      for (const socket of sockets) socket.destroy();
      blackhole.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const probe = (env) =>
      runK6(PROBE, { env: { ...stack.env, THRESHOLDS: thresholds, ...env }, timeoutMs: scaled(60000) });

    test(
      'an upgrade that never completes: abandoned at the deadline, the iteration cut with nothing else pending, the VU fine after',
      { timeout: scaled(90000) },
      async () => {
        await new Promise((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
        const run = await probe({
          MODE: 'stall',
          STALL_WS_URL: `ws://127.0.0.1:${blackhole.address().port}/graphql`,
          STEP_SECONDS: '3',
        });
        const output = `${run.stdout.slice(-2500)}\n${run.stderr.slice(-2500)}`;
        // 0, or 99 when only a timing gate failed (this file runs beside others).
        assertPassedButLatency(run.code, crossedInSummary(run.summary), output);
        assert.doesNotMatch(run.stderr, CRASH, output);
        assert.doesNotMatch(run.stderr, TIMER_CUT, output);
        const m = run.summary.metrics;
        assert.equal(accepted, 1, 'the probe connected to the silent listener once');
        assert.equal(count(m, 'op_abandoned{scenario:stall_c1}'), 1, "the connect was given up at the step's deadline");
        assert.equal(count(m, 'stall_sessions_done'), 1, 'the stall session returned');
        // The session returned before its 3 s step ended, yet its iteration lasted
        // until k6 cut it at gracefulStop (3 + 1.5 s): the socket was still
        // connecting (k6's handshake timeout is 60 s). k6 counts such an iteration
        // as interrupted (no iteration_duration) or, racing the cut, as complete.
        const stalled = m['iteration_duration{scenario:stall_c1}'];
        assert.ok(
          stalled.count === 0 || stalled.max >= 4000,
          `the stall iteration ended at the cut, not by itself: ${JSON.stringify(stalled)}`,
        );
        // The same VU (one in the pool) then runs the next step normally.
        assert.equal(count(m, 'vus_completing{scenario:ws_c1}'), 1, output);
        assert.ok(ops(m, 'op_failed{scenario:ws_c1}') > 10, output);
        assert.equal(m['op_failed{scenario:ws_c1}'].passes, 0, output);
        assert.ok(held(m, 'silent_vus', 'count==0'), output);
      },
    );

    test(
      'a VU that records nothing in a step fails silent_vus: exit 99, named in the summary',
      { timeout: scaled(60000) },
      async () => {
        const run = await probe({ MODE: 'silent', STEPS: '1,2', STEP_SECONDS: '2' });
        const output = `${run.stdout.slice(-2500)}\n${run.stderr.slice(-2500)}`;
        assert.equal(run.code, 99, output);
        const m = run.summary.metrics;
        assert.equal(count(m, 'silent_vus{scenario:ws_c1}'), 0);
        assert.equal(count(m, 'silent_vus{scenario:ws_c2}'), 1);
        assert.equal(count(m, 'vus_completing{scenario:ws_c2}'), 1);
        assert.match(run.stdout, /FAIL silent_vus count==0 {2}\(count=1\.00\)/);
        assert.match(run.stdout, /ws_c2 1\/2 completed, 1 SILENT/);
      },
    );
  });
});
