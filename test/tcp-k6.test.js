// TCP on the pack's link, through the real stack (servers, the pack's Toxiproxy, k6:
// dev/k6/tcp-probe.js): slow start on a new connection and its absence under +ideal, the
// window's restart after idle, six connections sharing one link under +shared, and a
// lossy link that delivers every byte intact, late. Each against the round-trip model
// (common/model.js). About 90 s.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { linkOf, operation } from '../common/model.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { runK6 } from '../dev/run-k6.js';
import { useTestStack } from '../dev/test-stack.js';

const PROBE = join(ROOT, 'dev', 'k6', 'tcp-probe.js');
const REQ_BYTES = 70;
const RES_WRAP = 45;
// Date.now() has whole milliseconds; k6 and the servers take a little of their own.
const RANGE = [0.97, 1.1];

const stack = useTestStack();

async function probe(env) {
  const run = await runK6(PROBE, { env: { ...stack.env, ...env }, timeoutMs: 120000 });
  assert.equal(run.code, 0, `k6 exited ${run.code}${run.timedOut ? ' (timed out)' : ''}: ${run.stderr.slice(-1500)}`);
  return run.summary.metrics;
}

// The model's operation for a probe's request, with the server's measured time.
function model(spec, kind, size, m, more = {}) {
  const op = {
    transport: kind === 'fresh' ? 'http-fresh' : 'http-keepalive',
    conn: kind === 'fresh' ? 'cold' : 'warm',
    idle: kind === 'idle',
    reqBytes: REQ_BYTES,
    resBytes: size + RES_WRAP,
    serverMs: m[`server_${kind}_${size}`].med,
    ...more,
  };
  return operation(linkOf(loadProfile(spec)), op);
}

function within(t, what, measured, e) {
  const ratio = measured / e.ms;
  t.diagnostic(`${what}: ${measured} ms, model ${e.ms.toFixed(1)} ms (${e.formula}), x${ratio.toFixed(3)}`);
  assert.ok(
    ratio >= RANGE[0] && ratio <= RANGE[1],
    `${what}: ${measured} ms vs model ${e.ms.toFixed(1)} ms (${e.formula})`,
  );
}

test(
  'a 100 KB answer on a new connection pays slow start under 3g; under 3g+ideal it does not',
  { timeout: 120000 },
  async (t) => {
    const got = {};
    for (const spec of ['3g', '3g+ideal']) {
      const m = await probe({ PROFILE: spec, MODES: 'fresh', SIZES: '100000', SAMPLES: 2 });
      const e = model(spec, 'fresh', 100000, m);
      within(t, `${spec} new connection 100 KB`, m.fresh_100000.med, e);
      got[spec] = { measured: m.fresh_100000.med, window: e.terms.find((x) => x.name === 'window')?.ms || 0 };
    }
    assert.equal(got['3g+ideal'].window, 0);
    assert.ok(got['3g'].window > 300, `slow start by the model: ${got['3g'].window} ms`);
    const cost = got['3g'].measured - got['3g+ideal'].measured;
    assert.ok(
      cost > 0.8 * got['3g'].window && cost < 1.2 * got['3g'].window,
      `slow start measured ${cost} ms, model ${got['3g'].window} ms`,
    );
  },
);

test(
  'a kept connection idle longer than the retransmission timeout starts its window over',
  { timeout: 120000 },
  async (t) => {
    const spec = 'lte'; // RTO 270 ms
    const m = await probe({
      PROFILE: spec,
      MODES: 'warm,idle',
      SIZES: '100000',
      IDLE_SIZE: 100000,
      IDLE_MS: 1000,
      SAMPLES: 3,
    });
    const warm = model(spec, 'warm', 100000, m);
    const idle = model(spec, 'idle', 100000, m);
    within(t, 'kept, window open', m.warm_100000.med, warm);
    within(t, 'kept, after 1 s idle', m.idle_100000.med, idle);
    assert.ok(idle.ms - warm.ms > 80, `the restart costs ${idle.ms - warm.ms} ms by the model`);
  },
);

test('+shared: six answers at once over six connections share one link', { timeout: 120000 }, async (t) => {
  const got = {};
  for (const spec of ['lte', 'lte+shared']) {
    const m = await probe({ PROFILE: spec, MODES: 'batch', BATCH: 6, BATCH_SIZE: 100000, SAMPLES: 3 });
    const e = model(spec, 'batch', 100000, m, { transport: 'http-keepalive', conn: 'warm', connections: 6 });
    t.diagnostic(
      `${spec}: six answers of 100 KB at once: ${m.batch_100000.med} ms, model ${e.ms.toFixed(1)} ms (${e.formula})`,
    );
    got[spec] = { measured: m.batch_100000.med, model: e.ms };
  }
  const shared = got['lte+shared'];
  assert.ok(
    shared.measured >= 0.9 * shared.model && shared.measured <= 1.15 * shared.model,
    `shared: ${shared.measured} ms vs model ${shared.model}`,
  );
  assert.ok(
    got.lte.measured < 0.5 * shared.measured,
    `each connection its own link: ${got.lte.measured} ms vs shared ${shared.measured} ms`,
  );
});

test(
  'under 3 % loss a 1 MB answer over TLS arrives whole (TLS would notice a byte out of place), and late',
  { timeout: 120000 },
  async (t) => {
    const m = await probe({ PROFILE: 'lte+loss3', TLS: 'true', MODES: 'fresh,warm', SIZES: '1000000', SAMPLES: 1 });
    const lossless = model('lte', 'warm', 1000000, m);
    t.diagnostic(
      `1 MB over HTTP/2 under lte+loss3: ${m.warm_1000000.med} ms (new connection ${m.fresh_1000000.med} ms); lossless model ${lossless.ms.toFixed(0)} ms, with loss ${model('lte+loss3', 'warm', 1000000, m).ms.toFixed(0)} ms`,
    );
    assert.ok(
      m.warm_1000000.med > 1.5 * lossless.ms,
      `${m.warm_1000000.med} ms is not slower than the lossless ${lossless.ms.toFixed(0)} ms`,
    );
  },
);
