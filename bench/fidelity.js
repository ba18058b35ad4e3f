#!/usr/bin/env node
/*
 * Fidelity: does an operation through the pack's Toxiproxy cost what the
 * round-trip model (common/model.js, docs/model.md) says it costs on a real link?
 *
 * For every transport of ws-vs-http and grpc-vs-graphql (the real scenarios,
 * one VU: LOAD=smoke STEPS=1, summaries via RESULTS_DIR) under lan, lte, 4g,
 * 3g and 2g, the measured p50 beside the model's prediction
 *     k R + up bytes / up-rate + down bytes / down-rate + server time
 * (k: round trips of the operation, from the model; bytes: what k6 sent and
 * received per operation, measured once under lan from its data_sent /
 * data_received per iteration; server time: the p50 of the servers' own timing,
 * server_duration{part:total}, from the same run) and their ratio.
 * Target: every ratio within 0.95-1.05 for profiles with RTT >= 40 ms, 0.9-1.1
 * below (fios, cable: --profiles fios,cable).
 *
 *   node bench/fidelity.js                      # all five profiles, ~9 minutes
 *   node bench/fidelity.js --profiles lte,3g --scenarios ws-vs-http
 *   node bench/fidelity.js --quick              # lte only, short steps, only the lanes the rows read (a check that it runs)
 * Appends its figures to bench/results.jsonl (BENCH_RESULTS moves it).
 */
import { linkOf, windowWaitMs } from '../common/model.js';
import { loadProfile } from '../lib/profiles.js';
import {
  BenchError,
  main,
  median,
  parseFlags,
  recordResult,
  round,
  runScenario,
  stat,
  table,
  withStack,
} from './lib/common.js';

const TARGET = [0.95, 1.05];
const TARGET_MIN_RTT = 40;
// Below 40 ms of RTT (fios 4 ms, cable 28 ms) k6's and TLS's own milliseconds weigh
// more: 0.9-1.1 (the emulator itself costs at most 0.3 ms a round trip: bench/tcp.js).
const TARGET_LOW_RTT = [0.9, 1.1];
const SMALL = 100; // grpc-vs-graphql's small payload (scenarios/grpc-vs-graphql.js)
const BIG = 20000; // its big payload here: 1 MB would take 30 s a call under 2g
const WS_OPS = 4; // operations per socket, so each run also has a few socket set-ups

// graphql-transport-ws connection_init (client, masked frame: 2 + 4 header bytes)
// and connection_ack (server, 2 header bytes); +22 per TLS 1.3 record on wss.
const INIT_UP = JSON.stringify({ type: 'connection_init', payload: {} }).length + 6;
const ACK_DOWN = JSON.stringify({ type: 'connection_ack' }).length + 2;
const TLS_RECORD = 22;

// Rows: what is measured (a sub-metric of the scenario's summary), its round
// trips, and where its bytes come from (see bytesFor*).
const WS_HTTP_ROWS = [
  { row: 'http fresh', lane: 'http_fresh', k: 2, bytes: 'iteration' },
  { row: 'http keep-alive', lane: 'http_keepalive', k: 1, bytes: 'iteration' },
  { row: 'ws op', lane: 'ws', k: 1, bytes: 'wsOp' },
  {
    row: 'ws upgrade (TCP + upgrade)',
    lane: 'ws',
    k: 2,
    bytes: 'wsUpgrade',
    metric: 'setup_duration',
    tags: { phase: 'ws_upgrade' },
    server: false,
  },
  {
    row: 'ws init/ack',
    lane: 'ws',
    k: 1,
    bytes: 'wsInit',
    metric: 'setup_duration',
    tags: { phase: 'ws_init' },
    server: false,
  },
  { row: 'https fresh (TCP + TLS 1.3)', lane: 'https_fresh', k: 3, bytes: 'iteration' },
  { row: 'http2', lane: 'http2', k: 1, bytes: 'iteration' },
  { row: 'wss op', lane: 'wss', k: 1, bytes: 'wsOp' },
  {
    row: 'wss upgrade (TCP + TLS + upgrade)',
    lane: 'wss',
    k: 3,
    bytes: 'wsUpgrade',
    metric: 'setup_duration',
    tags: { phase: 'ws_upgrade' },
    server: false,
  },
  {
    row: 'wss init/ack',
    lane: 'wss',
    k: 1,
    bytes: 'wsInit',
    metric: 'setup_duration',
    tags: { phase: 'ws_init' },
    server: false,
  },
];

