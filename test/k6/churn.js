// Connection churn on all four proxies, for the profile-change tests and bench:
// fresh HTTP/1.1 and HTTPS connections (Connection: close), a new gRPC channel
// per iteration on plaintext and TLS, and graphql-transport-ws sockets opened,
// initialised and closed. Applies no profile itself (it never calls /reset):
// whoever runs it switches profiles underneath. Bounded by CHURN_SECONDS.
//   k6 run -e CHURN_SECONDS=60 test/k6/churn.js
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { sleep } from 'k6';
import { WebSocket } from 'k6/websockets';
import { resolveTargets } from '../../scenarios/lib/config.js';

const T = resolveTargets();
const SECONDS = Number(__ENV.CHURN_SECONDS || 30);
const QUERY = JSON.stringify({ query: '{ book(id: "book-1") { id } }' });
const HEADERS = { 'Content-Type': 'application/json', Connection: 'close' };
// Every call has a short deadline: under 2g or a stall fault an operation may not finish,
// and the churn must keep opening connections rather than wait.
const TIMEOUT = '3s';

const scenario = (exec, vus) => ({ executor: 'constant-vus', exec, vus, duration: `${SECONDS}s`, gracefulStop: '5s' });
export const options = {
  scenarios: {
    http_fresh: scenario('httpFresh', 3),
    https_fresh: scenario('httpsFresh', 3),
    grpc_fresh: scenario('grpcFresh', 2),
    grpc_tls_fresh: scenario('grpcTlsFresh', 2),
    ws: scenario('wsChurn', 3),
  },
  insecureSkipTLSVerify: true,
  noConnectionReuse: true,
  summaryTrendStats: ['count'],
};

const post = (url) => http.post(url, QUERY, { headers: HEADERS, timeout: TIMEOUT, tags: { name: 'churn' } });
export const httpFresh = () => post(T.GRAPHQL_HTTP_URL);
export const httpsFresh = () => post(T.GRAPHQL_HTTPS_URL);

const client = new grpc.Client();
client.load([import.meta.resolve('../../servers/proto/').replace(/^file:\/\//, '')], 'books.proto');
function grpcOnce(addr, tls) {
  try {
    client.connect(addr, { plaintext: !tls, timeout: TIMEOUT });
    client.invoke('books.v1.Books/GetBook', { id: 'book-1' }, { timeout: TIMEOUT });
  } catch (_) {
    sleep(0.05); // a refused or reset connect: try again
  } finally {
    client.close();
  }
}
export const grpcFresh = () => grpcOnce(T.GRPC_ADDR, false);
export const grpcTlsFresh = () => grpcOnce(T.GRPC_TLS_ADDR, true);

// Open, connection_init, wait for the ack (or 3 s), close.
export function wsChurn() {
  return new Promise((resolve) => {
    const ws = new WebSocket(T.GRAPHQL_WS_URL, 'graphql-transport-ws');
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      try {
        if (ws.readyState === 1) ws.close();
      } catch (_) {
        // closing already
      }
      done();
    }, 3000);
    ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init' }));
    ws.onmessage = () => ws.close();
    ws.onclose = done;
    // A refused connection (toxiproxy gone) fails at once: pause before the next.
    ws.onerror = () => setTimeout(done, 50);
  });
}
