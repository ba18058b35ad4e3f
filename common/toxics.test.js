// Moving a proxy's toxics to a profile's with as little disturbance as possible
// (common/toxics.js), on toxic lists as Toxiproxy reports them (every attribute
// filled in, stream by stream): nothing when they already match, updates in place when
// only numbers differ, else delete all and add in order; the HTTP request for each
// change, and the snapshot that puts toxics back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { networkToxics, profileToxics, withEpoch } from './profiles.js';
import { byStream, carries, changeRequest, sameSettings, snapshotOf, toxicChanges } from './toxics.js';

const net3g = { name: '3g', rttMs: 300, jitterMs: 0, downKbps: 1600, upKbps: 768 };
const lte = { name: 'lte', rttMs: 70, jitterMs: 0, downKbps: 12000, upKbps: 12000 };
const flaky = {
  name: 'flaky',
  toxics: [
    { name: 'flaky_reset_peer', type: 'reset_peer', stream: 'downstream', toxicity: 0.1, attributes: { timeout: 0 } },
  ],
};
// What Toxiproxy lists for toxics it was given: each with its type's other attributes filled in.
const listed = (toxics) => toxics.map((t) => ({ ...t, attributes: { ...t.attributes, extra_default: 0 } }));

test('byStream: upstream toxics first, then downstream, each in the order given', () => {
  const t = (name, stream) => ({ name, stream });
  assert.deepEqual(
    byStream([t('a', 'downstream'), t('b', 'upstream'), t('c', 'downstream'), t('d', 'upstream')]).map((x) => x.name),
    ['b', 'd', 'a', 'c'],
  );
  assert.deepEqual(byStream([]), []);
});

test('sameSettings: the wanted toxicity and every wanted attribute; what Toxiproxy adds is ignored', () => {
  const want = { toxicity: 1, attributes: { latency: 150, jitter: 0 } };
  assert.equal(sameSettings(want, { toxicity: 1, attributes: { latency: 150, jitter: 0, rate: 9 } }), true);
  assert.equal(sameSettings(want, { toxicity: 0.5, attributes: { latency: 150, jitter: 0 } }), false);
  assert.equal(sameSettings(want, { toxicity: 1, attributes: { latency: 35, jitter: 0 } }), false);
  assert.equal(sameSettings(want, { toxicity: 1, attributes: { latency: 150 } }), false);
  assert.equal(sameSettings(want, { toxicity: 1 }), false);
  assert.equal(sameSettings(want, undefined), false);
  assert.equal(sameSettings({ toxicity: 1 }, { toxicity: 1, attributes: { x: 1 } }), true);
});

test('a proxy that already carries the wanted toxics: no change at all', () => {
  const wanted = profileToxics(net3g, [flaky]);
  assert.deepEqual(toxicChanges(listed(byStream(wanted)), wanted), []);
  assert.deepEqual(toxicChanges([], []), []);
  assert.deepEqual(toxicChanges(undefined, []), []);
});

test('3g -> lte: the same toxics with other numbers, each updated in place', () => {
  const changes = toxicChanges(listed(profileToxics(net3g)), profileToxics(lte));
  assert.deepEqual(
    changes.map((c) => [c.op, c.toxic.name, c.toxic.attributes.latency, c.toxic.attributes.bitrate]),
    [
      ['update', 'link_upstream', 35, 12000000],
      ['update', 'link_downstream', 35, 12000000],
    ],
  );
  // Only the changed toxic when one stream's numbers differ.
  const slowerUp = profileToxics({ ...net3g, upKbps: 384 });
  assert.deepEqual(
    toxicChanges(listed(profileToxics(net3g)), slowerUp).map((c) => [c.op, c.toxic.name]),
    [['update', 'link_upstream']],
  );
  // A toxicity change is an update too.
  const half = [{ ...flaky.toxics[0], toxicity: 0.5 }];
  assert.deepEqual(toxicChanges(listed(flaky.toxics), half), [{ op: 'update', toxic: half[0] }]);
});

