// The report's pictures, as plain data (the page draws them with Chart.js):
//   concurrency  latency p50/p95 vs VUs (fanout: subscribers) per lane, a panel per scenario and profile (2+ steps)
//   size         latency p50 vs message size (run.hints.sizes: payload, document, N; its lanes)
//   ratio        a lane's p50 over another's vs a dim (serialization: typed / JSON string vs N,
//                one series per executor, beside the study's curve)
//   split        one row per lane split into a part the run asked for and the rest, as
//                stacked bars beside a study's published numbers (compound-vs-parallel:
//                the study's document, generation time + the rest; run.hints.split)
//   push         push latency p50/p95/p99 per lane
//   model        measured p50 and mean vs the round-trip model (common/model.js, as
//                each row's gate carries it), per lane
// A chart: { id, title, note, kind: 'line'|'bar', stacked?, x: { title, type, labels? },
//            y: { title, type }, series: [{ label, points: [{ x, y }], dashed? }] }.

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const slug = (s) =>
  String(s)
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
// A step's concurrency: c10 is 10 (VUs, or what the scenario counts: fanout's subscribers).
const stepVus = (step) => Number(String(step.step).replace(/^c/, '')) || step.vus;
const lanesOf = (doc) => [...new Set(doc.steps.map((s) => s.lane))];
const matches = (dims, where = {}) => Object.entries(where).every(([k, v]) => dims[k] === undefined || dims[k] === v);
const lowestStep = (doc) => doc.steps.filter((s) => s.step !== 'mix').sort((a, b) => stepVus(a) - stepVus(b))[0]?.step;

function concurrency(doc, id) {
  const steps = doc.steps.filter((s) => s.step !== 'mix' && s.latency?.count);
  if (new Set(steps.map(stepVus)).size < 2) return null; // one step: nothing to draw against
  const series = [];
  for (const lane of lanesOf(doc)) {
    const own = steps.filter((s) => s.lane === lane).sort((a, b) => stepVus(a) - stepVus(b));
    if (!own.length) continue;
    series.push({ label: `${lane} p50`, points: own.map((s) => ({ x: stepVus(s), y: num(s.latency.p50) })) });
    series.push({
      label: `${lane} p95`,
      points: own.map((s) => ({ x: stepVus(s), y: num(s.latency.p95) })),
      dashed: true,
    });
  }
  const vus = steps.map(stepVus);
  return {
    id,
    title: `${doc.run.scenario}: ${doc.run.latencyMetric} vs concurrency (${doc.run.profile})`,
    note: 'one k6 scenario per lane and step; solid p50, dashed p95',
    kind: 'line',
    x: {
      title: doc.run.verdict?.unit || 'VUs (one connection each)',
      type: Math.max(...vus) / Math.min(...vus) >= 20 ? 'logarithmic' : 'linear',
    },
    y: { title: 'ms', type: 'linear' },
    series,
  };
}

function size(doc, id) {
  const hint = doc.run.hints?.sizes;
  if (!hint) return null;
  const step = lowestStep(doc);
  const bytesOf = (v) => (hint.bytes ? hint.bytes[v] : Number(v));
  const series = [];
  for (const lane of lanesOf(doc)) {
    if (hint.lanes && !hint.lanes.includes(lane)) continue; // lanes whose dim means other bytes
    const rows = doc.rows.filter(
      (r) =>
        r.lane === lane &&
        r.step === step &&
        r.dims[hint.dim] !== undefined &&
        matches(r.dims, hint.where) &&
        r.latency?.count,
    );
    const points = rows
      .map((r) => ({ x: bytesOf(r.dims[hint.dim]), y: num(r.latency.p50) }))
      .filter((p) => p.x > 0)
      .sort((a, b) => a.x - b.x);
    if (points.length) series.push({ label: `${lane} p50`, points });
  }
  if (!series.length) return null;
  return {
    id,
    title: `${doc.run.scenario}: latency vs ${hint.label || hint.dim} (${doc.run.profile}, step ${step})`,
    note: Object.keys(hint.where || {}).length
      ? `rows with ${Object.entries(hint.where)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`
      : '',
    kind: 'line',
    x: { title: hint.unit || 'bytes', type: 'logarithmic' },
    y: { title: 'ms (p50)', type: 'logarithmic' },
    series,
  };
}

