// The pack in a team's repository: `k6pack init` and the GitHub Action (action.yml).
//   - action.yml parses as strict YAML, is a composite action with the inputs and outputs
//     docs/in-your-repo.md promises, pins every action, keeps ${{ }} out of its scripts,
//     and shellcheck finds nothing in them;
//   - `k6pack init`, in an empty git repository, against servers this project did not write
//     (graphql-yoga, grpc-node's route_guide): the API file, a first operation, two
//     workflows that actionlint passes (also with `uses: ./`, which makes actionlint check
//     their inputs against action.yml), the next command; it never overwrites a file and
//     bad input is one line and exit 2, with nothing written;
//   - the action's steps, run with bash as a runner runs them (GITHUB_* and RUNNER_TEMP, its
//     expressions evaluated, the `uses:` steps (setup-node, cache, setup-go, upload) left
//     out), against those servers at --load smoke under lan: the gate's exit in the output
//     (0, or 99 when only latency thresholds failed: test/helpers/exits.js), comment.md in
//     the job summary, the history branch pushed, the job failing with the gate's code; the
//     comment step on a stub of the GitHub API: one comment, created then updated.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import YAML from 'yaml';
import { ensureDevTools } from '../dev/devtools.js';
import { ROOT } from '../lib/tools.js';
import { apiConfig } from '../lib/api/api-config.js';
import { actionRef, actionRepo } from '../lib/init-workflows.js';
import { CLI, cliEnv } from './helpers/cli-env.js';
import { OPS, PROTO, startRouteGuide, startYoga, VARS } from './helpers/api-servers.js';
import { assertPassedButLatency } from './helpers/exits.js';

const ACTION = join(ROOT, 'action.yml');
const actionText = readFileSync(ACTION, 'utf8');
const actionDoc = YAML.parseDocument(actionText, { strict: true, uniqueKeys: true, prettyErrors: true });
const action = actionDoc.toJS();
const CALL = 'routeguide.RouteGuide/GetFeature';
const WORKFLOWS = ['.github/workflows/k6pack-gate.yml', '.github/workflows/k6pack-soak.yml'];
// The Node running this test (Node 24 under npm test) first on PATH, for npx and the CLI.
const PATH = `${dirname(process.execPath)}:${process.env.PATH}`;

// ---- a runner's expressions, enough for action.yml's: contexts, ==, !=, &&, ||, !, status functions
function evaluate(expr, ctx) {
  const js = expr
    .replace(/\b(inputs|steps|github|runner)((?:\.[\w-]+)+)/g, (_, head, rest) => `get(${JSON.stringify(head + rest)})`)
    .replace(/!=/g, '!==')
    .replace(/(?<![!=])==(?!=)/g, '===')
    .replace(/\bcancelled\(\)/g, 'false')
    .replace(/\balways\(\)/g, 'true')
    .replace(/\bsuccess\(\)/g, 'ok')
    .replace(/\bfailure\(\)/g, '!ok');
  const get = (path) => path.split('.').reduce((v, k) => (v == null ? undefined : v[k]), ctx) ?? '';
  return new Function('get', 'ok', `return (${js});`)(get, ctx.ok);
}
const substitute = (text, ctx) => String(text).replace(/\$\{\{(.*?)\}\}/g, (_, e) => String(evaluate(e.trim(), ctx)));

const diagnostics = [];
const runSteps = () => action.runs.steps.filter((s) => s.run);

