// Connection set-up costs what it costs on a real link: under a profile with RTT R,
// the single-VU median of each operation through our Toxiproxy build (the link
// toxic, tools/toxiproxy/link.go) is never below the round-trip model (common/model.js,
// docs/model.md; 3 % for whole-ms clocks) and at most 10 % above it (25 ms, where that
// is more: a single round trip under lte; the fastest sample within 10 %): warm request
// R, fresh TCP 2R, fresh TLS 1.3 3R, WebSocket + graphql-transport-ws ack 3R (4R over
// TLS), fresh gRPC channel 3R, and a 100 kB response R + bytes / down-rate + server time.
// Real servers, real toxiproxy, real k6 (test/k6/roundtrip.js). About 25 s.
// One profile, lte: 3g (R 300 ms) ran here too until 2026-11-28 (48 s of the timed
// phase; issue 38, the suite in 20 minutes). bench/fidelity.js measures every transport
// against the model under lan, lte, 4g, 3g and 2g and records it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { linkOf, operation, setupPhases } from '../common/model.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { useTestStack } from '../dev/test-stack.js';

const PROBE = join(ROOT, 'test', 'k6', 'roundtrip.js');
const BIG_BYTES = 100000;
// The big response on the wire: the payload plus its JSON wrapper and HTTP headers.
const BIG_WIRE_BYTES = BIG_BYTES + 350;
// Each probe (test/k6/roundtrip.js) as the model's operation: its round trips come
// from common/model.js; http_big adds its transfer and server time.
const OPERATIONS = {
  http_warm: { transport: 'http-keepalive', conn: 'warm' },
  http_big: { transport: 'http-keepalive', conn: 'warm' },
  http_fresh: { transport: 'http-fresh' },
  https_fresh: { transport: 'http-fresh', tls: true },
  // connect + init/ack: the socket's set-up; the ack is its one request round trip
  ws_open: { transport: 'ws', phases: setupPhases('ws', false).slice(0, -1) },
  wss_open: { transport: 'ws', tls: true, phases: setupPhases('ws', true).slice(0, -1) },
  ws_op: { transport: 'ws', conn: 'warm' },
  grpc_warm: { transport: 'grpc', conn: 'warm' },
  grpc_fresh: { transport: 'grpc-fresh' },
};
const ROUND_TRIPS = Object.fromEntries(
  Object.entries(OPERATIONS).map(([op, spec]) => [op, operation(linkOf({ rttMs: 1 }), spec).roundTrips]),
);
const TOLERANCE = 0.1;
// The median may also be this many ms above, when that is more: what k6, the servers and
// the proxy take beyond the link is CPU time, the same ms at any R, and more on a busy
// machine. Spread measured (p50 of 5 samples, one round trip of 70 ms under lte): 71..92
// ms over 50 probe runs on 2026-11-26, 5 of them above 77 ms (+9, +10, +12, +18, +22),
// each while other work loaded the machine (load average 3-9); every operation of 2R or more within
// x1.07 but one (+16 ms). A missing or extra round trip is 70 ms: still far outside.
// The fastest of the 5 samples, which a busy machine does not slow unless it slows all
// five, stays within 10 % (what the emulator itself adds): spread measured x1.010..x1.038
// over 12 runs, 7 of them beside a k6 load (serialization under lan), whose medians rose
// to x1.086.
const SLACK_MS = 25;
// Date.now() has millisecond resolution: a sample can read up to 1 ms short.
const FLOOR = 0.97;
const ceiling = (expected) => Math.max((1 + TOLERANCE) * expected, expected + SLACK_MS);

const stack = useTestStack();

const med = (summary, op) => summary.metrics[op]?.med;

function expectedMs(op, profile, summary) {
  let ms = ROUND_TRIPS[op] * profile.network.rttMs;
  if (op === 'http_big') {
    const rate = profile.toxics.find((t) => t.name === 'link_downstream').attributes.bitrate / 8000; // bytes per ms
    ms += BIG_WIRE_BYTES / rate + med(summary, 'big_server');
  }
  return ms;
}

async function probe(spec, extraEnv = {}) {
  const run = await runK6(PROBE, {
    env: { ...stack.env, PROFILE: spec, SAMPLES: 5, BIG_BYTES, ...extraEnv },
    timeoutMs: 90000,
  });
  assert.equal(run.code, 0, `k6 exited ${run.code}${run.timedOut ? ' (timed out)' : ''}: ${run.stderr.slice(-1500)}`);
  return run.summary;
}

