import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { POLICIES } from '../policies.js';
import { LANES, laneEntry, setupPhasesOf, TRANSPORTS } from './catalogue.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('every lane once, with a known transport, family, policy and client', () => {
  assert.equal(new Set(LANES.map((l) => l.name)).size, LANES.length);
  for (const l of LANES) {
    assert.ok(TRANSPORTS[l.transport], l.name);
    assert.ok(['http', 'ws', 'grpc', 'rpc-web'].includes(l.family), l.name);
    if (l.policy) assert.ok(POLICIES[l.policy], `${l.name}: no policy ${l.policy}`);
    if (l.api) assert.ok(['http', 'ws', 'grpc', 'connect'].includes(l.api), l.name);
    for (const file of l.client.split(', ').map((c) => c.split(' ')[0]))
      assert.ok(existsSync(`${ROOT}${file}`), `${l.name}: ${file}`);
  }
  assert.equal(laneEntry(laneEntry('ws')), laneEntry('ws'));
});

test('a lane or transport the catalogue does not know is an error naming the known ones', () => {
  assert.throws(() => laneEntry('http3'), /no lane "http3".*http_fresh/);
  assert.throws(() => setupPhasesOf('http3', true), /no transport "http3".*http-fresh/);
});
