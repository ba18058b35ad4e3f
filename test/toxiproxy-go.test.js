// The Go tests of the pack's toxiproxy build (tools/toxiproxy/*_test.go: the link
// toxic and its TCP model, the handshake toxic, and churn_test.go for
// tools/toxiproxy/patches), run with
// `go test` in a build directory prepared as `k6pack tools` prepares it
// (lib/tools.js prepareToxiproxyBuild: sources, go mod vendor, patches applied).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { prepareToxiproxyBuild, ToolError } from '../lib/tools.js';

const GO_TESTS = [
  // tcp.go: the link toxic's TCP model, with made-up times
  'TestSlowStartMatchesTheModel',
  'TestWindowDoublesEveryRoundTrip',
  'TestWindowGrowsOnlyAsFarAsItIsUsed',
  'TestIdleRestart',
  'TestFastRetransmitAndHeadOfLineBlocking',
  'TestTailLossWaitsForTheTimeout',
  'TestLossReducesTheWindow',
  'TestEveryByteArrivesInOrder',
  'TestLossModelRates',
  'TestSharedLinkSplitsTheRate',
  'TestHandshakeHold',
  // link.go: the toxic on a stub and on a live proxy
  'TestLinkHoldsTheHandshakeThenAddsLatency',
  'TestLinkTimerIsNeverEarly',
  'TestLinkEndOfStreamWaitsForHeldBytes',
  'TestLinkInterruptsAndUpdatesKeepEveryByte',
  'TestLinkRemovalLetsHeldBytesOut',
  'TestLinkSharedBandwidthSplitsItBetweenConnections',
  'TestLinkUpdateKeepsALiveConnection',
  'TestHandshakeDelayHoldsOnlyTheFirstChunk',
  'TestHandshakeUntilHoldsServerBytesUntilTheConnectionIsThatOld',
  'TestHandshakeThenLatencyAddsBothDelays',
  'TestHandshakeInterruptNeverDropsAChunk',
  'TestHandshakeAddedToALiveConnection',
  'TestProfileChangesUnderConnectionChurn',
  // events.go: blackouts, moves, dips and traces (issue 26)
  'TestBlackoutHoldsBytesUntilTheBackedOffRetransmission',
  'TestBlackoutsRepeatAndCollapseTheWindow',
  'TestHandshakeInTheDarkWaitsForTheSYNRetransmission',
  'TestDipLowersTheRateWhileItLasts',
  'TestTraceDeliversAtItsOpportunities',
  'TestLinkAttributesMakeTheSchedule',
  'TestMoveKillsEveryConnection',
  'TestSilentMoveLetsAWebSocketCloseGo',
];

// go test -v in a prepared build directory; the directory is removed afterwards.
async function goTest(t, { patchesDir, run } = {}) {
  const dir = prepareToxiproxyBuild({ dir: mkdtempSync(join(tmpdir(), 'k6pack-toxiproxy-go-')), patchesDir });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const args = [
    'test',
    '-mod=vendor',
    '-trimpath',
    '-count=1',
    '-timeout=120s',
    '-v',
    ...(run ? ['-run', run] : []),
    './...',
  ];
  return execa('go', args, { cwd: dir, reject: false, all: true, timeout: 180000, env: { CGO_ENABLED: '0' } });
}

test('go test passes on the patched build, every test having run', { timeout: 300000 }, async (t) => {
  const r = await goTest(t);
  assert.equal(r.exitCode, 0, `go test -mod=vendor ./... failed:\n${r.all}`);
  for (const name of GO_TESTS) assert.match(r.all, new RegExp(`--- PASS: ${name} `), `${name} did not run`);
});

test('the churn test fails on the unpatched module (so it tests the patches)', { timeout: 300000 }, async (t) => {
  const none = mkdtempSync(join(tmpdir(), 'k6pack-no-patches-'));
  t.after(() => rmSync(none, { recursive: true, force: true }));
  const r = await goTest(t, { patchesDir: none, run: 'TestProfileChangesUnderConnectionChurn' });
  assert.notEqual(r.exitCode, 0, `the churn test passed without the patches:\n${r.all}`);
  assert.match(r.all, /panic: runtime error: index out of range|hung for/);
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
