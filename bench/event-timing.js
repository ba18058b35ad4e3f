#!/usr/bin/env node
/*
 * The link toxic's event timing (issue 26): does a blackout begin and end when its
 * schedule says, as a probe on a real connection sees it? The link toxic applies its
 * events itself from `epoch` (tools/toxiproxy/events.go), so the schedule's precision
 * is the toxic's timer and the proxy's own delay, not an API call's.
 *
 * A proxy on the pack's toxiproxy build, carrying link toxics with no round trip and
 * a blackout of 500 ms every 1.5 s, in front of a sink that timestamps every byte it
 * receives (a worker thread, so this process's busy-waits never delay it). Per event:
 *   - start: one connection sends a byte every 0.5 ms from 25 ms before the
 *     blackout's start to 25 ms after it; the first byte held (it reaches the sink
 *     more than 20 ms after it was sent: the retransmission) marks the start as seen;
 *   - end: 80 connections, opened before the event and idle through it, send one
 *     byte each, 1 ms apart, from 40 ms before the blackout's end; the first that
 *     passes unheld, with every later one, marks the end as seen.
 * The error is the seen time minus the scheduled one (send times are when this
 * process wrote the byte, taken with performance.now). Target: within 2 ms.
 *
 *   node bench/event-timing.js             # 8 events
 *   node bench/event-timing.js --quick     # 3 events
 * Appends its figures to bench/results.jsonl.
 */
import { once } from 'node:events';
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { main, parseFlags, quantile, recordResult, round, table, withStack } from './lib/common.js';
import { rawSetting } from '../common/settings.js';

const TARGET_MS = 2;
const PERIOD_MS = 1500;
const LENGTH_MS = 500;
const HELD_MS = 20; // a held byte waits for a retransmission: 200 ms at least here

const nowMs = () => performance.timeOrigin + performance.now();

// The sink: an echo-less TCP server in a worker that reports, per connection (the
// first two bytes a client sends name it), the arrival time of every byte after them.
const SINK = `
const { parentPort } = require('node:worker_threads');
const net = require('node:net');
const now = () => performance.timeOrigin + performance.now();
const arrivals = {};
const server = net.createServer((socket) => {
  const head = [];
  let id = null;
  socket.on('data', (chunk) => {
    const t = now();
    for (const b of chunk) {
      if (id === null) {
        head.push(b);
        if (head.length === 2) { id = head[0] * 256 + head[1]; arrivals[id] = []; }
        continue;
      }
      arrivals[id].push(t);
    }
  });
  socket.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => { if (m === 'report') parentPort.postMessage({ arrivals }); });
`;

function startSink() {
  const worker = new Worker(SINK, { eval: true });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => resolve({ worker, port: m.port }));
    worker.once('error', reject);
  });
}

const report = (worker) =>
  new Promise((resolve) => {
    worker.once('message', (m) => resolve(m.arrivals));
    worker.postMessage('report');
  });

async function connect(port, id) {
  const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
  await once(socket, 'connect');
  socket.write(Buffer.from([id >> 8, id & 255])); // names the connection to the sink
  return socket;
}

// Busy-waits until `at` (absolute ms), then writes one byte; returns when it wrote.
function sendAt(socket, at) {
  while (nowMs() < at);
  const sent = nowMs();
  socket.write(Buffer.from([1]));
  return sent;
}

const sleepUntil = (at) => new Promise((r) => setTimeout(r, Math.max(0, at - nowMs() - 5)));

