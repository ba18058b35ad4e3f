// Run-to-run spread of gated figures: how far each budget sits above its noise.
// figures: gateFigures() rows of several runs of the same gate ({ scenario, profile,
// key, stat, limit, observed, run }). Only latency percentiles count (p(50), p(95)...):
// a count or a rate gate has no spread to speak of on unchanged code.
// -> { gates, cvMedian, cvMax, rows, worst (the 15 smallest margins), below (margin < k sd) }
const round = (x, d = 1) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);

export function spreadOf(figures, k = 3) {
  const groups = new Map();
  for (const f of figures) {
    if (!/^p\(/.test(f.stat || '') || f.observed === null || f.limit === null) continue;
    const id = `${f.scenario}|${f.profile}|${f.key}|${f.stat}`;
    if (!groups.has(id))
      groups.set(id, { scenario: f.scenario, profile: f.profile, key: f.key, stat: f.stat, limit: f.limit, v: [] });
    // Each run's budget follows the machine it measured (CPU_SCALE): the tightest one counts.
    const g = groups.get(id);
    g.limit = Math.min(g.limit, f.limit);
    g.v.push(f.observed);
  }
  const rows = [];
  for (const g of groups.values()) {
    if (g.v.length < 2) continue;
    const mean = g.v.reduce((s, x) => s + x, 0) / g.v.length;
    // Sample standard deviation (n - 1): a handful of runs.
    const sd = Math.sqrt(g.v.reduce((s, x) => s + (x - mean) ** 2, 0) / (g.v.length - 1));
    const margin = g.limit - mean;
    rows.push({
      scenario: g.scenario,
      profile: g.profile,
      key: g.key,
      stat: g.stat,
      limit: g.limit,
      values: g.v.map((x) => round(x)).join(' '),
      mean: round(mean),
      sd: round(sd, 2),
      'cv %': round(mean > 0 ? (100 * sd) / mean : 0),
      // A figure that did not move at all (k6's whole-ms gRPC timings can) has an
      // unbounded margin in sd: it is judged by its margin in ms alone (> 0).
      'margin sd': sd > 0 ? round(margin / sd) : margin > 0 ? Infinity : -Infinity,
    });
  }
  rows.sort((a, b) => a['margin sd'] - b['margin sd']);
  const cvs = rows.map((r) => r['cv %']).sort((a, b) => a - b);
  return {
    gates: rows.length,
    cvMedian: cvs.length ? cvs[Math.floor(cvs.length / 2)] : null,
    cvMax: cvs.length ? cvs[cvs.length - 1] : null,
    rows,
    worst: rows.slice(0, 15),
    below: rows.filter((r) => r['margin sd'] < k),
  };
}
