// Profiles -> toxics (pure), spec parsing, and the one-line messages for bad input.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadProfile, ProfileError } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import {
  EVENT_CODES,
  epochOf,
  isTimed,
  networkToxics,
  parseSpec,
  profileToxics,
  resolveProfile,
  validateNetworkProfile,
  withEpoch,
} from './profiles.js';
import { RADIO_CODES } from './mobile-modifiers.js';

const byName = (toxics) => Object.fromEntries(toxics.map((t) => [t.name, t]));

test('3g: one link toxic per direction with every attribute: handshake R up and 1.5 R down, R/2 each way, the rates in bit/s, TCP on', () => {
  const t = byName(loadProfile('3g').toxics); // 300 ms, 1600 kbit/s down, 768 up
  const tcp = {
    rtt: 300,
    shared: 0,
    iw: 14600,
    mss: 1460,
    rto_min: 200,
    loss: 0,
    burst_p: 0,
    burst_r: 0,
    burst_loss: 0,
    // No events, no trace: every one of them set, to 0 and [] (an update in place resets them).
    epoch: 0,
    event: 0,
    event_offset: 0,
    event_period: 0,
    event_length: 0,
    dip_share: 0,
    // No radio, no NAT: set to 0 likewise.
    radio: 0,
    radio_device: 0,
    nat_idle: 0,
  };
  assert.deepEqual(t.link_upstream, {
    name: 'link_upstream',
    type: 'link',
    stream: 'upstream',
    toxicity: 1,
    attributes: { handshake: 300, latency: 150, jitter: 0, bitrate: 768000, ...tcp, uplink: 1, trace: [] },
  });
  assert.deepEqual(t.link_downstream, {
    name: 'link_downstream',
    type: 'link',
    stream: 'downstream',
    toxicity: 1,
    attributes: { handshake: 450, latency: 150, jitter: 0, bitrate: 1600000, ...tcp, uplink: 0, trace: [] },
  });
  assert.equal(Object.keys(t).length, 2);
});

test('a fractional or odd RTT is split into whole milliseconds that add up', () => {
  const t = byName(loadProfile('devtools-slow-4g').toxics); // 562.5 ms
  const [up, down] = [t.link_upstream.attributes, t.link_downstream.attributes];
  assert.equal(up.latency + down.latency, 563);
  assert.equal(up.rtt, 563);
  assert.equal(up.handshake, 563);
  assert.equal(down.handshake, 563 + up.latency);
  const j = byName(networkToxics({ rttMs: 101, jitterMs: 11, downKbps: null, upKbps: 9 }));
  assert.deepEqual(
    [
      j.link_upstream.attributes.latency,
      j.link_upstream.attributes.jitter,
      j.link_downstream.attributes.latency,
      j.link_downstream.attributes.jitter,
    ],
    [50, 5, 51, 6],
  );
  assert.equal(j.link_downstream.attributes.bitrate, 0, 'null bandwidth means no limit');
  assert.equal(j.link_upstream.attributes.bitrate, 9000);
});

