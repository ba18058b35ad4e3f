// The faults scenario's plan (scenarios/faults.js runs it).
import { setting } from '../../common/settings.js';
import { DEFAULT_COLUMNS, lane, rttOf } from '../../common/scenario.js';
import { BOOK_OP } from './ws-vs-http.js';

// Under a fault profile every step holds at least this many connections per VU. The
// op_failed gate (rate<0.1, thresholds.json) counts operations, and a reset costs about
// one operation per connection it hits (+flaky: 10 % of connections): at smoke's 3 s
// steps under 4g+flaky a step held 2 connections a VU, the run 39 operations, and 4
// failures (Binomial(~12 connections, 0.1): P(>= 4) ~ 3 %) failed the gate in a suite
// run on 2026-11-26. With 4 a VU (~18 connections, ~85 operations) failing it takes 9
// resets: P ~ 1e-4.
export const FAULT_MIN_ITERATIONS = 4;

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare(settings) {
  const TIMEOUT_MS = setting(settings, 'FAULT_TIMEOUT_MS');
  const CONN_OPS = setting(settings, 'CONN_OPS');
  // Every connection carries CONN_OPS operations, then closes: the first pays its set-up.
  const op =
    (more = {}) =>
    () => ({ ...BOOK_OP, ...more });
  return {
    TIMEOUT_MS,
    CONN_OPS,
    name: 'faults',
    defaultProfile: '4g+flaky',
    lanes: [
      lane('http_keepalive', { model: op(), opsPerIteration: CONN_OPS }),
      lane('http2', { model: op(), opsPerIteration: CONN_OPS }),
      // Every VU of the WebSocket lane must record an outcome in every step (silent_vus).
      lane('ws', { model: op({ conn: 'warm' }), session: { ops: CONN_OPS }, vuCheck: true }),
      lane('grpc', { model: op({ reqBytes: 20, resBytes: 120 }), opsPerIteration: CONN_OPS }),
    ],
    minIterations: (profile) => (profile.faults.length ? FAULT_MIN_ITERATIONS : 0),
    // One connection's life (an HTTP or gRPC operation that times out at a step's end is
    // cut by gracefulStop; the WebSocket lane ends its own waits in time).
    iterationSeconds: (profile) => ((CONN_OPS + 3) * rttOf(profile)) / 1000 + 0.5,
    // An operation starts only if it fits in its step (scenarios/lib/fit.js), so the
    // step's end waits only for connections to close: 2 R and a margin.
    closeSeconds: (profile) => (2 * rttOf(profile)) / 1000 + 0.3,
    // HTTP connections (HTTP/2 included) close at the end of each iteration.
    options: { noVUConnectionReuse: true },
    columns: [
      ...DEFAULT_COLUMNS.filter((c) => c.title !== 'server p50'),
      { title: 'recovery p50', metric: 'recovery_duration', stat: 'med', unit: 'ms' },
      { title: 'recovery max', metric: 'recovery_duration', stat: 'max', unit: 'ms' },
      { title: 'reconnects', metric: 'reconnects', stat: 'count', unit: '' },
    ],
  };
}
