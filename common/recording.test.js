// What the k6 clients record (common/recording.js), decided from -e METRICS and
// -e SERVER_TIMING_EVERY and the scenario: the modes, the sampling of server time, the
// server_duration parts named by a run's sub-metrics, the line every summary states it
// in, and the one sentence for a bad value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  describeRecording,
  METRICS_MODES,
  metricsModeOf,
  recordingOf,
  SERVER_TIMING_EVERY,
  serverPartsOf,
} from './recording.js';

const says = (text) => (err) => {
  assert.equal(err, text);
  return true;
};

test('metricsModeOf: full unless METRICS names lean; anything else is refused', () => {
  assert.deepEqual(METRICS_MODES, ['full', 'lean']);
  assert.equal(metricsModeOf({}), 'full');
  assert.equal(metricsModeOf({ METRICS: '' }), 'full');
  assert.equal(metricsModeOf({ METRICS: 'full' }), 'full');
  assert.equal(metricsModeOf({ METRICS: ' lean ' }), 'lean');
  assert.throws(
    () => metricsModeOf({ METRICS: 'LEAN' }),
    says(
      'METRICS=LEAN is not a metrics mode: use full (every figure the summary reports, the default) or lean (op_duration and op_failed only, for the most load)',
    ),
  );
});

test('serverPartsOf: the parts of server_duration sub-metrics, sorted, once each', () => {
  assert.deepEqual(
    serverPartsOf([
      'op_duration{scenario:ws_c1}',
      'server_duration{scenario:ws_c1,part:total}',
      'server_duration{part:exec,scenario:ws_c1}',
      'server_duration{scenario:http_c1,part:total}',
      'server_duration{scenario:http_c1,part:ser}',
      'setup_duration{scenario:ws_c1,phase:ws_upgrade}',
      'server_duration{scenario:ws_c1}',
      'xserver_duration{part:nope}',
    ]),
    ['exec', 'ser', 'total'],
  );
  assert.deepEqual(serverPartsOf([]), []);
});

test("recordingOf: full records set-up and server time, every Nth operation: the env's N, the scenario's, else 8", () => {
  assert.equal(SERVER_TIMING_EVERY, 8);
  assert.deepEqual(recordingOf({}), { metrics: 'full', setup: true, serverTiming: { every: 8, parts: ['total'] } });
  assert.deepEqual(recordingOf({}, { serverTimingEvery: 1, serverParts: ['exec', 'ser', 'total'] }), {
    metrics: 'full',
    setup: true,
    serverTiming: { every: 1, parts: ['exec', 'ser', 'total'] },
  });
  assert.deepEqual(recordingOf({ SERVER_TIMING_EVERY: '16' }, { serverTimingEvery: 1 }).serverTiming, {
    every: 16,
    parts: ['total'],
  });
  assert.equal(recordingOf({ SERVER_TIMING_EVERY: '' }, { serverTimingEvery: 4 }).serverTiming.every, 4);
  // A scenario that reports no server time.
  assert.deepEqual(recordingOf({}, { serverParts: [] }), { metrics: 'full', setup: true, serverTiming: null });
  // The parts are a copy.
  const parts = ['total'];
  recordingOf({}, { serverParts: parts }).serverTiming.parts.push('exec');
  assert.deepEqual(parts, ['total']);
});

test('recordingOf: lean records neither set-up phases nor server time', () => {
  assert.deepEqual(recordingOf({ METRICS: 'lean' }, { serverTimingEvery: 1, serverParts: ['total'] }), {
    metrics: 'lean',
    setup: false,
    serverTiming: null,
  });
  // SERVER_TIMING_EVERY is still checked under lean.
  assert.throws(() => recordingOf({ METRICS: 'lean', SERVER_TIMING_EVERY: '0' }), /^SERVER_TIMING_EVERY=0 /);
});

test('SERVER_TIMING_EVERY: a whole number from 1 to 1000000', () => {
  assert.equal(recordingOf({ SERVER_TIMING_EVERY: '1000000' }).serverTiming.every, 1000000);
  for (const raw of ['0', '-1', '2.5', 'often', '1000001'])
    assert.throws(
      () => recordingOf({ SERVER_TIMING_EVERY: raw }),
      says(`SERVER_TIMING_EVERY=${raw} must be a whole number from 1 (every operation) to 1000000`),
      raw,
    );
});

test('describeRecording: one line for the summaries, with the sampled operations spelled out', () => {
  assert.equal(describeRecording(null), null);
  assert.equal(
    describeRecording(recordingOf({ METRICS: 'lean' })),
    'metrics: lean (METRICS=lean): op_duration and op_failed only; no server time, no set-up phases',
  );
  assert.equal(
    describeRecording(recordingOf({})),
    'metrics: full: op_duration and op_failed for every operation, set-up phases, server time (total) from one operation in 8 of each VU per step (sampled: its 1st, 9th, 17th, ...)',
  );
  assert.equal(
    describeRecording(recordingOf({}, { serverTimingEvery: 1, serverParts: ['exec', 'ser', 'total'] })),
    'metrics: full: op_duration and op_failed for every operation, set-up phases, server time (exec, ser, total) from every operation',
  );
  assert.equal(
    describeRecording(recordingOf({}, { serverParts: [] })),
    'metrics: full: op_duration and op_failed for every operation, set-up phases, no server time (the scenario reports none)',
  );
  // English ordinals: 11th, 12th and 13th, but 21st, 22nd and 23rd.
  const sampled = (n) =>
    /\(sampled: (.*)\)$/.exec(describeRecording(recordingOf({ SERVER_TIMING_EVERY: String(n) })))[1];
  assert.equal(sampled(2), 'its 1st, 3rd, 5th, ...');
  assert.equal(sampled(10), 'its 1st, 11th, 21st, ...');
  assert.equal(sampled(11), 'its 1st, 12th, 23rd, ...');
  assert.equal(sampled(12), 'its 1st, 13th, 25th, ...');
  assert.equal(sampled(110), 'its 1st, 111th, 221st, ...');
  assert.equal(sampled(1001), 'its 1st, 1002nd, 2003rd, ...');
});
