// The unstable scenario's tests (unstable.test.js, unstable-silent.test.js): a real
// stack for the file, lte with events of the test's own in a network file, and k6 runs
// of the scenario's chosen lanes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { runK6 } from '../../dev/run-k6.js';
import { useTestStack } from '../../dev/test-stack.js';
import { ROOT } from '../../lib/tools.js';
import { scaled } from './waits.js';

export function useUnstable() {
  const stack = useTestStack();
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-unstable-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  // lte's link with events of its own (docs/profiles.md#unstable-links): a network file.
  const network = (name, events) => networkFile(dir, name, events);
  const run = (profile, lanes) => runUnstable(stack.env, profile, lanes);
  return { network, run };
}

// lte's link with `events` as the network file <dir>/<name>.json; returns its path.
export function networkFile(dir, name, events) {
  const lte = JSON.parse(readFileSync(join(ROOT, 'profiles', 'network', 'lte.json'), 'utf8'));
  const file = join(dir, `${name}.json`);
  const { rttMs, jitterMs, downKbps, upKbps } = lte;
  writeFileSync(
    file,
    JSON.stringify({ name, source: 'test/helpers/unstable-run.js', rttMs, jitterMs, downKbps, upKbps, events }),
  );
  return file;
}

// A k6 run of the unstable scenario's `lanes` under `profile` against the stack whose
// targets are `env` (a stack's env: dev/test-stack.js); resolves runK6's result with
// output (the ends of stdout and stderr) and m (the summary's metrics).
export async function runUnstable(env, profile, lanes) {
  const r = await runK6(join(ROOT, 'scenarios', 'unstable.js'), {
    env: { ...env, LOAD: 'smoke', PROFILE: profile, LANES: lanes.join(',') },
    timeoutMs: scaled(150000),
  });
  const output = `${r.stdout.slice(-4000)}\n${r.stderr.slice(-3000)}`;
  return { ...r, output, m: r.summary ? r.summary.metrics : {} };
}

// A lane's sub-metric in k6's summary (its only step: c1).
export const metric = (m, name, lane) => m[`${name}{scenario:${lane}_c1}`];
export const recovery = (m, lane) => metric(m, 'event_recovery', lane);
export const failed = (m, lane) => metric(m, 'op_failed', lane);