test('a fault added or removed, or another order: delete every toxic, then add the wanted in order', () => {
  const current = listed(profileToxics(net3g));
  const wanted = profileToxics(net3g, [flaky]);
  assert.deepEqual(
    toxicChanges(current, wanted).map((c) => [c.op, c.name || c.toxic.name]),
    [
      ['delete', 'link_upstream'],
      ['delete', 'link_downstream'],
      ['add', 'link_upstream'],
      ['add', 'link_downstream'],
      ['add', 'flaky_reset_peer'],
    ],
  );
  // The fault removed again.
  assert.deepEqual(
    toxicChanges(listed(byStream(wanted)), profileToxics(net3g)).map((c) => c.op),
    ['delete', 'delete', 'delete', 'add', 'add'],
  );
  // lan has no toxics: everything goes.
  assert.deepEqual(toxicChanges(current, []), [
    { op: 'delete', name: 'link_upstream' },
    { op: 'delete', name: 'link_downstream' },
  ]);
  // Two toxics of one stream in the other order.
  const a = { name: 'a', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 1 } };
  const b = { name: 'b', type: 'bandwidth', stream: 'downstream', toxicity: 1, attributes: { rate: 1 } };
  assert.deepEqual(
    toxicChanges([b, a], [a, b]).map((c) => [c.op, c.name || c.toxic.name]),
    [
      ['delete', 'b'],
      ['delete', 'a'],
      ['add', 'a'],
      ['add', 'b'],
    ],
  );
  // Same name, another type: not the same slot.
  assert.deepEqual(
    toxicChanges([{ ...a, type: 'slicer' }], [a]).map((c) => c.op),
    ['delete', 'add'],
  );
});

test('carries: every named proxy present and already carrying the wanted toxics', () => {
  const wanted = profileToxics(lte);
  const proxies = {
    graphql: { toxics: listed(wanted) },
    grpc: { toxics: listed(wanted) },
    other: { toxics: [] },
  };
  assert.equal(carries(proxies, ['graphql', 'grpc'], wanted), true);
  assert.equal(carries(proxies, ['graphql', 'other'], wanted), false);
  assert.equal(carries(proxies, ['graphql', 'missing'], wanted), false);
  assert.equal(carries(proxies, [], wanted), true);
  assert.equal(carries(proxies, ['other'], []), true);
});

test('changeRequest: the method, path (names escaped) and body of each change', () => {
  const toxic = flaky.toxics[0];
  assert.deepEqual(changeRequest('graphql', { op: 'update', toxic }), [
    'POST',
    '/proxies/graphql/toxics/flaky_reset_peer',
    { attributes: { timeout: 0 }, toxicity: 0.1 },
  ]);
  assert.deepEqual(changeRequest('my proxy', { op: 'delete', name: 'a/b' }), [
    'DELETE',
    '/proxies/my%20proxy/toxics/a%2Fb',
    undefined,
  ]);
  assert.deepEqual(changeRequest('grpc', { op: 'add', toxic }), ['POST', '/proxies/grpc/toxics', toxic]);
});

test('snapshotOf: the named proxies that exist, their toxics in add order and only their own fields', () => {
  const wanted = profileToxics(net3g, [flaky]);
  const proxies = { graphql: { toxics: listed(wanted) }, grpc: { toxics: [] } };
  const snap = snapshotOf(proxies, ['graphql', 'grpc', 'missing']);
  assert.deepEqual(Object.keys(snap), ['graphql', 'grpc']);
  assert.deepEqual(snap.grpc, []);
  assert.deepEqual(
    snap.graphql.map((t) => t.name),
    ['link_upstream', 'link_downstream', 'flaky_reset_peer'],
  );
  assert.deepEqual(Object.keys(snap.graphql[2]), ['name', 'type', 'stream', 'toxicity', 'attributes']);
  // Put back, the snapshot is what the proxy carried: no change needed.
  assert.deepEqual(toxicChanges(proxies.graphql.toxics, snap.graphql), []);
  // A copy: changing the snapshot leaves the proxy's list alone.
  snap.graphql[0].attributes.latency = 1;
  assert.equal(proxies.graphql.toxics[0].attributes.latency, 150);
  assert.equal(networkToxics(net3g)[0].attributes.latency, 150);
});

