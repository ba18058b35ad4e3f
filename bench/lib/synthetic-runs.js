// Synthetic k6-operator runner folders for bench/merge-scale.js: what one runner
// of a TestRun leaves (deploy/k8s/testrun.yaml: summary.json and k6's raw
// samples.json.gz), at any size, from a seeded generator, so the exact pooled
// statistics can be computed for the check.
//
// The test: 4 lanes (http-keepalive, http2, ws, grpc) x 4 steps (c1, c10, c50,
// c200) x 2 payloads = 32 rows; p50/p95 gates per row, op_failed and checks. Each
// operation writes 8 lines as k6 does (op_duration, op_failed, server_duration,
// checks, http_req_duration, data_sent, data_received, iterations), tagged as the
// pack tags them plus the operator's instance_id and testrun_name; latencies are
// log-normal per row, recorded to the nanosecond like k6's HTTP timings.
// Run as a worker thread (workerData: { dir, runner, runners, samples, seed }), it
// writes one runner folder and posts back the row cells' values (Float64Array per
// key) for the exact check.
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createGzip } from 'node:zlib';
import { mulberry32 } from '../../dev/prng.js';

export const LINES_PER_OP = 8;
const LANES = [
  { lane: 'http_keepalive', transport: 'http-keepalive', tls: 'false', ms: 2.1 },
  { lane: 'http2', transport: 'http2', tls: 'true', ms: 3.4 },
  { lane: 'ws', transport: 'ws', tls: 'false', ms: 1.2 },
  { lane: 'grpc', transport: 'grpc', tls: 'false', ms: 1.6 },
];
const STEPS = [1, 10, 50, 200];
const PAYLOADS = [
  { payload: 'small', factor: 1 },
  { payload: 'big', factor: 6 },
];

// The rows: [{ scenario, lane, transport, tls, step, vus, payload, medianMs }].
export function plan() {
  const rows = [];
  for (const l of LANES) {
    for (const vus of STEPS) {
      for (const p of PAYLOADS) {
        rows.push({
          scenario: `${l.lane}_c${vus}`,
          lane: l.lane,
          transport: l.transport,
          tls: l.tls,
          step: `c${vus}`,
          vus,
          payload: p.payload,
          medianMs: l.ms * p.factor * (1 + Math.log2(vus) / 4),
        });
      }
    }
  }
  return rows;
}

export const rowKey = (row) => `op_duration{scenario:${row.scenario},payload:${row.payload}}`;
export const stepKey = (scenario) => `op_duration{scenario:${scenario}}`;

// The summary.json of one runner (schema version 1, as scenarios/lib/summary.js writes it;
// its statistics are the runner's own and are not what the merge reads).
export function summaryDoc({ runner, runners, startedAt, endedAt }) {
  const rows = plan();
  const cell = (key, type) => ({ key, type, empty: true });
  const cut = (i) => (i === 0 ? '0' : i === runners ? '1' : `${i}/${runners}`);
  const steps = [...new Map(rows.map((r) => [r.scenario, r])).values()].map((r, i) => ({
    scenario: r.scenario,
    lane: r.lane,
    transport: r.transport,
    tls: r.tls === 'true',
    step: r.step,
    vus: r.vus,
    executor: 'constant-vus',
    startSeconds: i * 30,
    durationSeconds: 30,
    latency: cell(stepKey(r.scenario), 'trend'),
    failures: cell(`op_failed{scenario:${r.scenario}}`, 'rate'),
    iterations: 0,
    droppedIterations: 0,
    bytesSent: 0,
    bytesReceived: 0,
  }));
  return {
    schemaVersion: 1,
    run: {
      scenario: 'synthetic',
      profile: 'lan',
      network: { name: 'lan', rttMs: 0, jitterMs: 0, downKbps: null, upKbps: null },
      faults: [],
      load: 'full',
      steps: STEPS,
      stepSeconds: 30,
      latencyMetric: 'op_duration',
      k6Version: '1.8.1',
      startedAt,
      endedAt,
      durationMs: Date.parse(endedAt) - Date.parse(startedAt),
      gitCommit: null,
      thresholdsFile: 'thresholds.json',
      executionSegment: `${cut(runner - 1)}:${cut(runner)}`,
      executionSegmentSequence: Array.from({ length: runners + 1 }, (_, i) => cut(i)).join(','),
      samples: null,
      hints: {},
    },
    steps,
    rows: rows.map((r) => ({
      id: `${r.scenario} payload:${r.payload}`,
      scenario: r.scenario,
      lane: r.lane,
      transport: r.transport,
      tls: r.tls === 'true',
      step: r.step,
      vus: r.vus,
      dims: { payload: r.payload },
      latency: cell(rowKey(r), 'trend'),
      failures: cell(`op_failed{scenario:${r.scenario},payload:${r.payload}}`, 'rate'),
      metrics: {
        'server_duration{part:total}': cell(
          `server_duration{scenario:${r.scenario},payload:${r.payload},part:total}`,
          'trend',
        ),
      },
    })),
    thresholds: [
      ...rows.flatMap((r) => [
        { key: rowKey(r), threshold: `p(50)<${Math.ceil(r.medianMs * 1.3)}`, ok: true, stat: 'p(50)', observed: null },
        { key: rowKey(r), threshold: `p(95)<${Math.ceil(r.medianMs * 4)}`, ok: true, stat: 'p(95)', observed: null },
      ]),
      { key: 'op_failed', threshold: 'rate<0.01', ok: true, stat: 'rate', observed: null },
      { key: 'checks', threshold: 'rate>0.99', ok: true, stat: 'rate', observed: null },
    ],
    checks: { passes: 0, fails: 0, rate: null },
    totals: { iterations: 0, droppedIterations: 0, bytesSent: 0, bytesReceived: 0 },
  };
}

