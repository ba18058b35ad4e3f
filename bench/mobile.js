#!/usr/bin/env node
/*
 * A phone's radio against the model (issue 41): the mobile scenario under +rrc, per
 * network (lte, 3g), each lane at two interaction rates, one operation every T seconds:
 *   - T past the radio's tail (lte 15 s: its tail is 11.6 s; 3g 20 s: DCH 5 s, then FACH
 *     12 s): every operation after its gap finds the radio idle and pays the promotion.
 *     Its p50 over the model's (common/model.js, the radio's terms from common/radio.js).
 *   - T within the tail (2 s): no promotion. Its p50 over the plain network's model.
 *   - 3G only, http_keepalive only: T in FACH (8 s), where FACH carries the book operation.
 *     Its p50 over the model's. Then a run of its own (MOBILE_ANSWER_BYTES=1000),
 *     http_keepalive and grpc in FACH again: FACH carries the request, the answer (past its
 *     475 B buffer) promotes the radio to DCH (1.5 s). Its p50 over the model's.
 *   - the radio's time on (not idle) per hour, read from the link's event log (radio_log)
 *     by the scenario, over common/radio.js's rhythm for one operation every T seconds
 *     (judged on the lanes without pings: a ws lane's pings wake the radio on their own clock);
 *   - the radio's energy per operation (mJ) and per hour (J), from the log's states;
 *   - the radio's timers as the log shows them (promotion, tail; common/radio-log.js
 *     timersOf, p50 over the run) over the papers' values (common/radio.js RADIOS).
 * Targets: p50 / model within 0.9-1.1, both ways; radio on / model within 5 %; timers
 * within 2 %.
 *
 * One stack, one k6 run of scenarios/mobile.js per network (the steps one after another:
 * the radio is the device's), MOBILE_OPS operations after each step's first.
 *
 *   node bench/mobile.js                      # lte and 3g; http_fresh, http_keepalive, ws, ws_ping10, grpc, grpc_ping10; 4 ops: ~23 minutes
 *   node bench/mobile.js --networks lte --lanes http_keepalive --ops 3 --no-nat
 * Then (not --quick, not --no-nat) under lte+rrc+nat=20 at one operation every 30 s, every
 * lane (or those of --lanes), 2 operations after the first: each lane's failures where
 * the NAT drops its connection (the model says which) and its recovery; met when the
 * lanes the model keeps lose nothing and the others lose some (~15 minutes).
 *   node bench/mobile.js --quick              # lte, http_keepalive, 2 ops after the first (a check that it runs)
 * Appends its figures to bench/results.jsonl.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildScenario } from '../common/scenario.js';
import { parsePolicy } from '../common/thresholds.js';
import { energy } from '../common/radio.js';
import { timerParams } from '../common/radio-log.js';
import { linkOf } from '../common/model.js';
import { loadProfile } from '../lib/profiles.js';
import declare, { MOBILE_LANES, natDrops, pingOf } from '../scenarios/specs/mobile.js';
import {
  BenchError,
  main,
  parseFlags,
  recordResult,
  ROOT,
  round,
  runScenario,
  stat,
  table,
  withStack,
} from './lib/common.js';

const TARGET = [0.9, 1.1];
const RADIO_ON_TARGET = 0.05;
const TIMER_TARGET = 0.02;
// Per network: its +rrc profile, a T within the tail and one past it. 3G also has a T
// in FACH (8 s: DCH's 5 s tail is over, FACH's 12 s is not) for http_keepalive, whose
// requests (267 and 283 B on the wire) and answers (427 and 342 B) FACH carries (2026-11-30,
// a relay between k6 and the server; the model's HTTP/1.1 framing: common/lanes/http.js H1).
// 3G's FACH row carries the book operation, which fits FACH's buffers; a run of its own
// (dch) asks for answers of 1000 B (MOBILE_ANSWER_BYTES), past the downlink's 475 B, in
// FACH too: FACH carries the request up, then the answer promotes the radio to DCH (1.5 s),
// the one timer the other runs never start (common/radio.js wake).
const NETWORKS = {
  lte: { spec: 'lte+rrc', radio: 'lte', within: 2, past: 15 },
  '3g': {
    spec: '3g+rrc',
    radio: '3g',
    within: 2,
    past: 20,
    fach: { everyS: 8, lanes: ['http_keepalive'] },
    dch: { everyS: 8, answerBytes: 1000, lanes: ['http_keepalive', 'grpc'] },
  },
};
const GAPS = { within: 'within the tail', past: 'past the tail', fach: 'in FACH' };
const gapText = (gap, n) => (gap === 'dch' ? `in FACH, answers of ${n.dch.answerBytes} B` : GAPS[gap]);

const policy = parsePolicy(readFileSync(join(ROOT, 'thresholds.json'), 'utf8'), 'thresholds.json');

// The model's p50 (ms, and its radio part) of a row, from the plan the run uses.
function modelOf(spec, env, key) {
  const built = buildScenario(declare(env), loadProfile(spec), env, policy);
  const gate = built.gates.find((g) => g.key === key);
  if (!gate) throw new BenchError(`the plan of mobile under ${spec} has no row ${key}`);
  return gate.expected.p50;
}

// One k6 run of a network's steps; dch: its run with the larger answers instead.
async function measure(stack, name, lanes, ops, { dch = false } = {}) {
  const n = NETWORKS[name];
  // Each lane's steps: [T, which gap].
  const stepsOf = (l) =>
    dch
      ? n.dch.lanes.includes(l)
        ? [[n.dch.everyS, 'dch']]
        : []
      : [[n.within, 'within'], [n.past, 'past'], ...(n.fach?.lanes.includes(l) ? [[n.fach.everyS, 'fach']] : [])];
  const laneNames = lanes.flatMap((l) => stepsOf(l).map(([T]) => `${l}_t${T}`));
  const Ts = [...new Set(lanes.flatMap((l) => stepsOf(l).map(([T]) => T)))];
  const env = {
    PROFILE: n.spec,
    LANES: laneNames.join(','),
    INTERACTION_SECONDS: Ts.join(','),
    MOBILE_OPS: String(ops),
    ...(dch ? { MOBILE_ANSWER_BYTES: String(n.dch.answerBytes) } : {}),
  };
  const t0 = Date.now();
  const run = await runScenario(stack, 'mobile', { env, timeoutMs: 60 * 60 * 1000 });
  console.log(
    `  ${n.spec}${dch ? ` (answers of ${n.dch.answerBytes} B)` : ''}: k6 exited ${run.code} in ${round((Date.now() - t0) / 1000, 0)} s`,
  );
  const rows = [];
  for (const l of lanes)
    for (const [T, gap] of stepsOf(l)) {
      const sc = `${l}_t${T}_c1`;
      const key = `op_duration{scenario:${sc},gap:after}`;
      const measured = stat(run.summary, key);
      // Within the tail the plain network's model (no radio term); past it and in FACH, the radio's.
      const plainSpec = n.spec.replace('+rrc', '');
      const radioPaid = gap !== 'within';
      const model = radioPaid ? modelOf(n.spec, env, key) : modelOf(plainSpec, { ...env, PROFILE: plainSpec }, key);
      const onMeasured = stat(run.summary, `radio_on_hour{scenario:${sc}}`);
      const rrcModel = modelOf(n.spec, env, key);
      // The radio's activity per operation: the operation without its promotion.
      const activeS = (rrcModel.ms - (rrcModel.radioMs || 0)) / 1000;
      const onModel = 3600 - (energy(n.radio, { periodS: T, activeS }).secondsPerHour.idle || 0);
      const ratio = measured === null ? null : measured / model.ms;
      // The rhythm is one operation every T seconds: a lane whose pings wake the radio too
      // (ws: the server's every 12 s; ws_ping10) is measured, not judged, here.
      const pings = pingOf(MOBILE_LANES.find((x) => x.name === l)) > 0;
      const onRatio = onMeasured === null || pings ? null : onMeasured / onModel;
      const mj = stat(run.summary, `radio_energy_op{scenario:${sc}}`);
      const mjh = stat(run.summary, `radio_energy_hour{scenario:${sc}}`);
      rows.push({
        network: n.spec,
        lane: l,
        everyS: T,
        gap: gapText(gap, n),
        against: radioPaid ? n.spec : plainSpec,
        p50Ms: measured === null ? null : round(measured, 1),
        modelMs: round(model.ms, 1),
        ratio: ratio === null ? null : round(ratio, 3),
        verdict: ratio !== null && ratio >= TARGET[0] && ratio <= TARGET[1] ? 'met' : 'MISSED',
        radioOnSh: onMeasured === null ? null : round(onMeasured, 0),
        radioOnModelSh: round(onModel, 0),
        radioOnRatio: onRatio === null ? null : round(onRatio, 3),
        radioOnVerdict: pings
          ? 'n/a (pings)'
          : onRatio !== null && Math.abs(onRatio - 1) <= RADIO_ON_TARGET
            ? 'met'
            : 'MISSED',
        mjPerOp: mj === null ? null : round(mj, 0),
        jPerHour: mjh === null ? null : round(mjh / 1000, 1),
      });
    }
  // The radio's timers over the run, as the log shows them, against the papers' values.
  const timers = Object.entries(timerParams(n.radio)).map(([timer, paperMs]) => {
    const key = `radio_timer{timer:${timer}}`;
    const logMs = stat(run.summary, key);
    const ratio = logMs === null ? null : logMs / paperMs;
    const seen = run.summary.metrics[key] ? run.summary.metrics[key].count : 0;
    return {
      network: n.spec,
      timer,
      seen,
      logMs: logMs === null ? null : round(logMs, 1),
      paperMs,
      ratio: ratio === null ? null : round(ratio, 4),
      // A timer no step ran (FACH -> DCH: the dch run's, main below) is not met either.
      verdict: !seen ? 'not exercised' : Math.abs(ratio - 1) <= TIMER_TARGET ? 'met' : 'MISSED',
    };
  });
  return { rows, timers };
}

// A carrier NAT (+nat=20 under lte+rrc, one operation every 30 s): the kept connections it
// drops between operations (the model: scenarios/specs/mobile.js natDrops), the
// failures that follow and the time to the next success; a lane that pings within the
// timeout keeps its connection.
const NAT = { spec: 'lte+rrc+nat=20', everyS: 30 };

async function measureNat(stack, lanes, ops) {
  const laneNames = lanes.map((l) => `${l}_t${NAT.everyS}`);
  const env = {
    PROFILE: NAT.spec,
    LANES: laneNames.join(','),
    INTERACTION_SECONDS: String(NAT.everyS),
    MOBILE_OPS: String(ops),
  };
  const t0 = Date.now();
  const run = await runScenario(stack, 'mobile', { env, timeoutMs: 60 * 60 * 1000 });
  console.log(`  ${NAT.spec}: k6 exited ${run.code} in ${round((Date.now() - t0) / 1000, 0)} s`);
  const link = linkOf(loadProfile(NAT.spec));
  return lanes.map((l) => {
    const sc = `${l}_t${NAT.everyS}_c1`;
    const failed = run.summary.metrics[`op_failed{scenario:${sc},gap:after}`];
    const drops = natDrops(
      MOBILE_LANES.find((x) => x.name === l),
      NAT.everyS,
      link.natIdleS,
      link.R,
    );
    const failures = failed ? failed.passes : null;
    return {
      network: NAT.spec,
      lane: l,
      everyS: NAT.everyS,
      modelDrops: drops,
      operations: failed ? failed.passes + failed.fails : null,
      failures,
      recoveryMs: stat(run.summary, `recovery_duration{scenario:${sc}}`) ?? null,
      p50Ms: stat(run.summary, `op_duration{scenario:${sc},gap:after}`),
      mjPerOp: stat(run.summary, `radio_energy_op{scenario:${sc}}`),
      // Met: the lanes the model says keep their connection lost no operation; the others lost some.
      verdict: failures === null ? 'MISSED' : drops === failures > 0 ? 'met' : 'MISSED',
    };
  });
}

await main(async () => {
  const flags = parseFlags({ quick: false, networks: '', lanes: '', ops: 0, noNat: false });
  const quick = Boolean(flags.quick);
  const networks = (flags.networks || (quick ? 'lte' : 'lte,3g')).split(',');
  for (const n of networks) if (!NETWORKS[n]) throw new BenchError(`--networks ${n}: use lte, 3g or both`);
  const lanes = (
    flags.lanes || (quick ? 'http_keepalive' : 'http_fresh,http_keepalive,ws,ws_ping10,grpc,grpc_ping10')
  ).split(',');
  // Under the NAT every lane, unless --lanes names some.
  const natLanes = flags.lanes ? lanes : MOBILE_LANES.map((l) => l.name);
  const known = MOBILE_LANES.map((l) => l.name);
  for (const l of lanes) if (!known.includes(l)) throw new BenchError(`--lanes ${l}: use some of ${known.join(', ')}`);
  const ops = flags.ops || (quick ? 2 : 4);
  if (!Number.isInteger(ops) || ops < 2 || ops > 100)
    throw new BenchError(`--ops ${flags.ops}: a whole number from 2 to 100`);
  const { rows, timers, nat } = await withStack(async (stack) => {
    const all = { rows: [], timers: [] };
    for (const n of networks) {
      const got = await measure(stack, n, lanes, ops);
      all.rows.push(...got.rows);
      // 3G's run with the larger answers: its rows, and the timers the first run did not see.
      if (NETWORKS[n].dch && lanes.some((l) => NETWORKS[n].dch.lanes.includes(l))) {
        const more = await measure(stack, n, lanes, ops, { dch: true });
        all.rows.push(...more.rows);
        got.timers = got.timers.map((t) => (t.seen ? t : more.timers.find((x) => x.timer === t.timer && x.seen) || t));
      }
      all.timers.push(...got.timers);
    }
    return { ...all, nat: quick || flags.noNat ? [] : await measureNat(stack, natLanes, 2) };
  });
  console.log(
    `\nThe operation after its gap (p50 of ${ops}) over the model (target ${TARGET.join('-')}), and the radio's time on per hour from the link's log over the model (target within ${RADIO_ON_TARGET * 100} %):`,
  );
  console.log(
    table(rows, [
      'network',
      'lane',
      'everyS',
      'gap',
      'against',
      'p50Ms',
      'modelMs',
      'ratio',
      'verdict',
      'radioOnSh',
      'radioOnModelSh',
      'radioOnRatio',
      'radioOnVerdict',
      'mjPerOp',
      'jPerHour',
    ]),
  );
  console.log(
    `\nThe radio's timers as the link's event log shows them (p50 over the run) over the papers' values (target within ${TIMER_TARGET * 100} %):`,
  );
  console.log(table(timers, ['network', 'timer', 'seen', 'logMs', 'paperMs', 'ratio', 'verdict']));
  if (nat.length) {
    console.log(
      `\nUnder ${NAT.spec}, one operation every ${NAT.everyS} s: the operations a NAT's drop failed (the model: the lanes whose connection idles past the timeout), and the time to the next success:`,
    );
    console.log(
      table(
        nat.map((r) => ({
          ...r,
          p50Ms: r.p50Ms === null ? null : round(r.p50Ms, 1),
          recoveryMs: r.recoveryMs === null ? null : round(r.recoveryMs, 0),
          mjPerOp: r.mjPerOp === null ? null : round(r.mjPerOp, 0),
        })),
        [
          'network',
          'lane',
          'everyS',
          'modelDrops',
          'operations',
          'failures',
          'recoveryMs',
          'p50Ms',
          'mjPerOp',
          'verdict',
        ],
      ),
    );
  }
  const missed = [...rows, ...timers, ...nat].filter(
    (r) => r.verdict !== 'met' || r.radioOnVerdict === 'MISSED',
  ).length;
  // full: both networks and the default lanes, the run whose rows make the figures' table.
  const full = !quick && !flags.networks && !flags.lanes;
  recordResult(
    'mobile',
    { ops, lanes, networks, full, rows, timers, nat, verdict: missed ? 'MISSED' : 'met' },
    { quick },
  );
});
