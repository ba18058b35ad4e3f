// .github/workflows/*.yml, checked without GitHub: each parses as strict YAML,
// passes actionlint (with shellcheck on every `run:` script), pins every action
// to a commit, and runs only commands that exist: `npx k6pack <cmd> --opt` in
// k6pack's --help, npm scripts in package.json, scenarios, profiles, load
// levels and files in the repo. Tool versions follow the Dockerfiles. Their
// baseline script (scripts/baseline.sh) runs on a real run folder.
import { LEVELS } from '../common/schedule.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import YAML from 'yaml';
import { ensureDevTools } from '../dev/devtools.js';
import { ROOT } from '../lib/tools.js';
import { listProfiles } from '../lib/profiles.js';
import { scenarioNames } from '../lib/cli-support.js';
import { GATE_DEFAULTS } from '../lib/gate-defaults.js';
import { parseDockerfile } from './helpers/compose.js';
import { freePortMap } from '../dev/test-stack.js';
import { WS_VS_HTTP_LANES } from './helpers/lanes.js';

const WORKFLOW_DIR = join(ROOT, '.github', 'workflows');
const BASELINE_SH = join(WORKFLOW_DIR, 'scripts', 'baseline.sh');
const WORKFLOWS = readdirSync(WORKFLOW_DIR)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const readRepo = (path) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(readRepo('package.json'));

function parseWorkflow(file) {
  const doc = YAML.parseDocument(readFileSync(join(WORKFLOW_DIR, file), 'utf8'), {
    strict: true,
    uniqueKeys: true,
    prettyErrors: true,
  });
  return { doc, data: doc.toJS() };
}

const steps = (wf) => Object.entries(wf.jobs).flatMap(([job, j]) => (j.steps || []).map((s) => ({ job, ...s })));

// A `run:` script as shell words per command, continuation lines joined and comments dropped.
function commandsOf(script) {
  return script
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean)
    .flatMap((line) => line.split(/\s*(?:\|\||&&|;|\||\bthen\b|\bdo\b)\s*/))
    .map((cmd) => cmd.match(/"[^"]*"|'[^']*'|[^\s]+/g) || [])
    .filter((words) => words.length);
}

// Every `npx k6pack <cmd> ...` in some scripts: { cmd, args, options } (options before a bare `--`).
function k6packCalls(scripts) {
  const calls = [];
  for (const script of scripts) {
    for (const words of commandsOf(script)) {
      const i = words.findIndex((w, j) => w === 'npx' && words[j + 1] === 'k6pack');
      if (i < 0) continue;
      const rest = words.slice(i + 2);
      const end = rest.indexOf('--');
      const own = end < 0 ? rest : rest.slice(0, end);
      calls.push({
        cmd: own[0],
        args: own.slice(1).filter((w) => !w.startsWith('-')),
        options: own.filter((w) => /^--?[a-z]/.test(w)),
      });
    }
  }
  return calls;
}

// `k6pack --help` commands (with aliases) and, per command, its options.
function k6packHelp(args) {
  return execFileSync(process.execPath, [join(ROOT, 'bin', 'k6pack.js'), ...args, '--help'], {
    encoding: 'utf8',
    timeout: 30000,
  });
}
function helpCommands() {
  const text = k6packHelp([]);
  const section = text.split(/\nCommands:\n/)[1].split(/\n\n/)[0];
  return new Set(
    section.split('\n').flatMap((l) => (/^ {2}([a-z][\w|-]*)/.exec(l)?.[1] || '').split('|').filter(Boolean)),
  );
}
const optionsSeen = new Map();
// A command with subcommands (history add|report): the subcommand's options.
function helpOptions(cmd, sub) {
  const words = /\nCommands:\n/.test(k6packHelp([cmd])) ? [cmd, sub] : [cmd];
  const key = words.join(' ');
  if (!optionsSeen.has(key))
    optionsSeen.set(key, new Set(k6packHelp(words).match(/(?<=^|[\s,])--?[a-z][\w-]*/gm) || []));
  return optionsSeen.get(key);
}

