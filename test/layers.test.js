// No layer points the wrong way. Every relative import of every tracked JavaScript file
// is read (comments aside) and checked against the layers (docs/layout.md):
//   common/      pure: k6 and Node both load it; imports only common/
//   scenarios/   k6: common/ and scenarios/
//   servers/     the reference servers, each its own program: common/ and servers/
//   lib/         the CLI's library (Node): common/ and lib/, never a command module
//   lib/commands/ one file per command: what bin/k6pack.js registers
//   dev/         developer tooling shared by the tests and benches: no bench, test or command
//   bench/       the benches: anything above but test/ and the command modules
//   test/        the tests: anything but bench/ (a test of a bench runs it as a process)
// A fast-tier test: it reads files only.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../lib/tools.js';

const layerOf = (f) => {
  if (f.endsWith('.test.js')) return 'test'; // common/*.test.js too: tests beside their modules
  if (f.startsWith('lib/commands/')) return 'commands';
  if (f.startsWith('bin/')) return 'bin';
  const top = f.split('/')[0];
  return ['common', 'scenarios', 'servers', 'lib', 'dev', 'bench', 'test', 'deploy', 'examples', 'tools'].includes(top)
    ? top
    : 'root';
};

// What each layer may import (itself always).
const MAY = {
  common: [],
  scenarios: ['common'],
  servers: ['common'],
  lib: ['common'],
  commands: ['common', 'lib'],
  bin: ['common', 'lib', 'commands'],
  dev: ['common', 'lib', 'scenarios', 'servers'],
  bench: ['common', 'lib', 'scenarios', 'servers', 'dev'],
  deploy: ['common', 'lib', 'dev'],
  examples: ['common'],
  test: ['common', 'lib', 'commands', 'scenarios', 'servers', 'dev', 'deploy', 'bin'],
  root: ['common', 'lib'],
};

// -> ['file -> target', ...] for every relative import outside comments.
function importsOf(file) {
  const code = readFileSync(posix.join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const out = [];
  for (const m of code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]+)\1/g))
    out.push(posix.normalize(posix.join(posix.dirname(file), m[2])));
  return out;
}

test('no layer imports one above it or beside it that it may not (tests from benches, benches and dev/ from commands, lib/ from dev/ ...)', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.js', '*.mjs'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter((f) => !f.startsWith('node_modules/'));
  assert.ok(files.length > 200, `${files.length} files`);
  const wrong = [];
  let edges = 0;
  for (const f of files) {
    const from = layerOf(f);
    for (const target of importsOf(f)) {
      edges++;
      const to = layerOf(target);
      if (to !== from && !MAY[from].includes(to)) wrong.push(`${f} (${from}) imports ${target} (${to})`);
    }
  }
  assert.ok(edges > 1000, `${edges} imports read`);
  assert.deepEqual(wrong, []);
});

test('the check sees a wrong import', () => {
  // The same rule on made-up edges: a test importing a bench, a bench a command module.
  const allowed = (from, to) => to === from || MAY[from].includes(to);
  assert.equal(allowed(layerOf('test/x.test.js'), layerOf('bench/lib/common.js')), false);
  assert.equal(allowed(layerOf('bench/gate.js'), layerOf('lib/commands/k6pack-gate.js')), false);
  assert.equal(allowed(layerOf('common/model.js'), layerOf('lib/tools.js')), false);
  assert.equal(allowed(layerOf('lib/runner.js'), layerOf('dev/run-k6.js')), false);
  assert.equal(allowed(layerOf('bench/gate.js'), layerOf('lib/gate-defaults.js')), true);
});

// docs/layout.md "Names": no two source files share a name, but a pure module and its
// runtimes' sides (a lane family in common/lanes/ and its k6 client in scenarios/lib/),
// a scenario and its declaration, a bench and its k6 load (named after what it
// measures), and the files inside each reference server's own folder.
const SHARED_NAME_FOLDERS = new Set([
  'common',
  'common/lanes',
  'lib',
  'scenarios/lib',
  'scenarios',
  'scenarios/specs',
  'bench',
  'bench/k6',
]);

test('no two source files share a name, but where docs/layout.md says why', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.js', '*.mjs'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter((f) => !f.startsWith('servers/'));
  const byName = new Map();
  for (const f of files) byName.set(posix.basename(f), [...(byName.get(posix.basename(f)) || []), f]);
  const wrong = [...byName.values()]
    .filter((group) => group.length > 1)
    .filter((group) => !group.every((f) => SHARED_NAME_FOLDERS.has(posix.dirname(f))))
    .map((group) => group.join(', '));
  assert.deepEqual(wrong, []);
});
