// Results over time, for real: three `k6pack gate --history` runs on the real stack
// (push under lan at LOAD=smoke, one with a threshold that cannot hold) append their
// digests; `history report` draws the trend page, looked at in Chromium; the PR comment
// script creates one comment on a stub of the GitHub API and updates it on a second
// run; the history branch script takes appends from two clones at once (union merge).
// No timing is asserted: this file runs beside others.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import { ROOT } from '../lib/tools.js';
import { chromium, launch, openPage } from './helpers/browser.js';
import { cliEnv, runCli } from './helpers/cli-env.js';

const GATE = ['gate', '--scenarios', 'push', '--profile', 'lan', '--load', 'smoke'];
const FAST = ['-e', 'STEP_SECONDS=1'];
const COMMENT_JS = join(ROOT, '.github', 'workflows', 'scripts', 'pr-comment.js');
const BRANCH_SH = join(ROOT, '.github', 'workflows', 'scripts', 'history-branch.sh');
const lines = (file) => readFileSync(file, 'utf8').trim().split('\n');

describe('history: gates appended, trends drawn, the comment posted, the branch merged', () => {
  let cli;
  let history;
  const gates = [];
  before(
    async () => {
      cli = await cliEnv();
      const up = await runCli(['up'], { env: cli.env, timeoutMs: 120000 });
      assert.equal(up.exitCode, 0, up.stderr);
      history = join(cli.runDir, 'history');
      // The second gate asks push for events delivered in less than no time: it fails.
      const policy = JSON.parse(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'));
      policy.scenarios.push = { profiles: { lan: { gates: { push_latency: ['max<0'] } } } };
      const failing = join(cli.runDir, 'failing.json');
      writeFileSync(failing, JSON.stringify(policy));
      for (let i = 0; i < 3; i++) {
        const dir = join(cli.runDir, `gate-${i}`);
        const extra = i === 1 ? ['-e', `THRESHOLDS=${failing}`] : [];
        const baseline = i === 2 ? ['--baseline', gates[0].dir] : [];
        const r = await runCli(
          [...GATE, '--results', dir, '--history', history, ...baseline, '--', ...FAST, ...extra],
          {
            env: cli.env,
            timeoutMs: 100000,
          },
        );
        gates.push({ dir, r });
      }
    },
    { timeout: 400000 },
  );
  after(async () => {
    if (cli) await runCli(['down'], { env: cli.env, timeoutMs: 60000 });
    cli?.cleanup();
  });

  test('every gate appends its run: one line each, the failed one marked, nothing added twice', async () => {
    assert.deepEqual(
      gates.map((g) => g.r.exitCode),
      [0, 99, 0],
      gates.map((g) => g.r.stdout.slice(-1500) + g.r.stderr.slice(-800)).join('\n----\n'),
    );
    const file = join(history, 'push', 'lan.jsonl');
    for (const g of gates) assert.match(g.r.stdout, /^== history: push \(lan\) added to .*push\/lan\.jsonl$/m);
    const digests = lines(file).map((l) => JSON.parse(l));
    assert.equal(digests.length, 3);
    assert.deepEqual(
      digests.map((d) => d.passed),
      [true, false, true],
    );
    const d = digests[0];
    assert.match(d.commit, /^[0-9a-f]{40}$/);
    assert.equal(d.k6, '1.8.1');
    assert.ok(d.machine.cores >= 1 && d.machine.cpu, JSON.stringify(d.machine));
    assert.equal(d.pack, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    // push's http_poll lane counts polls, not latencies: its p50 is null.
    const timed = d.rows.filter((r) => r.p50 !== null);
    assert.ok(timed.length >= 2, JSON.stringify(d.rows));
    for (const row of timed) for (const k of ['p95', 'p99']) assert.equal(typeof row[k], 'number', `${row.id} ${k}`);
    assert.match(readFileSync(join(history, '.gitattributes'), 'utf8'), /^\*\.jsonl merge=union$/m);
    assert.match(readFileSync(join(history, '.gitignore'), 'utf8'), /^trends\.html$/m);
    // The third gate was compared with the first, the history too short for its rule: it says so.
    assert.match(
      readFileSync(join(gates[2].dir, 'gate.md'), 'utf8'),
      /history: 1 comparable run, 10 needed: the fixed rule above applies/,
    );
    // The same gate folder again: nothing new.
    const again = await runCli(['history', 'add', '--history', history, gates[0].dir], { env: cli.env });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.match(again.stdout, /already in .* not added again/);
    assert.match(again.stdout, /== history: 0 of 1 runs added/);
    assert.equal(lines(file).length, 3);
  });

  test(
    'the trend page in Chromium: a chart per step, every run a point, the failed run a cross, offline, no error',
    { timeout: 180000 },
    async (t) => {
      const out = join(cli.runDir, 'trends.html');
      const r = await runCli(['history', 'report', history, '--out', out], { env: cli.env });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /^trends: .*trends\.html \(1 series, 3 runs; opens offline\)$/m);
      const browser = await launch(await chromium());
      try {
        const { page, errors, requests } = await openPage(browser, out);
        const shot = join(cli.runDir, 'trends.png');
        await page.screenshot({ path: shot, fullPage: true });
        t.diagnostic(`screenshot: ${shot}`);
        const charts = await page.evaluate(() =>
          [...document.querySelectorAll('canvas[data-chart]')].map((canvas) => {
            const chart = window.Chart.getChart(canvas);
            return {
              drawn: canvas.dataset.drawn === 'true',
              labels: chart.data.labels,
              series: chart.data.datasets.map((d, i) => ({
                label: d.label,
                points: chart.getDatasetMeta(i).data.filter((p) => !p.skip && Number.isFinite(p.y)).length,
                styles: d.pointStyle,
              })),
            };
          }),
        );
        assert.deepEqual(errors, []);
        assert.deepEqual(
          requests.filter((u) => !u.startsWith('file:')),
          [],
          'opens offline',
        );
        assert.ok(charts.length >= 1 && charts.every((c) => c.drawn));
        for (const c of charts) {
          assert.equal(c.labels.length, 3);
          for (const s of c.series.filter((x) => x.points)) {
            assert.equal(s.points, 3, `${s.label}: a point per run`);
            assert.deepEqual(s.styles, ['circle', 'crossRot', 'circle'], `${s.label}: the failed run is a cross`);
          }
          assert.ok(
            c.series.some((s) => / p50$/.test(s.label)) && c.series.some((s) => / p95$/.test(s.label)),
            'p50 and p95 per lane',
          );
        }
        // Hovering a point names its run's date and commit.
        const title = await page.evaluate(() => {
          const chart = window.Chart.getChart(document.querySelector('canvas[data-chart]'));
          return chart.options.plugins.tooltip.callbacks.title([{ dataIndex: 1 }]);
        });
        // The failed run's count: its deliberate push_latency gate, and under lan sometimes a
        // latency gate beside it on a loaded machine (lan's budgets are absolute: known
        // limits), as in a fresh-clone suite run of 902e139 (2026-11-27: 2 failed).
        assert.match(title, /^\d{4}-\d\d-\d\dT.* · commit [0-9a-f]{12} · [1-9]\d* threshold\(s\) failed$/);
      } finally {
        await browser.close();
      }
    },
  );

  test('bad input: one line each, exit 1 or 2, nothing written', async () => {
    const missing = await runCli(['history', 'report', join(cli.runDir, 'nowhere')], { env: cli.env });
    assert.equal(missing.exitCode, 1);
    assert.match(
      missing.stderr,
      /^k6pack: no history folder at .*nowhere: add runs with `npx k6pack history add --history/,
    );
    const empty = join(cli.runDir, 'empty');
    mkdirSync(empty);
    const none = await runCli(['history', 'add', '--history', history, empty], { env: cli.env });
    assert.equal(none.exitCode, 1);
    assert.match(none.stderr, /^k6pack: .*empty holds no run folder with a summary\.json/);
    const runs = await runCli(['compare', gates[0].dir, gates[2].dir, '--history-runs', '2', '--history', history], {
      env: cli.env,
    });
    assert.equal(runs.exitCode, 2);
    assert.match(runs.stderr, /^k6pack: --history-runs 2: a whole number from 5 to 1000$/m);
    // A broken line (a bad hand edit) is named and skipped; the rest still draws.
    const copy = join(cli.runDir, 'broken');
    mkdirSync(join(copy, 'push'), { recursive: true });
    writeFileSync(join(copy, 'push', 'lan.jsonl'), readFileSync(join(history, 'push', 'lan.jsonl')));
    appendFileSync(join(copy, 'push', 'lan.jsonl'), '{"half a line\n');
    const drawn = await runCli(['history', 'report', copy], { env: cli.env });
    assert.equal(drawn.exitCode, 0, drawn.stderr);
    assert.match(drawn.stderr, /^k6pack: .*push\/lan\.jsonl:4: skipped, not a k6pack digest/m);
    assert.match(drawn.stdout, /\(1 series, 3 runs; opens offline\)/);
  });

  test('the PR comment on a stub of the GitHub API: created once, updated on the second run; a read-only token is no failure', async () => {
    const comments = [];
    const seen = [];
    let readOnly = false;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url.split('?')[0]}`);
        const reply = (status, data) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(data));
        };
        if (req.headers.authorization !== 'Bearer t0ken') return reply(401, { message: 'Bad credentials' });
        if (req.method === 'GET' && req.url.startsWith('/repos/o/r/issues/7/comments')) return reply(200, comments);
        if (readOnly) return reply(403, { message: 'Resource not accessible by integration' });
        if (req.method === 'POST' && req.url === '/repos/o/r/issues/7/comments') {
          const made = { id: 100 + comments.length, body: JSON.parse(body).body };
          comments.push(made);
          return reply(201, made);
        }
        const m = /^\/repos\/o\/r\/issues\/comments\/(\d+)$/.exec(req.url);
        if (req.method === 'PATCH' && m) {
          const c = comments.find((x) => x.id === Number(m[1]));
          c.body = JSON.parse(body).body;
          return reply(200, c);
        }
        return reply(404, { message: 'Not Found' });
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      // Someone else's comment is there first.
      comments.push({ id: 1, body: 'looks good to me' });
      const env = {
        ...process.env,
        GITHUB_TOKEN: 't0ken',
        GITHUB_REPOSITORY: 'o/r',
        PR_NUMBER: '7',
        GITHUB_API_URL: `http://127.0.0.1:${server.address().port}`,
      };
      const post = (file) => execa(process.execPath, [COMMENT_JS, file], { env, reject: false, timeout: 30000 });
      const first = await post(join(gates[0].dir, 'comment.md'));
      assert.equal(first.exitCode, 0, first.stderr);
      assert.match(first.stdout, /^k6pack gate comment created on #7 \(comment 101\)$/);
      const second = await post(join(gates[1].dir, 'comment.md'));
      assert.equal(second.exitCode, 0, second.stderr);
      assert.match(second.stdout, /^k6pack gate comment updated on #7 \(comment 101\)$/);
      assert.equal(comments.length, 2, 'one comment of ours beside the other one');
      const ours = comments[1].body;
      assert.ok(
        ours.startsWith('<!-- k6pack-gate -->\n## k6pack gate — thresholds failed in push (lan)'),
        ours.slice(0, 200),
      );
      assert.match(ours, /\| push \| lan \| 99 \|/);
      // Each failed threshold, named with its run (report.html opens with the same).
      assert.match(ours, /^Failed thresholds \(\d+\):$/m);
      assert.match(ours, /^- push \(lan\): `[^`]+` `[^`]+`, observed /m);
      assert.deepEqual(seen, [
        'GET /repos/o/r/issues/7/comments',
        'POST /repos/o/r/issues/7/comments',
        'GET /repos/o/r/issues/7/comments',
        'PATCH /repos/o/r/issues/comments/101',
      ]);
      // A fork's token reads but cannot write: one line, exit 0.
      readOnly = true;
      comments.splice(1);
      const fork = await post(join(gates[0].dir, 'comment.md'));
      assert.equal(fork.exitCode, 0, fork.stderr);
      assert.match(
        fork.stdout,
        /^k6pack gate comment not posted \(POST .* HTTP 403 Resource not accessible by integration\): a token without write access; the job summary has the gate$/,
      );
      // Anything else is one line and exit 1.
      const bad = await execa(process.execPath, [COMMENT_JS, join(gates[0].dir, 'comment.md')], {
        env: { ...env, GITHUB_TOKEN: 'wrong' },
        reject: false,
      });
      assert.equal(bad.exitCode, 1);
      assert.match(
        bad.stderr,
        /^pr-comment: GET \/repos\/o\/r\/issues\/7\/comments\?per_page=100&page=1: HTTP 401 Bad credentials$/,
      );
    } finally {
      server.close();
    }
  });

  test('the history branch: two jobs append at once, the second push rebases, both runs are kept', async () => {
    const git = (cwd, ...args) =>
      execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const root = join(cli.runDir, 'git');
    mkdirSync(root);
    git(root, 'init', '-q', '--bare', 'remote.git');
    git(root, 'clone', '-q', join(root, 'remote.git'), 'seed');
    writeFileSync(join(root, 'seed', 'README'), 'a project\n');
    git(join(root, 'seed'), 'add', '.');
    git(join(root, 'seed'), '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
    git(join(root, 'seed'), 'push', '-q', 'origin', 'HEAD:main');
    const sh = (cwd, ...args) => execa('bash', [BRANCH_SH, ...args], { cwd, reject: false, timeout: 60000 });
    for (const name of ['a', 'b']) git(root, 'clone', '-q', '-b', 'main', join(root, 'remote.git'), name);
    // The first job ever: no branch yet.
    const a = await sh(join(root, 'a'), 'checkout', 'h');
    assert.equal(a.exitCode, 0, a.stderr);
    assert.match(a.stdout, /no k6pack-history on origin yet: a new, empty one in h/);
    let add = await runCli(['history', 'add', '--history', join(root, 'a', 'h'), gates[0].dir], { env: cli.env });
    assert.equal(add.exitCode, 0, add.stderr);
    assert.equal((await sh(join(root, 'a'), 'push', 'h', 'gate 0')).exitCode, 0);
    // Two jobs from that point: each appends its own run; a pushes first.
    const b = await sh(join(root, 'b'), 'checkout', 'h');
    assert.match(b.stdout, /k6pack-history checked out in h \(1 commits\)/);
    add = await runCli(['history', 'add', '--history', join(root, 'a', 'h'), gates[1].dir], { env: cli.env });
    assert.equal(add.exitCode, 0, add.stderr);
    add = await runCli(['history', 'add', '--history', join(root, 'b', 'h'), gates[2].dir], { env: cli.env });
    assert.equal(add.exitCode, 0, add.stderr);
    assert.equal((await sh(join(root, 'a'), 'push', 'h', 'gate 1')).exitCode, 0);
    const late = await sh(join(root, 'b'), 'push', 'h', 'gate 2');
    assert.equal(late.exitCode, 0, late.stdout + late.stderr);
    assert.match(
      late.stdout,
      /k6pack-history moved \(attempt 1\): rebasing onto it\nhistory: pushed to k6pack-history/,
    );
    git(root, 'clone', '-q', '-b', 'k6pack-history', join(root, 'remote.git'), 'check');
    const kept = lines(join(root, 'check', 'push', 'lan.jsonl')).map((l) => JSON.parse(l).startedAt);
    const started = gates.map(
      (g) =>
        JSON.parse(
          readFileSync(
            join(
              g.dir,
              readdirSync(g.dir).find((n) => n.startsWith('push-')),
              'summary.json',
            ),
            'utf8',
          ),
        ).run.startedAt,
    );
    assert.deepEqual([...kept].sort(), [...started].sort(), 'all three runs, none lost, none twice');
    assert.ok(existsSync(join(root, 'check', '.gitattributes')));
  });
});