test('modifiers change the network: +ideal turns slow start off, +loss1/+loss3/+burst set the loss (ppm), +shared one bandwidth per proxy', () => {
  const attrs = (spec) => byName(loadProfile(spec).toxics).link_downstream.attributes;
  assert.equal(attrs('3g').iw, 14600);
  assert.equal(attrs('3g+ideal').iw, 0);
  assert.equal(attrs('3g+loss1').loss, 10000);
  assert.equal(attrs('3g+loss3').loss, 30000);
  assert.deepEqual(
    [attrs('3g+burst').loss, attrs('3g+burst').burst_p, attrs('3g+burst').burst_r, attrs('3g+burst').burst_loss],
    [0, 3367, 333333, 1000000],
  );
  assert.equal(attrs('3g+shared').shared, 1);
  // Everything else stays the network's, so 3g -> 3g+loss3 is an update of the same two toxics.
  const names = (spec) => loadProfile(spec).toxics.map((t) => `${t.name}:${t.type}`);
  for (const m of ['ideal', 'loss1', 'loss3', 'burst', 'shared']) {
    assert.deepEqual(names(`3g+${m}`), names('3g'), m);
    const { iw, loss, burst_p, burst_r, burst_loss, shared, ...rest } = attrs(`3g+${m}`);
    const { iw: _1, loss: _2, burst_p: _3, burst_r: _4, burst_loss: _5, shared: _6, ...base } = attrs('3g');
    assert.deepEqual(rest, base, m);
  }
  const p = loadProfile('3g+loss3+flaky+ideal');
  assert.deepEqual(
    [p.name, p.modifiers.map((m) => m.name), p.faults.map((f) => f.name)],
    ['3g+loss3+flaky+ideal', ['loss3', 'ideal'], ['flaky']],
  );
  assert.equal(p.network.slowStart, false);
  assert.deepEqual(p.network.loss, { rate: 0.03 });
  assert.throws(() => loadProfile('3g+loss1+burst'), {
    name: 'ProfileError',
    message: 'modifiers "loss1" and "burst" both set loss: use one of them',
  });
  // A modifier on lan: loss on an unshaped link.
  assert.equal(byName(loadProfile('lan+loss1').toxics).link_upstream.attributes.loss, 10000);
  assert.deepEqual(loadProfile('lan+ideal').toxics, []);
});

test('a network file of your own may set the same TCP fields', () => {
  const obj = {
    rttMs: 120,
    jitterMs: 0,
    downKbps: 4000,
    upKbps: 1000,
    source: 'our office',
    slowStart: true,
    initialWindow: 29200,
    loss: { rate: 0.002, burst: { p: 0.01, r: 0.5, rate: 0.5 } },
    sharedBandwidth: true,
  };
  const t = byName(networkToxics(obj));
  assert.deepEqual(
    ['iw', 'loss', 'burst_p', 'burst_r', 'burst_loss', 'shared'].map((k) => t.link_upstream.attributes[k]),
    [29200, 2000, 10000, 500000, 500000, 1],
  );
  const bad = [
    [{ ...obj, slowStart: 'yes' }, /slowStart must be true or false/],
    [{ ...obj, initialWindow: 100 }, /initialWindow must be whole bytes from 1460/],
    [{ ...obj, loss: 0.01 }, /loss must be an object \{ rate, burst\? \}/],
    [{ ...obj, loss: { rate: 0.9 } }, /loss\.rate must be a number from 0 to 0\.5/],
    [{ ...obj, loss: { rate: 0, burst: { p: 0.5, r: 0, rate: 1 } } }, /loss\.burst\.r must be a number above 0/],
    [{ ...obj, loss: { rate: 0, burst: { p: 0.9, r: 0.1, rate: 1 } } }, /the bursts lose 90\.0 % of segments in all/],
    [{ ...obj, loss: { rate: 0.01, drop: 1 } }, /loss: unknown field "drop" \(allowed: rate, burst\)/],
    [{ ...obj, sharedBandwidth: 1 }, /sharedBandwidth must be true or false/],
  ];
  for (const [o, message] of bad)
    assert.throws(
      () => validateNetworkProfile(o, null, 'mine.json', { user: true }),
      (e) => e instanceof ProfileError && message.test(e.message) && e.message.startsWith('mine.json: '),
    );
});

test('toxics are ordered link, other faults, whatever the spec order', () => {
  const p = loadProfile('3g+flaky+jitter');
  const order = (stream) => p.toxics.filter((t) => t.stream === stream).map((t) => t.name);
  assert.deepEqual(order('upstream'), ['link_upstream', 'jitter_upstream']);
  assert.deepEqual(order('downstream'), ['link_downstream', 'jitter_downstream', 'flaky_reset_peer']);
  assert.deepEqual(loadProfile('3g+jitter+flaky').toxics, p.toxics);
  assert.equal(p.name, '3g+flaky+jitter');
});

