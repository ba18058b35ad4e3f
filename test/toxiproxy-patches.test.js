// The pack's patches to toxiproxy v2.5.0 (tools/toxiproxy/patches) and their build: the
// churn test fails without them (so it tests them), a patch that does not apply and a
// machine without git each get one line. No timing: the suite's second phase
// (test/toxiproxy-go.test.js runs the Go tests themselves, alone).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { prepareToxiproxyBuild, ToolError } from '../lib/tools.js';
import { goTest } from './helpers/toxiproxy-go.js';

test('the churn test fails on the unpatched module (so it tests the patches)', { timeout: 300000 }, async (t) => {
  const none = mkdtempSync(join(tmpdir(), 'k6pack-no-patches-'));
  t.after(() => rmSync(none, { recursive: true, force: true }));
  // The race needs the churn to meet it within the test's 3 s, which a busy machine (phase 2:
  // load 9 on 2 cores) may thin out ("too little churn"): such a run shows nothing either
  // way, and the test runs again, up to three times. The bug shows as a panic, a hang, or
  // a link whose stubs no longer match its chain.
  const BUG = /panic: runtime error: index out of range|hung for|stubs for a chain of|output is not stub/;
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const r = await goTest(t, { patchesDir: none, run: 'TestProfileChangesUnderConnectionChurn' });
    runs.push(r);
    if (r.exitCode !== 0 && BUG.test(r.all)) return;
  }
  assert.fail(`the churn test showed no bug without the patches in 3 runs; the last:\n${runs.at(-1).all}`);
});

test('a patch that does not apply fails with one line naming it', { timeout: 120000 }, (t) => {
  const patches = mkdtempSync(join(tmpdir(), 'k6pack-bad-patch-'));
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-toxiproxy-go-'));
  t.after(() => {
    rmSync(patches, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });
  const bad = join(patches, '0001-bad.patch');
  writeFileSync(
    bad,
    'A patch against lines link.go does not have.\n\n--- a/link.go\n+++ b/link.go\n@@ -1,2 +1,2 @@\n-package nothere\n+package toxiproxy\n \n',
  );
  assert.throws(
    () => prepareToxiproxyBuild({ dir, patchesDir: patches }),
    (err) => {
      assert.ok(err instanceof ToolError, err.stack);
      assert.ok(!err.message.includes('\n'), `not one line: ${err.message}`);
      assert.match(
        err.message,
        new RegExp(
          `^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not apply to toxiproxy v2\\.5\\.0: .*link\\.go`,
        ),
      );
      return true;
    },
  );
});

test('without git the build says in one line what to install', (t) => {
  // A PATH with go on it and nothing else.
  const bin = mkdtempSync(join(tmpdir(), 'k6pack-go-only-'));
  symlinkSync(join(execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim(), 'bin', 'go'), join(bin, 'go'));
  const path = process.env.PATH;
  process.env.PATH = bin;
  t.after(() => {
    process.env.PATH = path;
    rmSync(bin, { recursive: true, force: true });
  });
  assert.throws(
    () => prepareToxiproxyBuild({ dir: join(bin, 'build') }),
    (err) => {
      assert.ok(err instanceof ToolError, err.stack);
      assert.match(
        err.message,
        /^git is needed to apply tools\/toxiproxy\/patches .*: install git .* and run 'npx k6pack tools' again\.$/,
      );
      return true;
    },
  );
});
