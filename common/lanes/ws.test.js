import { test } from 'node:test';
import assert from 'node:assert/strict';
import { framingOf, laneEntry, setupPhasesOf } from './catalogue.js';
import { WS_LANES } from './ws.js';

test('the WebSocket lanes: one transport, cleartext or TLS, and a held subscription', () => {
  assert.deepEqual(
    WS_LANES.map((l) => [l.name, l.transport, l.tls, l.policy]),
    [
      ['ws', 'ws', false, 'ws-nokeepalive'],
      ['wss', 'ws', true, 'ws-nokeepalive'],
      ['sub_ws', 'ws', false, 'sub-ws'],
    ],
  );
  assert.equal(laneEntry('sub_ws').variant, 'subscription');
  assert.equal(laneEntry('sub_ws').api, undefined);
});

test("a socket's set-up: TCP, TLS for wss, the upgrade and graphql-transport-ws's init, measured apart", () => {
  assert.deepEqual(setupPhasesOf('ws', false), ['tcp', 'ws_upgrade', 'ws_init']);
  assert.deepEqual(laneEntry('wss').phases, ['tcp', 'tls', 'ws_upgrade', 'ws_init']);
  assert.deepEqual(laneEntry('ws').setups, ['ws_upgrade', 'ws_init']);
  assert.deepEqual(laneEntry('sub_ws').setups, []);
  assert.deepEqual(framingOf('ws'), { req: 40, res: 60 });
});