test('spec parsing', () => {
  assert.deepEqual(parseSpec('3g'), { network: '3g', file: false, extras: [] });
  assert.deepEqual(parseSpec(' lte+loss1+flaky+jitter '), {
    network: 'lte',
    file: false,
    extras: ['loss1', 'flaky', 'jitter'],
  });
  assert.throws(() => parseSpec(''), /profile spec is empty/);
  assert.throws(() => parseSpec('3g++flaky'), /"3g\+\+flaky" is malformed/);
  assert.throws(() => parseSpec('3G'), /malformed/);
  assert.throws(() => parseSpec('3g+flaky+flaky'), /names "flaky" twice/);
});

test('unknown profiles: one line naming the known ones', () => {
  for (const [spec, what] of [
    ['4x', 'unknown network profile "4x"'],
    ['3g+wobbly', 'unknown modifier or fault profile "wobbly"'],
    ['flaky', 'unknown network profile "flaky"'],
  ]) {
    assert.throws(
      () => loadProfile(spec),
      (e) => {
        assert.ok(e instanceof ProfileError && e instanceof Error);
        assert.ok(e.message.startsWith(what), e.message);
        assert.match(
          e.message,
          /network profiles are lan, .*3g.*; modifiers .* are ideal, loss1, loss3, burst, shared, handover, move, move-reset, dip, rrc, and \+nat=SECONDS; fault profiles .* are flaky, /,
        );
        assert.doesNotMatch(e.message, /\n/);
        return true;
      },
    );
  }
});

// resolveProfile over the real files, with one file replaced.
function withFile(path, text) {
  return (p) => (p === path ? text : readFileSync(join(ROOT, p), 'utf8'));
}
const real3g = JSON.parse(readFileSync(join(ROOT, 'profiles/network/3g.json'), 'utf8'));
const realFlaky = JSON.parse(readFileSync(join(ROOT, 'profiles/faults/flaky.json'), 'utf8'));

test('a malformed network profile file: the message names the file and the field', () => {
  const cases = [
    [{ ...real3g, rttMs: -1 }, 'profiles/network/3g.json: rttMs must be a number >= 0'],
    [{ ...real3g, rttMs: '300' }, 'profiles/network/3g.json: rttMs must be a number >= 0'],
    [{ ...real3g, jitterMs: 400 }, 'profiles/network/3g.json: jitterMs must be a number between 0 and rttMs (300)'],
    [{ ...real3g, downKbps: 0 }, 'profiles/network/3g.json: downKbps must be null (no limit) or a number >= 8'],
    [{ ...real3g, name: '3G' }, 'profiles/network/3g.json: name must be "3g" (the file\'s name)'],
    [
      { ...real3g, source: '' },
      'profiles/network/3g.json: source must be a non-empty string saying where the numbers come from',
    ],
    [
      { ...real3g, rtt: 300 },
      'profiles/network/3g.json: unknown field "rtt" (allowed: name, description, source, rttMs, jitterMs, downKbps, upKbps, slowStart, initialWindow, loss, sharedBandwidth, events, radio, natIdleS)',
    ],
    [[1], 'profiles/network/3g.json: must be a JSON object'],
  ];
  for (const [obj, message] of cases) {
    assert.throws(() => resolveProfile('3g', withFile('profiles/network/3g.json', JSON.stringify(obj))), {
      name: 'ProfileError',
      message,
    });
  }
  assert.throws(() => resolveProfile('3g', withFile('profiles/network/3g.json', '{"name": "3g",')), {
    message: /^profiles\/network\/3g\.json: not valid JSON \(.+\)$/,
  });
});

test('a malformed fault profile file: the message names the file and the toxic field', () => {
  const toxic = realFlaky.toxics[0];
  const cases = [
    [{ ...realFlaky, toxics: [] }, /flaky\.json: toxics must be a non-empty array/],
    [
      { ...realFlaky, toxics: [{ ...toxic, toxicity: 1.5 }] },
      /^profiles\/faults\/flaky\.json: toxics\[0\]\.toxicity must be a number between 0 and 1$/,
    ],
    [{ ...realFlaky, toxics: [{ ...toxic, type: 'explode' }] }, /toxics\[0\]\.type must be one of latency, bandwidth/],
    [
      { ...realFlaky, toxics: [{ ...toxic, stream: 'both' }] },
      /toxics\[0\]\.stream must be "upstream" or "downstream"/,
    ],
    [
      { ...realFlaky, toxics: [{ ...toxic, attributes: { timeout: 1.5 } }] },
      /toxics\[0\]\.attributes\.timeout must be a whole number >= 0/,
    ],
    [{ ...realFlaky, toxics: [toxic, toxic] }, /toxics\[1\]\.name "flaky_reset_peer" is used twice/],
    [
      { ...realFlaky, toxics: [{ ...toxic, name: 'link_upstream' }] },
      /fault "flaky" defines toxic "link_upstream", which another part of the profile already uses/,
    ],
  ];
  for (const [obj, message] of cases) {
    assert.throws(() => resolveProfile('3g+flaky', withFile('profiles/faults/flaky.json', JSON.stringify(obj))), {
      name: 'ProfileError',
      message,
    });
  }
});