// hint: { dim, numerator (a lane) or numerators ({ lane: label }: one series each,
// e.g. serialization's executors), denominator (a lane), label, unit, study, studyLabel }.
function ratio(doc, id) {
  const hint = doc.run.hints?.ratio;
  if (!hint) return null;
  const numerators = hint.numerators || { [hint.numerator]: null };
  const steps = [...new Set(doc.steps.map((s) => s.step))];
  const series = [];
  for (const [lane, name] of Object.entries(numerators)) {
    for (const step of steps) {
      const p50 = (l, v) =>
        doc.rows.find((r) => r.lane === l && r.step === step && r.dims[hint.dim] === v)?.latency?.p50;
      const values = [
        ...new Set(doc.rows.filter((r) => r.lane === lane && r.step === step).map((r) => r.dims[hint.dim])),
      ];
      const points = values
        .map((v) => ({
          x: Number(v),
          y: num(p50(lane, v)) && num(p50(hint.denominator, v)) ? p50(lane, v) / p50(hint.denominator, v) : null,
        }))
        .filter((p) => p.y !== null)
        .sort((a, b) => a.x - b.x);
      if (points.length)
        series.push({
          label: name === null ? `${step} measured` : `${name}${steps.length > 1 ? ` ${step}` : ''}`,
          points,
        });
    }
  }
  if (!series.length) return null;
  if (hint.study)
    series.push({
      label: hint.studyLabel || 'study',
      points: Object.entries(hint.study).map(([x, y]) => ({ x: Number(x), y })),
      dashed: true,
    });
  const over = hint.numerators ? `each of ${Object.keys(numerators).join(', ')}` : hint.numerator;
  return {
    id,
    title: `${doc.run.scenario}: ${hint.label} vs ${hint.dim} (${doc.run.profile})`,
    note: `p50 of ${over} / p50 of ${hint.denominator}${steps.length > 1 ? ', per step' : ''}`,
    kind: 'line',
    x: { title: hint.unit || hint.dim, type: 'logarithmic' },
    y: { title: 'factor', type: 'linear' },
    series,
  };
}

// hint: { title, where (dims), known: { lane: ms the run asked for }, knownLabel,
// restLabel, reference: [{ label, known, total }] }: per lane the row's p50 at the
// lowest step, split into `known` and the rest; the references as bars beside them.
function split(doc, id) {
  const hint = doc.run.hints?.split;
  if (!hint) return null;
  const step = lowestStep(doc);
  const bars = [];
  for (const lane of lanesOf(doc)) {
    if (!(lane in hint.known)) continue;
    const row = doc.rows.find(
      (r) =>
        r.lane === lane &&
        r.step === step &&
        matches(r.dims, hint.where) &&
        Object.keys(hint.where).every((k) => r.dims[k] !== undefined) &&
        r.latency?.count,
    );
    const p50 = num(row?.latency?.p50);
    if (p50 === null) continue;
    const known = Math.min(hint.known[lane], p50);
    bars.push({ label: lane, known, rest: p50 - known });
  }
  if (!bars.length) return null;
  for (const ref of hint.reference || [])
    bars.push({ label: ref.label, known: ref.known, rest: ref.total - ref.known });
  const labels = bars.map((b) => b.label);
  return {
    id,
    title: `${doc.run.scenario}: ${hint.title} (${doc.run.profile}, step ${step})`,
    note: `p50 of the rows with ${Object.entries(hint.where)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}, split in two`,
    kind: 'bar',
    stacked: true,
    x: { title: 'lane', type: 'category', labels },
    y: { title: 'ms (p50)', type: 'linear' },
    series: [
      { label: hint.knownLabel, points: bars.map((b) => ({ x: b.label, y: b.known })) },
      { label: hint.restLabel, points: bars.map((b) => ({ x: b.label, y: b.rest })) },
    ],
  };
}

