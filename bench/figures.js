#!/usr/bin/env node
// The figures the README and docs/ quote from bench/results.jsonl, generated from it.
//
//   node bench/figures.js            exit 1, naming every stale block (0: all current)
//   node bench/figures.js --write    rewrite the stale blocks in place
//   node bench/figures.js --list     every figure: its record, target and verdict
//
// A block sits between `<!-- figures:begin NAME -->` and `<!-- figures:end NAME -->` in
// README.md or a page of docs/ (its studies too); what lies between is this script's, never
// typed by hand. NAME is a figure's id (below), with a form (`:short`, `:dated`, `:when`), or a
// table: `fidelity-table:SCENARIO:PROFILE` (a study's rows of bench/fidelity.js),
// `recovery-table` (bench/recovery.js), `mobile-table` (bench/mobile.js), `overhead-extra`, `connect-cost`, `benchmarks`,
// `readme-benchmarks`.
// A value of a figure or of a table in use, typed in a page's prose outside its block, is a
// fault: a page quotes the block or links to it.
// Each figure is read from the newest record of its kind (FIGURES below: which records,
// what is read, the target), and its verdict is computed here against that target, in one
// place: the bench's own verdict field is not read. `--root DIR` works on another checkout
// (the docs test points it at a copy). It reads files only: it runs no bench.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../common/quantiles.js';

const DEFAULT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

// ---- reading the records -------------------------------------------------------------

