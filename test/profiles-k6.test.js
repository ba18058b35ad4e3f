// scenarios/lib/network.js from real k6: profile files are found whatever the working
// directory, and bad input (unknown profile, malformed file, no Toxiproxy, no proxies)
// stops the run with the one line that says what to do.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { execa } from 'execa';
import { k6RunArgs, requireK6 } from '../lib/k6.js';
import { findToxiproxy, ROOT } from '../lib/tools.js';
import { PROXY_NAMES } from '../common/defaults.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { freePorts } from '../dev/test-stack.js';

// A copy of the pack's profile machinery with a scenario at scenarios/probe.js, so a
// profile file can be broken without touching the repository.
const tree = mkdtempSync(join(tmpdir(), 'k6pack-profiles-'));
after(() => rmSync(tree, { recursive: true, force: true }));
mkdirSync(join(tree, 'scenarios', 'lib'), { recursive: true });
cpSync(join(ROOT, 'scenarios', 'lib', 'network.js'), join(tree, 'scenarios', 'lib', 'network.js'));
cpSync(join(ROOT, 'common'), join(tree, 'common'), { recursive: true });
cpSync(join(ROOT, 'profiles'), join(tree, 'profiles'), { recursive: true });
writeFileSync(
  join(tree, 'scenarios', 'probe.js'),
  `import { applyNetwork, networkProfile } from './lib/network.js';
const profile = networkProfile('lte');
export const options = { iterations: 1 };
export function setup() {
  console.log('PROFILE ' + profile.name + ' ' + profile.toxics.map((t) => t.name).join(','));
  if (__ENV.APPLY) applyNetwork(profile);
}
export default function () {}
`,
);

async function k6(script, { cwd = ROOT, env = {} } = {}) {
  // Toxiproxy is never needed unless a test says so: point it at a closed port.
  const run = await execa(
    requireK6(),
    k6RunArgs(script, {
      env: { TOXIPROXY_URL: 'http://127.0.0.1:9', ...env },
      args: ['--quiet', '--no-color', '--address', ''],
    }),
    {
      cwd,
      reject: false,
      timeout: 30000,
      forceKillAfterDelay: 5000,
      stdin: 'ignore',
    },
  );
  return { code: run.exitCode, stderr: run.stderr };
}

// The message k6 logged for the script error (level=error msg="...").
function errorLine(stderr) {
  const m = /level=error msg="((?:[^"\\]|\\.)*)"/.exec(stderr);
  return m ? JSON.parse(`"${m[1]}"`).split('\n')[0] : null;
}

test('profile files are found from any working directory', { timeout: 60000 }, async () => {
  for (const [cwd, script] of [
    [tree, 'scenarios/probe.js'],
    [join(tree, 'scenarios'), 'probe.js'],
    ['/', join(tree, 'scenarios', 'probe.js')],
    [tmpdir(), join(tree, 'scenarios', 'probe.js')],
  ]) {
    const run = await k6(script, { cwd, env: { PROFILE: '3g+flaky' } });
    assert.equal(run.code, 0, `cwd ${cwd}: ${run.stderr.slice(-800)}`);
    assert.match(run.stderr, /PROFILE 3g\+flaky link_upstream,link_downstream,flaky_reset_peer/);
    assert.doesNotMatch(run.stderr, /level=warn/, 'no warning about how open() resolves paths');
  }
  const byDefault = await k6(join(tree, 'scenarios', 'probe.js'), { cwd: '/' });
  assert.match(byDefault.stderr, /PROFILE lte /, "the scenario's default applies without -e PROFILE");
});

test('an unknown profile stops k6 at init with one line listing the known ones', { timeout: 60000 }, async () => {
  for (const [spec, start] of [
    ['nope', 'unknown network profile "nope"'],
    ['3g+wobbly', 'unknown modifier or fault profile "wobbly"'],
  ]) {
    const run = await k6('test/k6/network-probe.js', { env: { PROFILE: spec } });
    assert.equal(run.code, 107, run.stderr);
    const line = errorLine(run.stderr);
    assert.ok(line?.startsWith(start), line);
    assert.match(
      line,
      /network profiles are lan, fios, .*; modifiers \(add with \+, e\.g\. 3g\+loss1\) are ideal, loss1, .*; fault profiles \(e\.g\. 3g\+flaky\) are flaky, stall, /,
    );
    assert.doesNotMatch(run.stderr, /\\tat /, 'no stack trace');
  }
});

test('a malformed profile file stops k6 at init naming the file and the field', { timeout: 60000 }, async () => {
  const file = join(tree, 'profiles', 'network', '3g.json');
  const good = readFileSync(file, 'utf8');
  try {
    writeFileSync(file, JSON.stringify({ ...JSON.parse(good), rttMs: -300 }));
    let run = await k6(join(tree, 'scenarios', 'probe.js'), { cwd: '/', env: { PROFILE: '3g' } });
    assert.equal(run.code, 107, run.stderr);
    assert.equal(errorLine(run.stderr), 'profiles/network/3g.json: rttMs must be a number >= 0');

    writeFileSync(file, good.slice(0, 40));
    run = await k6(join(tree, 'scenarios', 'probe.js'), { cwd: '/', env: { PROFILE: '3g+jitter' } });
    assert.equal(run.code, 107, run.stderr);
    assert.match(errorLine(run.stderr), /^profiles\/network\/3g\.json: not valid JSON \(.+\)$/);
  } finally {
    writeFileSync(file, good);
  }
});

test('setup fails with what to start when Toxiproxy is not reachable', { timeout: 60000 }, async () => {
  const [port] = await freePorts(1);
  const run = await k6(join(tree, 'scenarios', 'probe.js'), {
    env: { APPLY: '1', TOXIPROXY_URL: `http://127.0.0.1:${port}` },
  });
  assert.notEqual(run.code, 0);
  assert.equal(
    errorLine(
      run.stderr
        .split('\n')
        .filter((l) => !/Request Failed/.test(l))
        .join('\n'),
    ),
    `Toxiproxy is not reachable at http://127.0.0.1:${port}: start the stack with \`npx k6pack up\` (or \`docker compose up -d\`)`,
  );
});

test(
  'setup fails with what to run when Toxiproxy has no proxies, and does not create them',
  { timeout: 60000 },
  async (t) => {
    const bin = findToxiproxy();
    assert.ok(bin, "the pack's toxiproxy build (npm test builds it)");
    const [port] = await freePorts(1);
    const child = spawn(bin, ['-host', '127.0.0.1', '-port', String(port)], { stdio: 'ignore' });
    t.after(() => child.kill('SIGKILL'));
    const url = `http://127.0.0.1:${port}`;
    const api = new Toxiproxy(url);
    for (let i = 0; i < 50 && !(await api.isReachable()); i++) await sleep(100);
    const run = await k6(join(tree, 'scenarios', 'probe.js'), { env: { APPLY: '1', TOXIPROXY_URL: url } });
    assert.notEqual(run.code, 0);
    assert.equal(
      errorLine(run.stderr),
      `Toxiproxy at ${url} has no proxy ${PROXY_NAMES.join(', ')} (it has: none): run \`npx k6pack up\` (or \`docker compose up -d\`) to create them`,
    );
    assert.deepEqual(await api.proxies(), {});
  },
);
