#!/usr/bin/env node
// The suite's runner (`npm test`; `npm run test:unit` for the fast tier).
//
// Every test file runs, in two phases:
//   1. the files whose assertions are timings (budgets from the model, ratios to it,
//      p50s of real runs: TIMED below), one at a time, alone on the machine;
//   2. every other file (servers, CLI, stack, reports, bad input: real processes
//      whose assertions are not timings), REST_AT_ONCE at a time.
// Phase 2 took 461 s two at a time and 334 s three at a time (2026-11-26, with
// api-cli.test.js moved out of phase 1), using 1.3 of the 2 cores: its files mostly
// wait on shaped links, timeouts and process starts. bench.test.js is in phase 2 too:
// it runs four benches at once by design and asserts only what holds whatever else
// runs (its speed targets are the benches' own, on a quiet machine). That keeps the
// suite under 25 minutes (the timed phase took 1167 s with it) without running a
// timed test beside another.
// `unit` runs only the files that start no stack, k6 or CLI (UNIT below; servers in
// the test's own process at most): seconds, for the model, profiles and verdict.
// `rest` runs phase 2 alone.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const TIMED = [
  'api.test.js',
  'fanout.test.js',
  'grpc-streams.test.js',
  'hold.test.js',
  'profile-churn.test.js',
  'profiles-gates.test.js',
  'roundtrip.test.js',
  'scenarios-smoke.test.js',
  'segments.test.js',
  'soak.test.js',
  'tcp-k6.test.js',
  'toxiproxy-go.test.js',
  'workload.test.js',
];

export const UNIT = [
  'compose.test.js',
  'cross-transport.test.js',
  'docs.test.js',
  'gate-spread.test.js',
  'graphql-documents.test.js',
  'lint.test.js',
  'model-tcp.test.js',
  'plan-headers.test.js',
  'profiles-catalogue.test.js',
  'profiles-toxics.test.js',
  'settings.test.js',
  'tally.test.js',
  'verdict.test.js',
];

const REST_AT_ONCE = Number(process.env.REST_AT_ONCE || 3);

function run(files, concurrency) {
  if (!files.length) return 0;
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files.map((f) => join(here, f))],
    { stdio: 'inherit' },
  );
  console.log(
    `\n== ${files.length} files, ${concurrency} at a time: ${Math.round((Date.now() - t0) / 1000)} s, exit ${r.status ?? r.signal}\n`,
  );
  return r.status ?? 1;
}

const all = readdirSync(here)
  .filter((f) => f.endsWith('.test.js'))
  .sort();
for (const f of [...TIMED, ...UNIT]) {
  if (!all.includes(f)) {
    console.error(`test/run.js names ${f}, which is not in test/: update its lists`);
    process.exit(2);
  }
}
const tier = process.argv[2] || 'all';
let code;
if (tier === 'unit') {
  code = run(UNIT, 1);
} else if (tier === 'all') {
  const t0 = Date.now();
  code = Math.max(
    run(TIMED, 1),
    run(
      all.filter((f) => !TIMED.includes(f)),
      REST_AT_ONCE,
    ),
  );
  console.log(`== the suite: ${all.length} files in ${Math.round((Date.now() - t0) / 1000)} s, exit ${code}`);
} else if (tier === 'rest') {
  code = run(
    all.filter((f) => !TIMED.includes(f)),
    REST_AT_ONCE,
  );
} else {
  console.error(`unknown tier '${tier}': use all (the default), unit or rest`);
  code = 2;
}
process.exit(code);