test('a malformed modifier file: the message names the file and the field', () => {
  const realLoss1 = JSON.parse(readFileSync(join(ROOT, 'profiles/modifiers/loss1.json'), 'utf8'));
  const cases = [
    [
      { ...realLoss1, network: {} },
      /^profiles\/modifiers\/loss1\.json: network must set at least one of slowStart, initialWindow, loss, sharedBandwidth, events, radio, natIdleS$/,
    ],
    [
      { ...realLoss1, network: { rttMs: 10 } },
      /^profiles\/modifiers\/loss1\.json: network: unknown field "rttMs" \(allowed: slowStart, initialWindow, loss, sharedBandwidth, events, radio, natIdleS\)$/,
    ],
    [
      { ...realLoss1, network: { loss: { rate: 2 } } },
      /^profiles\/modifiers\/loss1\.json: network: loss\.rate must be a number from 0 to 0\.5/,
    ],
    [{ ...realLoss1, source: '' }, /loss1\.json: source must be a non-empty string/],
    [{ ...realLoss1, name: 'loss2' }, /loss1\.json: name must be "loss1"/],
  ];
  for (const [obj, message] of cases) {
    assert.throws(() => resolveProfile('3g+loss1', withFile('profiles/modifiers/loss1.json', JSON.stringify(obj))), {
      name: 'ProfileError',
      message,
    });
  }
});

test('profileToxics copies: changing the result never changes the profile', () => {
  const fault = {
    name: 'f',
    toxics: [{ name: 'x', type: 'timeout', stream: 'upstream', toxicity: 1, attributes: { timeout: 1 } }],
  };
  const out = profileToxics({ rttMs: 0, jitterMs: 0, downKbps: null, upKbps: null }, [fault]);
  out[0].attributes.timeout = 99;
  assert.equal(fault.toxics[0].attributes.timeout, 1);
});

// ---- unstable links (issue 26): events, the epoch ----

const eventsOf = (toxic) => {
  const { epoch, event, event_offset, event_period, event_length, dip_share } = toxic.attributes;
  return { epoch, event, event_offset, event_period, event_length, dip_share };
};