function push(doc, id) {
  if (doc.run.latencyMetric !== 'push_latency') return null;
  const step = lowestStep(doc);
  const steps = doc.steps.filter((s) => s.step === step && s.latency?.count);
  if (!steps.length) return null;
  const labels = steps.map((s) => s.lane);
  const bar = (stat) => ({ label: stat, points: steps.map((s, i) => ({ x: labels[i], y: num(s.latency[stat]) })) });
  const series = [bar('p50'), bar('p95'), bar('p99')];
  const modelOf = (s) => doc.rows.find((r) => r.scenario === s.scenario && r.model)?.model.p50.ms ?? null;
  const model = steps.map((s, i) => ({ x: labels[i], y: modelOf(s) }));
  if (model.some((p) => p.y !== null)) series.push({ label: 'model', points: model });
  return {
    id,
    title: `${doc.run.scenario}: push latency, server send -> client receive (${doc.run.profile}, step ${step})`,
    note: 'model: one way, R/2 + event/Bd; polling adds the wait for the next poll',
    kind: 'bar',
    x: { title: 'lane', type: 'category', labels },
    y: { title: 'ms', type: 'linear' },
    series,
  };
}

// Measured vs the model, per row at the lowest step (the model each row's gate was
// derived from); a lane's set-up phases measured apart as extra bars.
export function modelRows(doc) {
  if (!doc.run.network || !(doc.run.network.rttMs > 0)) return [];
  const step = lowestStep(doc);
  const out = [];
  for (const row of doc.rows.filter((r) => r.step === step && r.model && r.latency?.count)) {
    const dims = Object.entries(row.dims)
      .map(([k, v]) => `${k}:${v}`)
      .join(',');
    out.push({
      label: [row.lane, dims].filter(Boolean).join(' '),
      measuredP50: num(row.latency.p50),
      measuredAvg: num(row.latency.avg),
      model: row.model.p50.ms,
      formula: row.model.p50.formula,
    });
  }
  for (const s of doc.steps.filter((x) => x.step === step && x.setupGates)) {
    for (const g of s.setupGates) {
      const measured = doc.rows.find((r) => r.scenario === s.scenario)?.metrics?.[`setup_duration{phase:${g.phase}}`];
      if (measured?.count)
        out.push({
          label: `${s.lane} ${g.phase}`,
          measuredP50: num(measured.p50),
          measuredAvg: num(measured.avg),
          model: g.model.p50.ms,
          formula: g.model.p50.formula,
        });
    }
  }
  return out;
}

function model(doc, id) {
  const rows = modelRows(doc);
  if (!rows.length) return null;
  const labels = rows.map((r) => r.label);
  const bar = (label, field) => ({ label, points: rows.map((r) => ({ x: r.label, y: r[field] })) });
  return {
    id,
    title: `${doc.run.scenario}: measured vs round-trip model (${doc.run.profile}, R = ${doc.run.network.rttMs} ms, step ${lowestStep(doc)})`,
    note: 'model: set-up and request round trips x R + bytes over the profile bandwidth + server time (docs/model.md)',
    kind: 'bar',
    x: { title: 'lane', type: 'category', labels },
    y: { title: 'ms', type: 'linear' },
    series: [bar('measured p50', 'measuredP50'), bar('measured mean', 'measuredAvg'), bar('model', 'model')],
  };
}

// Every chart for one (merged) run document.
export function chartsFor(doc, prefix) {
  const base = slug(`${prefix}-${doc.run.scenario}-${doc.run.profile}`);
  return [
    concurrency(doc, `${base}-concurrency`),
    size(doc, `${base}-size`),
    ratio(doc, `${base}-ratio`),
    split(doc, `${base}-split`),
    push(doc, `${base}-push`),
    model(doc, `${base}-model`),
  ].filter(Boolean);
}
