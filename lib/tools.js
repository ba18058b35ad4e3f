// Installs and finds the pinned tools: k6 v1.8.1 (stock) and the pack's own
// toxiproxy-server v2.5.0 build (tools/toxiproxy, with the pack's link and handshake toxics and
// tools/toxiproxy/patches applied to the vendored module).
// Both build from the Go module proxy into .tools/bin/, which git ignores.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { K6_VERSION, TOXIPROXY_VERSION } from '../common/defaults.js';
import { rawSetting } from '../common/settings.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const TOOLS_BIN = join(ROOT, '.tools', 'bin');
const TOXIPROXY_SRC = join(ROOT, 'tools', 'toxiproxy');
const TOXIPROXY_PATCHES = join(TOXIPROXY_SRC, 'patches');
const TOXIPROXY_TESTDATA = join(TOXIPROXY_SRC, 'testdata');
const TOXIPROXY_MODULE = 'github.com/Shopify/toxiproxy/v2';
// Toxiproxy builds are prepared in a fresh directory under here (sources + vendored, patched modules).
const BUILD_ROOT = join(ROOT, '.tools', 'build');

export class ToolError extends Error {}

export function versionOf(bin, args) {
  try {
    return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10000 });
  } catch {
    return null;
  }
}

function onPath(name) {
  for (const dir of (rawSetting(process.env, 'PATH') || '').split(':')) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

// `what` and `retry` name what needs Go and the command to run again (dev/devtools.js reuses this).
export function requireGo(what = `k6 ${K6_VERSION} and toxiproxy ${TOXIPROXY_VERSION}`, retry = 'npx k6pack tools') {
  if (!versionOf('go', ['version'])) {
    throw new ToolError(
      `Go is needed to build ${what}: install Go 1.25 or newer (k6 v1.8.1 needs it) (e.g. 'apt-get install golang-go' or https://go.dev/dl) and run '${retry}' again.`,
    );
  }
}

export function go(args, opts = {}) {
  execFileSync('go', args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts, env: { ...process.env, ...opts.env } });
}

// The files a toxiproxy build is made of: tools/toxiproxy's Go files, go.mod,
// go.sum, and the patches (in the order they apply).
function toxiproxySources() {
  const src = readdirSync(TOXIPROXY_SRC)
    .filter((f) => /\.(go|mod|sum)$/.test(f))
    .sort()
    .map((f) => join(TOXIPROXY_SRC, f));
  return { src, patches: patchesIn(TOXIPROXY_PATCHES) };
}

const patchesIn = (dir) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.patch'))
        .sort()
        .map((f) => join(dir, f))
    : [];

