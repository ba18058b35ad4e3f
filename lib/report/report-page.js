/* global Chart */
// Runs in the browser, inlined into report.html after Chart.js: reads the data
// block and draws every chart and table. No network: everything is in the file.
(function main() {
  const data = JSON.parse(document.getElementById('k6pack-data').textContent);
  const PALETTE = [
    '#1f77b4',
    '#d62728',
    '#2ca02c',
    '#ff7f0e',
    '#9467bd',
    '#8c564b',
    '#e377c2',
    '#17becf',
    '#7f7f7f',
    '#bcbd22',
  ];
  const el = (tag, attrs = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  };

  // Lanes keep their colour across p50/p95 series; bars get one colour per series.
  function colourFor(chart, series, i) {
    if (chart.kind === 'bar') return PALETTE[i % PALETTE.length];
    const lanes = [...new Set(chart.series.map((s) => s.label.replace(/ p\d+$/, '')))];
    return PALETTE[lanes.indexOf(series.label.replace(/ p\d+$/, '')) % PALETTE.length];
  }

  function draw(chart, canvas) {
    const datasets = chart.series.map((s, i) => {
      const colour = colourFor(chart, s, i);
      return {
        label: s.label,
        data: chart.kind === 'bar' ? s.points.map((p) => p.y) : s.points,
        borderColor: colour,
        backgroundColor: colour,
        borderDash: s.dashed ? [6, 4] : [],
        pointRadius: 3,
        spanGaps: true,
      };
    });
    const axis = (a) => ({
      type: a.type,
      title: { display: true, text: a.title },
      ...(chart.stacked ? { stacked: true } : {}),
    });
    return new Chart(canvas, {
      type: chart.kind,
      data: chart.kind === 'bar' ? { labels: chart.x.labels, datasets } : { datasets },
      options: {
        animation: false,
        responsive: false,
        ...(chart.kind === 'bar' ? {} : { parsing: false }),
        scales: { x: axis(chart.x), y: axis(chart.y) },
        plugins: { legend: { position: 'bottom' }, title: { display: false } },
      },
    });
  }

  const table = (head, rows) =>
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, String(c)))))),
    );

  const root = document.getElementById('report');
  // A gate's report opens with the gate's own verdict and every threshold that failed (as
  // its comment.md does), before the studies' answers.
  if (data.gate) {
    const { verdict, code, failed } = data.gate;
    const box = el(
      'section',
      { class: `gate ${code === 0 ? 'passed' : 'failed'}`, id: 'gate' },
      el('h2', {}, `Gate: ${verdict}`),
      el('p', { class: 'facts' }, `exit ${code}`),
    );
    if (failed.length)
      box.append(
        el('h3', {}, `Failed thresholds (${failed.length})`),
        table(['run', 'metric', 'threshold', 'observed'], failed),
      );
    else box.append(el('p', {}, 'Every threshold held.'));
    root.append(box);
  }
  // The answer first: each run's verdict, before any chart or table.
  const answers = data.sections.filter((s) => s.verdict.length);
  if (answers.length) {
    const box = el('section', { class: 'answer', id: 'answer' }, el('h2', {}, 'The answer'));
    for (const s of answers)
      box.append(el('h3', {}, s.title), ...s.verdict.map((line) => el('p', { class: 'verdict' }, line)));
    root.append(box);
  }
  root.append(el('p', { class: 'facts' }, `${data.runs.length} run folder(s), drawn ${data.generatedAt}`));
  root.append(
    table(
      ['run', 'scenario', 'profile', 'load', 'segment', 'started'],
      data.runs.map((r) => [r.name, r.scenario, r.profile, r.load, r.segment || '-', r.startedAt || '-']),
    ),
  );

  for (const section of data.sections) {
    const s = el('section', { 'data-run': section.id });
    s.append(
      el('h2', {}, section.title),
      ...section.verdict.map((line) => el('p', { class: 'verdict' }, line)),
      el('p', { class: 'facts' }, section.facts),
    );
    const grid = el('div', { class: 'grid' });
    for (const chart of section.charts) {
      const canvas = el('canvas', {
        width: '560',
        height: '340',
        'data-chart': chart.id,
        'data-series': JSON.stringify(chart.series.map((x) => x.label)),
      });
      grid.append(el('figure', {}, el('figcaption', {}, chart.title), canvas, el('small', {}, chart.note || '')));
      try {
        draw(chart, canvas);
        canvas.setAttribute('data-drawn', 'true');
      } catch (err) {
        console.error(`chart ${chart.id}: ${err.message}`);
      }
    }
    s.append(grid);
    s.append(el('h3', {}, 'Rows'), table(section.rows.head, section.rows.body));
    if (section.model.length)
      s.append(
        el('h3', {}, 'Measured vs model'),
        table(['lane', 'measured p50', 'measured mean', 'model', 'formula'], section.model),
      );
    s.append(el('h3', {}, `Thresholds: ${section.thresholds.verdict}`));
    if (section.thresholds.failed.length)
      s.append(table(['metric', 'threshold', 'observed'], section.thresholds.failed));
    root.append(s);
  }
  window.k6packReportReady = true;
})();
