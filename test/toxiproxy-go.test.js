// The Go tests of the pack's toxiproxy build (tools/toxiproxy/*_test.go: the link
// toxic and its TCP model, the handshake toxic, and churn_test.go for
// tools/toxiproxy/patches), run with
// `go test` in a build directory prepared as `k6pack tools` prepares it
// (lib/tools.js prepareToxiproxyBuild: sources, go mod vendor, patches applied).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goTest } from './helpers/toxiproxy-go.js';

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
  // radio.go: radio states (RRC), nat.go: a carrier NAT's idle timeout (issue 41)
  'TestLTEPromotionAndTail',
  'TestLTEDRXWaitIsBoundedAndDeterministic',
  'TestUMTSStateMachine',
  'TestEveryConnectionOfADeviceSharesItsRadio',
  'TestRadioLogIsListedWithTheToxics',
  'TestRadioLogKeepsTheNewestEvents',
  'TestANATDroppedSendStillWakesTheRadio',
  'TestNATMappingExpiresAfterTheIdleTimeout',
  'TestNATDropsAnIdleConnectionSilently',
  'TestNATPairsTheDirectionsOfAConnection',
];

test('go test passes on the patched build, every test having run', { timeout: 300000 }, async (t) => {
  const r = await goTest(t);
  assert.equal(r.exitCode, 0, `go test -mod=vendor ./... failed:\n${r.all}`);
  for (const name of GO_TESTS) assert.match(r.all, new RegExp(`--- PASS: ${name} `), `${name} did not run`);
});