// Runs the action's steps as a runner would; `uses:` steps are recorded and skipped.
// -> { steps: { id: { outputs, code } }, ran: [names], skipped: [names], log, summary, failedWith }
async function runAction({ dir, inputs, event, env, only }) {
  const temp = mkdtempSync(join(tmpdir(), 'k6pack-runner-'));
  const summary = join(temp, 'step-summary.md');
  writeFileSync(summary, '');
  const ctx = {
    ok: true,
    inputs: Object.fromEntries(
      Object.entries(action.inputs).map(([k, v]) => [k, inputs[k] ?? String(v.default ?? '')]),
    ),
    steps: {},
    github: {
      event_name: event,
      repository: 'o/r',
      action_path: ROOT,
      token: 'stub-token',
      job: 'gate',
      run_attempt: '1',
      sha: 'a'.repeat(40),
      event: event === 'pull_request' ? { pull_request: { number: 7, head: { repo: { full_name: 'o/r' } } } } : {},
    },
    runner: { temp, os: 'Linux', arch: 'X64' },
  };
  // Input defaults may be expressions (github-token: ${{ github.token }}).
  for (const k of Object.keys(ctx.inputs)) ctx.inputs[k] = substitute(ctx.inputs[k], ctx);
  const out = { steps: ctx.steps, ran: [], skipped: [], log: '', summary, failedWith: null };
  try {
    for (const step of action.runs.steps) {
      if (only && !only.includes(step.name)) continue;
      const cond = step.if ? evaluate(String(step.if).replace(/^\$\{\{|\}\}$/g, ''), ctx) : ctx.ok;
      if (!cond || step.uses) {
        out.skipped.push(step.name);
        continue;
      }
      const output = join(temp, `output-${out.ran.length}`);
      writeFileSync(output, '');
      const script = join(temp, `step-${out.ran.length}.sh`);
      writeFileSync(script, step.run);
      const stepEnv = Object.fromEntries(Object.entries(step.env || {}).map(([k, v]) => [k, substitute(v, ctx)]));
      const r = await execa('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
        cwd: dir,
        env: {
          ...env,
          PATH: env.PATH,
          CI: 'true',
          GITHUB_ACTIONS: 'true',
          GITHUB_EVENT_NAME: event,
          GITHUB_REPOSITORY: 'o/r',
          GITHUB_SHA: ctx.github.sha,
          GITHUB_WORKSPACE: dir,
          GITHUB_ACTION_PATH: ROOT,
          GITHUB_STEP_SUMMARY: summary,
          GITHUB_OUTPUT: output,
          RUNNER_TEMP: temp,
          ...stepEnv,
        },
        all: true,
        reject: false,
        timeout: 300000,
        stdin: 'ignore',
      });
      out.ran.push(step.name);
      out.log += `\n--- ${step.name} (exit ${r.exitCode})\n${r.all}`;
      const outputs = Object.fromEntries(
        readFileSync(output, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      if (step.id) ctx.steps[step.id] = { outputs, code: r.exitCode };
      if (r.exitCode !== 0) {
        ctx.ok = false;
        out.failedWith ??= { step: step.name, code: r.exitCode };
      }
    }
    out.summaryText = readFileSync(summary, 'utf8');
    return out;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

const git = (dir, ...args) =>
  execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, timeout: 30000 });

// An empty repository with k6pack as a devDependency (node_modules/k6pack: this checkout),
// an origin to push to, and a .proto of its own.
async function teamRepo(root, name) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'k6pack'));
  symlinkSync(join('..', 'k6pack', 'bin', 'k6pack.js'), join(dir, 'node_modules', '.bin', 'k6pack'));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name, private: true, devDependencies: { k6pack: 'file:../k6pack.tgz' } }, null, 2)}\n`,
  );
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\nk6pack-results/\n');
  cpSync(PROTO, join(dir, 'route_guide.proto'));
  await execa('git', ['init', '--quiet', '--bare', join(root, `${name}-origin.git`)]);
  await git(dir, 'init', '--quiet', '-b', 'main');
  await git(dir, 'remote', 'add', 'origin', join(root, `${name}-origin.git`));
  return dir;
}

const init = (dir, args, env) =>
  execa(process.execPath, [CLI, 'init', ...args], {
    cwd: dir,
    env: { ...env, PATH },
    reject: false,
    timeout: 90000,
    stdin: 'ignore',
  });

// The files of a repository, but node_modules/ and .git/.
function filesIn(dir, sub = '') {
  return readdirSync(join(dir, sub), { withFileTypes: true })
    .filter((e) => !['node_modules', '.git'].includes(e.name))
    .flatMap((e) => (e.isDirectory() ? filesIn(dir, join(sub, e.name)) : [join(sub, e.name)]))
    .sort();
}

describe('k6pack in a team repository: init and the GitHub Action', () => {
  let tools;
  let yoga;
  let guide;
  let tmp;
  let cli;
  before(
    async () => {
      tools = ensureDevTools(['actionlint', 'shellcheck'], { log: (l) => process.stderr.write(`${l}\n`) });
      [yoga, guide] = await Promise.all([startYoga(), startRouteGuide()]);
      tmp = mkdtempSync(join(tmpdir(), 'k6pack-action-'));
      cli = await cliEnv({ api: true });
    },
    { timeout: 600000 },
  );
  after(async () => {
    for (const d of diagnostics) process.stderr.write(`# ${d}\n`);
    await Promise.all([yoga?.stop(), guide?.stop()]);
    await cli?.cleanup();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('action.yml: a composite action with its inputs and outputs, pinned, shellcheck-clean', async () => {
    assert.deepEqual(actionDoc.errors.map(String), []);
    assert.equal(action.runs.using, 'composite');
    for (const input of ['api-file', 'profiles', 'load', 'baseline', 'history-branch', 'comment', 'node-version'])
      assert.ok(action.inputs[input]?.description, `input ${input}`);
    assert.equal(action.inputs['api-file'].default, 'k6pack.json');
    assert.equal(action.inputs['node-version'].default, '24');
    assert.equal(action.inputs.comment.default, 'true');
    assert.match(action.outputs['exit-code'].value, /^\$\{\{ steps\.gate\.outputs\.exit-code \}\}$/);
    const uses = action.runs.steps.filter((s) => s.uses).map((s) => s.uses.split('@')[0]);
    assert.deepEqual(uses, ['actions/setup-node', 'actions/cache', 'actions/setup-go', 'actions/upload-artifact']);
    for (const line of actionText.match(/^ *(?:- )?uses:.*$/gm).map((l) => l.replace(/^ *(?:- )?/, '')))
      assert.match(line, /^uses: [\w-]+\/[\w/-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/, line);
    // The tools' cache is where lib/tools.js keeps them; Go as the pack's own CI has it.
    const cache = action.runs.steps.find((s) => s.uses?.startsWith('actions/cache@'));
    assert.equal(cache.with.path, '~/.cache/k6pack');
    const prGate = YAML.parse(readFileSync(join(ROOT, '.github', 'workflows', 'pr-gate.yml'), 'utf8'));
    const goVersion = prGate.jobs.gate.steps.find((s) => s.uses?.startsWith('actions/setup-go@')).with['go-version'];
    assert.equal(String(action.inputs['go-version'].default), String(goVersion));
    for (const s of runSteps()) {
      assert.equal(s.shell, 'bash', `${s.name}: shell`);
      assert.doesNotMatch(s.run, /\$\{\{/, `${s.name}: an expression inside the script (give it through env)`);
      const r = await execa(tools.shellcheck, ['-s', 'bash', '-'], { input: s.run, reject: false, timeout: 30000 });
      assert.equal(r.exitCode, 0, `${s.name}: shellcheck\n${r.stdout}`);
    }
    // The job fails with the gate's code, in the last step.
    const last = action.runs.steps.at(-1);
    assert.match(last.env.CODE, /steps\.gate\.outputs\.exit-code/);
    assert.match(last.run, /exit "\$CODE"/);
  });

  test('init: the API file, a first operation and two workflows that actionlint passes; the next command', async () => {
    const dir = await teamRepo(tmp, 'team');
    const r = await init(
      dir,
      ['--graphql', yoga.url, '--grpc', guide.addr, '--proto', 'route_guide.proto', '--call', CALL],
      cli.env,
    );
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^next: npx k6pack gate --api k6pack\.json$/m);
    assert.match(r.stdout, /^== lanes: http_fresh, http_keepalive, ws, grpc, grpc_fresh$/m);
    assert.equal(r.stderr, '');
    assert.deepEqual(filesIn(dir), [
      '.github/workflows/k6pack-gate.yml',
      '.github/workflows/k6pack-soak.yml',
      '.gitignore',
      'k6pack.graphql',
      'k6pack.json',
      'package.json',
      'route_guide.proto',
    ]);
    const api = JSON.parse(readFileSync(join(dir, 'k6pack.json'), 'utf8'));
    assert.deepEqual(
      { ...api, $comment: undefined },
      {
        $comment: undefined,
        graphql: yoga.url,
        operations: 'k6pack.graphql',
        variables: { FirstBook: { id: '1' } },
        grpc: guide.addr,
        proto: 'route_guide.proto',
        call: CALL,
        request: {},
      },
    );
    assert.match(readFileSync(join(dir, 'k6pack.graphql'), 'utf8'), /^query FirstBook\(\$id: ID!\) \{$/m);
    // The file `gate --api` reads, checked as it checks it.
    const cfg = apiConfig({ api: join(dir, 'k6pack.json') }, { cwd: dir });
    assert.equal(cfg.calls[0].call, CALL);
    // The workflows use this repository's action, and start the API before the gate.
    for (const f of WORKFLOWS) {
      const text = readFileSync(join(dir, f), 'utf8');
      const wf = YAML.parse(text, { strict: true, uniqueKeys: true });
      const steps = Object.values(wf.jobs)[0].steps;
      const gate = steps.find((s) => s.uses === actionRef());
      assert.ok(gate, `${f} uses ${actionRef()}`);
      assert.equal(gate.with['api-file'], 'k6pack.json');
      assert.equal(gate.with['history-branch'], 'k6pack-history');
      assert.ok(steps.indexOf(gate) > steps.findIndex((s) => /API_START/.test(s.run || '')));
      assert.match(text, new RegExp(`for address in ${guide.addr.replace(/\./g, '\\.')}|127\\.0\\.0\\.1:${yoga.port}`));
    }
    assert.equal(actionRepo({}), 'k6pack/k6pack');
    assert.equal(actionRepo({ repository: 'github:acme/k6pack' }), 'acme/k6pack');
    assert.equal(actionRepo({ repository: { url: 'git+https://github.com/acme/k6pack.git' } }), 'acme/k6pack');
    const gateWf = YAML.parse(readFileSync(join(dir, WORKFLOWS[0]), 'utf8'));
    assert.equal(gateWf.jobs.gate.permissions['pull-requests'], 'write');
    const soakWf = YAML.parse(readFileSync(join(dir, WORKFLOWS[1]), 'utf8'));
    assert.ok(soakWf.on.schedule[0].cron);
    assert.equal(soakWf.jobs.soak.steps.at(-1).with.load, 'soak');

    // actionlint (with shellcheck) on the workflows as written, and with the action as `./`
    // (actionlint then reads action.yml and checks every input the workflows give).
    const lint = async (cwd) => {
      const l = await execa(
        tools.actionlint,
        ['-no-color', '-shellcheck', tools.shellcheck, '-pyflakes=', '-verbose', ...WORKFLOWS],
        {
          cwd,
          reject: false,
          timeout: 60000,
        },
      );
      assert.equal(l.exitCode, 0, `actionlint:\n${l.stdout}\n${l.stderr}`);
      assert.match(l.stderr, /Found 0 errors in 2 files/);
      diagnostics.push(
        `actionlint in ${cwd}: ${l.stderr
          .split('\n')
          .filter((x) => /Found|shellcheck/i.test(x))
          .join('; ')}`,
      );
      return l;
    };
    await git(dir, 'add', '-A');
    await lint(dir);
    const local = join(tmp, 'local-action');
    cpSync(join(dir, '.github'), join(local, '.github'), { recursive: true });
    cpSync(ACTION, join(local, 'action.yml'));
    for (const f of WORKFLOWS)
      writeFileSync(
        join(local, f),
        readFileSync(join(local, f), 'utf8').replaceAll(`uses: ${actionRef()}`, 'uses: ./'),
      );
    await execa('git', ['init', '--quiet', local]);
    await lint(local);
    // The control: an input action.yml does not have is an error there.
    const wrong = join(local, WORKFLOWS[0]);
    writeFileSync(wrong, readFileSync(wrong, 'utf8').replace('comment: true', 'coment: true'));
    const w = await execa(tools.actionlint, ['-no-color', '-pyflakes=', '-shellcheck=', WORKFLOWS[0]], {
      cwd: local,
      reject: false,
      timeout: 60000,
    });
    assert.equal(w.exitCode, 1, w.stdout + w.stderr);
    assert.match(w.stdout, /input "coment" is not defined in action/);
  });

  test('init never overwrites a file, and bad input is one line and exit 2, with nothing written', async () => {
    const dir = await teamRepo(tmp, 'careful');
    const before = filesIn(dir);
    const ok = ['--graphql', yoga.url];
    // One target there: named, nothing else written.
    mkdirSync(join(dir, '.github', 'workflows'), { recursive: true });
    writeFileSync(join(dir, WORKFLOWS[1]), 'name: mine\n');
    let r = await init(dir, ok, cli.env);
    assert.equal(r.exitCode, 2, r.stdout + r.stderr);
    assert.equal(
      r.stderr,
      `k6pack: ${WORKFLOWS[1]} exists: init never overwrites a file, and wrote nothing (move it away, or edit it instead)`,
    );
    assert.deepEqual(filesIn(dir), [...before, WORKFLOWS[1]].sort());
    assert.equal(readFileSync(join(dir, WORKFLOWS[1]), 'utf8'), 'name: mine\n');
    rmSync(join(dir, '.github'), { recursive: true });

    const closed = `http://127.0.0.1:${cli.ports.PROXY_API_GRAPHQL_PORT}/graphql`;
    const bad = [
      [['--graphql', 'not a url'], /^k6pack: --graphql not a url: not a URL/],
      [['--graphql', closed], /^k6pack: GraphQL endpoint .*: cannot connect \(ECONNREFUSED\)/],
      [['--grpc', guide.addr, '--call', CALL], /^k6pack: --grpc needs --proto FILE/],
      [
        ['--grpc', guide.addr, '--proto', 'route_guide.proto', '--call', 'routeguide.RouteGuide/Nope'],
        /has no method Nope/,
      ],
      [['--graphql', `http://127.0.0.1:${guide.port}/graphql`], /^k6pack: GraphQL endpoint /],
      [[], /^k6pack: give your endpoints: /],
      [['--api', 'k6pack.json', '--graphql', yoga.url], /^error: unknown option '--api'/],
    ];
    for (const [args, line] of bad) {
      const t0 = Date.now();
      r = await init(dir, args, cli.env);
      assert.equal(r.exitCode, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      const lines = r.stderr.split('\n').filter((x) => x && !/^\(add --help/.test(x));
      assert.equal(lines.length, 1, `${args.join(' ')}: one line\n${r.stderr}`);
      assert.match(lines[0], line);
      assert.ok(Date.now() - t0 < 60000, 'bad input never hangs');
      assert.deepEqual(filesIn(dir), before, `${args.join(' ')}: nothing written`);
    }

    // The user's own operations: the API file points at them, no first operation is written.
    cpSync(OPS, join(dir, 'ops.graphql'));
    cpSync(VARS, join(dir, 'vars.json'));
    r = await init(
      dir,
      ['--graphql', yoga.url, '--operations', 'ops.graphql', '--variables', 'vars.json', '--out', 'api/k6pack.json'],
      cli.env,
    );
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^next: npx k6pack gate --api api\/k6pack\.json$/m);
    const api = JSON.parse(readFileSync(join(dir, 'api', 'k6pack.json'), 'utf8'));
    assert.equal(api.operations, '../ops.graphql');
    assert.equal(api.variables, '../vars.json');
    assert.ok(!existsSync(join(dir, 'api', 'k6pack.graphql')) && !existsSync(join(dir, 'k6pack.graphql')));
    assert.match(readFileSync(join(dir, WORKFLOWS[0]), 'utf8'), /api-file: api\/k6pack\.json/);
  });

  test(
    "the action's steps, run as a runner runs them, gate the API at smoke and fail the job with the gate's code",
    { timeout: 600000 },
    async () => {
      const dir = await teamRepo(tmp, 'ci');
      const r = await init(
        dir,
        ['--graphql', yoga.url, '--grpc', guide.addr, '--proto', 'route_guide.proto', '--call', CALL],
        cli.env,
      );
      assert.equal(r.exitCode, 0, r.stdout + r.stderr);
      await git(dir, 'add', '-A');
      await git(dir, 'commit', '--quiet', '-m', 'k6pack init');
      // npm must not be called: k6pack is a devDependency already in node_modules.
      const bin = join(tmp, 'stub-bin');
      mkdirSync(bin, { recursive: true });
      writeFileSync(
        join(bin, 'npm'),
        '#!/bin/sh\necho "npm $* (a stub: the test expected no npm call)" >&2\nexit 1\n',
        { mode: 0o755 },
      );
      const env = { ...process.env, ...cli.env, PATH: `${bin}:${PATH}` };
      const inputs = { profiles: 'lan', load: 'smoke', 'history-branch': 'k6pack-history' };
      const run = await runAction({ dir, inputs, event: 'push', env });
      const code = Number(run.steps.gate?.outputs['exit-code']);
      diagnostics.push(`the gate step exited ${code}; ran: ${run.ran.join(' | ')}`);
      // The gate's run folder: every threshold held, or only latency ones failed.
      const results = join(dir, 'k6pack-results');
      const folders = readdirSync(results).filter((f) => existsSync(join(results, f, 'summary.json')));
      assert.equal(folders.length, 1, `${readdirSync(results)}\n${run.log}`);
      const doc = JSON.parse(readFileSync(join(results, folders[0], 'summary.json'), 'utf8'));
      assertPassedButLatency(
        code,
        doc.thresholds.filter((t) => !t.ok).map((t) => t.key),
        run.log,
      );
      assert.deepEqual(run.skipped, [
        'Set up Node',
        'Restore the built tools',
        'Set up Go (to build the tools the cache did not hold)',
        'Comment on the pull request (one comment, updated on later pushes)',
        'Upload the gate folder',
      ]);
      assert.deepEqual(run.steps.gate.outputs, {
        results: 'k6pack-results',
        report: 'k6pack-results/report.html',
        'exit-code': String(code),
      });
      for (const f of ['report.html', 'junit.xml', 'gate.md', 'comment.md', 'gate.json'])
        assert.ok(existsSync(join(results, f)), f);
      // report.html opens with the gate's verdict (its data block: the gate before the sections).
      const html = readFileSync(join(results, 'report.html'), 'utf8');
      const data = JSON.parse(/<script type="application\/json" id="k6pack-data">(.*?)<\/script>/s.exec(html)[1]);
      assert.equal(data.gate.code, code);
      assert.match(data.gate.verdict, code === 0 ? /^the run passed/ : /^thresholds failed in api \(lan\)/);
      // The job summary is the gate's comment.md.
      assert.equal(run.summaryText, readFileSync(join(results, 'comment.md'), 'utf8'));
      assert.match(run.summaryText, /^## k6pack gate — /);
      // The history branch got this gate's run, pushed to origin.
      assert.match(run.log, /history: no k6pack-history on origin yet/);
      assert.match(run.log, /history: pushed to k6pack-history/);
      const pushed = await execa('git', ['ls-tree', '-r', '--name-only', 'k6pack-history'], {
        cwd: join(tmp, 'ci-origin.git'),
      });
      assert.match(pushed.stdout, /^api\/lan\.jsonl$/m);
      // The job fails with the gate's code, in the last step, after the others ran.
      assert.equal(run.ran.at(-1), "Fail with the gate's exit code");
      assert.deepEqual(run.failedWith, code === 0 ? null : { step: "Fail with the gate's exit code", code });
      assert.doesNotMatch(run.log, /a stub: the test expected no npm call/);

      // The comment step on a pull request, against a stub of the GitHub API: created, then updated.
      const comments = [];
      const seen = [];
      const server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          seen.push(`${req.method} ${req.url.replace(/\?.*/, '')} ${req.headers.authorization}`);
          const reply = (status, doc) =>
            res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
          if (req.method === 'GET') return reply(200, comments);
          if (req.method === 'POST') {
            comments.push({ id: 500 + comments.length, body: JSON.parse(body).body });
            return reply(201, comments.at(-1));
          }
          if (req.method === 'PATCH') {
            comments.find((c) => req.url.endsWith(`/${c.id}`)).body = JSON.parse(body).body;
            return reply(200, {});
          }
          return reply(404, { message: 'Not Found' });
        });
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const api = { ...env, GITHUB_API_URL: `http://127.0.0.1:${server.address().port}` };
        const only = ['Comment on the pull request (one comment, updated on later pushes)'];
        for (let i = 0; i < 2; i++) {
          const c = await runAction({ dir, inputs, event: 'pull_request', env: api, only });
          assert.deepEqual(c.ran, only, c.log);
          assert.equal(c.failedWith, null, c.log);
          assert.match(c.log, i === 0 ? /comment created on #7/ : /comment updated on #7/);
        }
        assert.equal(comments.length, 1, 'one sticky comment');
        assert.ok(comments[0].body.startsWith('<!-- k6pack-gate -->\n## k6pack gate — '));
        assert.deepEqual(
          seen.map((s) => s.split(' ').slice(0, 2).join(' ')),
          [
            'GET /repos/o/r/issues/7/comments',
            'POST /repos/o/r/issues/7/comments',
            'GET /repos/o/r/issues/7/comments',
            'PATCH /repos/o/r/issues/comments/500',
          ],
        );
        assert.ok(
          seen.every((s) => s.endsWith('Bearer stub-token')),
          'the github-token input',
        );
        // comment: false, or a push: the step does not run.
        const off = await runAction({
          dir,
          inputs: { ...inputs, comment: 'false' },
          event: 'pull_request',
          env: api,
          only,
        });
        assert.deepEqual(off.ran, []);
      } finally {
        server.close();
      }
    },
  );
});