const GRPC_GRAPHQL_ROWS = [
  ['grpc', 'grpc', 'warm', 1],
  ['grpc cold (connect + call)', 'grpc', 'cold', 3],
  ['grpc-fresh', 'grpc_fresh', 'cold', 3],
  ['http keep-alive', 'http_keepalive', 'warm', 1],
  ['http keep-alive cold', 'http_keepalive', 'cold', 2],
  ['http fresh', 'http_fresh', 'cold', 2],
].flatMap(([row, lane, conn, k]) =>
  ['small', 'big']
    // The first call of a warm lane is its only cold one: small only.
    .filter((payload) => !(conn === 'cold' && (lane === 'grpc' || lane === 'http_keepalive') && payload === 'big'))
    .map((payload) => ({
      row: `${row} ${payload}`,
      lane,
      k,
      payload,
      tags: { payload, conn },
      bytes: conn === 'cold' && k > 1 && lane !== 'grpc_fresh' && lane !== 'http_fresh' ? 'firstCall' : 'call',
    })),
);

const SCENARIOS = {
  'ws-vs-http': {
    rows: WS_HTTP_ROWS,
    env: { WS_OPS_PER_SOCKET: WS_OPS },
    // About six of the slowest operation (a fresh TLS connection, 3R) per lane.
    stepSeconds: (rtt) => Math.max(3, Math.ceil((6 * 3 * rtt) / 1000 + 1)),
    calibrate: calibrateWsHttp,
  },
  'grpc-vs-graphql': {
    rows: GRPC_GRAPHQL_ROWS,
    env: { BIG_SIZE: BIG },
    // About three iterations of the slowest lane (two new channels, 6R, and the big transfer).
    stepSeconds: (rtt, profile) =>
      Math.max(3, Math.ceil(3 * ((6 * rtt) / 1000 + transferMs(profile, BIG, 'down') / 1000) + 1)),
    calibrate: calibrateGrpcGraphql,
  },
};

// Bytes per ms of a profile's link toxic (Infinity when unlimited).
function rateOf(profile, direction) {
  const t = profile.toxics.find((x) => x.name === `link_${direction === 'up' ? 'upstream' : 'downstream'}`);
  return t && t.attributes.bitrate ? t.attributes.bitrate / 8000 : Infinity; // bit/s -> bytes per ms
}
const transferMs = (profile, bytes, direction) => bytes / rateOf(profile, direction);

// ---- bytes per operation, measured under lan ----

// data_sent / data_received per iteration of each lane: { lane: [{ time, up, down }] },
// iterations that moved no bytes (a session that found its step over) left out.
function iterationsByLane(samples) {
  const byKey = new Map();
  for (const s of samples) {
    const lane = s.tags.scenario;
    if (!lane) continue;
    const key = `${lane}@${s.time}@${s.tags.vu || ''}`;
    const it = byKey.get(key) || { lane, time: s.time, up: 0, down: 0 };
    if (s.metric === 'data_sent') it.up += s.value;
    else it.down += s.value;
    byKey.set(key, it);
  }
  const out = {};
  for (const it of byKey.values()) {
    if (it.up + it.down === 0) continue;
    (out[it.lane.replace(/_c1$/, '')] ??= []).push(it);
  }
  for (const list of Object.values(out)) list.sort((a, b) => a.time - b.time);
  return out;
}

const keepBytes = (metric) => metric === 'data_sent' || metric === 'data_received';
const medianOf = (list, dir) => median(list.map((it) => it[dir]));
const CALIBRATION = { LOAD: 'smoke', STEPS: '1', STEP_SECONDS: '1', PROFILE: 'lan' };

function need(iterations, lane) {
  if (!iterations[lane]?.length)
    throw new BenchError(`calibration run has no data_sent/data_received for lane ${lane}`);
  return iterations[lane];
}

