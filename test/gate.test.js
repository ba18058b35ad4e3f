// `k6pack gate` with the real stack and k6, on free ports: two small scenarios
// (grpc-vs-graphql, push) under lan at LOAD=smoke with one-second steps. One
// threshold is made unmeetable: exit 99, and the gate folder's report.html,
// junit.xml and gate.md hold both runs. A baseline with latencies a hundredth
// of the measured ones: exit 3. Ctrl-C and a bad --scenarios leave nothing.
// The tests run at once (node:test concurrency), each gate on its own ports and run dir
// (cliEnv); the baseline gate starts as soon as the first gate has written its
// grpc-vs-graphql run (when it moves on to push), not after the whole first gate.
// Waits are hang guards, scaled to this machine (test/helpers/waits.js).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT } from '../lib/tools.js';
import { cliEnv, portsInUse, processesMatching, runCli, waitFor } from './helpers/cli-env.js';
import { scaled } from './helpers/waits.js';

const SMALL = ['--scenarios', 'grpc-vs-graphql,push', '--profile', 'lan', '--load', 'smoke'];
const FAST = ['-e', 'STEP_SECONDS=1'];
const repoThresholds = () => JSON.parse(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'));
const summaryOf = (dir) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
const count = (text, re) => (text.match(re) || []).length;

async function noneLeft(ports, runDir) {
  assert.deepEqual(await portsInUse(ports), [], 'no server or toxiproxy left on the ports');
  assert.deepEqual(processesMatching(runDir), [], 'no k6 left');
}

// Resolves once a CLI child has printed `text`; fails as soon as the child ends without
// it (or after `ms`, a hang guard).
async function printed(child, text, ms) {
  const ended = child.then((r) => {
    throw new Error(`exited ${r.exitCode} before "${text}":\n${r.stdout.slice(-3000)}${r.stderr.slice(-2000)}`);
  });
  ended.catch(() => {});
  await Promise.race([waitFor(child, text, ms), ended]);
}

describe('gate', { concurrency: true }, () => {
  describe('gate: two scenarios, one with a threshold that cannot hold', { concurrency: true }, () => {
    let cli;
    let gateDir;
    // The first gate, started before the tests: { r, record } once it has ended.
    let first;
    // Resolves once it has moved on to its second scenario: its grpc-vs-graphql run folder is written.
    let firstScenarioDone;
    let r;
    let record;
    const ended = async () => ({ r, record } = await first);
    before(async () => {
      cli = await cliEnv();
      // The repo's thresholds, with push under lan also asking for events delivered in less than no time.
      const thresholds = repoThresholds();
      thresholds.scenarios.push = { profiles: { lan: { gates: { push_latency: ['max<0'] } } } };
      const file = join(cli.runDir, 'forced-thresholds.json');
      writeFileSync(file, JSON.stringify(thresholds));
      gateDir = join(cli.runDir, 'gate');
      const child = runCli(['gate', ...SMALL, '--results', gateDir, '--', ...FAST, '-e', `THRESHOLDS=${file}`], {
        env: cli.env,
        timeoutMs: scaled(100000),
      });
      firstScenarioDone = printed(child, '== gate 2/2', scaled(100000));
      firstScenarioDone.catch(() => {}); // the baseline test reports it
      first = child.then((res) => ({
        r: res,
        record: existsSync(join(gateDir, 'gate.json'))
          ? JSON.parse(readFileSync(join(gateDir, 'gate.json'), 'utf8'))
          : null,
      }));
    });
    after(() => cli?.cleanup());

    test(
      'exit 99, progress per scenario, one verdict line on stderr, nothing left running',
      { timeout: scaled(120000) },
      async () => {
        await ended();
        assert.equal(r.exitCode, 99, r.stdout.slice(-3000) + r.stderr.slice(-2000));
        assert.match(r.stdout, /^== gate 1\/2: grpc-vs-graphql, \dm\d\ds elapsed$/m);
        assert.match(r.stdout, /^== gate 2\/2: push, \dm\d\ds elapsed$/m);
        assert.match(r.stdout, /starting it for this run/);
        const verdict = r.stderr
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('k6pack: '));
        assert.equal(verdict.length, 1, r.stderr);
        assert.match(verdict[0], /^k6pack: gate failed: thresholds failed in .*push \(lan\)/);
        await noneLeft(cli.ports, cli.runDir);
      },
    );

    test(
      'gate.json: per scenario and run, seconds and exit codes; run folders beside it',
      { timeout: scaled(120000) },
      async () => {
        await ended();
        assert.ok(record, 'gate.json written');
        assert.equal(record.exitCode, 99);
        assert.deepEqual(
          record.runs.map((s) => s.scenario),
          ['grpc-vs-graphql', 'push'],
        );
        const push = record.runs[1];
        assert.equal(push.exitCode, 99);
        assert.deepEqual(
          push.runs.map((x) => [x.profile, x.exitCode]),
          [['lan', 99]],
        );
        for (const s of record.runs) {
          // A stack's start, k6's and the steps: CPU work a busy machine stretches, as the gate's own timeout.
          assert.ok(s.seconds > 1 && s.seconds < scaled(90000) / 1000, `${s.scenario}: ${s.seconds} s`);
          for (const run of s.runs) assert.ok(existsSync(join(gateDir, run.dir, 'summary.json')), run.dir);
        }
      },
    );

    test(
      'junit.xml: one suite per run, a test case per threshold, the forced one failed',
      { timeout: scaled(120000) },
      async () => {
        await ended();
        const junit = readFileSync(join(gateDir, 'junit.xml'), 'utf8');
        const dirs = record.runs.flatMap((s) => s.runs.map((x) => join(gateDir, x.dir)));
        const thresholds = dirs.reduce((n, d) => n + summaryOf(d).thresholds.length, 0);
        assert.ok(thresholds >= 10, `${thresholds} thresholds`);
        assert.equal(count(junit, /<testcase /g), thresholds);
        assert.equal(count(junit, /<testsuite /g), 2);
        assert.match(junit, /<testsuite name="grpc-vs-graphql \(lan\)" tests="\d+"/);
        const push = /<testsuite name="push \(lan\)" tests="(\d+)" failures="(\d+)"[^]*?<\/testsuite>/.exec(junit);
        assert.ok(push, junit);
        assert.equal(Number(push[1]), summaryOf(dirs[1]).thresholds.length);
        assert.ok(Number(push[2]) >= 1);
        assert.match(
          push[0],
          /<testcase name="push_latency max&lt;0" classname="k6pack\.push\.lan"><failure message="push_latency: max=[\d.]+, threshold max&lt;0"/,
        );
      },
    );

    test("gate.md: the gate table, then both runs' Markdown tables", { timeout: scaled(120000) }, async () => {
      await ended();
      const md = readFileSync(join(gateDir, 'gate.md'), 'utf8');
      assert.match(md, /^## k6pack gate — thresholds failed in .*push \(lan\)/);
      assert.match(md, /^\| grpc-vs-graphql \| lan \| (0|99) \| 0m\d\ds \| /m);
      assert.match(md, /^\| push \| lan \| 99 \| 0m\d\ds \| ❌ \d+ of \d+ failed \|$/m);
      assert.match(md, /^### k6pack grpc-vs-graphql: profile lan, load smoke/m);
      assert.match(md, /^### k6pack push: profile lan, load smoke — ❌/m);
      assert.match(md, /\| ❌ \| `push_latency` \| `max<0` \|/);
    });

    test('report.html: the HTML report of both runs', { timeout: scaled(120000) }, async () => {
      await ended();
      const html = readFileSync(join(gateDir, 'report.html'), 'utf8');
      assert.match(html, /^<!doctype html>/i);
      assert.ok(html.includes('grpc-vs-graphql — lan') && html.includes('push — lan'), 'a section per run');
    });

    test(
      '--baseline: a baseline with a hundredth of the latencies is a regression (exit 3); a run without one passes',
      { timeout: scaled(200000) },
      async (t) => {
        const { env, ports, runDir, cleanup } = await cliEnv();
        t.after(cleanup);
        // baseline.sh's layout (<scenario>-<profile>/summary.json), from the gate above (its
        // grpc-vs-graphql run, written before it moved on to push), 100 times faster.
        await firstScenarioDone;
        const runs = readdirSync(gateDir).filter((d) => d.startsWith('grpc-vs-graphql-lan-'));
        assert.equal(runs.length, 1, `the first gate's grpc-vs-graphql run: ${runs}`);
        const doc = summaryOf(join(gateDir, runs[0]));
        for (const row of doc.rows) {
          for (const p of ['p50', 'p95']) if (row.latency?.[p]) row.latency[p] /= 100;
        }
        mkdirSync(join(runDir, 'baseline', 'grpc-vs-graphql-lan'), { recursive: true });
        writeFileSync(join(runDir, 'baseline', 'grpc-vs-graphql-lan', 'summary.json'), JSON.stringify(doc));
        // Latency budgets a minute wide: a slow shared machine may miss a lan latency
        // gate, and 99 would hide the comparison's 3.
        const repo = repoThresholds();
        const lenient = {
          ...repo,
          latency: { ...repo.latency, p50: { factor: 1, plusMs: 60000 }, p95: { factor: 1, plusMs: 60000 } },
        };
        writeFileSync(join(runDir, 'lenient.json'), JSON.stringify(lenient));
        const out = join(runDir, 'gate');
        const args = [
          'gate',
          ...SMALL,
          '--results',
          out,
          '--baseline',
          join(runDir, 'baseline'),
          '--tolerance',
          '10%',
          '--',
          ...FAST,
          '-e',
          `THRESHOLDS=${join(runDir, 'lenient.json')}`,
        ];
        const res = await runCli(args, { env, timeoutMs: scaled(100000) });
        assert.equal(res.exitCode, 3, res.stdout.slice(-3000) + res.stderr.slice(-2000));
        assert.match(res.stdout, /regression/);
        assert.match(res.stdout, /^== compare push-lan: no baseline yet, gated on its thresholds only$/m);
        assert.match(res.stderr, /^k6pack: gate failed: \d+ regressions? against the baseline$/m);
        const md = readFileSync(join(out, 'gate.md'), 'utf8');
        assert.match(md, /^## Compared with the baseline$/m);
        assert.match(
          md,
          /^### k6pack compare grpc-vs-graphql: lan \(base, .*\) -> lan \(current, .*\) — \d+ regressions?$/m,
        );
        assert.match(md, /\| ❌ regression \| fixed \|$/m);
        assert.match(md, /^- push-lan: no baseline yet/m);
        assert.equal(JSON.parse(readFileSync(join(out, 'gate.json'), 'utf8')).exitCode, 3);
        await noneLeft(ports, runDir);
      },
    );
  });

  test(
    'Ctrl-C during the gate: exit 130, no k6, server or toxiproxy left, no gate files',
    { timeout: scaled(90000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      const out = join(runDir, 'gate');
      const child = runCli(['gate', ...SMALL, '--results', out, '--', ...FAST], { env, timeoutMs: scaled(80000) });
      await printed(child, 'step 1/', scaled(60000));
      child.kill('SIGINT');
      const r = await child;
      assert.equal(r.exitCode, 130, r.stdout.slice(-2000) + r.stderr.slice(-2000));
      assert.match(r.stdout, /^== gate stopped \(SIGINT\) after 1 scenario/m);
      assert.doesNotMatch(r.stdout, /== gate 2\/2/, 'the second scenario did not start');
      await noneLeft(ports, runDir);
      assert.deepEqual(
        readdirSync(out).filter((f) => !f.startsWith('grpc-vs-graphql-lan-')),
        [],
        'only the interrupted run folder',
      );
    },
  );

  test(
    'a bad --scenarios name: one line, exit 2, no stack started, nothing written',
    { timeout: scaled(30000) },
    async (t) => {
      const { env, ports, runDir, cleanup } = await cliEnv();
      t.after(cleanup);
      const r = await runCli(['gate', '--scenarios', 'push,ws-vs-htp', '--results', join(runDir, 'gate')], {
        env,
        timeoutMs: scaled(20000),
      });
      assert.equal(r.exitCode, 2, r.stdout + r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^k6pack: unknown scenario 'ws-vs-htp' in --scenarios: choose from .*ws-vs-http/);
      assert.equal(r.stdout, '');
      assert.equal(existsSync(join(runDir, 'gate')), false);
      await noneLeft(ports, runDir);
    },
  );
});