// Load level names (common/schedule.js).
const loadLevels = () => Object.keys(LEVELS);

const workflows = Object.fromEntries(WORKFLOWS.map((f) => [f, parseWorkflow(f)]));
// The scripts a workflow runs: its `run:` steps, and the repo scripts they call with bash.
function scriptsOf(wf) {
  const runs = steps(wf).map((s) => s.run || '');
  const called = runs.flatMap((r) => [...r.matchAll(/\bbash (\S+\.sh)\b/g)].map((m) => readRepo(m[1])));
  return [...runs, ...called];
}

describe('CI workflows for users of the pack', () => {
  let tools;
  before(
    () => {
      tools = ensureDevTools(['actionlint', 'shellcheck'], { log: (l) => process.stderr.write(`${l}\n`) });
    },
    { timeout: 600000 },
  );

  test('the two workflows are there and parse as strict YAML', () => {
    assert.deepEqual(WORKFLOWS, ['nightly-soak.yml', 'pr-gate.yml']);
    for (const [file, { doc }] of Object.entries(workflows)) {
      assert.deepEqual(doc.errors.map(String), [], file);
      assert.deepEqual(doc.warnings.map(String), [], file);
    }
  });

  test('actionlint (with shellcheck on every run: script) finds nothing', { timeout: 60000 }, async (t) => {
    const files = WORKFLOWS.map((f) => join('.github', 'workflows', f));
    const r = await execa(
      tools.actionlint,
      ['-no-color', '-shellcheck', tools.shellcheck, '-pyflakes=', '-verbose', ...files],
      { cwd: ROOT, reject: false, timeout: 50000 },
    );
    t.diagnostic(
      r.stderr
        .split('\n')
        .filter((l) => /Found|shellcheck/i.test(l))
        .join('\n'),
    );
    assert.equal(r.exitCode, 0, `actionlint:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /Found 0 errors in 2 files/);
    assert.doesNotMatch(r.stderr, /Rule "shellcheck" was disabled/);
  });

  // The control: the same actionlint invocation does report a shellcheck finding.
  test('actionlint runs shellcheck (an unquoted variable is reported)', { timeout: 60000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-actionlint-'));
    try {
      const bad = join(dir, 'bad.yml');
      writeFileSync(bad, 'on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: rm -rf $DIR/x\n');
      const r = await execa(tools.actionlint, ['-no-color', '-shellcheck', tools.shellcheck, '-pyflakes=', bad], {
        reject: false,
        timeout: 50000,
      });
      assert.equal(r.exitCode, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /SC2086/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every action is pinned to a full commit, with its version in a comment', () => {
    for (const file of WORKFLOWS) {
      const uses = readFileSync(join(WORKFLOW_DIR, file), 'utf8').match(/uses:.*$/gm) || [];
      assert.ok(uses.length >= 4, file);
      for (const line of uses)
        assert.match(line, /^uses: [\w-]+\/[\w/-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/, `${file}: ${line}`);
    }
  });

  test('every `npx k6pack` command and option they run is in k6pack --help', () => {
    const commands = helpCommands();
    const missing = [];
    for (const [file, { data }] of Object.entries(workflows)) {
      const calls = k6packCalls(scriptsOf(data));
      assert.ok(calls.length >= 4, `${file} runs k6pack`);
      for (const { cmd, args, options } of calls) {
        if (!commands.has(cmd)) {
          missing.push(`${file}: npx k6pack ${cmd} (not a command: ${[...commands].join(', ')})`);
          continue;
        }
        const known = helpOptions(cmd, args[0]);
        for (const o of options)
          if (!known.has(o)) missing.push(`${file}: npx k6pack ${cmd} ${o} (not an option of ${cmd})`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('the scenarios, profiles and load levels they name exist', () => {
    const scenarios = scenarioNames();
    const { network, faults } = listProfiles();
    const levels = loadLevels();
    const pr = workflows['pr-gate.yml'].data;
    const soak = workflows['nightly-soak.yml'].data;
    const gate = pr.jobs.gate.env;
    const gateProfiles = gate.GATE_PROFILES.split(',');
    for (const p of gateProfiles) assert.ok(network.includes(p), `GATE_PROFILES: ${p}`);
    assert.equal(gateProfiles[0], 'lan');
    assert.ok(gateProfiles.length >= 2, 'lan and one shaped profile');
    assert.ok(levels.includes(gate.GATE_LOAD) && gate.GATE_LOAD === GATE_DEFAULTS.load);
    // The gate runs every scenario but soak (k6pack gate's default), so there must be more than soak.
    assert.ok(scenarios.includes('soak') && scenarios.length > 1);
    const soakRuns = k6packCalls(scriptsOf(soak)).filter((c) => c.cmd === 'run');
    assert.deepEqual(
      soakRuns.map((c) => c.args[0]),
      ['soak'],
    );
    assert.ok(levels.includes('soak'));
    const input = soak.on.workflow_dispatch.inputs;
    assert.equal(input.soak_duration.default, '1h');
    for (const spec of [input.profile.default]) {
      const [net, ...fs] = spec.split('+');
      assert.ok(network.includes(net) && fs.every((f) => faults.includes(f)), `profile ${spec}`);
    }
    assert.match(soak.jobs.soak.env.SOAK_PROFILE, new RegExp(`'${input.profile.default}'`));
    assert.match(soak.jobs.soak.env.SOAK_DURATION, new RegExp(`'${input.soak_duration.default}'`));
  });

  test('triggers, artifacts, job summary and baseline as the README promises', () => {
    const pr = workflows['pr-gate.yml'].data;
    const soak = workflows['nightly-soak.yml'].data;
    assert.ok('pull_request' in pr.on && pr.on.push.branches.includes('main'));
    assert.ok(soak.on.schedule[0].cron && 'workflow_dispatch' in soak.on);
    for (const wf of [pr, soak]) {
      const all = steps(wf);
      const runs = all.map((s) => s.run || '').join('\n');
      const upload = all.filter((s) => s.uses?.startsWith('actions/upload-artifact@'));
      assert.ok(
        upload.length === 1 && upload[0].with.path === 'results/' && upload[0].with['retention-days'],
        'uploads results/ with a retention',
      );
      assert.ok(
        k6packCalls([runs])
          .filter((c) => ['run', 'gate'].includes(c.cmd))
          .every((c) => c.options.includes('--dashboard') && c.options.includes('--results')),
        'runs keep their folders and HTML dashboard',
      );
      assert.match(runs, /baseline\.sh save "\$RESULTS_DIR" baseline/);
      assert.ok(all.some((s) => s.uses?.startsWith('actions/cache/restore@') && s.with.path === 'baseline'));
      assert.ok(
        all.some(
          (s) => s.uses?.startsWith('actions/cache/save@') && s.with.path === 'baseline' && /success\(\)/.test(s.if),
        ),
      );
      // Stop the stack even when the run failed.
      assert.ok(all.some((s) => s.run === 'npx k6pack down' && /always\(\)/.test(s.if)));
      for (const job of Object.values(wf.jobs)) assert.ok(job['timeout-minutes'] > 0, 'every job is bounded');
    }
    // The PR gate is one `npx k6pack gate` into $RESULTS_DIR (report.html, junit.xml and
    // gate.md beside the run folders), compared with a restored baseline when there is one.
    const prRuns = steps(pr)
      .map((s) => s.run || '')
      .join('\n');
    assert.deepEqual(
      k6packCalls([prRuns]).map((c) => c.cmd),
      ['tools', 'up', 'gate', 'down'],
    );
    assert.match(
      prRuns,
      /npx k6pack gate --profile "\$GATE_PROFILES" --load "\$GATE_LOAD" --results "\$RESULTS_DIR" --dashboard --history "\$HISTORY_DIR" "\$\{baseline\[@\]\}"/,
    );
    // The history branch: checked out before the gate, pushed on a push only.
    const at = (re) => steps(pr).findIndex((s) => re.test(s.run || ''));
    assert.ok(at(/history-branch\.sh checkout "\$HISTORY_DIR"/) >= 0);
    assert.ok(at(/history-branch\.sh checkout/) < at(/npx k6pack gate/), 'the history is there before the gate');
    const push = steps(pr)[at(/history-branch\.sh push "\$HISTORY_DIR"/)];
    assert.match(push.if, /github\.event_name == 'push'/);
    // The comment: a pull request from this repository only (a fork's token is read-only).
    const comment = steps(pr)[at(/pr-comment\.js "\$RESULTS_DIR\/comment\.md"/)];
    assert.match(comment.if, /github\.event_name == 'pull_request'/);
    assert.match(comment.if, /github\.event\.pull_request\.head\.repo\.full_name == github\.repository/);
    assert.equal(pr.jobs.gate.permissions['pull-requests'], 'write');
    assert.match(prRuns, /baseline=\(--baseline baseline --tolerance "\$COMPARE_TOLERANCE"\)/);
    for (const o of ['--baseline', '--tolerance']) assert.ok(helpOptions('gate').has(o), `gate ${o}`);
    assert.match(
      prRuns,
      /cat "\$RESULTS_DIR\/gate\.md" >> "\$GITHUB_STEP_SUMMARY"/,
      'Markdown tables into the job summary',
    );
    const restore = steps(pr).findIndex((s) => s.uses?.startsWith('actions/cache/restore@'));
    assert.ok(
      restore >= 0 && restore < steps(pr).findIndex((s) => /npx k6pack gate/.test(s.run || '')),
      'the baseline is there before the gate',
    );
    // The soak: `npx k6pack run`, then its reports and baseline.sh's comparison.
    const soakRuns = steps(soak)
      .map((s) => s.run || '')
      .join('\n');
    assert.match(
      soakRuns,
      /cat "\$RESULTS_DIR"\/\*\/summary\.md >> "\$GITHUB_STEP_SUMMARY"/,
      'Markdown tables into the job summary',
    );
    assert.match(
      soakRuns,
      /npx k6pack report "\$RESULTS_DIR"\/\*\/summary\.json --out "\$RESULTS_DIR\/report\.html"/,
      'an HTML report in the artifact',
    );
    assert.match(soakRuns, /baseline\.sh compare baseline "\$RESULTS_DIR" "\$COMPARE_TOLERANCE"/);
    // Every night goes into the history branch, and its trend page into the artifact.
    assert.match(soakRuns, /npx k6pack history add --history "\$HISTORY_DIR" "\$RESULTS_DIR"/);
    assert.match(soakRuns, /npx k6pack history report "\$HISTORY_DIR" --out "\$RESULTS_DIR\/trends\.html"/);
    assert.match(soakRuns, /history-branch\.sh push "\$HISTORY_DIR"/);
    assert.equal(soak.permissions.contents, 'write');
  });

  // The gate step's script in bash, with an `npx` on PATH that records its arguments.
  test('the gate step passes --baseline only to a pull request with a restored baseline, and exits with the gate', async () => {
    const gate = steps(workflows['pr-gate.yml'].data).find((s) => /npx k6pack gate/.test(s.run || ''));
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-gate-step-'));
    try {
      mkdirSync(join(dir, 'bin'));
      writeFileSync(join(dir, 'bin', 'npx'), '#!/bin/sh\nprintf "%s\\n" "$*" > "$NPX_ARGS"\nexit "${NPX_EXIT:-0}"\n', {
        mode: 0o755,
      });
      const step = async (env, { baselineDir = false } = {}) => {
        rmSync(join(dir, 'baseline'), { recursive: true, force: true });
        if (baselineDir) mkdirSync(join(dir, 'baseline'));
        const summary = join(dir, 'summary.md');
        writeFileSync(summary, '');
        const r = await execa('bash', ['-eo', 'pipefail', '-c', gate.run], {
          cwd: dir,
          env: {
            ...workflows['pr-gate.yml'].data.jobs.gate.env,
            PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
            NPX_ARGS: join(dir, 'args'),
            GITHUB_STEP_SUMMARY: summary,
            ...env,
          },
          extendEnv: false,
          reject: false,
          timeout: 10000,
        });
        return {
          code: r.exitCode,
          args: readFileSync(join(dir, 'args'), 'utf8').trim(),
          summary: readFileSync(summary, 'utf8'),
        };
      };
      const plain = 'k6pack gate --profile lan,lte --load gate --results results --dashboard --history k6pack-history';
      const pr = await step(
        { GITHUB_EVENT_NAME: 'pull_request', BASELINE_KEY: 'k6pack-baseline-main-abc' },
        { baselineDir: true },
      );
      assert.deepEqual(pr, {
        code: 0,
        args: `${plain} --baseline baseline --tolerance 10%`,
        summary: 'Baseline: k6pack-baseline-main-abc\n',
      });
      const first = await step({ GITHUB_EVENT_NAME: 'pull_request', BASELINE_KEY: '' });
      assert.equal(first.args, plain);
      assert.match(first.summary, /^No baseline stored for the base branch yet: gated on thresholds only\.$/m);
      const push = await step({ GITHUB_EVENT_NAME: 'push', BASELINE_KEY: '' }, { baselineDir: true });
      assert.deepEqual(push, { code: 0, args: plain, summary: '' });
      for (const code of [99, 3, 1])
        assert.equal((await step({ GITHUB_EVENT_NAME: 'push', NPX_EXIT: String(code) })).code, code);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the soak's input check takes 90s..5h and refuses anything else", async () => {
    const check = steps(workflows['nightly-soak.yml'].data).find((s) => s.name === 'Check the inputs').run;
    const verdict = async (value) =>
      (await execa('bash', ['-e', '-c', check], { env: { SOAK_DURATION: value }, reject: false, timeout: 10000 }))
        .exitCode;
    for (const ok of ['90s', '15m', '1h', '5h']) assert.equal(await verdict(ok), 0, ok);
    for (const bad of ['6h', '301m', '1d', '', '1h; touch x', '$(id)']) assert.equal(await verdict(bad), 2, bad);
  });

  test('the test job runs exactly .ci/run, which is the README command', () => {
    const pr = workflows['pr-gate.yml'].data;
    assert.deepEqual(
      pr.jobs.test.steps.filter((s) => s.run).map((s) => s.run.trim()),
      ['bash .ci/run'],
    );
    const ci = readRepo('.ci/run');
    assert.match(ci, /^npm ci && npm test$/m);
    assert.match(readRepo('README.md'), /npm ci && npm test/);
    assert.ok(pkg.scripts.test && pkg.scripts.pretest, 'npm test exists (and pretest builds the tools)');
    // Every other npm command they run is npm ci or a script of package.json.
    for (const { data } of Object.values(workflows)) {
      for (const step of steps(data)) {
        for (const words of commandsOf(step.run || '')) {
          if (words[0] !== 'npm') continue;
          if (words[1] === 'ci') continue;
          const script = words[1] === 'run' ? words[2] : words[1];
          assert.ok(pkg.scripts[script], `npm ${words.slice(1).join(' ')}: no such script`);
        }
      }
    }
  });

  test('Node and Go versions match the Dockerfiles, caches key on files that exist', () => {
    const nodeFrom = parseDockerfile('docker/servers.Dockerfile').find((i) => i.op === 'FROM').args;
    const goFrom = parseDockerfile('docker/toxiproxy.Dockerfile').find((i) => i.op === 'FROM').args;
    for (const { data } of Object.values(workflows)) {
      for (const s of steps(data)) {
        if (s.uses?.startsWith('actions/setup-node@')) {
          assert.equal(String(s.with['node-version']), /node:(\d+)\./.exec(nodeFrom)[1]);
          assert.equal(s.with.cache, 'npm');
          assert.ok(existsSync(join(ROOT, 'package-lock.json')));
        }
        if (s.uses?.startsWith('actions/setup-go@')) {
          assert.equal(s.with['go-version'], /golang:([\d.]+)/.exec(goFrom)[1]);
          assert.equal(s.with.cache, true);
          assert.ok(existsSync(join(ROOT, s.with['cache-dependency-path'])), s.with['cache-dependency-path']);
        }
      }
    }
  });

  // The workflows' baseline glue on a real run folder of `npx k6pack run`
  // (the smallest: ws-vs-http, lan, smoke, one-second steps) on free ports.
  describe('scripts/baseline.sh and the report step on a real run', () => {
    let dir;
    let run;
    const sh = (args) => execa('bash', [BASELINE_SH, ...args], { cwd: ROOT, reject: false, timeout: 60000 });
    before(
      async () => {
        dir = mkdtempSync(join(tmpdir(), 'k6pack-baseline-'));
        const env = {
          ...Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)])),
          K6PACK_RUN_DIR: join(dir, 'run'),
        };
        const args = [
          'run',
          'ws-vs-http',
          '--profile',
          'lan',
          '--load',
          'smoke',
          '--results',
          join(dir, 'results'),
          '--',
          '-e',
          'STEP_SECONDS=1',
          '-e',
          `LANES=${WS_VS_HTTP_LANES}`,
        ];
        const r = await execa(process.execPath, [join(ROOT, 'bin', 'k6pack.js'), ...args], {
          cwd: ROOT,
          env,
          reject: false,
          timeout: 120000,
          stdin: 'ignore',
        });
        assert.ok([0, 99].includes(r.exitCode), `k6pack run exited ${r.exitCode}: ${r.stderr}`);
        const folders = readdirSync(join(dir, 'results'));
        assert.equal(folders.length, 1, String(folders));
        run = join(dir, 'results', folders[0]);
        assert.match(folders[0], /^ws-vs-http-lan-.+/);
      },
      { timeout: 180000 },
    );
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('shellcheck finds nothing in it', async () => {
      const r = await execa(tools.shellcheck, [BASELINE_SH], { reject: false, timeout: 30000 });
      assert.equal(r.exitCode, 0, r.stdout);
    });

    test('save keys each run by scenario and profile; compare against itself passes with a Markdown table', async () => {
      const base = join(dir, 'baseline');
      const saved = await sh(['save', join(dir, 'results'), base]);
      assert.equal(saved.exitCode, 0, saved.stderr);
      assert.deepEqual(readdirSync(base), ['ws-vs-http-lan']);
      assert.deepEqual(
        readFileSync(join(base, 'ws-vs-http-lan', 'summary.json')),
        readFileSync(join(run, 'summary.json')),
      );
      const same = await sh(['compare', base, join(dir, 'results'), '10%']);
      assert.equal(same.exitCode, 0, same.stdout + same.stderr);
      assert.match(same.stdout, /^\|.*\|$/m);
    });

    test('compare: a run with no baseline passes and says so; an unreadable baseline fails', async () => {
      const results = join(dir, 'results2');
      mkdirSync(results);
      cpSync(run, join(results, 'push-lan-20260101T000000Z'), { recursive: true });
      const none = await sh(['compare', join(dir, 'baseline'), results, '10%']);
      assert.equal(none.exitCode, 0, none.stderr);
      assert.match(none.stdout, /push-lan: no baseline yet/);
      const broken = join(dir, 'broken');
      mkdirSync(join(broken, 'ws-vs-http-lan'), { recursive: true });
      writeFileSync(join(broken, 'ws-vs-http-lan', 'summary.json'), 'not json');
      const bad = await sh(['compare', broken, join(dir, 'results'), '10%']);
      assert.notEqual(bad.exitCode, 0);
      const empty = await sh(['save', join(dir, 'nothing'), join(dir, 'b2')]);
      assert.equal(empty.exitCode, 1);
      assert.match(empty.stderr, /no run folder with a summary\.json/);
    });

    test("the report step's command writes the HTML report", async () => {
      const out = join(dir, 'report.html');
      const r = await execa(
        process.execPath,
        [join(ROOT, 'bin', 'k6pack.js'), 'report', join(run, 'summary.json'), '--out', out],
        { cwd: ROOT, reject: false, timeout: 60000 },
      );
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(readFileSync(out, 'utf8'), /^<!doctype html>/i);
      assert.ok(existsSync(join(run, 'summary.md')), 'summary.md for the job summary');
    });
  });
});