test('+handover, +move, +move-reset, +dip: the same event attributes on both link toxics, the rest the network own', () => {
  const cases = [
    ['lte+handover', { event: 1, event_offset: 8000, event_period: 20000, event_length: 1500, dip_share: 0 }],
    ['lte+move', { event: 2, event_offset: 8000, event_period: 30000, event_length: 1500, dip_share: 0 }],
    ['lte+move-reset', { event: 3, event_offset: 8000, event_period: 30000, event_length: 1500, dip_share: 0 }],
    ['3g+dip', { event: 4, event_offset: 8000, event_period: 30000, event_length: 5000, dip_share: 100000 }],
  ];
  for (const [spec, want] of cases) {
    const p = loadProfile(spec);
    const base = loadProfile(spec.split('+')[0]);
    assert.deepEqual(
      p.toxics.map((t) => t.name),
      base.toxics.map((t) => t.name),
      `${spec}: the same two toxics, so a switch is an update in place`,
    );
    for (const [i, t] of p.toxics.entries()) {
      assert.deepEqual(eventsOf(t), { epoch: 0, ...want }, `${spec} ${t.name}`);
      assert.deepEqual(t.attributes.trace, []);
      const { epoch, event, event_offset, event_period, event_length, dip_share, ...rest } = t.attributes;
      const {
        epoch: _e,
        event: _1,
        event_offset: _2,
        event_period: _3,
        event_length: _4,
        dip_share: _5,
        ...own
      } = base.toxics[i].attributes;
      assert.deepEqual(rest, own, `${spec}: ${t.name} otherwise the network's`);
    }
    assert.ok(isTimed(p));
    assert.equal(isTimed(base), false);
  }
  // On lan: link toxics, where lan alone has none.
  const lan = loadProfile('lan+handover');
  assert.deepEqual(
    lan.toxics.map((t) => [t.name, t.attributes.rtt, t.attributes.bitrate, t.attributes.iw, t.attributes.event]),
    [
      ['link_upstream', 0, 0, 0, 1],
      ['link_downstream', 0, 0, 0, 1],
    ],
  );
  // Two event modifiers clash: one events field.
  assert.throws(() => loadProfile('lte+handover+dip'), {
    name: 'ProfileError',
    message: 'modifiers "handover" and "dip" both set events: use one of them',
  });
  // With other modifiers and faults they combine.
  assert.equal(byName(loadProfile('lte+loss1+handover+flaky').toxics).link_upstream.attributes.loss, 10000);
});

test('withEpoch: the epoch on the timed link toxics only, as copies; epochOf reads it back', () => {
  const p = loadProfile('lte+handover+flaky');
  const at = withEpoch(p.toxics, 1767225600000.4);
  assert.deepEqual(
    at.filter((t) => t.type === 'link').map((t) => t.attributes.epoch),
    [1767225600000, 1767225600000],
  );
  assert.equal(epochOf(at), 1767225600000);
  assert.equal(epochOf(p.toxics), 0);
  assert.equal(p.toxics[0].attributes.epoch, 0, 'the profile itself unchanged');
  assert.ok(at.filter((t) => t.type !== 'link').every((t, i) => t === p.toxics.filter((x) => x.type !== 'link')[i]));
  // An untimed profile never carries an epoch, so re-applying it changes nothing.
  const lte = loadProfile('lte').toxics;
  assert.deepEqual(withEpoch(lte, 5), lte);
  assert.equal(epochOf(lte), 0);
  // networkToxics takes it directly too.
  const direct = networkToxics({ ...loadProfile('lte+dip').network }, { epochMs: 42 });
  assert.deepEqual(
    direct.map((t) => t.attributes.epoch),
    [42, 42],
  );
  assert.deepEqual(
    networkToxics(loadProfile('lte').network, { epochMs: 42 }).map((t) => t.attributes.epoch),
    [0, 0],
  );
});

