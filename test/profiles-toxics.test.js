// Profiles -> toxics (pure), spec parsing, and the one-line messages for bad input.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadProfile, ProfileError } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { networkToxics, parseSpec, profileToxics, resolveProfile } from '../common/profiles.js';

const byName = (toxics) => Object.fromEntries(toxics.map((t) => [t.name, t]));

test('3g: handshake R, R/2 each way, bandwidth in Toxiproxy KB/s (kbit/s / 8)', () => {
  const t = byName(loadProfile('3g').toxics); // 300 ms, 1600 kbit/s down, 768 up
  assert.deepEqual(t.handshake_upstream, { name: 'handshake_upstream', type: 'handshake', stream: 'upstream', toxicity: 1, attributes: { delay: 300 } });
  assert.deepEqual(t.handshake_downstream.attributes, { until: 450 });
  assert.equal(t.handshake_downstream.stream, 'downstream');
  assert.deepEqual(t.latency_upstream.attributes, { latency: 150, jitter: 0 });
  assert.deepEqual(t.latency_downstream.attributes, { latency: 150, jitter: 0 });
  assert.deepEqual(t.bandwidth_upstream.attributes, { rate: 96 });
  assert.deepEqual(t.bandwidth_downstream.attributes, { rate: 200 });
  assert.equal(Object.keys(t).length, 6);
});

test('a fractional or odd RTT is split into whole milliseconds that add up', () => {
  const t = byName(loadProfile('devtools-slow-4g').toxics); // 562.5 ms
  assert.equal(t.latency_upstream.attributes.latency + t.latency_downstream.attributes.latency, 563);
  assert.equal(t.handshake_upstream.attributes.delay, 563);
  assert.equal(t.handshake_downstream.attributes.until, 563 + t.latency_upstream.attributes.latency);
  const j = byName(networkToxics({ rttMs: 101, jitterMs: 11, downKbps: null, upKbps: 9 }));
  assert.deepEqual([j.latency_upstream.attributes, j.latency_downstream.attributes], [{ latency: 50, jitter: 5 }, { latency: 51, jitter: 6 }]);
  assert.equal(j.bandwidth_downstream, undefined, 'null bandwidth means no limit');
  assert.equal(j.bandwidth_upstream.attributes.rate, 1, 'the smallest rate Toxiproxy takes');
});

test('toxics are ordered handshake, latency, bandwidth, other faults, whatever the spec order', () => {
  const p = loadProfile('3g+flaky+jitter');
  const order = (stream) => p.toxics.filter((t) => t.stream === stream).map((t) => t.name);
  assert.deepEqual(order('upstream'), ['handshake_upstream', 'latency_upstream', 'jitter_upstream', 'bandwidth_upstream']);
  assert.deepEqual(order('downstream'), ['handshake_downstream', 'latency_downstream', 'jitter_downstream', 'bandwidth_downstream', 'flaky_reset_peer']);
  assert.deepEqual(loadProfile('3g+jitter+flaky').toxics, p.toxics);
  assert.equal(p.name, '3g+flaky+jitter');
});

test('spec parsing', () => {
  assert.deepEqual(parseSpec('3g'), { network: '3g', faults: [] });
  assert.deepEqual(parseSpec(' lte+flaky+jitter '), { network: 'lte', faults: ['flaky', 'jitter'] });
  assert.throws(() => parseSpec(''), /profile spec is empty/);
  assert.throws(() => parseSpec('3g++flaky'), /"3g\+\+flaky" is malformed/);
  assert.throws(() => parseSpec('3G'), /malformed/);
  assert.throws(() => parseSpec('3g+flaky+flaky'), /names fault "flaky" twice/);
});

test('unknown profiles: one line naming the known ones', () => {
  for (const [spec, what] of [['4x', 'unknown network profile "4x"'], ['3g+wobbly', 'unknown fault profile "wobbly"'], ['flaky', 'unknown network profile "flaky"']]) {
    assert.throws(
      () => loadProfile(spec),
      (e) => {
        assert.ok(e instanceof ProfileError && e instanceof Error);
        assert.ok(e.message.startsWith(what), e.message);
        assert.match(e.message, /network profiles are lan, .*3g.*; fault profiles .* are flaky, /);
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
    [{ ...real3g, source: '' }, 'profiles/network/3g.json: source must be a non-empty string saying where the numbers come from'],
    [{ ...real3g, rtt: 300 }, 'profiles/network/3g.json: unknown field "rtt" (allowed: name, description, source, rttMs, jitterMs, downKbps, upKbps)'],
    [[1], 'profiles/network/3g.json: must be a JSON object'],
  ];
  for (const [obj, message] of cases) {
    assert.throws(() => resolveProfile('3g', withFile('profiles/network/3g.json', JSON.stringify(obj))), { name: 'ProfileError', message });
  }
  assert.throws(() => resolveProfile('3g', withFile('profiles/network/3g.json', '{"name": "3g",')), {
    message: /^profiles\/network\/3g\.json: not valid JSON \(.+\)$/,
  });
});

test('a malformed fault profile file: the message names the file and the toxic field', () => {
  const toxic = realFlaky.toxics[0];
  const cases = [
    [{ ...realFlaky, toxics: [] }, /flaky\.json: toxics must be a non-empty array/],
    [{ ...realFlaky, toxics: [{ ...toxic, toxicity: 1.5 }] }, /^profiles\/faults\/flaky\.json: toxics\[0\]\.toxicity must be a number between 0 and 1$/],
    [{ ...realFlaky, toxics: [{ ...toxic, type: 'explode' }] }, /toxics\[0\]\.type must be one of latency, bandwidth/],
    [{ ...realFlaky, toxics: [{ ...toxic, stream: 'both' }] }, /toxics\[0\]\.stream must be "upstream" or "downstream"/],
    [{ ...realFlaky, toxics: [{ ...toxic, attributes: { timeout: 1.5 } }] }, /toxics\[0\]\.attributes\.timeout must be a whole number >= 0/],
    [{ ...realFlaky, toxics: [toxic, toxic] }, /toxics\[1\]\.name "flaky_reset_peer" is used twice/],
    [{ ...realFlaky, toxics: [{ ...toxic, name: 'latency_upstream' }] }, /fault "flaky" defines toxic "latency_upstream", which another part of the profile already uses/],
  ];
  for (const [obj, message] of cases) {
    assert.throws(() => resolveProfile('3g+flaky', withFile('profiles/faults/flaky.json', JSON.stringify(obj))), { name: 'ProfileError', message });
  }
});

test('profileToxics copies: changing the result never changes the profile', () => {
  const fault = { name: 'f', toxics: [{ name: 'x', type: 'timeout', stream: 'upstream', toxicity: 1, attributes: { timeout: 1 } }] };
  const out = profileToxics({ rttMs: 0, jitterMs: 0, downKbps: null, upKbps: null }, [fault]);
  out[0].attributes.timeout = 99;
  assert.equal(fault.toxics[0].attributes.timeout, 1);
});
