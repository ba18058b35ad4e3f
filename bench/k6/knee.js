// One step of bench/scale.js's knee search: one transport at a constant
// request rate, through the pack's clients (scenarios/lib) and the proxies
// under lan (no toxics).
//   -e TRANSPORT=http-keepalive|http2|grpc|ws -e RATE=400 -e SECONDS=6
// HTTP and gRPC: k6's constant-arrival-rate executor (a request per
// iteration; what the VU pool cannot start is counted in dropped_iterations).
// WebSocket: WS_SOCKETS sockets (a socket lives inside a k6 iteration, so an
// arrival-rate iteration cannot reuse one), each firing its share of RATE on a
// schedule without waiting for answers (graphql-ws multiplexes operations);
// an operation that would exceed MAX_IN_FLIGHT on its socket is dropped and
// counted in knee_dropped.
import { Counter } from 'k6/metrics';
import { Channel, newClient } from '../../scenarios/lib/grpc.js';
import { graphqlHttp } from '../../scenarios/lib/http.js';
import { bookOperation, bookId } from '../../scenarios/lib/queries.js';
import { pause } from '../../scenarios/lib/sessions.js';
import { GraphqlWs, wsUrl } from '../../scenarios/lib/ws.js';
import { rawSetting, setting } from '../../common/settings.js';

const TRANSPORT = rawSetting(__ENV, 'TRANSPORT');
const RATE = setting(__ENV, 'RATE', 0);
const SECONDS = setting(__ENV, 'SECONDS', 6);
const WS_SOCKETS = setting(__ENV, 'WS_SOCKETS');
const MAX_IN_FLIGHT = 90; // the reference server allows 100 operations at once per socket
const dropped = new Counter('knee_dropped');

const arrival = (exec) => ({
  executor: 'constant-arrival-rate',
  exec,
  rate: RATE,
  timeUnit: '1s',
  duration: `${SECONDS}s`,
  // Enough VUs up front: a VU started mid-step (its init loads the .proto) shows up as drops.
  preAllocatedVUs: Math.min(400, Math.ceil(RATE / 50) + 10),
  maxVUs: 400,
  gracefulStop: '5s',
});

const SCENARIOS = {
  'http-keepalive': arrival('http'),
  http2: arrival('http'),
  grpc: arrival('grpc'),
  ws: { executor: 'per-vu-iterations', exec: 'ws', vus: WS_SOCKETS, iterations: 1, maxDuration: `${SECONDS + 35}s` },
};
if (!SCENARIOS[TRANSPORT]) throw new Error(`TRANSPORT=${TRANSPORT}: use ${Object.keys(SCENARIOS).join(', ')}`);

export const options = {
  scenarios: { knee: { ...SCENARIOS[TRANSPORT], tags: { transport: TRANSPORT } } },
  insecureSkipTLSVerify: true,
  summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'count'],
  thresholds: {
    op_duration: ['max>=0'],
    op_failed: ['rate>=0'],
    knee_dropped: ['count>=0'],
    dropped_iterations: ['count>=0'],
  },
};

let i = 0;
export function http() {
  graphqlHttp({ transport: TRANSPORT, tls: TRANSPORT === 'http2', ...bookOperation(__VU, i++) });
}

const channel = new Channel(newClient());
export function grpc() {
  const id = bookId(1 + (i++ % 1000));
  channel.call('GetBook', { id }, { validate: (b) => (b && b.id === id ? null : `GetBook answered ${b && b.id}`) });
}

// One socket per VU (one iteration) for the whole step: RATE / WS_SOCKETS operations per second.
export async function ws() {
  const socket = new GraphqlWs(wsUrl(false));
  await socket.open();
  const interval = (1000 * WS_SOCKETS) / RATE;
  const start = Date.now();
  const running = [];
  let inFlight = 0;
  for (let n = 0; Date.now() - start < SECONDS * 1000 && n < RATE * SECONDS;) {
    // Everything due by now, then a short wait.
    const due = Math.floor((Date.now() - start) / interval) + 1;
    for (; n < due; n++) {
      if (inFlight >= MAX_IN_FLIGHT) {
        dropped.add(1);
        continue;
      }
      inFlight++;
      running.push(socket.execute(bookOperation(__VU, n)).then(() => inFlight--));
    }
    await pause(Math.max(1, Math.min(10, interval)));
  }
  await Promise.all(running);
  await socket.close();
}