// ws-vs-http: HTTP lanes carry one operation per iteration. A WebSocket
// iteration is a socket: set-up + n operations; two runs (n = many, n = 1)
// separate the two.
async function calibrateWsHttp(stack, extraEnv = {}) {
  const many = await runScenario(stack, 'ws-vs-http', { env: { ...CALIBRATION, ...extraEnv }, keep: keepBytes });
  const one = await runScenario(stack, 'ws-vs-http', {
    env: { ...CALIBRATION, ...extraEnv, WS_OPS_PER_SOCKET: '1' },
    keep: keepBytes,
  });
  const a = iterationsByLane(many.samples);
  const b = iterationsByLane(one.samples);
  const bytes = {};
  for (const lane of ['http_fresh', 'http_keepalive', 'https_fresh', 'http2']) {
    bytes[lane] = { iteration: { up: medianOf(need(a, lane), 'up'), down: medianOf(need(a, lane), 'down') } };
  }
  for (const lane of ['ws', 'wss']) {
    const sessions = need(a, lane);
    const ops = stat(many.summary, `op_duration{scenario:${lane}_c1}`, 'count');
    const perSession = { up: medianOf(need(b, lane), 'up'), down: medianOf(need(b, lane), 'down') };
    const op = {};
    const setup = {};
    for (const dir of ['up', 'down']) {
      const total = sessions.reduce((s, it) => s + it[dir], 0);
      op[dir] = (total - sessions.length * perSession[dir]) / (ops - sessions.length);
      setup[dir] = perSession[dir] - op[dir];
    }
    const tls = lane === 'wss' ? TLS_RECORD : 0;
    const init = { up: INIT_UP + tls, down: ACK_DOWN + tls };
    bytes[lane] = { wsOp: op, wsInit: init, wsUpgrade: { up: setup.up - init.up, down: setup.down - init.down } };
  }
  return bytes;
}

// grpc-vs-graphql: an iteration is a small and a big call; calibrated with
// big = small, so a call is half an iteration and a big one SMALL - BIG bytes more.
async function calibrateGrpcGraphql(stack, extraEnv = {}) {
  const run = await runScenario(stack, 'grpc-vs-graphql', {
    env: { ...CALIBRATION, ...extraEnv, BIG_SIZE: String(SMALL) },
    keep: keepBytes,
  });
  const it = iterationsByLane(run.samples);
  const bytes = {};
  for (const lane of ['grpc', 'grpc_fresh', 'http_keepalive', 'http_fresh']) {
    const list = need(it, lane);
    const call = { up: medianOf(list, 'up') / 2, down: medianOf(list, 'down') / 2 };
    // The first iteration's first call opened the connection.
    const firstCall = { up: list[0].up - call.up, down: list[0].down - call.down };
    bytes[lane] = { call, firstCall };
  }
  return bytes;
}

// ---- the model ----

// k R + the bytes' time + TCP's slow start on a connection the operation opens (its
// answer from the initial window: common/model.js) + the server's time.
function modelFor(row, profile, bytes, serverMs) {
  const rtt = profile.network.rttMs;
  const b = bytes[row.lane][row.bytes];
  const down = b.down + (row.payload === 'big' ? BIG - SMALL : 0);
  const link = linkOf(profile);
  const slowStart = row.k > 1 ? windowWaitMs(down, link.initialWindow, rtt, link.downKbps) : 0;
  const wire = transferMs(profile, b.up, 'up') + transferMs(profile, down, 'down') + slowStart;
  return {
    rounds: row.k * rtt,
    wire,
    server: serverMs ?? 0,
    total: row.k * rtt + wire + (serverMs ?? 0),
    up: b.up,
    down,
  };
}

// The summary keys of a row: what is measured, and the server's own time for it.
function keysFor(row) {
  const dims = { scenario: `${row.lane}_c1`, ...(row.payload ? row.tags : {}) };
  const key = (metric, tags) =>
    `${metric}{${Object.entries(tags)
      .map(([k, v]) => `${k}:${v}`)
      .join(',')}}`;
  return {
    measured: key(row.metric || 'op_duration', { ...dims, ...(row.tags || {}) }),
    server: row.server === false ? null : key('server_duration', { ...dims, part: 'total' }),
  };
}

const targetOf = (rtt) => (rtt >= TARGET_MIN_RTT ? TARGET : TARGET_LOW_RTT);

function verdict(rtt, ratio) {
  if (rtt === 0) return 'n/a';
  if (ratio === null) return 'no data';
  const [lo, hi] = targetOf(rtt);
  return ratio >= lo && ratio <= hi ? 'met' : 'MISSED';
}

// --quick: only the lanes the rows read (a scenario's other lanes would run, and their
// figures go unread), in the calibration run and the measured one.
const quickLanes = (spec) => ({ LANES: [...new Set(spec.rows.map((r) => r.lane))].join(',') });