export function readRecords(root) {
  return readFileSync(join(root, 'bench', 'results.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => ({ ...JSON.parse(l), line: i + 1 }));
}

// The newest record (by date) of a bench that `where` accepts; null when there is none.
function newest(records, bench, where = () => true) {
  const found = records.filter((r) => r.bench === bench && !r.quick && where(r));
  return found.sort((a, b) => String(a.date).localeCompare(String(b.date))).at(-1) ?? null;
}

const cores = (r) => r.cores ?? r.machine?.cores ?? r.machine?.cpus;
const quiet = (r) => !r.busy && cores(r) !== 1;
const num = (x, digits) => (digits === undefined ? String(x) : Number(x).toFixed(digits));
const signed = (x, digits) => `${x < 0 ? '−' : '+'}${num(Math.abs(x), digits)}`;
const int = (x) => Number(x).toLocaleString('en-US');
function span(values, digits) {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? num(lo, digits) : `${num(lo, digits)}–${num(hi, digits)}`;
}
const within = (x, [lo, hi]) => x >= lo && x <= hi;
// Two lanes' server CPU per operation: the median of their per-round ratios, as the bench takes it.
function costRatio(r, op, a, b) {
  const rounds = (lane) =>
    String(r.rows.find((x) => x.op === op && x.lane === lane)['per round us/op'])
      .split(' ')
      .map(Number);
  const [ra, rb] = [rounds(a), rounds(b)];
  return median(ra.map((x, i) => x / rb[i]));
}
// Ratios against a target's range: "n of m[ noun] within, xlo–hi", and whether all are.
function ratiosWithin(ratios, range, noun = '') {
  const inside = ratios.filter((x) => within(x, range)).length;
  return { text: `${inside} of ${ratios.length}${noun} within, x${span(ratios, 3)}`, all: inside === ratios.length };
}

// ---- the figures ---------------------------------------------------------------------
// id: the figure's name; what: the README's words for it; bench: the command that records
// it; target: its words, and `test` the values it is judged on (null: a figure, no target).
// read(records) -> { records: [the records read], text, values } or null (never recorded).

export const FIGURES = [
  {
    id: 'fidelity',
    what: 'fidelity: measured p50 / model, every lane of ws-vs-http and grpc-vs-graphql, where RTT ≥ 40 ms',
    bench: 'node bench/fidelity.js',
    target: { text: '0.95–1.05', range: [0.95, 1.05] },
    read(records) {
      const r = newest(records, 'fidelity', (x) => x.rows.some((row) => row.rtt >= 40));
      if (!r) return null;
      const rows = r.rows.filter((row) => row.rtt >= 40);
      const ratios = rows.map((row) => row.ratio);
      const profiles = [...new Set(rows.map((row) => row.profile))].join(', ');
      const w = ratiosWithin(ratios, this.target.range, ' rows');
      return { records: [r], text: `${w.text} (${profiles})`, pass: w.all };
    },
  },
  {
    id: 'fidelity-short-rtt',
    what: 'fidelity where 0 < RTT < 40 ms (fios, cable)',
    bench: 'node bench/fidelity.js --profiles fios,cable',
    target: { text: '0.9–1.1', range: [0.9, 1.1] },
    read(records) {
      const r = newest(records, 'fidelity', (x) => x.rows.some((row) => row.rtt > 0 && row.rtt < 40));
      if (!r) return null;
      const parts = [];
      const verdicts = [];
      for (const profile of [
        ...new Set(r.rows.filter((row) => row.rtt > 0 && row.rtt < 40).map((row) => row.profile)),
      ]) {
        const ratios = r.rows.filter((row) => row.profile === profile).map((row) => row.ratio);
        const w = ratiosWithin(ratios, this.target.range, ' rows');
        parts.push(`${profile} ${w.text}`);
        verdicts.push(`${profile} ${w.all ? 'met' : 'missed'}`);
      }
      return { records: [r], text: parts.join('; '), verdict: verdicts.join(', ') };
    },
  },
  {
    id: 'tcp-overhead',
    what: "TCP: the shaped proxy's own time per round trip, beyond R + bytes / rate (p50 of 400 round trips)",
    bench: 'node bench/tcp.js --parts overhead',
    target: { text: '≤ 0.3 ms', max: 0.3 },
    read(records) {
      const r = newest(records, 'tcp', (x) => x.overhead);
      if (!r) return null;
      const shaped = r.overhead.filter((row) => row.model > 0);
      const bare = r.overhead.find((row) => !(row.model > 0));
      const text =
        shaped.map((row) => `${row.profile} +${num(row.excess, 2)}`).join(', ') +
        ' ms' +
        (bare ? ` (the unshaped proxy +${num(bare.excess, 2)})` : '');
      return { records: [r], text, pass: shaped.every((row) => row.excess <= this.target.max) };
    },
  },
  {
    id: 'tcp-slowstart',
    what: 'TCP slow start: 10 KB to 1 MB on new, kept and idle connections under 3g and lte, measured p50 / model',
    bench: 'node bench/tcp.js --parts slowstart',
    target: { text: '0.9–1.1', range: [0.9, 1.1] },
    read(records) {
      const r = newest(records, 'tcp', (x) => x.slowstart);
      if (!r) return null;
      const ratios = r.slowstart.map((row) => row.ratio);
      const w = ratiosWithin(ratios, this.target.range);
      return { records: [r], text: w.text, pass: w.all };
    },
  },
  {
    id: 'tcp-loss',
    what: 'TCP loss: study 000 under lte+loss1 and 3g+burst, measured p50 / model',
    bench: 'node bench/tcp.js --parts study000',
    target: { text: '0.9–1.1', range: [0.9, 1.1] },
    read(records) {
      const r = newest(records, 'tcp', (x) => x.study000);
      if (!r) return null;
      const ratios = r.study000.flatMap((part) => part.rows.map((row) => row['p50 ratio']));
      const w = ratiosWithin(ratios, this.target.range);
      return { records: [r], text: w.text, pass: w.all };
    },
  },
  {
    id: 'gate-seconds',
    what: "the PR gate's wall time (`npx k6pack gate`: `LOAD=gate`, lan and lte)",
    bench: 'node bench/gate-trust.js',
    target: { text: '≤ 4 min', max: 240 },
    read(records) {
      const r = newest(records, 'gate-trust', (x) => x.load === 'gate' && quiet(x));
      if (!r) return null;
      const c = r.calibration;
      const cpu = c ? `, CPU x${num(c.cpuScaleMin, 2)}–${num(c.cpuScaleMax, 2)} of the reference` : '';
      return {
        records: [r],
        text: `${span(r.gateSeconds)} s over ${r.gateSeconds.length} gates${cpu}`,
        short: `${span(r.gateSeconds)} s`,
        pass: Math.max(...r.gateSeconds) <= this.target.max,
      };
    },
  },
  {
    id: 'gate-seconds-one-core',
    what: "the PR gate's wall time pinned to one core (`bench/gate-trust.js --one-core`)",
    bench: 'node bench/gate-trust.js --one-core',
    target: { text: '≤ 4 min', max: 240 },
    read(records) {
      const r = newest(records, 'gate-trust', (x) => x.load === 'gate' && cores(x) === 1);
      if (!r) return null;
      const c = r.calibration;
      const cpu = c ? `, CPU x${num(c.cpuScaleMin, 2)}–${num(c.cpuScaleMax, 2)}` : '';
      return {
        records: [r],
        text: `${span(r.gateSeconds)} s over ${r.gateSeconds.length} gates${cpu}`,
        pass: Math.max(...r.gateSeconds) <= this.target.max,
      };
    },
  },
  {
    id: 'gate-lint',
    what: 'the gate lint: every scenario under every built-in network, alone, `+loss3` and `+shared`, at ci; and the gate',
    bench: 'node bench/gate-lint.js',
    target: { text: '0 gated percentiles below their floor', max: 0 },
    read(records) {
      const r = newest(records, 'gate-lint');
      if (!r) return null;
      const t = r.total;
      const g = r.gate;
      return {
        records: [r],
        text: `${int(t.rows)} percentiles under ${r.profiles} profiles, ${int(t.gated)} gated, ${t.failed} failed; the gate: ${g.gated} of ${g.rows} gated, ${g.failed} failed${g.planSeconds ? `, ${g.planSeconds} s of steps` : ''}`,
        pass: t.failed + g.failed <= this.target.max,
      };
    },
  },
  {
    id: 'profile-sweep',
    what: 'every gated scenario under other networks at ci, unchanged code (`k6pack gate --profile …`)',
    bench: 'node bench/profile-sweep.js',
    target: { text: 'every run exits 0' },
    read(records) {
      const last = newest(records, 'profile-sweep');
      if (!last) return null;
      const rs = records.filter((x) => x.bench === 'profile-sweep' && !x.quick && x.commit === last.commit);
      const runs = rs.reduce((s, x) => s + x.runs, 0);
      const red = rs.flatMap((x) =>
        x.rows.filter((row) => row.exit !== 0).map((row) => `${row.scenario} under ${row.profile}`),
      );
      // Sweeps of one commit add up per profile (a long one may run with --scenarios);
      // a profile some scenario was not swept under says which.
      const all = [...new Set(rs.flatMap((x) => x.rows.map((row) => row.scenario)))];
      const swept = new Map();
      for (const row of rs.flatMap((x) => x.rows))
        swept.set(row.profile, (swept.get(row.profile) || new Set()).add(row.scenario));
      const profiles = [...swept]
        .map(([profile, got]) => {
          const missing = all.filter((sc) => !got.has(sc));
          return `${profile}${missing.length ? ` without ${missing.join(', ')}` : ''}`;
        })
        .join(', ');
      return {
        records: rs,
        text: `${runs - red.length} of ${runs} runs exit 0 (${profiles}${red.length ? `; red: ${red.join(', ')}` : ''})`,
        pass: red.length === 0,
      };
    },
  },
  ...[
    ['suite', '`npm test` on a fresh clone (`bash .ci/run`)', '', quiet],
    ['suite-one-core', '`taskset -c 0 npm test` on a fresh clone (one core)', ' --one-core', (x) => cores(x) === 1],
    ['suite-busy', '`npm test` on a fresh clone with one core kept busy', ' --busy', (x) => x.busy],
  ].map(([id, what, flag, where]) => ({
    id,
    what,
    bench: `node bench/suite.js${flag}`,
    target: { text: '0 failures, ≤ 20 min a run', failures: 0, max: 1200 },
    read(records) {
      const r = newest(records, 'suite', where);
      if (!r) return null;
      const tests = r.rows.map((row) => row.tests);
      const failures = r.rows.map((row) => row.failures);
      const phases = r.rows.length === 1 && r.rows[0].phases ? `; phases: ${r.rows[0].phases}` : '';
      const c = r.calibration;
      const cpu = c ? `, CPU x${num(c.cpuScaleMin, 2)}–${num(c.cpuScaleMax, 2)}` : '';
      const failuresMet = failures.every((f) => f <= this.target.failures);
      const timeMet = r.seconds.every((s) => s <= this.target.max);
      return {
        records: [r],
        text: `${failures.join(', ')} of ${span(tests)} tests failed, ${span(r.seconds)} s${phases}${r.rows.length > 1 ? `, ${r.rows.length} runs` : ''}${cpu}`,
        short: `${span(r.seconds)} s`,
        verdict:
          failuresMet && timeMet
            ? 'met'
            : `failures ${failuresMet ? 'met' : 'missed'}, time ${timeMet ? 'met' : 'missed'}`,
      };
    },
  })),
  {
    id: 'gate-trust-clean',
    what: 'gate trust: clean gates on unchanged code',
    bench: 'node bench/gate-trust.js',
    target: { text: '0 false failures', max: 0 },
    read(records) {
      const rs = [
        newest(records, 'gate-trust', (x) => x.load === 'gate' && quiet(x)),
        newest(records, 'gate-trust', (x) => x.load === 'gate' && cores(x) === 1),
      ].filter(Boolean);
      if (!rs.length) return null;
      const text = rs
        .map((r) => `${r.falseFailures} of ${r.cleanRuns} failed${cores(r) === 1 ? ' pinned to one core' : ''}`)
        .join('; ');
      return { records: rs, text, pass: rs.every((r) => r.falseFailures <= this.target.max) };
    },
  },
  {
    id: 'gate-trust-margins',
    what: "gate trust: every budget's margin over its gated figure's run-to-run spread (clean gates)",
    bench: 'node bench/gate-trust.js',
    target: { text: '≥ 3 sd', min: 3 },
    read(records) {
      const r = newest(records, 'gate-trust', (x) => x.load === 'gate' && quiet(x) && x.spread);
      if (!r) return null;
      const below = r.spread.below;
      const worst = below.length
        ? `; the least ${span(
            below.map((b) => b['margin sd']),
            1,
          )} sd`
        : '';
      return {
        records: [r],
        text: `${below.length} of ${r.spread.gates} gated figures under ${this.target.min} sd${worst}`,
        pass: below.length === 0,
      };
    },
  },
  {
    id: 'gate-trust-drift',
    what: 'gate trust: servers slowed by 20 % of the RTT, `gate --baseline`',
    bench: 'node bench/gate-trust.js',
    target: { text: 'every slowed gate caught' },
    read(records) {
      const r = newest(records, 'gate-trust', (x) => x.driftRuns > 0);
      if (!r) return null;
      const counts = (r.rows ?? []).filter((row) => row.part === 'drift').map((row) => row.regressions);
      return {
        records: [r],
        text: `${r.detected} of ${r.driftRuns} caught${counts.length ? `, ${span(counts)} regressions a gate` : ''}`,
        pass: r.detected === r.driftRuns,
      };
    },
  },
  {
    id: 'history-clean',
    what: 'history: gates on unchanged code judged by a history of 10 (`--baseline --history`)',
    bench: 'node bench/history-trust.js',
    target: { text: '0 flagged' },
    read(records) {
      const r = newest(records, 'history-trust');
      if (!r) return null;
      return { records: [r], text: `${r.falseFlags} of ${r.cleanRuns} flagged`, pass: r.falseFlags === 0 };
    },
  },
  {
    id: 'history-slowed',
    what: 'history: servers slowed by 10 % of the RTT, judged by the history',
    bench: 'node bench/history-trust.js',
    target: { text: 'every slowed gate caught' },
    read(records) {
      const r = newest(records, 'history-trust');
      if (!r) return null;
      const counts = r.rows.filter((row) => row.part === 'slowed').map((row) => row.regressions);
      return {
        records: [r],
        text: `${r.caught} of ${r.slowRuns} caught, ${span(counts)} figures a gate`,
        pass: r.caught === r.slowRuns,
      };
    },
  },
  {
    id: 'history-size',
    what: "history: a gate's digest, `history add`, a trend page",
    bench: 'node bench/history-trust.js',
    target: null,
    read(records) {
      const r = newest(records, 'history-trust');
      if (!r) return null;
      return {
        records: [r],
        text: `${int(r.bytesPerRun)} bytes a gate of ${r.scenarios.split(',').length} scenarios; add ${num(r.addMsMedian / 1000, 2)} s; trends of ${r.trendRuns} runs ${num(r.trendMs / 1000, 2)} s, ${Math.round(r.trendBytes / 1024)} KB`,
      };
    },
  },
  {
    id: 'open-workload',
    what: 'open workload (`--workload open --load ci`), five runs a network on unchanged code',
    bench: 'node bench/open-workload.js',
    target: { text: 'every run exits 0' },
    read(records) {
      const parts = [];
      const used = new Set();
      let pass = true;
      for (const profile of ['lan', 'lte', '3g']) {
        const r = newest(records, 'open-workload', (x) =>
          x.rows.some((row) => row.part === 'clean' && row.profile === profile),
        );
        if (!r) continue;
        used.add(r);
        const rows = r.rows.filter((row) => row.part === 'clean' && row.profile === profile);
        const ok = rows.filter((row) => row.exit === 0).length;
        pass &&= ok === rows.length;
        parts.push(`${profile} ${ok} of ${rows.length}`);
      }
      if (!parts.length) return null;
      return { records: [...used], text: parts.join(', '), pass };
    },
  },
  {
    id: 'open-workload-knee',
    what: 'open workload: servers that slow with load, the knee',
    bench: 'node bench/open-workload.js',
    target: { text: 'the knee shows' },
    read(records) {
      const r = newest(records, 'open-workload', (x) => x.kneeRuns > 0);
      if (!r) return null;
      return { records: [r], text: `${r.kneeShown} of ${r.kneeRuns} runs`, pass: r.kneeShown === r.kneeRuns };
    },
  },
  {
    id: 'restart',
    what: '`k6pack down` then `run`, back to back',
    bench: 'node bench/restart.js',
    target: { text: 'every run starts' },
    read(records) {
      const r = newest(records, 'restart');
      if (!r) return null;
      return {
        records: [r],
        text: `${r.started} of ${r.runs} runs and ${r.upsStarted} of ${r.runs} ups started; down p50 ${r.downSeconds.p50} s`,
        pass: r.started === r.runs && r.upsStarted === r.runs,
      };
    },
  },
  {
    id: 'profile-switch',
    what: 'profile switches under connection churn',
    bench: 'node bench/profile-switch.js',
    target: { text: 'no crash, no error' },
    read(records) {
      const r = newest(records, 'profile-switch');
      if (!r) return null;
      return {
        records: [r],
        text: `${int(r.perMinute)} switches a minute, ${r.errors} errors; one switch p50 ${r.apiMs.p50} ms`,
        pass: r.errors === 0 && r.toxiproxyAlive,
      };
    },
  },
  {
    id: 'event-timing',
    what: "link events: a blackout's edges as a probe sees them, against the schedule",
    bench: 'node bench/event-timing.js',
    target: { text: 'within 2 ms', max: 2 },
    read(records) {
      const r = newest(records, 'event-timing');
      if (!r) return null;
      return {
        records: [r],
        text: `worst ${r.worstAbsErrMs} ms of ${r.events * 2} edges, median ${r.p50AbsErrMs} ms`,
        pass: r.worstAbsErrMs <= this.target.max && r.unseenEdges === 0,
      };
    },
  },
  {
    id: 'recovery',
    what: "recovery from link events: each lane's p50 over 5 events / the model's, lte and 3g",
    bench: 'node bench/recovery.js',
    target: { text: '0.8–1.25', range: [0.8, 1.25] },
    read(records) {
      const r = newest(records, 'recovery');
      if (!r) return null;
      const parts = [];
      for (const network of [...new Set(r.rows.map((row) => row.network))]) {
        const rows = r.rows.filter((row) => row.network === network);
        const inside = rows.filter((row) => within(row.ratio, this.target.range)).length;
        parts.push(
          `${network} ${inside} of ${rows.length}, x${span(
            rows.map((row) => row.ratio),
            2,
          )}`,
        );
      }
      return {
        records: [r],
        text: parts.join('; '),
        pass: r.rows.every((row) => within(row.ratio, this.target.range)),
      };
    },
  },
  {
    id: 'mobile',
    what: "a phone's radio (+rrc): the operation after its gap, past the tail and within it, / the model; radio on per hour from the link's log / the model, lte and 3g",
    bench: 'node bench/mobile.js',
    target: { text: '0.9–1.1; radio on within 5 %; timers within 2 %', range: [0.9, 1.1] },
    read(records) {
      const r = newest(records, 'mobile', fullMobile);
      if (!r) return null;
      const ratios = r.rows.map((row) => row.ratio).filter((x) => x !== null);
      const on = r.rows.map((row) => row.radioOnRatio).filter((x) => x !== null && x !== undefined);
      const timers = (r.timers || []).map((t) => t.ratio).filter((x) => x !== null);
      return {
        records: [r],
        text:
          `${r.networks.join(', ')}: x${span(ratios, 2)} (${ratios.filter((x) => within(x, this.target.range)).length} of ${ratios.length}); radio on x${span(on, 3)}` +
          (timers.length ? `; timers x${span(timers, 3)}` : ''),
        pass:
          r.rows.every((row) => row.verdict === 'met' && row.radioOnVerdict !== 'MISSED') &&
          (r.timers || []).every((t) => t.verdict === 'met'),
      };
    },
  },
  {
    id: 'overhead-proxy',
    what: '(a) Toxiproxy with no toxics vs direct: added p50 per request',
    bench: 'node bench/overhead.js',
    target: null,
    read(records) {
      const r = newest(records, 'overhead', (x) => x.a);
      if (!r) return null;
      const text = r.a
        .map((row) => {
          const added = row['added p50 ms'];
          return added === undefined ? null : `${row.transport} ${signed(added, 2)}`;
        })
        .filter(Boolean)
        .join(', ');
      return text ? { records: [r], text: `${text} ms` } : null;
    },
  },
  {
    id: 'overhead-clients',
    what: "(b) the pack's clients vs a bare k6 script, iterations/s, 1 VU",
    bench: 'node bench/overhead.js',
    target: { text: 'lib/bare ≥ 0.85', min: 0.85 },
    read(records) {
      const r = newest(records, 'overhead', (x) => x.b);
      if (!r) return null;
      const text = r.b.map((row) => `${row.transport} ${num(row['lib/bare'], 2)}`).join(', ');
      const met = r.b.filter((row) => row['lib/bare'] >= this.target.min).map((row) => row.transport);
      const missed = r.b.filter((row) => row['lib/bare'] < this.target.min).map((row) => row.transport);
      const verdict = !missed.length
        ? 'met'
        : !met.length
          ? 'missed'
          : `met for ${met.join(', ')}; missed for ${missed.join(', ')}`;
      return { records: [r], text, verdict };
    },
  },
  {
    id: 'scale-ws',
    what: 'WebSocket connections held open, a query every 30 s each',
    bench: 'node bench/scale.js',
    target: { text: '≥ 10,000 without errors', min: 10000 },
    read(records) {
      const r = newest(records, 'scale', (x) => x.ws);
      if (!r) return null;
      const w = r.ws;
      return {
        records: [r],
        text: `${int(w.opened)} opened, ${w['open failed']} failed; ${w['server KB/conn']} KB a connection on the server`,
        pass: w.opened >= this.target.min && w['open failed'] === 0 && w['ops failed'] === 0,
      };
    },
  },
  {
    id: 'scale-knee',
    what: 'the knee: the highest rate before p95 doubles, through Toxiproxy under lan (k6 on the same cores)',
    bench: 'node bench/scale.js --parts knee',
    target: null,
    read(records) {
      const r = newest(records, 'scale', (x) => x.knee);
      if (!r) return null;
      return { records: [r], text: r.knee.map((row) => `${row.transport} ${int(row['knee ops/s'])}/s`).join(', ') };
    },
  },
  {
    id: 'soak-memory',
    what: 'soak, 1 h under 3g: server heap after a full GC',
    bench: 'node bench/soak.js --duration 1h',
    target: { text: 'no leak (heap slope ≤ 1 MB/hour)', max: 1 },
    read(records) {
      const r = newest(records, 'soak', (x) => x.duration === '1h' && !x.leakBytesPerRequest);
      if (!r) return null;
      const slopes = r.memory.map((m) => m['heap slope MB/hour']);
      return {
        records: [r],
        text: r.memory.map((m) => `${m.server} ${signed(m['heap slope MB/hour'], 1)} MB/hour`).join(', '),
        pass: slopes.every((s) => s <= this.target.max),
      };
    },
  },
  {
    id: 'soak-drift',
    what: 'soak, 1 h under 3g: p50 drift, last ten minutes / first ten',
    bench: 'node bench/soak.js --duration 1h',
    target: null,
    read(records) {
      const r = newest(records, 'soak', (x) => x.duration === '1h' && x.drift);
      if (!r) return null;
      return {
        records: [r],
        text: `x${span(
          r.drift.map((d) => d['drift last/first']),
          3,
        )} on every transport, ${r.dropped} dropped`,
      };
    },
  },
  {
    id: 'server-cost',
    what: 'server CPU per operation: ws / HTTP/1.1, h2 / HTTP/1.1 over TLS (small operation; 100 KB payload)',
    bench: 'node bench/server-cost.js',
    target: { text: '≤ 1.15', max: 1.15 },
    read(records) {
      const r = newest(records, 'server-cost', (x) => x.rows.some((row) => row.lane === 'h2'));
      if (!r) return null;
      const ratio = (op, a, b) => costRatio(r, op, a, b);
      const pairs = [
        ['ws', 'h1'],
        ['h2', 'h1-tls'],
      ];
      const parts = pairs.map(
        ([a, b]) => `${a} / ${b} ${num(ratio('book', a, b), 2)}; ${num(ratio('payload', a, b), 2)}`,
      );
      const missed = pairs.filter(([a, b]) => ['book', 'payload'].some((op) => ratio(op, a, b) > this.target.max));
      return {
        records: [r],
        text: parts.join(', '),
        verdict: pairs.map(([a, b]) => `${a} / ${b} ${missed.some((m) => m[0] === a) ? 'missed' : 'met'}`).join(', '),
      };
    },
  },
  {
    id: 'server-cost-connect',
    what: 'server CPU per call on the Connect server: Connect JSON, Connect protobuf, gRPC-Web / its gRPC',
    bench: 'node bench/server-cost.js',
    target: { text: '≤ 1.15', max: 1.15 },
    read(records) {
      const r = newest(records, 'server-cost', (x) => x.rows.some((row) => row.lane === 'connect-grpc'));
      if (!r) return null;
      const ratios = ['connect-json', 'connect-proto', 'grpc-web'].flatMap((lane) =>
        ['book', 'payload'].map((op) => costRatio(r, op, lane, 'connect-grpc')),
      );
      return {
        records: [r],
        text: `x${span(ratios, 2)}`,
        pass: ratios.every((x) => x <= this.target.max),
      };
    },
  },
  {
    id: 'merge-scale',
    what: '`k6pack merge` of 10 million samples from 8 runners',
    bench: 'node bench/merge-scale.js',
    target: { text: '≤ 60 s, ≤ 1 GB, within 0.1 %' },
    read(records) {
      const r = newest(records, 'merge-scale');
      if (!r) return null;
      const s = r.rows.find((row) => row.from === 'samples') ?? r.rows[0];
      return {
        records: [r],
        text: `${s.seconds} s, ${s['peak RSS MB']} MB, worst error ${s['worst rel. error']}`,
        pass: r.rows.every(
          (row) => row.seconds <= r.target.seconds && row['peak RSS MB'] <= r.target.rssMB && row['within precision'],
        ),
      };
    },
  },
  {
    id: 'segments',
    what: 'four execution segments on one machine vs one k6 process, same plan',
    bench: 'node bench/segments.js',
    target: { text: 'iterations add up, the same verdicts' },
    read(records) {
      const r = newest(records, 'segments');
      if (!r) return null;
      return {
        records: [r],
        text: `ops/s x${r.ratio} of one process; ${r.thresholds - r.differ.length} of ${r.thresholds} verdicts the same; iterations ${r.iterationsAdd ? 'add up' : 'do not add up'}`,
        pass: r.iterationsAdd && r.differ.length === 0,
      };
    },
  },
  {
    id: 'fanout-held',
    what: 'fan-out: the most subscribers each transport holds with nothing missed',
    bench: 'node bench/fanout.js',
    target: null,
    read(records) {
      const r = newest(records, 'fanout');
      if (!r) return null;
      const parts = r.profiles.map((profile) => {
        const best = {};
        for (const row of r.rows.filter((x) => x.profile === profile && x.held === 'yes'))
          best[row.transport] = Math.max(best[row.transport] ?? 0, row.subscribers);
        return `${profile}: ${Object.entries(best)
          .map(([t, n]) => `${t} ${int(n)}`)
          .join(', ')}`;
      });
      return { records: [r], text: parts.join('; ') };
    },
  },
];

// ---- rendering -----------------------------------------------------------------------

const day = (r) => String(r.date).slice(0, 10);
function machine(r) {
  const n = cores(r);
  return `${r.machine?.cpus ?? n}-core reference VM${n === 1 ? ', pinned to one core' : ''}${r.busy ? ', one core kept busy' : ''}`;
}

// -> [{ figure, result, verdict }] for every figure recorded.
export function evaluate(records) {
  return FIGURES.map((figure) => {
    const result = figure.read(records);
    if (!result) return null;
    const verdict = result.verdict ?? (figure.target === null ? '–' : result.pass ? 'met' : 'missed');
    return { figure, result, verdict };
  }).filter(Boolean);
}

const when = (result) => [...new Set(result.records.map(day))].sort().join(', ');

function readmeTable(evaluated) {
  return [
    '| figure | target | verdict |',
    '|---|---|---|',
    ...evaluated.map(
      ({ figure, result, verdict }) =>
        `| ${figure.what} | ${figure.target?.text ?? '(figure)'} | ${verdict === '–' ? '' : `${verdict}: `}${result.text} (${when(result)}) |`,
    ),
  ].join('\n');
}

function fullTable(evaluated) {
  return [
    '| figure | bench | target | measured | recorded | verdict |',
    '|---|---|---|---|---|---|',
    ...evaluated.map(({ figure, result, verdict }) => {
      const recorded = [...new Set(result.records.map((r) => `${day(r)}, ${machine(r)}, line ${r.line}`))].join('; ');
      return `| ${figure.what} | \`${figure.bench}\` | ${figure.target?.text ?? '(figure)'} | ${result.text} | ${recorded} | ${verdict} |`;
    }),
  ].join('\n');
}

// An inline block NAME is `<figure id>` (its text), `<id>:short` (its short form), `<id>:dated`
// (the short form, its date and machine) or `<id>:when` (the date and machine alone).
function inline(evaluated, name) {
  const [id, form] = name.split(':');
  const found = evaluated.find((e) => e.figure.id === id);
  if (!found) return null;
  const r = found.result;
  if (form === 'when') return `${when(r)}, ${machine(r.records[0])}`;
  const text = form === 'short' || form === 'dated' ? (r.short ?? r.text) : form === 'verdict' ? found.verdict : r.text;
  return form === 'dated' ? `${text} (${when(r)}, ${machine(r.records[0])})` : text;
}

// The Connect server's cost per call beside gRPC on it and on grpc-js (docs/browser-rpc.md).
function connectCostTable(records) {
  const r = newest(records, 'server-cost', (x) => x.rows.some((row) => row.lane === 'connect-grpc'));
  if (!r) return null;
  const us = (op, lane) => r.rows.find((x) => x.op === op && x.lane === lane)['CPU us/op'];
  // The bench's comparisons are medians of per-round ratios; the rest, ratios of the medians.
  const both = (a, b) => ['book', 'payload'].map((op) => num(costRatio(r, op, a, b), 2)).join(' / ');
  const across = (a, b) => ['book', 'payload'].map((op) => num(us(op, a) / us(op, b), 2)).join(' / ');
  const lanes = [
    ['gRPC on the Connect server (h2c)', 'connect-grpc'],
    ['Connect JSON (HTTP/1.1 keep-alive)', 'connect-json'],
    ['Connect protobuf', 'connect-proto'],
    ['gRPC-Web', 'grpc-web'],
  ];
  return [
    "| lane | GetBook | Payload (100 KB) | / the Connect server's gRPC | / grpc-js's gRPC (the `grpc` lanes) |",
    '|---|--:|--:|--:|--:|',
    ...lanes.map(
      ([label, lane], i) =>
        `| ${label} | ${int(us('book', lane))} µs | ${int(us('payload', lane))} µs | ${i ? both(lane, 'connect-grpc') : '1'} | ${i ? across(lane, 'grpc') : both(lane, 'grpc')} |`,
    ),
    `| gRPC on the grpc-js server | ${int(us('book', 'grpc'))} µs | ${int(us('payload', 'grpc'))} µs | – | 1 |`,
    `| GraphQL, HTTP/1.1 keep-alive (the book query and mutation; \`payload\`) | ${int(us('book', 'h1'))} µs | ${int(us('payload', 'h1'))} µs | – | – |`,
    '',
    `Median of ${r.rounds} rounds of ${r.seconds} s at ${r.vus} VUs, k6 straight to the server, the server process's utime + stime per call (\`node bench/server-cost.js\`, ${day(r)}, ${machine(r)}).`,
  ].join('\n');
}

// A study's rows of bench/fidelity.js under one profile (`fidelity-table:SCENARIO:PROFILE`):
// each row's p50 beside the model's, from the newest record that has them.
function fidelityTable(records, scenario, profile) {
  const mine = (row) => row.scenario === scenario && row.profile === profile;
  const r = newest(records, 'fidelity', (x) => x.rows.some(mine));
  if (!r) return null;
  const rows = r.rows.filter(mine);
  const rtt = rows[0].rtt;
  return {
    text: [
      '| row | measured | model | ratio |',
      '|---|--:|--:|--:|',
      ...rows.map(
        (row) => `| ${row.row} | ${row.p50} | ${row.model} | ${row.ratio === null ? '–' : num(row.ratio, 3)} |`,
      ),
      '',
      `p50 in ms at one VU under ${profile}${rtt ? ` (R ${rtt} ms)` : ''}, measured against the model (\`node bench/fidelity.js\`, ${day(r)}, ${machine(r)}).`,
    ].join('\n'),
    // A whole number of ms recurs on other pages by the model's own accuracy (609 ms is 2R and
    // a little under 3g); a p50 with decimals and a ratio of three do not.
    values: rows.flatMap((row) => [
      ...(Number.isInteger(row.p50) ? [] : [`${row.p50} ms`]),
      ...(row.ratio === null ? [] : [num(row.ratio, 3)]),
    ]),
  };
}

// bench/recovery.js's newest record (`recovery-table`): each lane's p50 over its events after each
// network's event, beside the model's p50, and per event how many lanes are within the target.
function recoveryTable(records) {
  const r = newest(records, 'recovery');
  if (!r) return null;
  const columns = [...new Set(r.rows.map((row) => `${row.network} ${row.event}`))];
  const lanes = [...new Set(r.rows.map((row) => row.lane))];
  const cell = (lane, column) => {
    const row = r.rows.find((x) => x.lane === lane && `${x.network} ${x.event}` === column);
    if (!row) return '–';
    const p50 = row.p50Ms === null ? 'never' : int(row.p50Ms);
    const ratio = row.ratio === null ? '' : ` x${num(row.ratio, 2)}`;
    const events = row.events !== r.eventsPerLane ? `, ${row.events} events` : '';
    return `${p50} (${row.modelP50Ms === 'never' ? 'never' : int(row.modelP50Ms)})${ratio}${events}`;
  };
  const range = r.target ?? [0.8, 1.25];
  const summary = columns.map((column) => {
    const ratios = r.rows.filter((x) => `${x.network} ${x.event}` === column && x.ratio !== null).map((x) => x.ratio);
    return `${column} ${ratios.filter((x) => within(x, range)).length} of ${ratios.length} (x${span(ratios, 2)})`;
  });
  return {
    text: [
      `| lane | ${columns.join(' | ')} |`,
      `|---|${columns.map(() => '--:|').join('')}`,
      ...lanes.map((lane) => `| ${lane} | ${columns.map((c) => cell(lane, c)).join(' | ')} |`),
      '',
      `Recovery p50 over ${r.eventsPerLane} events a lane, ms, the model's p50 in brackets, then measured / model. Within ${num(range[0], 1)}–${num(range[1], 2)}: ${summary.join(', ')} (\`node bench/recovery.js\`, ${day(r)}, ${machine(r)}).`,
    ].join('\n'),
    // Its p50s are whole ms, which recur elsewhere by the model's accuracy: its ranges are looked for.
    values: summary.map((s) => /x(\S+)\)$/.exec(s)[1]).filter((v) => v.includes('–')),
  };
}

// bench/overhead.js's newest part (b) (`overhead-extra`): the k6 CPU the pack's clients add to a
// bare script per operation, over every transport, full and lean metrics.
function overheadExtra(records) {
  const r = newest(records, 'overhead', (x) => x.b);
  if (!r) return null;
  const us = r.b.flatMap((row) => [row['lib extra us/op'], row['lean extra us/op']]).filter((x) => x !== undefined);
  const text = `${span(us)} µs`;
  return { text: `${text} (${day(r)}, ${machine(r)})`, values: [text] };
}

// A mobile record of both networks and the default lanes (not one of --networks or --lanes):
// its `full`. Records before 2026-11-30 do not say; of those, the full ones had both networks
// and the six default lanes.
const fullMobile = (r) => r.full ?? (!r.quick && r.networks.length > 1 && r.lanes.length >= 6);

// bench/mobile.js's newest record (`mobile-table`): per network, lane and T, the operation after
// its gap beside the model's, and the radio's time on per hour from the link's log beside the model's.
function mobileTable(records) {
  const r = newest(records, 'mobile', fullMobile);
  if (!r) return null;
  const rowOf = (row) =>
    `| ${row.network} | ${row.lane} | ${row.everyS} s (${row.gap}) | ${row.p50Ms ?? '–'} | ${row.modelMs} (${row.against}) | ${row.ratio === null ? '–' : `x${num(row.ratio, 2)}`} | ${row.radioOnSh ?? '–'} | ${row.radioOnModelSh} | ${row.radioOnRatio === null ? (row.radioOnVerdict ?? '–') : `x${num(row.radioOnRatio, 3)}`} | ${row.mjPerOp ?? '–'} | ${row.jPerHour ?? '–'} |`;
  const rows = r.rows.map(rowOf);
  // Later runs of some networks or lanes (--networks, --lanes): their rows below the table's,
  // oldest first; a row a newer such run measured again (network, lane, T) only from it.
  const later = records
    .filter((x) => x.bench === 'mobile' && !x.quick && !fullMobile(x) && String(x.date) > String(r.date))
    .sort((a, b) => String(a.date).localeCompare(String(b.date)));
  // The gap too: 3G's run with larger answers has a row at FACH's T beside the book's.
  const rowKey = (row) => `${row.network}|${row.lane}|${row.everyS}|${row.gap}`;
  later.forEach((x, i) => {
    const newer = new Set(later.slice(i + 1).flatMap((y) => y.rows.map(rowKey)));
    const own = x.rows.filter((row) => !newer.has(rowKey(row)));
    if (own.length)
      rows.push(
        `| *later, ${day(x)}: \`--networks ${x.networks.join(',')} --lanes ${x.lanes.join(',')}\`, p50 of ${x.ops}* |||||||||||`,
        ...own.map(rowOf),
      );
  });
  // A timer the full run did not see (FACH -> DCH before its run of larger answers): from the
  // newest later run that saw it.
  const timerOf = (t) =>
    t.seen
      ? { ...t, when: null }
      : (later
          .map((x) => ({
            x,
            found: (x.timers || []).find((y) => y.network === t.network && y.timer === t.timer && y.seen),
          }))
          .filter((y) => y.found)
          .map(({ x, found }) => ({ ...found, when: day(x) }))
          .pop() ?? { ...t, when: null });
  const timers = (r.timers || []).map(timerOf);
  return {
    text: [
      '| network | lane | one operation every | p50 ms | model ms | / model | radio on s/h (log) | model s/h | / model | mJ/op | J/h |',
      '|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
      ...rows,
      '',
      `p50 of ${r.ops} operations after their gap; the model past the tail is the +rrc profile's (its promotion, where the lane's gap lets the radio sleep), within it the plain network's, in FACH (3G, 8 s) the +rrc profile's (FACH's slow carriage of the operation's bytes). The radio's time on and its energy are read from the link's event log over the step; a lane with pings (ws: the server's, every 12 s; grpc_ping10: the server's, every 10 s) is measured, not judged, on its time on. Targets: 0.9–1.1, radio on within 5 % (\`node bench/mobile.js\`, ${day(r)}, ${machine(r)}).`,
      ...(timers.length
        ? [
            '',
            "| network | the radio's timer | seen | the link's log, p50 ms | the paper's ms | / paper |",
            '|---|---|--:|--:|--:|--:|',
            ...timers.map(
              (t) =>
                `| ${t.network} | ${t.timer}${t.when ? ` (*later, ${t.when}*)` : ''} | ${t.seen} | ${t.logMs ?? '–'} | ${t.paperMs} | ${t.ratio === null ? '–' : `x${num(t.ratio, 3)}`} |`,
            ),
            '',
            "Each timer from the start of a promotion to its end, or from a tail's last packet to the demotion that ends it (`common/radio-log.js` timersOf), over the values `common/radio.js` takes from the papers; one the full run did not see, from the newest later run that did. Target: within 2 %.",
          ]
        : []),
      ...(r.nat?.length
        ? [
            '',
            `| ${r.nat[0].network}, one operation every ${r.nat[0].everyS} s | the NAT drops its connection (model) | failed / operations | recovery p50 ms | mJ/op |`,
            '|---|---|--:|--:|--:|',
            ...r.nat.map(
              (x) =>
                `| ${x.lane} | ${x.modelDrops ? 'yes' : 'no'} | ${x.failures ?? '–'} / ${x.operations ?? '–'} | ${x.recoveryMs === null ? '–' : Math.round(x.recoveryMs)} | ${x.mjPerOp === null ? '–' : Math.round(x.mjPerOp)} |`,
            ),
          ]
        : []),
    ].join('\n'),
    // Its ratios (x1.00 ...) recur on other pages by the model's accuracy: its J/h with a decimal do not.
    values: r.rows.flatMap((row) =>
      row.jPerHour === null || Number.isInteger(row.jPerHour) ? [] : [String(row.jPerHour)],
    ),
  };
}

// The tables: a block whose name's first part is one of these, its other parts the arguments.
// Each gives { text, values }: the values are what typedTwice looks for outside the block.
const TABLES = {
  'connect-cost': (records) => {
    const text = connectCostTable(records);
    return text && { text, values: [] };
  },
  'fidelity-table': fidelityTable,
  'recovery-table': recoveryTable,
  'mobile-table': mobileTable,
  'overhead-extra': overheadExtra,
};
export function renderTable(name, records) {
  const [kind, ...args] = name.split(':');
  return TABLES[kind] ? TABLES[kind](records, ...args) : undefined;
}

export function renderBlock(name, evaluated, records) {
  const table = renderTable(name, records);
  if (table !== undefined) return table?.text ?? null;
  if (name === 'readme-benchmarks') return readmeTable(evaluated);
  if (name === 'benchmarks') return fullTable(evaluated);
  return inline(evaluated, name);
}

// ---- the blocks in the files ---------------------------------------------------------

const BLOCK = /<!-- figures:begin ([\w:-]+) -->([\s\S]*?)<!-- figures:end \1 -->/g;

export function markdownFiles(root) {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return [join(root, 'README.md'), ...walk(join(root, 'docs'))];
}

// -> { text, stale: [names], unknown: [names] }: the text with every block rendered afresh.
export function refresh(text, evaluated, records) {
  const stale = [];
  const unknown = [];
  const out = text.replace(BLOCK, (whole, name, body) => {
    const rendered = renderBlock(name, evaluated, records);
    if (rendered === null) {
      unknown.push(name);
      return whole;
    }
    const block = body.includes('\n') ? `\n\n${rendered}\n\n` : rendered;
    if (block !== body) stale.push(name);
    return `<!-- figures:begin ${name} -->${block}<!-- figures:end ${name} -->`;
  });
  const begins = [...text.matchAll(/<!-- figures:begin ([\w:-]+) -->/g)].length;
  const blocks = [...text.matchAll(BLOCK)].length;
  if (begins !== blocks) unknown.push('(a begin marker without its end)');
  return { text: out, stale, unknown };
}

// A figure typed by hand beside its block: the measured values of each figure's text (a time,
// a size, a range of ratios), and the values of every table block in use (`tableValues`: a
// study's p50s and ratios), found in a page's prose outside the blocks and the code. A range
// typed with a hyphen (0.86-1.09) is the same range.
const VALUE = /\d[\d,.–]*\d ?(?:s|ms|MB|KB|µs|sd)\b|x\d\.\d{2,3}(?:–\d\.\d{2,3})?|\d\.\d{3}/g;
export function typedTwice(text, evaluated, tableValues = []) {
  const prose = text
    .replace(BLOCK, '')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/(\d)-(?=\d)/g, '$1–');
  const found = [];
  const escaped = (value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A value alone, not the end or the start of a longer number or word ("300 s" is not in
  // "300 seeds").
  const look = (value, id) => {
    if (value.length >= 4 && new RegExp(`(?<![\\d.])${escaped(value)}(?!\\w)`).test(prose))
      found.push(`${value} (${id})`);
  };
  for (const { figure, result } of evaluated)
    for (const value of new Set((result.text.match(VALUE) ?? []).map((v) => v.replace(/^x/, ''))))
      look(value, figure.id);
  for (const { name, values } of tableValues) for (const value of new Set(values)) look(value, name);
  return [...new Set(found)];
}

// Every table block named in the files, rendered: [{ name, values }].
export function tablesInUse(texts, records) {
  const names = new Set(texts.flatMap((t) => [...t.matchAll(BLOCK)].map((m) => m[1])));
  return [...names]
    .map((name) => ({ name, table: renderTable(name, records) }))
    .filter((t) => t.table)
    .map((t) => ({ name: t.name, values: t.table.values }));
}

function main(argv) {
  const write = argv.includes('--write');
  const rootAt = argv.indexOf('--root');
  const root = rootAt >= 0 ? argv[rootAt + 1] : DEFAULT_ROOT;
  const records = readRecords(root);
  const evaluated = evaluate(records);
  if (argv.includes('--list')) {
    for (const { figure, result, verdict } of evaluated)
      console.log(`${figure.id}: ${result.text} [${verdict}] (lines ${result.records.map((r) => r.line).join(', ')})`);
    return 0;
  }
  let faults = 0;
  const files = markdownFiles(root);
  const tables = tablesInUse(
    files.map((f) => readFileSync(f, 'utf8')),
    records,
  );
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const { text: fresh, stale, unknown } = refresh(text, evaluated, records);
    for (const name of unknown) {
      console.log(`${relative(root, file)}: unknown figures block ${name}`);
      faults++;
    }
    for (const value of typedTwice(text, evaluated, tables)) {
      console.log(`${relative(root, file)}: ${value} typed outside its block: quote the block, or link to it`);
      faults++;
    }
    if (!stale.length) continue;
    if (write) {
      writeFileSync(file, fresh);
      console.log(`${relative(root, file)}: rewrote ${stale.join(', ')}`);
    } else {
      console.log(`${relative(root, file)}: stale ${stale.join(', ')} (node bench/figures.js --write)`);
      faults++;
    }
  }
  return faults ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  process.exitCode = main(process.argv.slice(2));
