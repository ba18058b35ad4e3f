#!/usr/bin/env node
/*
 * Profile changes under live traffic: connections open and close on all four proxies
 * (test/k6/churn.js: fresh HTTP/1.1 and HTTPS, new gRPC channels on both ports,
 * WebSocket connect + init + close) while the stack's profile changes over and over
 * among network profiles and fault combinations. Figures:
 *   - one switch, through the same code as `k6pack profile` (lib/toxiproxy.js
 *     applyToxics): p50 and p95, and switches per minute back to back without an error;
 *   - one `k6pack profile NAME` as a user runs it (Node's start-up included): p50, p95;
 *   - a dead toxiproxy (SIGKILL): the time until a command names it.
 * Toxiproxy must still be up after the switches (target: no error, no crash).
 *
 *   node bench/profile-switch.js              # 60 s of switches, ~2 minutes
 *   node bench/profile-switch.js --seconds 300
 *   node bench/profile-switch.js --quick      # 10 s
 * Appends its figures to bench/results.jsonl.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { targetsFor } from '../common/defaults.js';
import { k6RunArgs, requireK6 } from '../lib/k6.js';
import { loadProfile } from '../lib/profiles.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { freePortMap } from '../dev/test-stack.js';
import { BenchError, main, parseFlags, quantile, recordResult, round, ROOT, table, withTempDir } from './lib/common.js';
import { CLI } from './lib/gate-runs.js';

const SPECS = ['lan', 'lte', '3g', '2g', '3g+flaky', 'lte+stall', '4g+jitter', 'lte+truncate'];

const cli = (args, env) =>
  execa(process.execPath, [CLI, ...args], { env, reject: false, timeout: 120000, stdin: 'ignore' });

await main(async () => {
  const flags = parseFlags({ seconds: 60, 'cli-switches': 20, quick: false });
  if (flags.quick) Object.assign(flags, { seconds: 10, 'cli-switches': 3 });
  await withTempDir(async (dir) => {
    const ports = Object.fromEntries(Object.entries(await freePortMap()).map(([k, v]) => [k, String(v)]));
    const env = { ...ports, K6PACK_RUN_DIR: join(dir, 'run') };
    const up = await cli(['up'], env);
    if (up.exitCode !== 0) throw new BenchError(`k6pack up: ${up.stderr.trim()}`);
    const targets = targetsFor(Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, Number(v)])));
    const toxiproxy = new Toxiproxy(targets.TOXIPROXY_URL);
    const churn = execa(
      requireK6(),
      k6RunArgs(join(ROOT, 'test', 'k6', 'churn.js'), {
        env: { ...targets, CHURN_SECONDS: flags.seconds + 60 },
        args: ['--quiet', '--address', ''],
      }),
      {
        reject: false,
        stdin: 'ignore',
      },
    );
    try {
      await new Promise((r) => setTimeout(r, 3000)); // connections under way
      // ---- back to back, through the same code as `k6pack profile` ----
      const took = [];
      const errors = [];
      const until = Date.now() + flags.seconds * 1000;
      for (let i = 0; Date.now() < until; i++) {
        const t0 = performance.now();
        try {
          await toxiproxy.applyToxics(loadProfile(SPECS[i % SPECS.length]).toxics);
          took.push(performance.now() - t0);
        } catch (err) {
          errors.push(err.message);
          if (!(await toxiproxy.isReachable())) break;
        }
      }
      const perMinute = (took.length / flags.seconds) * 60;
      // ---- as a user runs it ----
      const cliTook = [];
      for (let i = 0; i < flags['cli-switches']; i++) {
        const t0 = performance.now();
        const r = await cli(['profile', SPECS[i % SPECS.length]], env);
        if (r.exitCode !== 0) errors.push(`k6pack profile: ${r.stderr.trim()}`);
        cliTook.push(performance.now() - t0);
      }
      const alive = await toxiproxy.isReachable();
      // ---- a dead toxiproxy: how long until a command names it ----
      const pid = Number(readFileSync(join(dir, 'run', 'toxiproxy.pid'), 'utf8'));
      process.kill(pid, 'SIGKILL');
      const t0 = performance.now();
      const named = await cli(['profile', 'lte'], env);
      const nameMs = performance.now() - t0;
      if (!/toxiproxy-server \(pid \d+\) is not running/.test(named.stderr))
        errors.push(`after the kill, k6pack profile said: ${named.stderr.trim()}`);

      const q = (list, p) => round(quantile(list, p), 1);
      const rows = [
        {
          what: 'one switch (applyToxics)',
          switches: took.length,
          p50: q(took, 0.5),
          p95: q(took, 0.95),
          max: round(Math.max(...took), 1),
        },
        {
          what: '`k6pack profile NAME`',
          switches: cliTook.length,
          p50: q(cliTook, 0.5),
          p95: q(cliTook, 0.95),
          max: round(Math.max(...cliTook), 1),
        },
      ];
      console.log(table(rows, ['what', 'switches', 'p50', 'p95', 'max']));
      console.log(
        `\n${round(perMinute, 0)} switches a minute back to back under churn, ${errors.length} errors; toxiproxy ${alive ? 'still up' : 'DIED'} after ${took.length + cliTook.length} switches`,
      );
      console.log(`a dead toxiproxy named by the next command in ${round(nameMs, 0)} ms: ${named.stderr.trim()}`);
      if (errors.length) console.log(`errors: ${errors.slice(0, 3).join(' | ')}`);
      const verdict = alive && !errors.length ? 'met' : 'MISSED';
      recordResult(
        'profile-switch',
        {
          seconds: flags.seconds,
          switches: took.length,
          perMinute: round(perMinute, 0),
          apiMs: { p50: q(took, 0.5), p95: q(took, 0.95) },
          cliMs: { p50: q(cliTook, 0.5), p95: q(cliTook, 0.95) },
          deadNamedMs: round(nameMs, 0),
          errors: errors.length,
          toxiproxyAlive: alive,
          verdict,
        },
        { quick: flags.quick },
      );
    } finally {
      churn.kill('SIGTERM');
      await churn;
      await cli(['down', '--force'], env);
    }
  }, 'k6pack-switch-');
});
