/*
 * Faults: every transport under a fault profile.
 * The study-000 query/mutation over HTTP/1.1 keep-alive, HTTP/2 (TLS), one
 * graphql-ws socket per VU, and gRPC GetBook on a warm channel, while the
 * profile breaks connections. Clients recover as real ones do: HTTP opens a
 * new connection on the next request, the WebSocket client reconnects and
 * resumes its operations, the gRPC channel is dropped and connected again.
 * Every connection carries CONN_OPS operations (default 5; one iteration),
 * then closes, as mobile clients lose and reopen connections: faults that hit
 * new connections (flaky, stall, truncate) keep hitting. Every operation has a
 * FAULT_TIMEOUT_MS deadline (default 5000), so a stalled connection fails an
 * operation instead of the test; the run ends normally and failures are
 * counted in op_failed. On the WebSocket lane every wait (connect, operation,
 * close) also ends before its step does (sessions.js): what is still in flight
 * then is counted in op_abandoned, not op_failed, and every VU must record an
 * operation in every step (silent_vus, gated at 0: a VU k6 wedged fails the
 * run instead of showing as fewer operations).
 * Servers: the GraphQL and gRPC servers behind Toxiproxy.
 * Default profile: 4g+flaky (10 % of new connections reset by the peer);
 * try 3g+stall, lte+truncate, 4g+jitter.
 * Look at: op_failed per lane (success rate), recovery_duration (first failure
 * -> next success on the same VU), reconnects; the VUs-per-step line.
 *
 *   npx k6pack up && k6 run scenarios/faults.js
 *   k6 run -e PROFILE=3g+stall scenarios/faults.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan faults --load ci`; dev/plan-headers.js writes it):
 *   faults under 4g+flaky (R 170 ms, down 9000 / up 9000 kbit/s, faults flaky), load ci, closed workload: 8 k6 scenarios, 65.6 s in all
 *     k6 scenario        executor      VUs or rate  start  duration  graceful stop
 *     http_keepalive_c1  constant-vus  1 VU         0s     7.5s      0.7s
 *     http_keepalive_c4  constant-vus  4 VUs        8.2s   7.5s      0.7s
 *     http2_c1           constant-vus  1 VU         16.4s  7.5s      0.7s
 *     http2_c4           constant-vus  4 VUs        24.6s  7.5s      0.7s
 *     ws_c1              constant-vus  1 VU         32.8s  7.5s      0.7s
 *     ws_c4              constant-vus  4 VUs        41s    7.5s      0.7s
 *     grpc_c1            constant-vus  1 VU         49.2s  7.5s      0.7s
 *     grpc_c4            constant-vus  4 VUs        57.4s  7.5s      0.7s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (LOAD=ci's steps: 1, 4)
 *     duration: 4 iterations of the model's 1.860 s
 *     graceful stop: the spec's time to close
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import declare from './specs/faults.js';
import { fitter, waitOutStep } from './lib/fit.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { trackRecovery } from './lib/metrics.js';
import { bookId, bookOperation } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { wsSession } from './lib/sessions.js';
import { SETTINGS } from './lib/config.js';

const decl = declare(SETTINGS);
const { TIMEOUT_MS, CONN_OPS } = decl;
const s = defineScenario(decl);
export const { options, setup, teardown, handleSummary } = s;

const operation = (i) => bookOperation(exec.vu.idInTest, i);

// An operation starts only if the model says it ends before the step does (fit.js),
// so a step's gracefulStop need only cover closing (specs/faults.js closeSeconds).
const fits = fitter(s);
function fitsNext(laneName, i) {
  if (fits(laneName, {})) return true;
  if (i === 0) waitOutStep(s);
  return false;
}

function httpLane({ name, transport, tls }) {
  for (let i = 0; i < CONN_OPS && fitsNext(name, i); i++) {
    const r = graphqlHttp({
      transport,
      tls,
      timeout: `${TIMEOUT_MS}ms`,
      ...operation(exec.vu.iterationInScenario * CONN_OPS + i),
    });
    trackRecovery(transport, r.ok);
  }
}

function wsLane({ tls }) {
  return wsSession({
    tls,
    tags: {},
    recover: true,
    maxOps: CONN_OPS,
    maxReconnects: CONN_OPS,
    timeoutMs: TIMEOUT_MS,
    op: (socket, i) =>
      socket.execute({ ...operation(exec.vu.iterationInScenario * CONN_OPS + i), timeoutMs: TIMEOUT_MS }),
  });
}

const channel = new Channel(newClient());

function grpcLane({ name }) {
  for (let i = 0; i < CONN_OPS && fitsNext(name, i); i++) {
    const id = bookId(1 + ((exec.vu.idInTest * 7919 + exec.vu.iterationInScenario * CONN_OPS + i) % 1000));
    const r = channel.call(
      'GetBook',
      { id },
      { validate: (b) => (b && b.id === id ? null : `GetBook answered ${b && b.id}`), timeout: `${TIMEOUT_MS}ms` },
    );
    trackRecovery('grpc', r.ok);
  }
  channel.close();
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch).
export const runLane = s.dispatch({ http: httpLane, ws: wsLane, grpc: grpcLane });
