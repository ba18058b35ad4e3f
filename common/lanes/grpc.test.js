import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FRESH_TRANSPORTS, framingOf, laneEntry, setupPhasesOf } from './catalogue.js';
import { GRPC_LANES, GRPC_TRANSPORTS } from './grpc.js';

test('the gRPC lanes: each on a transport of its own, a subscription on the server stream', () => {
  assert.deepEqual(
    GRPC_LANES.map((l) => [l.name, l.transport]),
    [
      ['grpc', 'grpc'],
      ['grpc_fresh', 'grpc-fresh'],
      ['grpc_stream', 'grpc-stream'],
      ['grpc_bidi', 'grpc-bidi'],
      ['grpc_client_stream', 'grpc-client-stream'],
      ['sub_grpc', 'grpc-stream'],
    ],
  );
  assert.deepEqual(
    GRPC_LANES.filter((l) => l.api).map((l) => l.name),
    ['grpc', 'grpc_fresh', 'grpc_stream'],
  );
  // A fresh call's set-up is inside its operation: nothing to measure apart.
  assert.deepEqual(laneEntry('grpc_fresh').setups, []);
  assert.deepEqual(laneEntry('grpc').setups, ['grpc_connect']);
});

test("every gRPC transport waits for the server's SETTINGS; only grpc-fresh opens a channel per call", () => {
  for (const t of Object.keys(GRPC_TRANSPORTS)) {
    assert.deepEqual(setupPhasesOf(t, false), ['tcp', 'grpc_settings'], t);
    assert.deepEqual(setupPhasesOf(t, true), ['tcp', 'tls', 'grpc_settings'], t);
    assert.deepEqual(framingOf(t), { req: 70, res: 110 }, t);
  }
  assert.deepEqual(
    [...FRESH_TRANSPORTS].filter((t) => GRPC_TRANSPORTS[t]),
    ['grpc-fresh'],
  );
});
