// One test split into execution segments, as the k6-operator splits it among
// its runners (its pkg/segmentation): runner `index` (1-based) of `total` gets
// --execution-segment=<(index-1)/total>:<index/total> and the whole sequence.
// runSegments() runs every segment at once, each a real k6 into its own run
// folder (test/helpers/run-folders.js runInto), as the operator's runners do.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const cut = (i, total) => (i === 0 ? '0' : i === total ? '1' : `${i}/${total}`);

export function segmentFlags(index, total) {
  const seq = Array.from({ length: total + 1 }, (_, i) => cut(i, total)).join(',');
  return [`--execution-segment=${cut(index - 1, total)}:${cut(index, total)}`, `--execution-segment-sequence=${seq}`];
}

// runInto(dir, scenario, env, { args }) for each of `total` segments into dir/segment-<i>,
// started `staggerMs` apart (the first segment first: it applies the profile);
// resolves [{ ...runInto's result, seconds (its k6's wall time) }] in segment order.
export async function runSegments(runInto, dir, scenario, env, { total, staggerMs = 500, timeoutMs } = {}) {
  const runs = [];
  for (let i = 1; i <= total; i++) {
    if (i > 1) await sleep(staggerMs);
    const started = Date.now();
    runs.push(
      runInto(join(dir, `segment-${i}`), scenario, env, { args: segmentFlags(i, total), timeoutMs }).then((r) => ({
        ...r,
        seconds: (Date.now() - started) / 1000,
      })),
    );
  }
  return Promise.all(runs);
}
