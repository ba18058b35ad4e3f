// Many graphql-transport-ws connections from one small Node process, for
// bench/scale.js: k6 needs a JS runtime per VU (a socket lives inside a VU's
// iteration), which is too heavy for ten thousand sockets on this machine.
//
//   node bench/lib/ws-swarm.js '<json options>'
// options: { url, connections, rampPerSecond, holdSeconds, opEverySeconds, timeoutMs }
// Opens `connections` sockets at rampPerSecond (connection_init -> ack each),
// then holds them all for holdSeconds, each running the study-000 book query
// every opEverySeconds (phases spread evenly). Prints JSON lines:
//   {"event":"opened", ...counts, rssBytes}   when the ramp is over (the bench samples the server then)
//   {"event":"done", opened, openFailed, closedEarly, ops, opFailed, p50, p95, rssBytes, baseRssBytes}
// and exits. Every wait is bounded by timeoutMs.
import WebSocket from 'ws';
import { quantile } from '../../common/quantiles.js';
import { BOOK_QUERY } from '../../scenarios/lib/queries.js';

const opts = {
  rampPerSecond: 500,
  holdSeconds: 60,
  opEverySeconds: 30,
  timeoutMs: 30000,
  ...JSON.parse(process.argv[2]),
};
const baseRssBytes = process.memoryUsage.rss();
const stats = { opened: 0, openFailed: 0, closedEarly: 0, ops: 0, opFailed: 0, errors: {} };
const latencies = [];
const sockets = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const note = (why) => {
  const key = String(why).slice(0, 80);
  stats.errors[key] = (stats.errors[key] || 0) + 1;
};

// One connection: resolves true once acked, false if it failed (counted).
function open(i) {
  return new Promise((resolve) => {
    const ws = new WebSocket(opts.url, 'graphql-transport-ws');
    const conn = { ws, pending: new Map(), nextId: 1, acked: false };
    const timer = setTimeout(() => fail('no connection_ack in time'), opts.timeoutMs);
    function fail(why) {
      clearTimeout(timer);
      note(why);
      stats.openFailed++;
      ws.terminate();
      resolve(false);
    }
    ws.on('error', (err) => (conn.acked ? note(err.message) : fail(err.message)));
    ws.on('open', () => ws.send('{"type":"connection_init"}'));
    ws.on('close', (code) => {
      for (const p of conn.pending.values()) p(false);
      conn.pending.clear();
      if (conn.acked && !conn.closing) {
        stats.closedEarly++;
        note(`closed by the server (${code})`);
      }
    });
    ws.on('message', (data) => {
      const msg = JSON.parse(data);
      if (msg.type === 'connection_ack') {
        clearTimeout(timer);
        conn.acked = true;
        stats.opened++;
        sockets[i] = conn;
        resolve(true);
      } else if (msg.type === 'complete' || msg.type === 'error') {
        const done = conn.pending.get(msg.id);
        conn.pending.delete(msg.id);
        if (done) done(msg.type === 'complete');
      } else if (msg.type === 'ping') ws.send('{"type":"pong"}');
    });
  });
}

// One book query on a connection: counted, its latency kept.
function operate(conn) {
  if (!conn || conn.ws.readyState !== WebSocket.OPEN) {
    stats.opFailed++;
    return;
  }
  const id = String(conn.nextId++);
  const t0 = performance.now();
  const timer = setTimeout(() => {
    conn.pending.delete(id);
    stats.opFailed++;
    note('operation timed out');
  }, opts.timeoutMs);
  conn.pending.set(id, (ok) => {
    clearTimeout(timer);
    if (ok) {
      stats.ops++;
      latencies.push(performance.now() - t0);
    } else stats.opFailed++;
  });
  conn.ws.send(
    JSON.stringify({
      id,
      type: 'subscribe',
      payload: { query: BOOK_QUERY, variables: { id: `book-${1 + (Number(id) % 1000)}` } },
    }),
  );
}

// k6's definition (common/quantiles.js), as every figure of the pack.
const quantileOf = (q) => {
  const v = quantile(latencies, q);
  return v === null ? null : Number(v.toFixed(2));
};

// Ramp: batches every 100 ms, each waited for, so a slow server slows the ramp down.
const started = Date.now();
const batch = Math.max(1, Math.round(opts.rampPerSecond / 10));
for (let i = 0; i < opts.connections; i += batch) {
  const t0 = Date.now();
  await Promise.all(Array.from({ length: Math.min(batch, opts.connections - i) }, (_, k) => open(i + k)));
  await sleep(Math.max(0, 100 - (Date.now() - t0)));
}
const rampSeconds = (Date.now() - started) / 1000;
console.log(JSON.stringify({ event: 'opened', ...stats, rampSeconds, rssBytes: process.memoryUsage.rss() }));

// Hold: every connection operates every opEverySeconds, phases spread over the period.
const live = sockets.filter(Boolean);
const period = opts.opEverySeconds * 1000;
const timers = live.map((conn, k) => {
  const first = setTimeout(
    () => {
      operate(conn);
      conn.interval = setInterval(() => operate(conn), period);
    },
    (k / live.length) * period,
  );
  return () => {
    clearTimeout(first);
    clearInterval(conn.interval);
  };
});
await sleep(opts.holdSeconds * 1000);
const rssBytes = process.memoryUsage.rss();
timers.forEach((stop) => stop());
// In-flight operations get their timeout to finish.
const deadline = Date.now() + opts.timeoutMs;
while (live.some((c) => c.pending.size) && Date.now() < deadline) await sleep(50);
for (const conn of live) {
  conn.closing = true;
  conn.ws.close(1000, 'done');
}
console.log(
  JSON.stringify({
    event: 'done',
    ...stats,
    rampSeconds,
    p50: quantileOf(0.5),
    p95: quantileOf(0.95),
    rssBytes,
    baseRssBytes,
  }),
);
await sleep(500);
for (const conn of live) conn.ws.terminate();
process.exit(0);