test('events in a network file of your own: every field checked, one line saying what to give', () => {
  const net = { rttMs: 70, jitterMs: 0, downKbps: 12000, upKbps: 12000, source: 'ours' };
  const ok = [
    [
      { kind: 'blackout', lengthMs: 500 },
      { event: 1, event_offset: 0, event_period: 0, event_length: 500 },
    ],
    [
      { kind: 'blackout', lengthMs: 2000, periodS: 12.5, offsetS: 0.25 },
      { event: 1, event_offset: 250, event_period: 12500, event_length: 2000 },
    ],
    [
      { kind: 'move', death: 'silent', lengthMs: 1, periodS: 0 },
      { event: 2, event_period: 0, event_length: 1 },
    ],
    [
      { kind: 'move', death: 'reset', lengthMs: 3000, offsetS: 5 },
      { event: 3, event_offset: 5000 },
    ],
    [
      { kind: 'dip', share: 0.25, lengthMs: 10000, periodS: 60, offsetS: 10 },
      { event: 4, dip_share: 250000 },
    ],
  ];
  for (const [events, want] of ok) {
    const obj = validateNetworkProfile({ ...net, events }, null, 'mine.json', { user: true });
    const attrs = networkToxics(obj)[1].attributes;
    for (const [k, v] of Object.entries(want)) assert.equal(attrs[k], v, `${JSON.stringify(events)} ${k}`);
  }
  const bad = [
    [[], /events must be an object \{ kind, lengthMs, periodS\?, offsetS\? \}/],
    ['blackout', /events must be an object/],
    [{ kind: 'storm', lengthMs: 1 }, /events\.kind must be "blackout" .*, "move" .* or "dip"/],
    [{ lengthMs: 1 }, /events\.kind must be/],
    [
      { kind: 'blackout', lengthMs: 1, share: 0.5 },
      /events: unknown field "share" for a blackout \(allowed: kind, lengthMs, periodS, offsetS\)/,
    ],
    [{ kind: 'dip', lengthMs: 1, share: 0.5, death: 'reset' }, /unknown field "death" for a dip/],
    [{ kind: 'blackout' }, /events\.lengthMs must be whole milliseconds from 1 to 600000/],
    [{ kind: 'blackout', lengthMs: 1.5 }, /events\.lengthMs must be whole/],
    [{ kind: 'blackout', lengthMs: 0 }, /events\.lengthMs must be whole/],
    [{ kind: 'blackout', lengthMs: 700000 }, /events\.lengthMs must be whole/],
    [
      { kind: 'blackout', lengthMs: 1500, periodS: 1 },
      /events\.periodS must be 0 \(one event\) or .*longer than lengthMs \(1500 ms\)/,
    ],
    [{ kind: 'blackout', lengthMs: 1500, periodS: -20 }, /events\.periodS must be/],
    [{ kind: 'blackout', lengthMs: 1500, periodS: '20' }, /events\.periodS must be/],
    [{ kind: 'blackout', lengthMs: 1500, offsetS: -1 }, /events\.offsetS must be seconds from 0 to 86400/],
    [{ kind: 'blackout', lengthMs: 1500, offsetS: 1e6 }, /events\.offsetS must be/],
    [{ kind: 'move', lengthMs: 1500 }, /events\.death must be "silent" .* or "reset"/],
    [{ kind: 'move', death: 'loud', lengthMs: 1500 }, /events\.death must be/],
    [{ kind: 'dip', lengthMs: 1500 }, /events\.share must be a number above 0 and below 1/],
    [{ kind: 'dip', lengthMs: 1500, share: 0 }, /events\.share must be/],
    [{ kind: 'dip', lengthMs: 1500, share: 1 }, /events\.share must be/],
    [{ kind: 'dip', lengthMs: 1500, share: 1e-9 }, /events\.share must be/],
  ];
  for (const [events, message] of bad)
    assert.throws(
      () => validateNetworkProfile({ ...net, events }, null, 'mine.json', { user: true }),
      (e) =>
        e instanceof ProfileError &&
        message.test(e.message) &&
        e.message.startsWith('mine.json: events') &&
        !e.message.includes('\n'),
      `${JSON.stringify(events)}`,
    );
  // A modifier's events are checked the same way.
  const handover = JSON.parse(readFileSync(join(ROOT, 'profiles/modifiers/handover.json'), 'utf8'));
  assert.throws(
    () =>
      resolveProfile(
        'lte+handover',
        withFile(
          'profiles/modifiers/handover.json',
          JSON.stringify({ ...handover, network: { events: { ...handover.network.events, lengthMs: -1 } } }),
        ),
      ),
    { message: /^profiles\/modifiers\/handover\.json: network: events\.lengthMs must be whole milliseconds/ },
  );
});

// The event codes are written once, here in JS; the Go toxic's iota constants must say the
// same (a code the toxic does not know would shape no event, silently).
test("the link toxic's event codes: tools/toxiproxy/events.go numbers them as EVENT_CODES does", () => {
  const go = readFileSync(join(ROOT, 'tools', 'toxiproxy', 'events.go'), 'utf8');
  const block = /const \(\n\teventNone eventKind = iota\n([\s\S]*?)\n\)/.exec(go);
  assert.ok(block, 'events.go: no `eventNone eventKind = iota` const block');
  const names = block[1].split('\n').map((l) => l.trim());
  // eventMoveSilent -> move-silent; iota: eventNone is 0, the next 1, ...
  const fromGo = Object.fromEntries(
    names.map((n, i) => [
      n
        .replace(/^event/, '')
        .replace(/(?<=[a-z])(?=[A-Z])/g, '-')
        .toLowerCase(),
      i + 1,
    ]),
  );
  assert.deepEqual(fromGo, EVENT_CODES);
});

