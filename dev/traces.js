#!/usr/bin/env node
// profiles/traces/: the pack's own Mahimahi traces (`--profile lte+trace=walk-lte`), made
// here, seeded, so the committed files are this script's output byte for byte:
//   node dev/traces.js           says whether the files are current (exit 1 if not)
//   node dev/traces.js --write   rewrites them
// test/profiles-catalogue.test.js checks they are current, parse and stay small.
//
// The format is Mahimahi's (mm-link(1), https://manpages.ubuntu.com/manpages/focal/man1/mm-link.1.html):
// one line per delivery opportunity for a packet of up to 1500 bytes, the time in whole
// ms; the list repeats with the period of its last line.
//
// The shape is the model of a cellular link that Sprout's sender assumes (Winstein,
// Sivaraman, Balakrishnan: Stochastic Forecasts Achieve High Throughput and Low Delay
// over Cellular Networks, NSDI 2013,
// https://www.usenix.org/conference/nsdi13/technical-sessions/presentation/winstein):
// packets are delivered as a Poisson process whose rate wanders as a random walk
// (Brownian motion; the paper's noise is sigma = 200 packets/s per root second, its
// rate bounded by 1000 packets/s), and a rate that reaches 0 is an outage, left at
// the paper's escape rate of 1 per second (a mean outage of about 1 s). That paper
// motivates the model with its own measurements of cellular links, whose rate varies
// by large factors within seconds and stops for short outages; these files are drawn
// from the model with the paper's parameters, not fitted to, or copied from, any
// measured trace.
//
// What this script chooses itself (not from the paper): the walk moves every 20 ms (the
// tick of Sprout's own forecast) and reflects at the top rate; a walk leaving an
// outage restarts at the size of one second of its noise (|N(0, sigma^2 x 1 s)|), so
// it does not fall straight back in; the first rate is half the top one; each trace's
// period (short enough to keep each file small), and for walk-3g the top rates of the
// 3g profile (1600 and 768 kbit/s: 133 and 64 packets/s) with sigma scaled by the same
// factor; walk-lte's top rate, Sprout's 1000 packets/s, is lte's 12 Mbit/s. Each
// direction's seed is the first from its own start (seedFrom) whose draw holds an
// outage longer than MIN_OUTAGE_MS within the period, so every file shows one: a
// selection, said here. Every number is below.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { traceStats } from '../common/trace.js';
import { ROOT } from '../lib/tools.js';
import { mulberry32 } from './prng.js';

const TRACE_DIR = join(ROOT, 'profiles', 'traces');

const SPROUT = { sigma: 200, topRate: 1000, escapePerS: 1 }; // packets/s per root s; packets/s; 1/s
const TICK_MS = 20;
const MIN_OUTAGE_MS = 500;

// name -> direction -> { topRate (packets/s), periodMs, seedFrom }
export const TRACES = {
  'walk-lte': {
    down: { topRate: 1000, periodMs: 15000, seedFrom: 2601 },
    up: { topRate: 1000, periodMs: 15000, seedFrom: 2701 },
  },
  'walk-3g': {
    down: { topRate: 133, periodMs: 60000, seedFrom: 2801 },
    up: { topRate: 64, periodMs: 60000, seedFrom: 2901 },
  },
};

const normal = (rand) => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());

// Knuth's method: fine for the small means here (at most 1 packet a ms).
function poisson(rand, mean) {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rand();
  while (p > limit) {
    k++;
    p *= rand();
  }
  return k;
}

// One direction: the opportunities' timestamps (ms), the last one the period.
export function walkTrace({ topRate, periodMs, seed }) {
  const rand = mulberry32(seed);
  const sigma = SPROUT.sigma * (topRate / SPROUT.topRate);
  const step = sigma * Math.sqrt(TICK_MS / 1000);
  const escape = 1 - Math.exp(-SPROUT.escapePerS * (TICK_MS / 1000));
  let rate = topRate / 2;
  const out = [];
  for (let tick = 0; tick * TICK_MS < periodMs; tick++) {
    for (let ms = tick * TICK_MS + 1; ms <= Math.min(periodMs, (tick + 1) * TICK_MS); ms++) {
      for (let n = rate > 0 ? poisson(rand, rate / 1000) : 0; n > 0; n--) out.push(ms);
    }
    if (rate === 0) {
      if (rand() < escape) rate = Math.min(topRate, Math.abs(normal(rand)) * sigma);
    } else {
      rate += normal(rand) * step;
      if (rate > topRate) rate = 2 * topRate - rate;
      if (rate <= 0) rate = 0;
    }
  }
  if (out[out.length - 1] !== periodMs) out.push(periodMs);
  return out;
}

// The longest time without an opportunity (ms).
export const longestGap = (trace) => trace.reduce((g, t, i) => (i ? Math.max(g, t - trace[i - 1]) : g), trace[0] || 0);

// A direction's trace from the first seed from seedFrom whose draw holds an outage.
export function pickTrace({ seedFrom, ...spec }) {
  for (let seed = seedFrom; seed < seedFrom + 1000; seed++) {
    const trace = walkTrace({ ...spec, seed });
    if (longestGap(trace) > MIN_OUTAGE_MS) return { seed, trace };
  }
  throw new Error(`no seed from ${seedFrom} gives an outage over ${MIN_OUTAGE_MS} ms`);
}

// { 'walk-lte.down': text, ... }
export function makeTraces() {
  const files = {};
  for (const [name, dirs] of Object.entries(TRACES))
    for (const [dir, spec] of Object.entries(dirs)) files[`${name}.${dir}`] = `${pickTrace(spec).trace.join('\n')}\n`;
  return files;
}

function main() {
  const write = process.argv.includes('--write');
  let stale = 0;
  for (const [file, text] of Object.entries(makeTraces())) {
    const path = join(TRACE_DIR, file);
    const ms = text.trim().split('\n').map(Number);
    const s = traceStats(ms);
    const line = `${file}: ${s.opportunities} opportunities over ${s.periodMs} ms, ${(s.meanKbps / 1000).toFixed(2)} Mbit/s on average, longest outage ${longestGap(ms)} ms, ${(text.length / 1024).toFixed(1)} KB`;
    if (write) {
      writeFileSync(path, text);
      console.log(`wrote ${line}`);
      continue;
    }
    let have = null;
    try {
      have = readFileSync(path, 'utf8');
    } catch {
      // missing: stale
    }
    if (have !== text) stale++;
    console.log(`${have === text ? 'current' : 'STALE'} ${line}`);
  }
  if (stale) {
    console.log(`${stale} file(s) differ: node dev/traces.js --write`);
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] || '').href) main();