async function measure(stack, name, spec, profileName, bytes, { quick }) {
  const profile = loadProfile(profileName);
  const rtt = profile.network.rttMs;
  const step = quick ? 2 : spec.stepSeconds(rtt, profile);
  const t0 = Date.now();
  const run = await runScenario(stack, name, {
    env: {
      LOAD: 'smoke',
      STEPS: '1',
      STEP_SECONDS: String(step),
      PROFILE: profileName,
      ...spec.env,
      ...(quick ? quickLanes(spec) : {}),
    },
  });
  const seconds = (Date.now() - t0) / 1000;
  return {
    seconds,
    code: run.code,
    rows: spec.rows.map((row) => {
      const keys = keysFor(row);
      const p50 = stat(run.summary, keys.measured, 'med');
      const n = stat(run.summary, keys.measured, 'count');
      const serverMs = keys.server ? stat(run.summary, keys.server, 'med') : null;
      const model = modelFor(row, profile, bytes, serverMs);
      // Under lan the model is the server time alone: a ratio says nothing there.
      const ratio = p50 === null || rtt === 0 ? null : p50 / model.total;
      return {
        scenario: name,
        profile: profileName,
        rtt,
        row: row.row,
        n,
        p50: round(p50, 1),
        model: round(model.total, 1),
        'k*R': model.rounds,
        wire: round(model.wire, 1),
        server: round(model.server, 2),
        'bytes up/down': `${Math.round(model.up)}/${Math.round(model.down)}`,
        'excess ms': p50 === null ? null : round(p50 - model.total, 1),
        ratio: round(ratio, 3),
        verdict: verdict(rtt, ratio),
      };
    }),
  };
}

await main(async () => {
  const flags = parseFlags({ profiles: 'lan,lte,4g,3g,2g', scenarios: Object.keys(SCENARIOS).join(','), quick: false });
  const profiles = (flags.quick && flags.profiles === 'lan,lte,4g,3g,2g' ? 'lte' : flags.profiles)
    .split(',')
    .map((p) => p.trim());
  profiles.forEach((p) => loadProfile(p)); // an unknown name fails before any run
  const names = flags.scenarios.split(',').map((s) => s.trim());
  for (const n of names)
    if (!SCENARIOS[n]) throw new BenchError(`unknown scenario ${n}: use ${Object.keys(SCENARIOS).join(', ')}`);

  const started = Date.now();
  const rows = [];
  const runs = [];
  await withStack(async (stack) => {
    for (const name of names) {
      const spec = SCENARIOS[name];
      console.log(`${name}: bytes per operation, measured under lan ...`);
      const bytes = await spec.calibrate(stack, flags.quick ? quickLanes(spec) : {});
      for (const p of profiles) {
        const r = await measure(stack, name, spec, p, bytes, flags);
        runs.push({ scenario: name, profile: p, seconds: round(r.seconds, 1), k6Exit: r.code });
        console.log(`\n${name} under ${p} (${round(r.seconds, 0)} s, k6 exit ${r.code}):`);
        console.log(
          table(r.rows, [
            'row',
            'n',
            'p50',
            'model',
            'k*R',
            'wire',
            'server',
            'bytes up/down',
            'excess ms',
            'ratio',
            'verdict',
          ]),
        );
        rows.push(...r.rows);
      }
    }
  });
  const wallSeconds = round((Date.now() - started) / 1000, 0);
  for (const [what, judged, [lo, hi]] of [
    [`RTT >= ${TARGET_MIN_RTT} ms`, rows.filter((r) => r.rtt >= TARGET_MIN_RTT), TARGET],
    [`0 < RTT < ${TARGET_MIN_RTT} ms`, rows.filter((r) => r.rtt > 0 && r.rtt < TARGET_MIN_RTT), TARGET_LOW_RTT],
  ]) {
    if (!judged.length) continue;
    const ratios = judged.map((r) => r.ratio).filter((x) => x !== null);
    console.log(
      `\nfidelity: ${judged.filter((r) => r.verdict === 'met').length} of ${judged.length} rows with ${what} within ${lo}-${hi} (ratios ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}, median ${median(ratios)?.toFixed(3)})`,
    );
  }
  console.log(`wall time ${wallSeconds} s`);
  const judged = rows.filter((r) => r.rtt > 0);
  const met = judged.filter((r) => r.verdict === 'met').length;
  for (const r of judged.filter((x) => x.verdict !== 'met'))
    console.log(`  missed: ${r.scenario} ${r.profile} ${r.row}: ${r.p50} ms vs model ${r.model} ms (x${r.ratio})`);
  recordResult(
    'fidelity',
    {
      target: { ratio: TARGET, minRttMs: TARGET_MIN_RTT, lowRttRatio: TARGET_LOW_RTT },
      met,
      judged: judged.length,
      wallSeconds,
      runs,
      rows,
    },
    { quick: flags.quick },
  );
});
