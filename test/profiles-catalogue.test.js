// The profile files agree with their catalogue (profiles/index.json, which k6 reads
// because it cannot list a directory), load cleanly, and cite their sources; the
// proxy files agree with common/defaults.js.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_PORTS, PROXY_ROUTES, proxiesFor } from '../common/defaults.js';
import { listProfiles, loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { longestGap, makeTraces } from '../dev/traces.js';
import { parseTrace } from '../common/trace.js';

const PROFILES = join(ROOT, 'profiles');
const namesIn = (dir) =>
  readdirSync(join(PROFILES, dir))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
const readJson = (file) => JSON.parse(readFileSync(join(PROFILES, file), 'utf8'));

test('profiles/index.json lists exactly the profile files', () => {
  const { network, modifiers, faults } = listProfiles();
  assert.deepEqual([...network].sort(), namesIn('network'));
  assert.deepEqual([...modifiers].sort(), namesIn('modifiers'));
  assert.deepEqual([...faults].sort(), namesIn('faults'));
  assert.equal(new Set(network).size, network.length, 'no network profile listed twice');
  const traces = readdirSync(join(PROFILES, 'traces')).sort();
  assert.deepEqual(
    traces,
    listProfiles()
      .traces.flatMap((n) => [`${n}.down`, `${n}.up`])
      .sort(),
    'profiles/traces/ holds NAME.down and NAME.up for each trace index.json lists, and nothing else',
  );
});

test('the shipped traces are what dev/traces.js makes, parse, stay small and each holds an outage', () => {
  const made = makeTraces();
  assert.deepEqual(Object.keys(made).sort(), readdirSync(join(PROFILES, 'traces')).sort());
  for (const [file, text] of Object.entries(made)) {
    const path = join(PROFILES, 'traces', file);
    assert.equal(readFileSync(path, 'utf8'), text, `${file} is current: node dev/traces.js --write`);
    assert.ok(statSync(path).size < 60 * 1024, `${file} under 60 KB`);
    const trace = parseTrace(text, file);
    assert.ok(longestGap(trace) > 500, `${file} holds an outage`);
  }
});

test('the pack has the profiles its docs promise', () => {
  const { network, faults } = listProfiles();
  for (const name of [
    'lan',
    'fios',
    'cable',
    'dsl',
    '4g-fast',
    'lte',
    '4g',
    '3g-fast',
    '3g',
    '3g-slow',
    '2g',
    'edge',
    'devtools-3g',
    'devtools-slow-4g',
    'devtools-fast-4g',
    '5g',
  ]) {
    assert.ok(network.includes(name), `network profile ${name}`);
  }
  for (const name of ['flaky', 'stall', 'slow-close', 'truncate', 'jitter'])
    assert.ok(faults.includes(name), `fault profile ${name}`);
  for (const name of ['ideal', 'loss1', 'loss3', 'burst', 'shared', 'handover', 'move', 'move-reset', 'dip', 'rrc'])
    assert.ok(listProfiles().modifiers.includes(name), `modifier ${name}`);
});

test('every modifier loads on any network profile, says what it does and cites its source', () => {
  const { network, modifiers } = listProfiles();
  // +rrc gives a mobile network its radio states, and is refused on others (lan).
  const onNetworks = (m) =>
    m === 'rrc' ? ['lte', '3g', network[network.length - 1]] : ['lan', '3g', network[network.length - 1]];
  for (const m of modifiers) {
    for (const n of onNetworks(m)) {
      const p = loadProfile(`${n}+${m}`);
      assert.equal(p.name, `${n}+${m}`);
      assert.equal(p.modifiers[0].name, m);
    }
    const {
      modifiers: [mod],
    } = loadProfile(`3g+${m}`);
    assert.ok(mod.description.length > 40, `${m} says what it does`);
    assert.match(mod.source, /https?:\/\/\S+|RFC \d+/, `${m} cites where it comes from`);
  }
});

test('every network profile loads, cites a source with a link, and lan has no toxics', () => {
  for (const name of listProfiles().network) {
    const p = loadProfile(name);
    assert.equal(p.name, name);
    assert.match(p.network.source, /https?:\/\/\S+|No toxics/, `${name} cites where its numbers come from`);
    if (name === 'lan') {
      assert.deepEqual(p.toxics, []);
      assert.equal(p.network.rttMs, 0);
    } else {
      assert.ok(p.network.rttMs > 0 && p.network.downKbps > 0 && p.network.upKbps > 0, name);
    }
  }
});

test('every fault profile loads on top of any network profile', () => {
  const { network, faults } = listProfiles();
  for (const f of faults) {
    for (const n of ['lan', network[network.length - 1]]) {
      const p = loadProfile(`${n}+${f}`);
      assert.equal(p.name, `${n}+${f}`);
      assert.ok(p.faults[0].description.length > 20, `${f} says what it does`);
      for (const t of p.faults[0].toxics)
        assert.ok(
          p.toxics.some((x) => x.name === t.name),
          `${f}'s ${t.name} is applied`,
        );
    }
  }
  const all = loadProfile(`3g+${faults.join('+')}`);
  assert.equal(new Set(all.toxics.map((t) => t.name)).size, all.toxics.length, 'toxic names never clash');
});

test('profiles/proxies.json is proxiesFor(DEFAULT_PORTS)', () => {
  assert.deepEqual(readJson('proxies.json'), proxiesFor(DEFAULT_PORTS));
});

test('profiles/proxies.compose.json: same proxies and ports, on 0.0.0.0, upstreams are the compose services', () => {
  const compose = readJson('proxies.compose.json');
  const service = {
    GRAPHQL_PORT: 'graphql',
    GRAPHQL_TLS_PORT: 'graphql',
    GRAPHQL_TLS_H1_PORT: 'graphql',
    GRPC_PORT: 'grpc',
    GRPC_TLS_PORT: 'grpc',
    GRPC_KEEPALIVE_PORT: 'grpc',
    CONNECT_PORT: 'connect',
    CONNECT_H2C_PORT: 'connect',
    CONNECT_TLS_PORT: 'connect',
  };
  assert.deepEqual(
    compose,
    PROXY_ROUTES.map(([name, listenVar, upstreamVar]) => ({
      name,
      listen: `0.0.0.0:${DEFAULT_PORTS[listenVar]}`,
      upstream: `${service[upstreamVar]}:${DEFAULT_PORTS[upstreamVar]}`,
      enabled: true,
    })),
  );
});
