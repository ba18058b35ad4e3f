// The stack's hold (common/hold.js), without a stack: the marker proxy a holder
// creates and the holder read back from GET /proxies (an unreadable marker still holds),
// how long a holder has been silent and when that makes its hold stale, and the line a
// refused command prints.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BEAT_SECONDS,
  describeHolder,
  HOLD_PROXY,
  holderOf,
  holdProxy,
  isStale,
  newToken,
  refusal,
  silentSeconds,
  STALE_SECONDS,
} from './hold.js';

const record = {
  kind: 'k6 run',
  what: 'ws-vs-http',
  profile: '3g',
  pid: 4242,
  host: 'vm',
  startedAt: '2026-11-26T10:52:13.123Z',
  beatAt: '2026-11-26T10:53:00.000Z',
  token: 'abc-123',
};
const UNKNOWN = { kind: 'unknown holder', token: null, beatAt: null };

test('the marker: a disabled proxy named k6pack_hold whose upstream carries the holder', () => {
  assert.equal(HOLD_PROXY, 'k6pack_hold');
  assert.ok(BEAT_SECONDS < STALE_SECONDS, 'several beats fit in the time a hold takes to go stale');
  const p = holdProxy(record);
  assert.deepEqual(p, {
    name: 'k6pack_hold',
    listen: '127.0.0.1:0',
    upstream: `k6pack-hold:${JSON.stringify(record)}`,
    enabled: false,
  });
  // What GET /proxies lists for it reads back as the same holder.
  assert.deepEqual(holderOf({ other: { upstream: 'x' }, [HOLD_PROXY]: p }), record);
});

test('holderOf: null for a free stack, an unknown holder for a marker it cannot read', () => {
  assert.equal(holderOf({}), null);
  assert.equal(holderOf({ graphql: { upstream: '127.0.0.1:4000' } }), null);
  assert.equal(holderOf(null), null);
  assert.equal(holderOf(undefined), null);
  assert.deepEqual(holderOf({ [HOLD_PROXY]: { upstream: '127.0.0.1:1' } }), UNKNOWN);
  assert.deepEqual(holderOf({ [HOLD_PROXY]: {} }), UNKNOWN);
  assert.deepEqual(holderOf({ [HOLD_PROXY]: { upstream: 'k6pack-hold:{not json' } }), UNKNOWN);
});

test('silentSeconds and isStale: from the last beat; a holder without one is silent for ever', () => {
  const beat = Date.parse(record.beatAt);
  assert.equal(silentSeconds(record, beat + 12500), 12.5);
  // A clock behind the beat's: never negative.
  assert.equal(silentSeconds(record, beat - 5000), 0);
  assert.equal(silentSeconds(UNKNOWN, beat), Infinity);
  assert.equal(silentSeconds({ ...record, beatAt: 'yesterday' }, beat), Infinity);
  assert.equal(silentSeconds(null, beat), Infinity);
  assert.equal(isStale(record, beat + STALE_SECONDS * 1000), false, 'exactly STALE_SECONDS: not yet');
  assert.equal(isStale(record, beat + STALE_SECONDS * 1000 + 1), true);
  assert.equal(isStale(record, beat + 11000, 10), true, 'its own limit');
  assert.equal(isStale(UNKNOWN, beat), true, 'an unknown holder never beats: stale');
});

test('describeHolder: what, under which profile, who and since when (UTC)', () => {
  assert.equal(describeHolder(record), 'k6 run ws-vs-http under 3g (pid 4242 on vm, since 10:52:13 UTC)');
  assert.equal(
    describeHolder({ kind: 'k6pack gate', startedAt: '2026-11-26T08:00:05Z' }),
    'k6pack gate (since 08:00:05 UTC)',
  );
  assert.equal(describeHolder(UNKNOWN), 'unknown holder (since ? UTC)');
  assert.equal(describeHolder(null), 'nobody');
});

test('refusal: one line naming the holder, with or without --wait', () => {
  assert.equal(
    refusal(record),
    'the stack is in use by k6 run ws-vs-http under 3g (pid 4242 on vm, since 10:52:13 UTC): its network is left as it is. Wait for it to end (or add --wait), or start a second stack on other ports (set the port variables, e.g. PROXY_GRAPHQL_PORT, TOXIPROXY_PORT: see docs/stack.md)',
  );
  const plain = refusal(record, { waitFlag: false });
  assert.ok(!plain.includes('--wait'), plain);
  assert.match(plain, /^the stack is in use by k6 run .*Wait for it to end, or start a second stack/);
  assert.ok(!plain.includes('\n'));
});

test('newToken: a fresh token each time, time then random part', () => {
  const tokens = new Set(Array.from({ length: 50 }, newToken));
  assert.equal(tokens.size, 50);
  for (const t of tokens) assert.match(t, /^[0-9a-z]+-[0-9a-z]{1,8}$/);
});
