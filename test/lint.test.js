// The formatter and linters, in the fast tier: Prettier (.prettierrc.json) and ESLint
// (eslint.config.js) over the JavaScript, gofmt and go vet over tools/toxiproxy.
// Each fails with the files it names; `npx prettier --write .` or `gofmt -w` fixes format.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../lib/tools.js';

const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
function run(cmd, args, cwd = ROOT) {
  // A guard against a hang, not a speed bound: CPU work over some 400 files, which a busy
  // machine (phase 2 of the suite, load 9 on 2 cores) stretches several-fold.
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 600000 });
  return { code: r.status, out: `${r.stdout || ''}${r.stderr || ''}`.trim() };
}

test('Prettier: every JavaScript file is formatted', () => {
  const r = run(bin('prettier'), ['--check', '--log-level', 'warn', '**/*.{js,mjs,cjs}']);
  assert.equal(r.code, 0, `run \`npx prettier --write .\`:\n${r.out}`);
});

test('ESLint: no finding', () => {
  const r = run(bin('eslint'), ['--max-warnings', '0', '.']);
  assert.equal(r.code, 0, r.out);
});

test('gofmt and go vet: tools/toxiproxy', () => {
  const dir = join(ROOT, 'tools', 'toxiproxy');
  const fmt = run('gofmt', ['-l', '.'], dir);
  assert.equal(fmt.code, 0, fmt.out);
  assert.equal(fmt.out, '', `gofmt -w these files:\n${fmt.out}`);
  const vet = run('go', ['vet', '.'], dir);
  assert.equal(vet.code, 0, vet.out);
});
