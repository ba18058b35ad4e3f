// A/B slots for bench/overhead.js: pairs of sides (a, b, and optionally c), each
// side a client (bare k6 or the pack's scenarios/lib) against a target, run in
// alternating slots (A B C, then C B A, ...) so drift and neighbours' noise fall
// on every side alike.
// Every slot is a constant-vus k6 scenario named <side>_<round> (round 0 is a
// warm-up); the bench reads iterations{scenario:...} and
// iteration_duration{scenario:...} from k6's --summary-export.
//
//   -e PLAN='{"a":{"exec":"bareHttp","env":{"URL":"..."}},"b":{...},"rounds":5,"slotSeconds":4,"vus":1}'
// One iteration is one request (http, grpc), or one socket carrying WS_OPS
// operations (ws: a socket lives inside an iteration in k6).
// The lib side's targets are the run's GRAPHQL_HTTP_URL / GRAPHQL_WS_URL / GRPC_ADDR.
// lib* records what a scenario records by default (METRICS=full: common/recording.js),
// lean* the same clients under METRICS=lean; one VU switches between them per slot.
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { WebSocket } from 'k6/websockets';
import { Channel, newClient } from '../../scenarios/lib/grpc.js';
import { graphqlHttp } from '../../scenarios/lib/http.js';
import { BOOK_QUERY, validateBook } from '../../scenarios/lib/queries.js';
import { GraphqlWs, wsUrl } from '../../scenarios/lib/ws.js';
import { configureRecording, recording } from '../../scenarios/lib/metrics.js';
import { recordingOf } from '../../common/recording.js';
import { rawSetting, setting } from '../../common/settings.js';

// URL and ADDR are each k6 scenario's own env (the plan's), read when an iteration runs.

const PLAN = JSON.parse(rawSetting(__ENV, 'PLAN'));
const GRACE_SECONDS = 1;
export const WS_OPS = setting(__ENV, 'WS_OPS');
const ID = 'book-1';
const VARIABLES = { id: ID };
const BODY = JSON.stringify({ query: BOOK_QUERY, variables: VARIABLES });

// Pairs run round after round; inside a round each pair's sides run one after
// the other, A first in odd rounds and last in even ones.
function slots() {
  const scenarios = {};
  const thresholds = {};
  let start = 0;
  const add = (pair, side, round, seconds) => {
    const name = `${pair}_${side}_${round}`;
    const s = PLAN.pairs[pair][side];
    scenarios[name] = {
      executor: 'constant-vus',
      vus: PLAN.vus,
      duration: `${seconds}s`,
      startTime: `${start}s`,
      // Iterations finish rather than being cut: k6 v1.8.1 can wedge a VU
      // whose iteration is interrupted while a WebSocket and a timer are both
      // pending (its later iterations get neither socket events nor timers),
      // which left the lib's WS side with no iterations in later slots.
      gracefulStop: `${GRACE_SECONDS}s`,
      exec: s.exec,
      env: s.env || {},
    };
    // k6 reports a sub-metric only when it has a threshold.
    thresholds[`iterations{scenario:${name}}`] = ['count>=0'];
    thresholds[`iteration_duration{scenario:${name}}`] = ['max>=0'];
    start += seconds + GRACE_SECONDS + 0.5;
  };
  for (let r = 0; r <= PLAN.rounds; r++) {
    for (const pair of Object.keys(PLAN.pairs)) {
      const sides = Object.keys(PLAN.pairs[pair]).sort();
      for (const side of r % 2 ? sides : sides.reverse())
        add(pair, side, r, r === 0 ? PLAN.warmupSeconds || 1 : PLAN.slotSeconds);
    }
  }
  return { scenarios, thresholds };
}

export const options = {
  ...slots(),
  insecureSkipTLSVerify: true,
  summaryTrendStats: ['avg', 'med', 'p(95)', 'count'],
};

// ---- bare k6: the request and nothing else ----

export function bareHttp() {
  http.post(rawSetting(__ENV, 'URL'), BODY, { headers: { 'Content-Type': 'application/json' } });
}

const bareClient = new grpc.Client();
bareClient.load([import.meta.resolve('../../servers/proto').replace(/^file:\/\//, '')], 'books.proto');
let bareConnected = false;
export function bareGrpc() {
  if (!bareConnected) {
    bareClient.connect(rawSetting(__ENV, 'ADDR'), { plaintext: true });
    bareConnected = true;
  }
  bareClient.invoke('books.v1.Books/GetBook', { id: ID });
}

export function bareWs() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(rawSetting(__ENV, 'URL'), 'graphql-transport-ws');
    let n = 0;
    const subscribe = () =>
      ws.send(
        JSON.stringify({ id: String(++n), type: 'subscribe', payload: { query: BOOK_QUERY, variables: VARIABLES } }),
      );
    ws.onopen = () => ws.send('{"type":"connection_init"}');
    ws.onmessage = (e) => {
      const type = JSON.parse(e.data).type;
      if (type === 'connection_ack') subscribe();
      else if (type === 'complete') {
        if (n < WS_OPS) subscribe();
        else ws.close();
      }
    };
    ws.onerror = (e) => reject(new Error(String(e.error)));
    ws.onclose = () => resolve();
  });
}

// ---- the pack's clients (scenarios/lib), as the scenarios use them ----

// What the VU records: a scenario's default (full), or METRICS=lean.
const FULL = recordingOf({ ...__ENV, METRICS: 'full' });
const LEAN = recordingOf({ ...__ENV, METRICS: 'lean' });
const use = (rec) => recording() !== rec && configureRecording(rec);

function http1() {
  graphqlHttp({ transport: 'http-keepalive', query: BOOK_QUERY, variables: VARIABLES, validate: validateBook(ID) });
}

const channel = new Channel(newClient());
function grpc1() {
  channel.call('GetBook', { id: ID }, { validate: (b) => (b && b.id === ID ? null : `GetBook answered ${b && b.id}`) });
}

async function ws1() {
  const ws = new GraphqlWs(wsUrl(false));
  await ws.open();
  for (let i = 0; i < WS_OPS; i++)
    await ws.execute({ query: BOOK_QUERY, variables: VARIABLES, validate: validateBook(ID) });
  await ws.close();
}

export function libHttp() {
  use(FULL);
  http1();
}
export function leanHttp() {
  use(LEAN);
  http1();
}
export function libGrpc() {
  use(FULL);
  grpc1();
}
export function leanGrpc() {
  use(LEAN);
  grpc1();
}
export function libWs() {
  use(FULL);
  return ws1();
}
export function leanWs() {
  use(LEAN);
  return ws1();
}