// Asserts every op of `ops` and returns the table rows.
function check(spec, summary, ops, label = spec) {
  const profile = loadProfile(spec);
  const rows = ops.map((op) => {
    const measured = med(summary, op);
    const expected = expectedMs(op, profile, summary);
    assert.equal(summary.metrics[op]?.count, 5, `${label} ${op}: 5 samples`);
    return {
      label,
      op,
      expected: Math.round(expected),
      measured,
      ratio: Number((measured / expected).toFixed(3)),
      fastest: summary.metrics[op].min,
      within:
        measured >= FLOOR * expected &&
        measured <= ceiling(expected) &&
        summary.metrics[op].min <= (1 + TOLERANCE) * expected,
    };
  });
  const table = rows.map(
    (r) =>
      `${r.label.padEnd(18)} ${r.op.padEnd(12)} expected ${String(r.expected).padStart(5)} ms  measured ${String(r.measured).padStart(5)} ms  x${r.ratio}  fastest ${r.fastest} ms`,
  );
  for (const r of rows) {
    assert.ok(
      r.within,
      `${r.label} ${r.op}: p50 ${r.measured} ms (fastest ${r.fastest}) vs expected ${r.expected} ms (p50 -3 %, +10 % or ${SLACK_MS} ms; fastest +10 %)\n${table.join('\n')}`,
    );
  }
  return table;
}

const ALL = Object.keys(ROUND_TRIPS);

for (const spec of ['lte']) {
  test(
    `round trips under ${spec} (RTT ${loadProfile(spec).network.rttMs} ms) match the model (-3 %, +10 % or 25 ms)`,
    { timeout: 120000 },
    async (t) => {
      const summary = await probe(spec);
      for (const line of check(spec, summary, ALL)) t.diagnostic(line);
      // teardown() cleared the profile
      for (const [name, proxy] of Object.entries(await stack.toxiproxy.proxies()))
        assert.deepEqual(proxy.toxics, [], `${name} has no toxics left`);
    },
  );
}

// The handshake toxic stays in the build for chains of stock toxics (a network of the
// link toxic's parts): lte as such a chain, latency toxics first.
const LEGACY_LTE = [
  {
    name: 'latency_upstream',
    type: 'latency',
    stream: 'upstream',
    toxicity: 1,
    attributes: { latency: 35, jitter: 0 },
  },
  {
    name: 'latency_downstream',
    type: 'latency',
    stream: 'downstream',
    toxicity: 1,
    attributes: { latency: 35, jitter: 0 },
  },
  { name: 'handshake_upstream', type: 'handshake', stream: 'upstream', toxicity: 1, attributes: { delay: 70 } },
  { name: 'handshake_downstream', type: 'handshake', stream: 'downstream', toxicity: 1, attributes: { until: 105 } },
  { name: 'bandwidth_upstream', type: 'bandwidth', stream: 'upstream', toxicity: 1, attributes: { rate: 1500 } },
  { name: 'bandwidth_downstream', type: 'bandwidth', stream: 'downstream', toxicity: 1, attributes: { rate: 1500 } },
];

test(
  'a chain of stock toxics with the handshake toxic after the latency toxic costs the same round trips',
  { timeout: 90000 },
  async (t) => {
    // Latency first: its "delay - time already spent" must not swallow the handshake's hold.
    await stack.toxiproxy.applyToxics(LEGACY_LTE);
    const chain = (await stack.toxiproxy.proxies()).graphql_http.toxics
      .filter((x) => x.stream === 'upstream')
      .map((x) => x.type);
    assert.deepEqual(chain.slice(0, 2), ['latency', 'handshake']);
    try {
      const summary = await probe('lte', { KEEP_TOXICS: '1' });
      // grpc_fresh is left out: the downstream `until` hold is absolute (from connection open),
      // so it must precede the latency toxic.
      for (const line of check(
        'lte',
        summary,
        ALL.filter((op) => op !== 'grpc_fresh'),
        'lte latency-first',
      ))
        t.diagnostic(line);
    } finally {
      await stack.toxiproxy.reset();
    }
  },
);
