// runK6(script, { env, args, timeoutMs, processEnv }): the real k6 on a script, its
// summary exported as JSON to a temp file. `env` goes to the script (-e flags);
// `processEnv` to k6's own process (e.g. GODEBUG). Resolves { code, stdout,
// stderr, summary, timedOut }; k6 is killed (SIGTERM, then SIGKILL) if it
// outlives timeoutMs.
// runToFolder(dir, script, ...): the same into a run folder (created), as plain
// `k6 run` keeps one: RESULTS_DIR plus the raw samples (--out json=samples.json.gz).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { k6RunArgs, requireK6 } from '../lib/k6.js';

export async function runK6(script, { env = {}, args = [], timeoutMs = 60000, processEnv = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-k6-'));
  const summaryFile = join(dir, 'summary.json');
  try {
    // --address '' turns off k6's REST API, whose fixed port would collide between parallel runs.
    const extra = ['--no-color', '--quiet', '--address', '', '--summary-export', summaryFile, ...args];
    const result = await execa(requireK6(), k6RunArgs(script, { env, args: extra }), {
      env: processEnv,
      reject: false,
      timeout: timeoutMs,
      forceKillAfterDelay: 5000,
      stdin: 'ignore',
    });
    let summary = null;
    try {
      summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
    } catch {
      // k6 failed before the end of the test: no summary
    }
    return {
      code: result.exitCode ?? null,
      stdout: result.stdout,
      stderr: result.stderr,
      summary,
      timedOut: Boolean(result.timedOut),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runToFolder(dir, script, { env = {}, args = [], timeoutMs } = {}) {
  mkdirSync(dir, { recursive: true });
  const r = await runK6(script, {
    env: { RESULTS_DIR: dir, K6PACK_SAMPLES: 'samples.json.gz', ...env },
    args: ['--out', `json=${join(dir, 'samples.json.gz')}`, ...args],
    timeoutMs,
  });
  return { ...r, dir };
}