test('sameSettings: a trace compared element by element; null (an empty Go slice) and [] are the same', () => {
  const want = (trace) => ({ toxicity: 1, attributes: { epoch: 5, trace } });
  const have = (trace) => ({ toxicity: 1, attributes: { epoch: 5, trace, bitrate: 0 } });
  assert.equal(sameSettings(want([1, 2, 3]), have([1, 2, 3])), true);
  assert.equal(sameSettings(want([1, 2, 3]), have([1, 2, 4])), false);
  assert.equal(sameSettings(want([1, 2, 3]), have([1, 2])), false);
  assert.equal(sameSettings(want([]), have(null)), true);
  assert.equal(sameSettings(want(null), have([])), true);
  assert.equal(sameSettings(want([]), have([])), true);
  assert.equal(sameSettings(want([1]), have(null)), false);
  assert.equal(sameSettings(want([]), have(0)), false);
  assert.equal(sameSettings(want([1]), have(1)), false);
});

test('lte+handover <-> lte: an update in place that sets (and resets) every event attribute and the trace', () => {
  const timed = withEpoch(profileToxics({ ...lte, events: { kind: 'blackout', lengthMs: 1500, periodS: 20 } }), 1000);
  // Toxiproxy lists an empty trace as null.
  const listedNull = (toxics) =>
    listed(toxics).map((t) => ({
      ...t,
      attributes: { ...t.attributes, trace: t.attributes.trace.length ? t.attributes.trace : null },
    }));
  const on = toxicChanges(listedNull(profileToxics(lte)), timed);
  assert.deepEqual(
    on.map((c) => [c.op, c.toxic.name, c.toxic.attributes.event, c.toxic.attributes.epoch]),
    [
      ['update', 'link_upstream', 1, 1000],
      ['update', 'link_downstream', 1, 1000],
    ],
  );
  const off = toxicChanges(listedNull(timed), profileToxics(lte));
  assert.deepEqual(
    off.map((c) => [c.op, c.toxic.attributes.event, c.toxic.attributes.epoch, c.toxic.attributes.event_length]),
    [
      ['update', 0, 0, 0],
      ['update', 0, 0, 0],
    ],
  );
  // Applied again at the same epoch: nothing to do, the null traces included.
  assert.deepEqual(toxicChanges(listedNull(timed), timed), []);
  // A trace on, then off.
  const traced = profileToxics({ ...lte, trace: { label: 't', down: [1, 2, 9], up: [4, 8] } });
  assert.deepEqual(
    toxicChanges(listedNull(profileToxics(lte)), traced).map((c) => c.toxic.attributes.trace),
    [
      [4, 8],
      [1, 2, 9],
    ],
  );
  assert.deepEqual(toxicChanges(listed(traced), traced), []);
  assert.deepEqual(
    toxicChanges(listed(traced), profileToxics(lte)).map((c) => c.toxic.attributes.trace),
    [[], []],
  );
  // A snapshot copies the trace: changing it never changes what Toxiproxy listed.
  const proxies = { p: { toxics: listed(traced) } };
  const snap = snapshotOf(proxies, ['p']);
  snap.p[0].attributes.trace.push(99);
  assert.deepEqual(proxies.p.toxics[0].attributes.trace, [4, 8]);
});

test("a link toxic's radio_log (tools/toxiproxy/radio_log.go) is read-only: the snapshot leaves it out, and it is no difference", () => {
  const toxic = {
    name: 'link_up',
    type: 'link',
    stream: 'upstream',
    toxicity: 1,
    attributes: { radio: 1, radio_device: 1, uplink: 1 },
  };
  const listedWithLog = [
    {
      ...toxic,
      attributes: {
        ...toxic.attributes,
        radio_log: { radio: 'lte', events: [[1, 'promotion-start', 'idle', 'connected']] },
      },
    },
  ];
  assert.deepEqual(toxicChanges(listedWithLog, [toxic]), []);
  const snap = snapshotOf({ p: { toxics: listedWithLog } }, ['p']);
  assert.deepEqual(snap.p[0].attributes, { radio: 1, radio_device: 1, uplink: 1 });
});