await main(async () => {
  const flags = parseFlags({ events: 8, quick: false });
  if (flags.quick) flags.events = 3;
  const sink = await startSink();
  try {
    await withStack(async (stack) => {
      const toxiproxy = new Toxiproxy(rawSetting(stack.env, 'TOXIPROXY_URL'));
      const proxy = await toxiproxy.request('POST', '/proxies', {
        name: 'event_timing',
        listen: '127.0.0.1:0',
        upstream: `127.0.0.1:${sink.port}`,
      });
      const port = Number(proxy.listen.split(':').pop());
      const epoch = Math.round(Date.now()) + 1000;
      const attributes = {
        epoch,
        event: 1,
        event_offset: 1000,
        event_period: PERIOD_MS,
        event_length: LENGTH_MS,
      };
      for (const stream of ['upstream', 'downstream'])
        await toxiproxy.addToxic('event_timing', {
          name: `link_${stream}`,
          type: 'link',
          stream,
          toxicity: 1,
          attributes,
        });
      // The toxic's epoch is wall-clock ms (Date.now); this process's clock is
      // performance.timeOrigin + now(): the same clock, read finer.
      let id = 2;
      const probes = [];
      for (let e = 0; e < flags.events; e++) {
        const start = epoch + 1000 + e * PERIOD_MS;
        const end = start + LENGTH_MS;
        await sleepUntil(start - 200);
        const a = await connect(port, id);
        const startProbe = { id: id++, sent: [] };
        const enders = [];
        for (let k = 0; k < 80; k++) enders.push({ socket: await connect(port, id), id: id++, sent: [] });
        await sleepUntil(start - 25);
        for (let t = start - 25; t <= start + 25; t += 0.5) startProbe.sent.push(sendAt(a, t));
        await sleepUntil(end - 40);
        enders.forEach((p, k) => p.sent.push(sendAt(p.socket, end - 40 + k)));
        probes.push({ start, end, a, startProbe, enders });
      }
      await sleepUntil(nowMs() + 2000); // every held byte out (RTO 200 ms, doubling)
      const arrivals = await report(sink.worker);
      const rows = [];
      for (const [e, p] of probes.entries()) {
        const got = arrivals[p.startProbe.id] || [];
        const firstHeld = p.startProbe.sent.findIndex((s, i) => got[i] === undefined || got[i] - s > HELD_MS);
        const sends = p.enders.map((q) => ({ sent: q.sent[0], at: (arrivals[q.id] || [])[0] }));
        const lastHeld = sends.findLastIndex((s) => s.at === undefined || s.at - s.sent > HELD_MS);
        // An edge is seen when the probes bracket it: a lit send before a held one (the
        // start), a held send before a lit one (the end). A probe this process could not
        // send on time (a loaded machine) may miss it: the row says so.
        const startSeen = firstHeld > 0;
        const endSeen = lastHeld >= 0 && lastHeld < sends.length - 1;
        rows.push({
          event: e + 1,
          startLastLitMs: startSeen ? round(p.startProbe.sent[firstHeld - 1] - p.start, 2) : null,
          startErrMs: startSeen ? round(p.startProbe.sent[firstHeld] - p.start, 2) : null,
          endLastDarkMs: endSeen ? round(sends[lastHeld].sent - p.end, 2) : null,
          endErrMs: endSeen ? round(sends[lastHeld + 1].sent - p.end, 2) : null,
          heldMs: firstHeld >= 0 && got[firstHeld] ? round(got[firstHeld] - p.startProbe.sent[firstHeld], 0) : null,
        });
        p.a.destroy();
        p.enders.forEach((q) => q.socket.destroy());
      }
      console.log(table(rows, ['event', 'startLastLitMs', 'startErrMs', 'endLastDarkMs', 'endErrMs', 'heldMs']));
      const edges = rows.flatMap((r) => [r.startErrMs, r.endErrMs]);
      const errs = edges.filter((x) => x !== null).map(Math.abs);
      const unseen = edges.length - errs.length;
      const worst = errs.length ? Math.max(...errs) : null;
      const verdict = !unseen && worst <= TARGET_MS ? 'met' : 'MISSED';
      if (unseen) console.log(`${unseen} of ${edges.length} edges not bracketed by the probes (sent late)`);
      console.log(
        `\nthe blackout as a probe saw it, against its schedule: start ${rows.map((r) => r.startErrMs).join(', ')} ms; end ${rows.map((r) => r.endErrMs).join(', ')} ms; worst ${worst} ms (target within ${TARGET_MS} ms): ${verdict}`,
      );
      recordResult(
        'event-timing',
        {
          events: rows.length,
          startErrMs: rows.map((r) => r.startErrMs),
          endErrMs: rows.map((r) => r.endErrMs),
          p50AbsErrMs: errs.length ? round(quantile(errs, 0.5), 2) : null,
          worstAbsErrMs: worst,
          unseenEdges: unseen,
          targetMs: TARGET_MS,
          verdict,
        },
        { quick: flags.quick },
      );
    });
  } finally {
    await sink.worker.terminate();
  }
});
