// No profile runs without latency gates: ws-vs-http under a network file of the user's
// own (R 120 ms), through `k6pack run` on a real stack: every lane is gated on p50 and
// p95, every gate passes on this machine, and the answer opens the summary. Which rows
// every built-in profile gates, and on how many operations, is the gate lint's, in the
// unit tier (common/gate-lint.test.js, `k6pack thresholds --lint`): edge (R 840 ms), which
// had no gates before the model derived them, ran here too until 2026-11-28 (about 55 s
// of the timed phase; issue 38, the suite in 20 minutes). 5g and dsl are not run either:
// test/gates-every-profile.test.js derives their gates with every other profile's.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliEnv, runCli } from './helpers/cli-env.js';
import { WS_VS_HTTP_LANES } from './helpers/lanes.js';

const LANES = ['http_fresh', 'http_keepalive', 'ws', 'https_fresh', 'http2', 'wss'];

describe('latency gates under every kind of profile', () => {
  let env;
  before(async () => {
    env = await cliEnv();
    const up = await runCli(['up'], { env: env.env, timeoutMs: 120000 });
    assert.equal(up.exitCode, 0, up.stderr);
  });
  after(() => env?.cleanup());

  const mine = () => {
    const file = join(env.runDir, 'office-wifi.json');
    writeFileSync(
      file,
      JSON.stringify({
        rttMs: 120,
        jitterMs: 0,
        downKbps: 4000,
        upKbps: 1000,
        source: 'a test: our office Wi-Fi to the API host, measured with ping and iperf',
      }),
    );
    return file;
  };

  for (const [label, spec] of [['a network file of your own', mine]]) {
    test(label, { timeout: 240000 }, async (t) => {
      const profile = spec();
      const results = join(env.runDir, `results-${label.replace(/\W+/g, '-')}`);
      const r = await runCli(
        [
          'run',
          'ws-vs-http',
          '--profile',
          profile,
          '--load',
          'smoke',
          '--results',
          results,
          '--no-samples',
          '--',
          '-e',
          `LANES=${WS_VS_HTTP_LANES}`,
        ],
        { env: env.env, timeoutMs: 230000 },
      );
      assert.equal(r.exitCode, 0, `${r.stdout.slice(-4000)}\n${r.stderr.slice(-1500)}`);
      const dir = /== results: (\S+)\//.exec(r.stdout)[1];
      const doc = JSON.parse(readFileSync(join(dir.startsWith('/') ? '' : process.cwd(), dir, 'summary.json'), 'utf8'));
      for (const lane of LANES) {
        const gates = doc.thresholds
          .filter((x) => x.key === `op_duration{scenario:${lane}_c1}`)
          .map((x) => x.threshold);
        assert.deepEqual(gates.map((g) => g.slice(0, 6)).sort(), ['p(50)<', 'p(95)<'], `${lane}: ${gates}`);
      }
      assert.ok(
        doc.thresholds.every((x) => x.ok),
        `failed: ${JSON.stringify(doc.thresholds.filter((x) => !x.ok))}`,
      );
      assert.ok(doc.verdict.lines[0].startsWith(doc.run.profile), doc.verdict.lines[0]);
      for (const line of doc.verdict.lines) t.diagnostic(line);
      // The answer comes before the table on the terminal, too.
      assert.ok(r.stdout.indexOf(doc.verdict.lines[0]) < r.stdout.indexOf('lane  '), 'the verdict opens the summary');
    });
  }
});