// Writes runner `runner` (1-based) of `runners` with `samples` sample lines into dir/runner-<n>/.
// Resolves { dir, ops, values: { rowKey: Float64Array } }.
export async function writeRunner({ dir, runner, runners, samples, seed = 1 }) {
  const folder = join(dir, `runner-${runner}`);
  mkdirSync(folder, { recursive: true });
  const rows = plan();
  const random = mulberry32(seed * 1000 + runner);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const ops = Math.floor(samples / LINES_PER_OP);
  const perRow = rows.map(() => []);
  const gz = createGzip({ level: 1 });
  const out = gz.pipe(createWriteStream(join(folder, 'samples.json.gz')));
  const start = Date.parse('2026-01-01T12:00:00Z');
  const iso = (ms) =>
    new Date(ms).toISOString().replace('Z', `${String(Math.floor(random() * 1e6)).padStart(6, '0')}Z`);
  const base = `"group":"","instance_id":"${runner}"`;
  let text =
    '{"type":"Metric","data":{"name":"op_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"op_duration"}\n' +
    '{"type":"Metric","data":{"name":"op_failed","type":"rate","contains":"default","thresholds":[],"submetrics":null},"metric":"op_failed"}\n' +
    '{"type":"Metric","data":{"name":"server_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"server_duration"}\n' +
    '{"type":"Metric","data":{"name":"checks","type":"rate","contains":"default","thresholds":[],"submetrics":null},"metric":"checks"}\n' +
    '{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"http_req_duration"}\n' +
    '{"type":"Metric","data":{"name":"data_sent","type":"counter","contains":"data","thresholds":[],"submetrics":null},"metric":"data_sent"}\n' +
    '{"type":"Metric","data":{"name":"data_received","type":"counter","contains":"data","thresholds":[],"submetrics":null},"metric":"data_received"}\n' +
    '{"type":"Metric","data":{"name":"iterations","type":"counter","contains":"default","thresholds":[],"submetrics":null},"metric":"iterations"}\n';
  const point = (metric, time, value, tags) =>
    `{"metric":"${metric}","type":"Point","data":{"time":"${time}","value":${value},"tags":{${tags}}}}\n`;
  for (let op = 0; op < ops; op++) {
    const r = Math.floor(random() * rows.length);
    const row = rows[r];
    const ms = Math.round(row.medianMs * Math.exp(0.45 * gauss()) * 1e6) / 1e6;
    perRow[r].push(ms);
    const failed = random() < 0.002 ? 1 : 0;
    const time = iso(start + Math.floor((op / ops) * 600000));
    const own = `${base},"payload":"${row.payload}","profile":"lan","scenario":"${row.scenario}","step":"${row.step}","testrun_name":"k6pack","tls":"${row.tls}","transport":"${row.transport}"`;
    const http = `"expected_response":"true",${base},"method":"POST","name":"graphql","profile":"lan","proto":"HTTP/1.1","scenario":"${row.scenario}","status":"200","testrun_name":"k6pack","url":"graphql"`;
    text +=
      point('op_duration', time, ms, own) +
      point('op_failed', time, failed, own) +
      point('server_duration', time, Math.round(ms * 0.3 * 1e3) / 1e3, `${own},"part":"total"`) +
      point('checks', time, 1 - failed, `"check":"answered",${own}`) +
      point('http_req_duration', time, ms, http) +
      point('data_sent', time, 190, http) +
      point('data_received', time, 230 + (row.payload === 'big' ? 20000 : 0), http) +
      point('iterations', time, 1, `${base},"scenario":"${row.scenario}","testrun_name":"k6pack"`);
    if (text.length > 1 << 20) {
      if (!gz.write(text)) await new Promise((res) => gz.once('drain', res));
      text = '';
    }
  }
  gz.end(text);
  await new Promise((res, rej) => out.on('finish', res).on('error', rej));
  const doc = summaryDoc({
    runner,
    runners,
    startedAt: new Date(start).toISOString(),
    endedAt: new Date(start + 600000).toISOString(),
  });
  doc.run.samples = 'samples.json.gz';
  writeFileSync(join(folder, 'summary.json'), `${JSON.stringify(doc, null, 2)}\n`);
  const values = Object.fromEntries(rows.map((row, i) => [rowKey(row), Float64Array.from(perRow[i])]));
  return { dir: folder, ops, values };
}

if (!isMainThread && workerData?.synthetic) {
  const result = await writeRunner(workerData);
  parentPort.postMessage(
    result,
    Object.values(result.values).map((v) => v.buffer),
  );
}
