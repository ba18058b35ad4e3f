// The pack as a team installs it (issue 40), checked without installing it (the suite never
// clones or installs the project, issue 38):
//   - what `npm pack` ships: what a user runs, every relative import and file it reads inside
//     the tarball, no tests, benches, dev tools or docs;
//   - the CLI run from another directory, a team's project: `.run/` and the tools' cache
//     where they belong, and nothing written inside the package. As root the CLI runs as
//     `nobody` (setpriv), to whom the package's files are read-only: a write there fails.
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { describe, test } from 'node:test';
import { execa } from 'execa';
import { freePortMap } from '../dev/test-stack.js';
import { defaultRunDir } from '../lib/stack.js';
import { ensureTools, ROOT, toolPaths, toolsDir } from '../lib/tools.js';
import { recordedPids } from './helpers/cli-env.js';
import { scaled } from './helpers/waits.js';
import { isAlive } from '../lib/processes.js';

const CLI = join(ROOT, 'bin', 'k6pack.js');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

describe('the package', () => {
  let files;
  test('npm pack ships what a user runs and nothing of the repository around it', async () => {
    const r = await execa('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, timeout: 60000 });
    files = JSON.parse(r.stdout)[0].files.map((f) => f.path);
    assert.equal(pkg.private, undefined, 'the package is publishable');
    for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'thresholds.json', 'bin/k6pack.js'])
      assert.ok(files.includes(f), `${f} is shipped`);
    for (const dir of ['lib/', 'common/', 'scenarios/', 'servers/', 'profiles/network/', 'tools/toxiproxy/patches/'])
      assert.ok(
        files.some((f) => f.startsWith(dir)),
        `${dir} is shipped`,
      );
    for (const f of ['tools/toxiproxy/go.mod', 'tools/toxiproxy/go.sum', 'tools/toxiproxy/main.go'])
      assert.ok(files.includes(f), `${f} (the Toxiproxy build) is shipped`);
    const unwanted = files.filter(
      (f) => /\.test\.js$|_test\.go$/.test(f) || /^(test|bench|dev|docs|examples|deploy|docker|\.github)\//.test(f),
    );
    assert.deepEqual(unwanted, [], 'no tests, benches, dev tools, docs or examples');
  });

  test('every relative import and file the shipped code names is shipped too', () => {
    assert.ok(files, 'the list from npm pack');
    const shipped = new Set(files);
    const missing = [];
    for (const f of files.filter((p) => p.endsWith('.js'))) {
      const text = readFileSync(join(ROOT, f), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
      const named = [
        ...[...text.matchAll(/\bfrom\s+'(\.\.?\/[^']+)'/g)].map((m) => m[1]),
        ...[...text.matchAll(/\bimport\(\s*'(\.\.?\/[^']+)'\s*\)/g)].map((m) => m[1]),
        ...[...text.matchAll(/new URL\(\s*'(\.\.?\/[^']+)',\s*import\.meta\.url/g)].map((m) => m[1]),
        ...[...text.matchAll(/import\.meta\.resolve\(\s*'(\.\.?\/[^']+)'/g)].map((m) => m[1]),
      ];
      for (const rel of named) {
        const target = normalize(join(dirname(f), rel));
        if (!shipped.has(target) && !files.some((p) => p.startsWith(`${target}/`))) missing.push(`${f}: ${rel}`);
      }
    }
    // What lib/ reads by path from the package root (lib/profiles.js, lib/specs.js, lib/tools.js).
    for (const f of ['profiles/index.json', 'profiles/proxies.json', 'servers/proto/books.proto'])
      if (!shipped.has(f)) missing.push(f);
    assert.deepEqual(missing, [], 'shipped code names files the package lacks');
  });

  test('every package the shipped code imports is one of its dependencies (not a development one)', () => {
    assert.ok(files, 'the list from npm pack');
    const deps = new Set(Object.keys(pkg.dependencies));
    const outside = [];
    for (const f of files.filter((p) => p.endsWith('.js'))) {
      const text = readFileSync(join(ROOT, f), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
      const names = [
        ...[...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'([^'./][^']*)'/gm)].map((m) => m[1]),
        ...[...text.matchAll(/\bimport\(\s*'([^'./][^']*)'\s*\)/g)].map((m) => m[1]),
        ...[...text.matchAll(/\b(?:require|resolve)\(\s*'([^'./][^']*)'\s*\)/g)].map((m) => m[1]),
      ];
      for (const name of names) {
        if (name.startsWith('node:') || (f.startsWith('scenarios/') && /^k6(\/|$)/.test(name))) continue;
        const pkgName = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0];
        if (!deps.has(pkgName)) outside.push(`${f}: ${name}`);
      }
    }
    assert.deepEqual(outside, [], 'a user installs only dependencies: move these there, or stop importing them');
  });

  test('k6pack --version prints the package version', async () => {
    const r = await execa(process.execPath, [CLI, '--version'], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout.trim(), pkg.version);
    assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
  });
});

describe('the tools and the state live outside the package', () => {
  test('the tools: K6PACK_TOOLS_DIR, else $XDG_CACHE_HOME/k6pack, else ~/.cache/k6pack; one folder a version', () => {
    assert.equal(toolsDir({ K6PACK_TOOLS_DIR: '/opt/k6pack-tools', XDG_CACHE_HOME: '/c' }), '/opt/k6pack-tools');
    assert.equal(toolsDir({ XDG_CACHE_HOME: '/c' }), '/c/k6pack');
    assert.match(toolsDir({ XDG_CACHE_HOME: 'relative/ignored' }), /\/\.cache\/k6pack$/);
    assert.match(toolsDir({}), /\/\.cache\/k6pack$/);
    const p = toolPaths({ K6PACK_TOOLS_DIR: '/t' });
    assert.equal(p.k6, '/t/k6-v1.8.1/k6');
    assert.match(p.toxiproxy, /^\/t\/toxiproxy-v2\.5\.0-[0-9a-f]{16}\/toxiproxy-server$/);
    assert.equal(dirname(p.stamp), dirname(p.toxiproxy));
    assert.equal(defaultRunDir({}), join(process.cwd(), '.run'));
  });

  test('from a team project: tools reused from the cache, .run/ in the project, nothing written in the package', async (t) => {
    // The built tools (npm test's pretest builds them), copied into a cache of this test's own.
    const built = ensureTools({ log: () => {} });
    const home = mkdtempSync(join(tmpdir(), 'k6pack-installed-'));
    const project = join(home, 'project');
    const cache = join(home, 'cache');
    mkdirSync(project);
    const seeded = toolPaths({ XDG_CACHE_HOME: cache });
    mkdirSync(seeded.k6Dir, { recursive: true });
    mkdirSync(seeded.toxiproxyDir, { recursive: true });
    copyFileSync(built.toxiproxy, seeded.toxiproxy);
    copyFileSync(toolPaths().stamp, seeded.stamp);
    if (built.k6 === toolPaths().k6) copyFileSync(built.k6, seeded.k6);
    // As root, the CLI runs as nobody: the package (root's, not world-writable) is read-only to
    // it, and so is the seeded cache; only the project is its own.
    // Only where nobody can reach the package: a clone inside a private folder (bench/suite.js
    // clones into a mkdtemp folder, mode 0700) is closed to it; there the check below stands alone.
    const asNobody = process.getuid() === 0 && existsSync('/usr/bin/setpriv') && nobodyReads(CLI);
    t.diagnostic(asNobody ? 'the CLI runs as nobody' : 'the CLI runs as this user (nobody cannot reach the package)');
    if (asNobody) {
      chmodSync(home, 0o755);
      chownSync(project, 65534, 65534);
    }
    const ports = await freePortMap([]);
    const env = { ...process.env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
    for (const name of ['K6PACK_RUN_DIR', 'K6PACK_RESULTS_DIR', 'K6PACK_TOOLS_DIR']) delete env[name];
    Object.assign(env, { XDG_CACHE_HOME: cache, HOME: project, PWD: project });
    const cli = (args) =>
      execa(
        asNobody ? 'setpriv' : process.execPath,
        asNobody
          ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, CLI, ...args]
          : [CLI, ...args],
        { cwd: project, env, reject: false, timeout: scaled(60000), stdin: 'ignore' },
      );
    const runDir = join(project, '.run');
    t.after(async () => {
      await cli(['down']);
      for (const pid of recordedPids(runDir)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(home, { recursive: true, force: true });
    });
    const before = packageState();

    const tools = await cli(['tools']);
    assert.equal(tools.exitCode, 0, tools.stderr);
    assert.doesNotMatch(tools.stdout, /building/, 'the cached tools are reused, not built');
    assert.ok(tools.stdout.includes(seeded.toxiproxy), tools.stdout);

    const up = await cli(['up', '--profile', 'lan']);
    assert.equal(up.exitCode, 0, up.stdout + up.stderr);
    assert.ok(existsSync(join(runDir, 'stack.json')), `up records the stack in the project: ${up.stdout}`);
    const status = await cli(['status']);
    assert.equal(status.exitCode, 0, status.stderr);
    const thresholds = await cli(['thresholds', 'ws-vs-http', '--profile', 'lte']);
    assert.equal(thresholds.exitCode, 0, thresholds.stderr);
    const down = await cli(['down']);
    assert.equal(down.exitCode, 0, down.stderr);

    assert.deepEqual(packageState(), before, 'nothing written in the package');
  });
});

// Whether user nobody can run Node and read `file` (every folder above it open to others).
function nobodyReads(file) {
  const r = spawnSync(
    'setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      '-e',
      `require('fs').accessSync(${JSON.stringify(file)}, 4)`,
    ],
    { stdio: 'ignore', timeout: 10000 },
  );
  return r.status === 0;
}

// The package's folders, with their times: a file the CLI made, moved or removed inside one
// (a .run/, a build, a results folder) would change it. (As root the CLI runs as nobody, to whom
// every write there fails outright; this check is the one that holds for any user.)
function packageState() {
  const dirs = [
    '.',
    '.run',
    '.tools',
    'results',
    'bin',
    'common',
    'profiles',
    'scenarios',
    'servers',
    'tools/toxiproxy',
  ];
  const lib = [
    'lib',
    ...readdirSync(join(ROOT, 'lib'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `lib/${e.name}`),
  ];
  return Object.fromEntries(
    [...dirs, ...lib].map((d) => [d, existsSync(join(ROOT, d)) ? statSync(join(ROOT, d)).mtimeMs : null]),
  );
}
