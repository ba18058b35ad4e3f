// How much CPU this machine has for a run right now, against the reference machine
// the model's CPU terms were measured on (common/model.js budget(), common/machine.js).
//
// One worker thread per core runs the same fixed task at once (JSON in and out, and a
// SHA-256, the kind of work k6 and the servers do per operation); each round's time is
// its slowest worker's. cpuScale is the median round over REFERENCE_TASK_MS, never
// below 1: a faster machine keeps the reference budgets. A runner with one of two cores
// busy runs two workers on one core and a half, so its rounds take ~1.5x as long.
// It takes ~0.3 s and is measured again before every k6 run (load changes).
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CPU_SCALE_MAX } from '../common/machine.js';
import { median } from '../common/quantiles.js';

// The task's round on the reference machine (this project's 2-core VM: median of 100
// rounds 19.1 ms with one test file running beside it, 2026-11-26; with one core kept
// busy by a spinning process, 38.5 ms: a scale of ~2). `node lib/calibrate.js N` prints it.
export const REFERENCE_TASK_MS = 20;
const ROUNDS = 5;

const TASK = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const doc = { books: Array.from({ length: 400 }, (_, i) => ({ id: 'b' + i, title: 'Title ' + i, pages: i * 7, tags: ['a', 'b', 'c'] })) };
const buf = Buffer.alloc(256 * 1024, 7);
parentPort.on('message', () => {
  const t0 = performance.now();
  for (let i = 0; i < 40; i++) {
    const text = JSON.stringify(doc);
    JSON.parse(text);
    createHash('sha256').update(buf).digest();
  }
  parentPort.postMessage(performance.now() - t0);
});`;

const once = (w) =>
  new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
    w.postMessage(0);
  });

// -> { cores, cpuScale, roundMs: [...], referenceMs }
export async function measureMachine({ cores = cpus().length, rounds = ROUNDS } = {}) {
  const workers = Array.from({ length: cores }, () => new Worker(TASK, { eval: true }));
  try {
    await Promise.all(workers.map(once)); // warm-up: JIT and the first allocation
    const roundMs = [];
    for (let r = 0; r < rounds; r++) roundMs.push(Math.max(...(await Promise.all(workers.map(once)))));
    const cpuScale = Math.min(
      CPU_SCALE_MAX,
      Math.max(1, Math.round((median(roundMs) / REFERENCE_TASK_MS) * 100) / 100),
    );
    return { cores, cpuScale, roundMs: roundMs.map((x) => Math.round(x * 10) / 10), referenceMs: REFERENCE_TASK_MS };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

// `node lib/calibrate.js [N]`: N calibrations, their rounds (to set REFERENCE_TASK_MS).
if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] || 10);
  const all = [];
  for (let i = 0; i < n; i++) {
    const m = await measureMachine();
    all.push(...m.roundMs);
    console.log(JSON.stringify(m));
  }
  console.log(`median round ${median(all)} ms over ${all.length} rounds`);
}