// ---- +rrc and +nat=SECONDS (issue 41; common/mobile-modifiers.js) ----

const mobile = (spec) => {
  const { link_upstream: up, link_downstream: down } = byName(loadProfile(spec).toxics);
  const pick = (a) => ({ radio: a.radio, radio_device: a.radio_device, uplink: a.uplink, nat_idle: a.nat_idle });
  return [pick(up.attributes), pick(down.attributes)];
};

test('+rrc: LTE radio states on lte, 4g and 5g-like networks, 3G ones on 3g-like networks, one device for every proxy', () => {
  for (const n of ['lte', '4g', '4g-fast', '5g', 'devtools-fast-4g', 'devtools-slow-4g'])
    assert.deepEqual(
      mobile(`${n}+rrc`),
      [
        { radio: 1, radio_device: 1, uplink: 1, nat_idle: 0 },
        { radio: 1, radio_device: 1, uplink: 0, nat_idle: 0 },
      ],
      n,
    );
  for (const n of ['3g', '3g-fast', '3g-slow', 'devtools-3g']) assert.equal(mobile(`${n}+rrc`)[0].radio, 2, n);
  // Everything else stays the network's: lte -> lte+rrc is an update of the same two toxics.
  const plain = byName(loadProfile('lte').toxics).link_upstream.attributes;
  const rrc = byName(loadProfile('lte+rrc').toxics).link_upstream.attributes;
  assert.deepEqual({ ...rrc, radio: 0, radio_device: 0 }, plain);
  assert.equal(loadProfile('lte+rrc+loss1+flaky').name, 'lte+rrc+loss1+flaky');
});

test('+rrc on a network without radio states: one line naming it', () => {
  for (const n of ['lan', 'fios', 'cable', 'dsl', '2g', 'edge'])
    assert.throws(() => loadProfile(`${n}+rrc`), {
      name: 'ProfileError',
      message: new RegExp(
        `^\\+rrc needs a mobile network: "${n}" has no radio states \\(LTE's for lte, 4g and 5g-like networks, 3G's for 3g-like ones; [^\\n]*\\)$`,
      ),
    });
});

test("a network file of your own may set its radio and NAT timeout; +rrc follows the file's radio, else its name", () => {
  const read = (obj) => () => ({ text: JSON.stringify(obj), path: '/tmp/my-phone.json' });
  const base = { rttMs: 80, jitterMs: 0, downKbps: 5000, upKbps: 1000, source: 'my measurements' };
  const load = (spec, obj) => resolveProfile(spec, (p) => readFileSync(join(ROOT, p), 'utf8'), read(obj));
  const attrs = (p) => byName(p.toxics).link_upstream.attributes;
  assert.equal(attrs(load('./my-phone.json', { ...base, radio: '3g', natIdleS: 300 })).radio, 2);
  assert.equal(attrs(load('./my-phone.json', { ...base, radio: '3g', natIdleS: 300 })).nat_idle, 300000);
  assert.equal(attrs(load('./my-phone.json+rrc', { ...base, radio: 'lte' })).radio, 1);
  assert.equal(attrs(load('./my-phone.json+rrc', { ...base, name: 'field-4g' })).radio, 1);
  assert.throws(() => load('./my-phone.json+rrc', base), {
    message: /^\+rrc needs a mobile network: "my-phone" has no radio states/,
  });
  assert.throws(() => load('./my-phone.json', { ...base, radio: 'wifi' }), {
    message:
      /^\.\/my-phone\.json: radio must be "lte" \(RRC_IDLE and RRC_CONNECTED with DRX\), "3g" \(IDLE, FACH, DCH\) or "auto"/,
  });
  for (const natIdleS of [9, 7201, 60.5, '60'])
    assert.throws(() => load('./my-phone.json', { ...base, natIdleS }), {
      message: /^\.\/my-phone\.json: natIdleS must be whole seconds from 10 to 7200/,
    });
});

