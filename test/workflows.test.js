// .github/workflows/*.yml, checked without GitHub: each parses as strict YAML,
// passes actionlint (with shellcheck on every `run:` script), pins every action
// to a commit, and runs only commands that exist: `npx k6pack <cmd> --opt` in
// k6pack's --help, npm scripts in package.json, scenarios, profiles, load
// levels and files in the repo. Tool versions follow the Dockerfiles.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { execa } from 'execa';
import YAML from 'yaml';
import { ensureDevTools } from '../lib/devtools.js';
import { ROOT } from '../lib/tools.js';
import { listProfiles } from '../lib/profiles.js';
import { scenarioNames } from '../lib/cli-support.js';
import { parseDockerfile } from './helpers/compose.js';

const WORKFLOW_DIR = join(ROOT, '.github', 'workflows');
const WORKFLOWS = readdirSync(WORKFLOW_DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
const readRepo = (path) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(readRepo('package.json'));

function parseWorkflow(file) {
  const doc = YAML.parseDocument(readFileSync(join(WORKFLOW_DIR, file), 'utf8'), { strict: true, uniqueKeys: true, prettyErrors: true });
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

// Every `npx k6pack <cmd> ...` in a workflow: { cmd, args, options } (options before a bare `--`).
function k6packCalls(wf) {
  const calls = [];
  for (const step of steps(wf)) {
    for (const words of commandsOf(step.run || '')) {
      const i = words.findIndex((w, j) => w === 'npx' && words[j + 1] === 'k6pack');
      if (i < 0) continue;
      const rest = words.slice(i + 2);
      const end = rest.indexOf('--');
      const own = end < 0 ? rest : rest.slice(0, end);
      calls.push({ job: step.job, cmd: own[0], args: own.slice(1).filter((w) => !w.startsWith('-')), options: own.filter((w) => /^--?[a-z]/.test(w)) });
    }
  }
  return calls;
}

// `k6pack --help` commands (with aliases) and, per command, its options.
function k6packHelp(args) {
  return execFileSync(process.execPath, [join(ROOT, 'bin', 'k6pack.js'), ...args, '--help'], { encoding: 'utf8', timeout: 30000 });
}
function helpCommands() {
  const text = k6packHelp([]);
  const section = text.split(/\nCommands:\n/)[1].split(/\n\n/)[0];
  return new Set(section.split('\n').flatMap((l) => (/^ {2}([a-z][\w|-]*)/.exec(l)?.[1] || '').split('|').filter(Boolean)));
}
const helpOptions = (cmd) => new Set(k6packHelp([cmd]).match(/(?<=^|[\s,])--?[a-z][\w-]*/gm) || []);

// Load level names, read from the LEVELS table of scenarios/lib/load.js (a k6 module Node cannot import).
function loadLevels() {
  const block = /export const LEVELS = \{([\s\S]*?)\n\};/.exec(readRepo('scenarios/lib/load.js'))[1];
  return [...block.matchAll(/^ {2}(\w+): \{/gm)].map((m) => m[1]);
}

const workflows = Object.fromEntries(WORKFLOWS.map((f) => [f, parseWorkflow(f)]));

describe('CI workflows for users of the pack', () => {
  let tools;
  before(() => {
    tools = ensureDevTools(['actionlint', 'shellcheck'], { log: (l) => process.stderr.write(`${l}\n`) });
  }, { timeout: 600000 });

  test('the two workflows are there and parse as strict YAML', () => {
    assert.deepEqual(WORKFLOWS, ['nightly-soak.yml', 'pr-gate.yml']);
    for (const [file, { doc }] of Object.entries(workflows)) {
      assert.deepEqual(doc.errors.map(String), [], file);
      assert.deepEqual(doc.warnings.map(String), [], file);
    }
  });

  test('actionlint (with shellcheck on every run: script) finds nothing', { timeout: 60000 }, async (t) => {
    const files = WORKFLOWS.map((f) => join('.github', 'workflows', f));
    const r = await execa(tools.actionlint, ['-no-color', '-shellcheck', tools.shellcheck, '-pyflakes=', '-verbose', ...files], { cwd: ROOT, reject: false, timeout: 50000 });
    t.diagnostic(r.stderr.split('\n').filter((l) => /Found|shellcheck/i.test(l)).join('\n'));
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
      const r = await execa(tools.actionlint, ['-no-color', '-shellcheck', tools.shellcheck, '-pyflakes=', bad], { reject: false, timeout: 50000 });
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
      for (const line of uses) assert.match(line, /^uses: [\w-]+\/[\w/-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/, `${file}: ${line}`);
    }
  });

  test('every `npx k6pack` command and option they run is in k6pack --help', () => {
    const commands = helpCommands();
    const missing = [];
    for (const [file, { data }] of Object.entries(workflows)) {
      const calls = k6packCalls(data);
      assert.ok(calls.length >= 5, `${file} runs k6pack`);
      for (const { cmd, options } of calls) {
        if (!commands.has(cmd)) {
          missing.push(`${file}: npx k6pack ${cmd} (not a command: ${[...commands].join(', ')})`);
          continue;
        }
        const known = helpOptions(cmd);
        for (const o of options) if (!known.has(o)) missing.push(`${file}: npx k6pack ${cmd} ${o} (not an option of ${cmd})`);
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
    for (const p of gate.GATE_PROFILES.split(/\s+/)) assert.ok(network.includes(p), `GATE_PROFILES: ${p}`);
    assert.equal(gate.GATE_PROFILES.split(/\s+/)[0], 'lan');
    assert.ok(gate.GATE_PROFILES.split(/\s+/).length >= 2, 'lan and one shaped profile');
    assert.ok(levels.includes(gate.GATE_LOAD) && gate.GATE_LOAD === 'ci');
    // The gate loops over scenarios/*.js but soak, so the glob must find more than soak.
    assert.ok(scenarios.includes('soak') && scenarios.length > 1);
    const soakRuns = k6packCalls(soak).filter((c) => c.cmd === 'run');
    assert.deepEqual(soakRuns.map((c) => c.args[0]), ['soak']);
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
      const upload = all.filter((s) => s.uses?.startsWith('actions/upload-artifact@'));
      assert.ok(upload.length === 1 && upload[0].with.path === 'results/' && upload[0].with['retention-days'], 'uploads results/ with a retention');
      assert.ok(all.some((s) => /\$GITHUB_STEP_SUMMARY/.test(s.run || '') && /npx k6pack report/.test(s.run)), 'report into the job summary');
      assert.ok(all.some((s) => /K6_WEB_DASHBOARD_EXPORT=/.test(s.run || '')), 'an HTML report');
      assert.ok(all.some((s) => /npx k6pack compare baseline/.test(s.run || '')), 'compare with a baseline');
      assert.ok(all.some((s) => s.uses?.startsWith('actions/cache/restore@') && s.with.path === 'baseline'));
      assert.ok(all.some((s) => s.uses?.startsWith('actions/cache/save@') && s.with.path === 'baseline'));
      // Stop the stack even when the run failed.
      assert.ok(all.some((s) => s.run === 'npx k6pack down' && /always\(\)/.test(s.if)));
      for (const job of Object.values(wf.jobs)) assert.ok(job['timeout-minutes'] > 0, 'every job is bounded');
    }
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
});
