// Installs and finds the pinned tools: k6 v1.8.1 (stock) and the pack's own
// toxiproxy-server v2.5.0 build (tools/toxiproxy, with the pack's link and handshake toxics and
// tools/toxiproxy/patches applied to the vendored module).
// Both build from the Go module proxy once per machine, into a user cache shared by every
// project (toolsDir below): <cache>/k6-v1.8.1/k6 and <cache>/toxiproxy-v2.5.0-<sources' hash>/,
// never into the package, which may be read-only. A k6 v1.8.1 on PATH is used as it is.
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
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { K6_VERSION, TOXIPROXY_VERSION } from '../common/defaults.js';
import { rawSetting } from '../common/settings.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TOXIPROXY_SRC = join(ROOT, 'tools', 'toxiproxy');
const TOXIPROXY_PATCHES = join(TOXIPROXY_SRC, 'patches');
const TOXIPROXY_TESTDATA = join(TOXIPROXY_SRC, 'testdata');
const TOXIPROXY_MODULE = 'github.com/Shopify/toxiproxy/v2';

// Where the built tools go: K6PACK_TOOLS_DIR, else $XDG_CACHE_HOME/k6pack, else ~/.cache/k6pack
// (a relative XDG_CACHE_HOME is ignored, as the XDG spec says; a relative K6PACK_TOOLS_DIR is
// taken from the current directory).
export function toolsDir(env = process.env) {
  const given = rawSetting(env, 'K6PACK_TOOLS_DIR');
  if (given) return resolve(given);
  const xdg = rawSetting(env, 'XDG_CACHE_HOME');
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'k6pack');
}

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

// Source fingerprint of the toxiproxy build, so an edited toxic or patch triggers a rebuild:
// what `go build` reads (the Go tests and their testdata aside: the package ships without them,
// and a clone and an install of the same version share one build).
function toxiproxySourceHash() {
  const h = createHash('sha256');
  const { src, patches } = toxiproxySources();
  for (const f of [...src.filter((f) => !f.endsWith('_test.go')), ...patches])
    h.update(relative(TOXIPROXY_SRC, f)).update(readFileSync(f));
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

// Prepares a toxiproxy build directory (a new one under the tools' build/ unless `dir`
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
    const buildRoot = join(toolsDir(), 'build');
    mkdirSync(buildRoot, { recursive: true });
    dir = mkdtempSync(join(buildRoot, 'toxiproxy-'));
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

// Each tool in a folder of its own, named by its version (the pack's toxiproxy also by its
// sources' hash: two installs of the pack with other toxics do not rebuild each other's).
// k6's place in the cache (no sources to hash: findK6 runs before every k6 run).
function k6PathsIn(root) {
  const k6Dir = join(root, `k6-${K6_VERSION}`);
  return { k6Dir, k6: join(k6Dir, 'k6') };
}

export function toolPaths(env = process.env) {
  const root = toolsDir(env);
  const hash = toxiproxySourceHash();
  const toxiproxyDir = join(root, `toxiproxy-${TOXIPROXY_VERSION}-${hash}`);
  return {
    root,
    hash,
    ...k6PathsIn(root),
    toxiproxyDir,
    toxiproxy: join(toxiproxyDir, 'toxiproxy-server'),
    // Written last, after the binary is in place: the build is complete and from these sources.
    stamp: join(toxiproxyDir, 'toxiproxy-server.stamp'),
  };
}

const k6Matches = (bin) => (versionOf(bin, ['version']) || '').includes(`k6 ${K6_VERSION}`);

// Path of a k6 at the pinned version: PATH first, then the tools' cache; null if none.
export function findK6() {
  const p = onPath('k6');
  if (p && k6Matches(p)) return p;
  const { k6 } = k6PathsIn(toolsDir());
  return existsSync(k6) && k6Matches(k6) ? k6 : null;
}

// Path of the pack's toxiproxy build if it is current; null if it must be (re)built.
// A stock toxiproxy-server on PATH is never used: it lacks the pack's toxics (link, handshake).
// paths: toolPaths()'s, when the caller has them (the sources' hash reads every source).
export function findToxiproxy(paths = toolPaths()) {
  const { toxiproxy, stamp, hash } = paths;
  if (!existsSync(toxiproxy) || !existsSync(stamp)) return null;
  return readFileSync(stamp, 'utf8').trim() === hash ? toxiproxy : null;
}

// A folder of the cache, made with one line that says what to do when it cannot be.
function makeDir(dir) {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new ToolError(
      `cannot create ${dir} for the tools (${err.code || err.message}): set K6PACK_TOOLS_DIR to a folder you can write, or XDG_CACHE_HOME`,
    );
  }
}

// A file built beside its place, then renamed into it: a second build running at the same
// time (another project, a parallel test) never sees half a binary.
function buildInto(target, build) {
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    build(tmp);
    renameSync(tmp, target);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function installTools({ log = console.log } = {}) {
  const paths = toolPaths();
  let k6 = findK6();
  if (k6) {
    log(
      k6 === paths.k6 ? `k6 ${K6_VERSION}: ${k6}` : `k6 ${K6_VERSION} on PATH: ${k6} (used as it is; no k6 is built)`,
    );
  } else {
    requireGo();
    makeDir(paths.k6Dir);
    log(
      `no k6 ${K6_VERSION} on PATH: building the stock k6 ${K6_VERSION} (AGPL-3.0, github.com/grafana/k6) from the Go module proxy into ${paths.k6Dir} (about 2 minutes on a cold cache; once per machine)...`,
    );
    // go install writes <GOBIN>/k6: a GOBIN of this build's own, then the binary renamed into place.
    const gobin = `${paths.k6}.${process.pid}.build`;
    try {
      makeDir(gobin);
      go(['install', `go.k6.io/k6@${K6_VERSION}`], { cwd: gobin, env: { GOBIN: gobin, CGO_ENABLED: '0' } });
      renameSync(join(gobin, 'k6'), paths.k6);
    } finally {
      rmSync(gobin, { recursive: true, force: true });
    }
    if (!k6Matches(paths.k6)) throw new ToolError(`built ${paths.k6} but it does not report k6 ${K6_VERSION}`);
    k6 = paths.k6;
    log(`k6 ${K6_VERSION}: ${k6}`);
  }
  let toxiproxy = findToxiproxy(paths);
  if (toxiproxy) {
    log(`toxiproxy-server ${TOXIPROXY_VERSION} (+link and handshake toxics, patched): ${toxiproxy}`);
  } else {
    requireGo();
    makeDir(paths.toxiproxyDir);
    log(
      `building toxiproxy-server ${TOXIPROXY_VERSION} (MIT, github.com/Shopify/toxiproxy) with the pack's link and handshake toxics and patches (tools/toxiproxy) from the Go module proxy into ${paths.toxiproxyDir} (once per machine)...`,
    );
    const dir = prepareToxiproxyBuild();
    try {
      buildInto(paths.toxiproxy, (tmp) =>
        go(
          [
            'build',
            '-mod=vendor',
            '-trimpath',
            '-ldflags',
            `-X github.com/Shopify/toxiproxy/v2.Version=${TOXIPROXY_VERSION}`,
            '-o',
            tmp,
            '.',
          ],
          {
            cwd: dir,
            env: { CGO_ENABLED: '0' },
          },
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    buildInto(paths.stamp, (tmp) => writeFileSync(tmp, paths.hash + '\n'));
    toxiproxy = paths.toxiproxy;
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