// Source fingerprint of the toxiproxy build, so an edited toxic or patch triggers a rebuild.
function toxiproxySourceHash() {
  const h = createHash('sha256');
  const { src, patches } = toxiproxySources();
  for (const f of [...src, ...patches]) h.update(relative(TOXIPROXY_SRC, f)).update(readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

function requireGit() {
  if (!versionOf('git', ['--version'])) {
    throw new ToolError(
      "git is needed to apply tools/toxiproxy/patches to toxiproxy's source: install git (e.g. 'apt-get install git') and run 'npx k6pack tools' again.",
    );
  }
}

// Applies one patch to the vendored toxiproxy module, or throws one line naming it.
// git apply works as a plain patch tool here: GIT_CEILING_DIRECTORIES keeps it from
// finding the pack's own repository above the build directory (inside a repository
// it would skip files outside the current directory instead of patching them).
function applyPatch(patch, moduleDir, buildDir) {
  const env = { ...process.env, GIT_CEILING_DIRECTORIES: dirname(buildDir) };
  delete env.GIT_DIR;
  delete env.GIT_WORK_TREE;
  const run = (args) =>
    execFileSync('git', ['apply', '--whitespace=nowarn', ...args, patch], {
      cwd: moduleDir,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  try {
    run(['--check']);
    run([]);
  } catch (err) {
    const why = String(err.stderr || err.message)
      .trim()
      .split('\n')
      .join('; ');
    const shown = patch.startsWith(ROOT + sep) ? relative(ROOT, patch) : patch;
    throw new ToolError(`${shown} does not apply to toxiproxy ${TOXIPROXY_VERSION}: ${why}`);
  }
}

// Prepares a toxiproxy build directory (a new one under .tools/build/ unless `dir`
// is given; the caller removes it): a copy of tools/toxiproxy's sources,
// `go mod vendor`, and every patch applied, in name order, to the vendored
// toxiproxy module. `go build -mod=vendor` or `go test -mod=vendor` then runs
// in the returned directory. `patchesDir` lets a test try another patch set.
export function prepareToxiproxyBuild({ dir, patchesDir = TOXIPROXY_PATCHES } = {}) {
  requireGo();
  const patches = patchesIn(patchesDir);
  if (patches.length) requireGit();
  if (dir) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  } else {
    mkdirSync(BUILD_ROOT, { recursive: true });
    dir = mkdtempSync(join(BUILD_ROOT, 'toxiproxy-'));
  }
  try {
    for (const f of toxiproxySources().src) copyFileSync(f, join(dir, basename(f)));
    // The Go tests' fixtures (testdata/: cases the model in common/model.js shares).
    if (existsSync(TOXIPROXY_TESTDATA)) cpSync(TOXIPROXY_TESTDATA, join(dir, 'testdata'), { recursive: true });
    go(['mod', 'vendor'], { cwd: dir });
    const moduleDir = join(dir, 'vendor', ...TOXIPROXY_MODULE.split('/'));
    for (const patch of patches) applyPatch(patch, moduleDir, dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

const K6_LOCAL = join(TOOLS_BIN, 'k6');
const TOXIPROXY_LOCAL = join(TOOLS_BIN, 'toxiproxy-server');
const TOXIPROXY_STAMP = join(TOOLS_BIN, 'toxiproxy-server.stamp');

const k6Matches = (bin) => (versionOf(bin, ['version']) || '').includes(`k6 ${K6_VERSION}`);

// Path of a k6 at the pinned version: .tools/bin first, then PATH; null if none.
export function findK6() {
  if (existsSync(K6_LOCAL) && k6Matches(K6_LOCAL)) return K6_LOCAL;
  const p = onPath('k6');
  return p && k6Matches(p) ? p : null;
}

// Path of the pack's toxiproxy build if it is current; null if it must be (re)built.
// A stock toxiproxy-server on PATH is never used: it lacks the pack's toxics (link, handshake).
export function findToxiproxy() {
  if (!existsSync(TOXIPROXY_LOCAL) || !existsSync(TOXIPROXY_STAMP)) return null;
  return readFileSync(TOXIPROXY_STAMP, 'utf8').trim() === toxiproxySourceHash() ? TOXIPROXY_LOCAL : null;
}

export function installTools({ log = console.log } = {}) {
  mkdirSync(TOOLS_BIN, { recursive: true });
  let k6 = findK6();
  if (k6) {
    log(
      k6 === K6_LOCAL ? `k6 ${K6_VERSION}: ${k6}` : `k6 ${K6_VERSION} on PATH: ${k6} (used as it is; no k6 is built)`,
    );
  } else {
    requireGo();
    log(
      `no k6 ${K6_VERSION} on PATH: building the stock k6 ${K6_VERSION} (AGPL-3.0, github.com/grafana/k6) from the Go module proxy into .tools/bin (about 2 minutes on a cold cache)...`,
    );
    go(['install', `go.k6.io/k6@${K6_VERSION}`], { env: { GOBIN: TOOLS_BIN, CGO_ENABLED: '0' } });
    if (!k6Matches(K6_LOCAL)) throw new ToolError(`built ${K6_LOCAL} but it does not report k6 ${K6_VERSION}`);
    k6 = K6_LOCAL;
    log(`k6 ${K6_VERSION}: ${k6}`);
  }
  let toxiproxy = findToxiproxy();
  if (toxiproxy) {
    log(`toxiproxy-server ${TOXIPROXY_VERSION} (+link and handshake toxics, patched): ${toxiproxy}`);
  } else {
    requireGo();
    log(
      `building toxiproxy-server ${TOXIPROXY_VERSION} (MIT, github.com/Shopify/toxiproxy) with the pack's link and handshake toxics and patches (tools/toxiproxy) from the Go module proxy into .tools/bin...`,
    );
    const dir = prepareToxiproxyBuild();
    try {
      go(
        [
          'build',
          '-mod=vendor',
          '-trimpath',
          '-ldflags',
          `-X github.com/Shopify/toxiproxy/v2.Version=${TOXIPROXY_VERSION}`,
          '-o',
          TOXIPROXY_LOCAL,
          '.',
        ],
        {
          cwd: dir,
          env: { CGO_ENABLED: '0' },
        },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    writeFileSync(TOXIPROXY_STAMP, toxiproxySourceHash() + '\n');
    toxiproxy = TOXIPROXY_LOCAL;
    log(`toxiproxy-server ${TOXIPROXY_VERSION} (+link and handshake toxics, patched): ${toxiproxy}`);
  }
  return { k6, toxiproxy };
}

// The tools' paths, installing them first when missing.
export function ensureTools(opts) {
  const k6 = findK6();
  const toxiproxy = findToxiproxy();
  return k6 && toxiproxy ? { k6, toxiproxy } : installTools(opts);
}
