// books.v1.Books for @connectrpc/connect: the same books, bounds and answers as the
// gRPC server's handlers (servers/grpc/books-service.js, whose checks it calls), for
// the calls a browser makes: the unary ones and the server streams. The client and
// bidirectional streams and the hub's calls are the gRPC server's; here they answer
// UNIMPLEMENTED, as Connect does for any method it was not given.
//
// Server time goes out as the `server-timing` header (Connect and gRPC-Web unary)
// or trailer (streams), in the one format (common/server-timing.js). Connect
// encodes the answer after the handler returns, out of the handler's reach: `ser`
// is left out rather than guessed, and `total` is the handler's time.
import { Code, ConnectError } from '@connectrpc/connect';
import { LIMITS } from '../../common/defaults.js';
import { checkCount, filler, fullBookAt } from '../shared/data.js';
import { processStats } from '../shared/stats.js';
import { checkRange, findBook, invalid, listedCount, payloadSize, RpcError } from '../grpc/books-service.js';
import { SERVER_TIMING_KEY } from '../grpc/server-timing.js';

// gRPC's status codes and Connect's are the same numbers (connectrpc.com/docs/protocol#error-codes).
function toConnectError(err) {
  if (err instanceof RpcError) return new ConnectError(err.details, err.code);
  console.error(`connect server: ${err.stack || err}`);
  return new ConnectError(`internal error: ${err.message}`, Code.Internal);
}

const timingOf = (start, exec) => {
  const total = performance.now() - start;
  return `exec;dur=${Math.round(exec * 1000) / 1000}, total;dur=${Math.round(total * 1000) / 1000}`;
};

// A unary handler: build (timed), answer with server-timing in the header.
function unary(build) {
  return (request, ctx) => {
    const start = performance.now();
    try {
      const message = build(request, ctx);
      ctx.responseHeader.set(SERVER_TIMING_KEY, timingOf(start, performance.now() - start));
      return message;
    } catch (err) {
      throw toConnectError(err);
    }
  };
}

// A server stream: `produce(request, signal)` yields messages; the transport's
// backpressure holds the generator (Connect writes one message before asking for
// the next), ctx.signal ends it when the client goes or the server stops.
function serverStream(produce) {
  return async function* stream(request, ctx) {
    const start = performance.now();
    let exec = 0;
    try {
      for await (const build of produce(request, ctx.signal)) {
        if (ctx.signal.aborted) return;
        const t0 = performance.now();
        const message = build();
        exec += performance.now() - t0;
        yield message;
      }
    } catch (err) {
      throw toConnectError(err);
    }
    ctx.responseTrailer.set(SERVER_TIMING_KEY, timingOf(start, exec));
  };
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

function* streamBooks({ n }) {
  listedCount(n);
  for (let i = 1; i <= n; i++) yield () => fullBookAt(i);
}

// As the gRPC server's StreamEvents: event k due at start + (k-1) x intervalMs.
async function* streamEvents({ count, intervalMs, size }, signal) {
  const bad = checkCount('count', count, LIMITS.MAX_EVENTS) || checkCount('size', size, LIMITS.MAX_PAYLOAD_BYTES);
  if (bad) throw invalid(bad);
  checkRange('interval_ms', intervalMs, LIMITS.MIN_EVENT_INTERVAL_MS, LIMITS.MAX_EVENT_INTERVAL_MS);
  const start = performance.now();
  for (let seq = 1; seq <= count && !signal.aborted; seq++) {
    const wait = start + (seq - 1) * intervalMs - performance.now();
    if (wait > 0) await sleep(wait, signal);
    yield () => ({
      id: `event-${seq}`,
      seq,
      sentAt: performance.timeOrigin + performance.now(),
      data: filler(size, seq),
    });
  }
}

export const booksImplementation = {
  getBook: unary(({ id }) => findBook(id)),
  listBooks: unary(({ n }) => {
    const books = new Array(listedCount(n));
    for (let i = 0; i < n; i++) books[i] = fullBookAt(i + 1);
    return { books };
  }),
  payload: unary(({ size }) => ({ size, data: filler(payloadSize(size)) })),
  stats: unary((_request, ctx) => {
    const { rssBytes, heapUsedBytes, uptimeSeconds } = processStats({ gc: ctx.requestHeader.get('gc') === '1' });
    return { rssBytes, heapUsedBytes, uptimeSeconds };
  }),
  streamBooks: serverStream(streamBooks),
  streamEvents: serverStream(streamEvents),
};
