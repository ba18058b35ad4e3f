/* global Chart */
// Runs in the browser, inlined into trends.html after Chart.js (lib/history/trends-html.js):
// one section per scenario, profile and run kind, one line chart per step. A run whose
// thresholds failed is drawn as a red cross on every line; a point's tooltip names its
// run's date and commit. No network: everything is in the file.
(function main() {
  const data = JSON.parse(document.getElementById('k6pack-data').textContent);
  const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  const FAILED = '#d00000';
  const el = (tag, attrs = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  };
  const short = (iso) => (iso ? iso.slice(5, 16).replace('T', ' ') : '?');

  function draw(group, chart, canvas) {
    const rows = [...new Set(chart.series.map((s) => s.row))];
    const datasets = chart.series.map((s) => {
      const colour = PALETTE[rows.indexOf(s.row) % PALETTE.length];
      return {
        label: s.label,
        data: s.values,
        borderColor: colour,
        backgroundColor: colour,
        borderDash: s.dashed ? [6, 4] : [],
        spanGaps: true,
        pointStyle: group.runs.map((r) => (r.passed ? 'circle' : 'crossRot')),
        pointRadius: group.runs.map((r) => (r.passed ? 2 : 7)),
        pointBorderColor: group.runs.map((r) => (r.passed ? colour : FAILED)),
        pointBorderWidth: group.runs.map((r) => (r.passed ? 1 : 3)),
      };
    });
    return new Chart(canvas, {
      type: 'line',
      data: { labels: group.runs.map((r) => short(r.startedAt)), datasets },
      options: {
        animation: false,
        responsive: false,
        scales: {
          x: { title: { display: true, text: 'run (UTC date)' } },
          y: { title: { display: true, text: 'ms' }, beginAtZero: false },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: {
            callbacks: {
              title: (items) => {
                const r = group.runs[items[0].dataIndex];
                return `${r.startedAt} · commit ${r.commit || '?'} · ${r.passed ? 'passed' : `${r.failed} threshold(s) failed`}`;
              },
            },
          },
        },
      },
    });
  }

  const root = document.getElementById('report');
  const runs = data.groups.reduce((n, g) => n + g.runs.length, 0);
  root.append(
    el(
      'p',
      { class: 'facts' },
      `${data.groups.length} series of runs, ${runs} runs, from ${data.dir}; drawn ${data.generatedAt}. A red cross: a run whose thresholds failed.`,
    ),
  );
  for (const group of data.groups) {
    const s = el('section', { 'data-group': group.title });
    s.append(el('h2', {}, group.title), el('p', { class: 'facts' }, group.facts));
    const grid = el('div', { class: 'grid' });
    for (const chart of group.charts) {
      const canvas = el('canvas', { width: '640', height: '360', 'data-chart': chart.id });
      grid.append(el('figure', {}, el('figcaption', {}, chart.title), canvas));
      try {
        draw(group, chart, canvas);
        canvas.setAttribute('data-drawn', 'true');
      } catch (err) {
        console.error(`chart ${group.title} ${chart.id}: ${err.message}`);
      }
    }
    s.append(grid);
    root.append(s);
  }
  window.k6packReportReady = true;
})();