test('+nat=SECONDS: the NAT idle timeout in ms on both link toxics, with or without a radio, in the name and spec', () => {
  assert.deepEqual(mobile('3g+nat=60'), [
    { radio: 0, radio_device: 0, uplink: 1, nat_idle: 60000 },
    { radio: 0, radio_device: 0, uplink: 0, nat_idle: 60000 },
  ]);
  assert.deepEqual(mobile('lte+rrc+nat=7200')[1], { radio: 1, radio_device: 1, uplink: 0, nat_idle: 7200000 });
  assert.equal(mobile('lte+nat=10')[0].nat_idle, 10000);
  const p = loadProfile('3g+nat=60+rrc+trace=walk-3g');
  assert.equal(p.name, '3g+rrc+nat=60+trace=walk-3g');
  assert.equal(p.network.natIdleS, 60);
  assert.equal(p.network.radio, '3g');
  assert.deepEqual(parseSpec('lte+rrc+nat=90'), { network: 'lte', file: false, extras: ['rrc'], nat: 90 });
  // lan has no link toxics, but a NAT timeout gives it a pair (nothing else shaped).
  const lan = byName(loadProfile('lan+nat=30').toxics);
  assert.equal(lan.link_upstream.attributes.nat_idle, 30000);
  assert.equal(lan.link_upstream.attributes.rtt, 0);
  assert.equal(lan.link_upstream.attributes.bitrate, 0);
});

test('a malformed or unknown parameter: one line naming it', () => {
  const help =
    "give \\+nat=SECONDS, whole seconds from 10 to 7200 \\(a carrier NAT's idle timeout\\), e\\.g\\. lte\\+nat=60$";
  for (const [spec, message] of [
    ['lte+nat=abc', `^profile spec "lte\\+nat=abc": "nat=abc" is not a NAT idle timeout: ${help}`],
    ['lte+nat=', `^profile spec "lte\\+nat=": "nat=" is not a NAT idle timeout: ${help}`],
    ['lte+nat=9', `"nat=9" is not a NAT idle timeout: ${help}`],
    ['lte+nat=7201', `"nat=7201" is not a NAT idle timeout`],
    ['lte+nat=60.5', `"nat=60.5" is not a NAT idle timeout`],
    ['lte+nat=-60', `"nat=-60" is not a NAT idle timeout`],
    ['lte+nat=1e3', `"nat=1e3" is not a NAT idle timeout`],
    ['lte+nat', `^profile spec "lte\\+nat": \\+nat needs its timeout: ${help}`],
    ['lte+nat=60+nat=90', '^profile spec "lte\\+nat=60\\+nat=90" names a NAT timeout twice: give one \\+nat=$'],
    [
      'lte+rrc=lte',
      '^profile spec "lte\\+rrc=lte": unknown parameter "rrc" in "rrc=lte": the extras that take one are \\+nat=SECONDS and \\+trace=FILE$',
    ],
    ['lte+foo=1', 'unknown parameter "foo" in "foo=1"'],
    ['lte+rrc+rrc', '^profile spec "lte\\+rrc\\+rrc" names "rrc" twice$'],
  ])
    assert.throws(
      () => loadProfile(spec),
      (e) => {
        assert.ok(e instanceof ProfileError, spec);
        assert.match(e.message, new RegExp(message), spec);
        assert.doesNotMatch(e.message, /\n/);
        return true;
      },
    );
});

// The radio codes are written once, in JS; radio_params.go's iota constants must agree.
test("the link toxic's radio codes: tools/toxiproxy/radio_params.go numbers them as RADIO_CODES does", () => {
  const go = readFileSync(join(ROOT, 'tools', 'toxiproxy', 'radio_params.go'), 'utf8');
  const block = /const \(\n\tradioNone radioKind = iota\n([\s\S]*?)\n\)/.exec(go);
  assert.ok(block, 'radio_params.go: no `radioNone radioKind = iota` const block');
  const names = block[1].split('\n').map((l) => l.trim());
  assert.deepEqual(names, ['radioLTE', 'radioUMTS']);
  assert.deepEqual(RADIO_CODES, { lte: 1, '3g': 2 });
});
