// One run at a time on a stack (lib/hold.js, scenarios/lib/hold.js): while a run
// holds a stack, a second `run`, a `gate` and a `profile` are refused in one line
// naming the holder and leave the toxics byte for byte as they were; --wait waits;
// a killed holder's hold is released by the next command, which says so; a command
// that fails before its k6 run touches the network leaves live connections alone;
// a second stack on other ports runs beside the first. Real stack, real k6.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { PROXY_NAMES, targetsFor } from '../common/defaults.js';
import { HOLD_PROXY } from '../common/hold.js';
import { k6ToxiproxyPort } from '../lib/hold.js';
import { requireK6, k6RunArgs } from '../lib/k6.js';
import { loadProfile } from '../lib/profiles.js';
import { ROOT } from '../lib/tools.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { cliEnv, runCli, waitFor } from './helpers/cli-env.js';
import { scaled } from './helpers/waits.js';
import { WS_VS_HTTP_LANES } from './helpers/lanes.js';

const SCENARIO = join(ROOT, 'scenarios', 'ws-vs-http.js');
const dir = mkdtempSync(join(tmpdir(), 'k6pack-hold-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const TINY = join(dir, 'tiny.js');
writeFileSync(
  TINY,
  `import http from 'k6/http';
export const options = { iterations: 1 };
export default function () { http.get(__ENV.GRAPHQL_HTTP_URL.replace(/\\/graphql$/, '/healthz')); }
`,
);

// Another stack's k6 running a script of the same name (as another test file's, or a
// second stack's, does): it names its own Toxiproxy, so it is not this stack's holder.
mkdirSync(join(dir, 'other'));
const DECOY = join(dir, 'other', 'ws-vs-http.js');
writeFileSync(
  DECOY,
  `import { sleep } from 'k6';
export const options = { iterations: 1 };
export default function () { sleep(Number(__ENV.SECONDS)); }
`,
);

// A plain `k6 run` of a scenario against a stack, as a user would start it; resolves
// with its summary export. Returns the execa child (kill() it to simulate a crash).
function plainK6(env, extra = {}) {
  const summary = join(dir, `summary-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  const child = execa(
    requireK6(),
    k6RunArgs(SCENARIO, {
      env: { ...targetsFor(env.ports), LANES: WS_VS_HTTP_LANES, ...extra },
      args: ['--quiet', '--no-color', '--address', '', '--summary-export', summary],
    }),
    {
      reject: false,
      timeout: scaled(180000),
      stdin: 'ignore',
    },
  );
  child.summaryFile = summary;
  return child;
}

// The pack proxies and everything on them, as Toxiproxy lists it (the hold marker aside).
async function proxiesText(tp) {
  const all = await tp.proxies();
  return JSON.stringify(PROXY_NAMES.map((n) => all[n]));
}

async function waitHeld(tp, ms = 30000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await tp.proxies())[HOLD_PROXY]) return;
    await sleep(100);
  }
  throw new Error(`no hold on the stack within ${ms} ms`);
}

// A request on a kept-alive connection through the GraphQL proxy, timed.
function timedGet(agent, port) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http
      .get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      })
      .on('error', reject);
  });
}

test('a k6 process is matched to its stack by the Toxiproxy it was given', () => {
  const k6 = (...a) => ['/usr/bin/k6', 'run', ...a, '/x/ws-vs-http.js'];
  assert.equal(k6ToxiproxyPort(k6('-e', 'TOXIPROXY_URL=http://127.0.0.1:8674')), '8674');
  assert.equal(
    k6ToxiproxyPort(k6('--env', 'TOXIPROXY_URL=http://127.0.0.1:1', '-e', 'TOXIPROXY_URL=http://[::1]:9')),
    '9',
  );
  assert.equal(k6ToxiproxyPort(k6('--env=TOXIPROXY_URL=http://localhost:8474')), '8474');
  // the environment when no flag names it; the flag wins over it
  assert.equal(k6ToxiproxyPort(k6(), ['A=1', 'TOXIPROXY_URL=http://127.0.0.1:8500']), '8500');
  assert.equal(
    k6ToxiproxyPort(k6('-e', 'TOXIPROXY_URL=http://127.0.0.1:7'), ['TOXIPROXY_URL=http://127.0.0.1:8']),
    '7',
  );
  // none, or one that is not a URL: cannot be told (the caller counts it as this stack's)
  assert.equal(k6ToxiproxyPort(k6('-e', 'LOAD=smoke')), null);
  assert.equal(k6ToxiproxyPort(k6('-e', 'TOXIPROXY_URL=nonsense')), null);
});

describe('one run at a time on a stack', () => {
  let env;
  let tp;
  before(async () => {
    env = await cliEnv();
    const up = await runCli(['up', '--profile', 'lte'], { env: env.env, timeoutMs: scaled(120000) });
    assert.equal(up.exitCode, 0, up.stderr);
    tp = new Toxiproxy(targetsFor(env.ports).TOXIPROXY_URL);
  });
  after(() => env?.cleanup());

  test(
    'a run holding the stack: a second run, a gate and a profile change are refused, the toxics stay byte for byte, its p50 pays the round trip of lte',
    { timeout: scaled(240000) },
    async (t) => {
      // The two lanes it checks, long enough to outlast the three refusals (a CLI start
      // each, a few seconds at most on a busy machine). Until 2026-11-30 all seven lanes
      // ran, 6 s each scaled by the CPU factor: 168 s at the factor's cap of 4.
      const holder = plainK6(env, {
        PROFILE: 'lte',
        LOAD: 'smoke',
        LANES: 'http_keepalive,ws',
        STEP_SECONDS: String(Math.round(scaled(8000) / 1000)),
      });
      await waitHeld(tp);
      const during = await proxiesText(tp);
      const refused = [
        ['run', 'ws-vs-http', '--profile', '3g', '--load', 'smoke'],
        ['gate', '--scenarios', 'push', '--profile', 'lan', '--load', 'smoke', '--results', join(dir, 'gate')],
        ['profile', '2g'],
      ];
      for (const args of refused) {
        const r = await runCli(args, {
          env: { ...env.env, THRESHOLDS: join(dir, 'nothing-here.json') },
          timeoutMs: scaled(60000),
        });
        t.diagnostic(`k6pack ${args[0]}: exit ${r.exitCode}: ${r.stderr.trim()}`);
        assert.equal(r.exitCode, 4, `k6pack ${args.join(' ')}: ${r.stdout}\n${r.stderr}`);
        const lines = r.stderr.trim().split('\n');
        assert.equal(lines.length, 1, r.stderr);
        assert.match(
          lines[0],
          /the stack is in use by k6 run ws-vs-http under lte \(on .*since \d\d:\d\d:\d\d UTC\).*--wait.*other ports/,
        );
        assert.equal(await proxiesText(tp), during, `k6pack ${args[0]} changed the toxics`);
      }
      const r = await holder;
      assert.ok(r.exitCode === 0 || r.exitCode === 99, `the holding run broke: ${r.exitCode} ${r.stderr.slice(-800)}`);
      const { metrics } = JSON.parse((await import('node:fs')).readFileSync(holder.summaryFile, 'utf8'));
      const R = loadProfile('lte').network.rttMs;
      // lte's round trip held through the refusals: a refused `gate` to lan would have
      // taken it away. A floor only (a busy machine only adds; no ceiling in phase 2: the
      // toxics' byte-for-byte check above stands for a refused switch to a slower profile).
      for (const lane of ['ws_c1', 'http_keepalive_c1']) {
        const p50 = metrics[`op_duration{scenario:${lane}}`].med;
        t.diagnostic(`${lane} p50 ${p50} ms (model ${R} ms)`);
        assert.ok(p50 >= R * 0.97, `${lane}: p50 ${p50} ms, under lte's round trip of ${R} ms`);
      }
      // teardown put back what the run found, and gave the hold back
      assert.equal(await tp.holder(), null);
      assert.equal(await proxiesText(tp), during);
    },
  );

  test('--wait proceeds once the holding run has ended', { timeout: scaled(180000) }, async () => {
    const holder = plainK6(env, {
      PROFILE: 'lte',
      LOAD: 'smoke',
      LANES: 'http_keepalive,ws',
      STEP_SECONDS: String(Math.round(scaled(3000) / 1000)),
    });
    await waitHeld(tp);
    const waiting = runCli(['run', TINY, '--profile', 'lan', '--wait'], { env: env.env, timeoutMs: scaled(150000) });
    await waitFor(waiting, 'waiting for the stack: in use by k6 run ws-vs-http', scaled(20000));
    const [h, w] = await Promise.all([holder, waiting]);
    assert.ok(h.exitCode === 0 || h.exitCode === 99, h.stderr.slice(-500));
    assert.equal(w.exitCode, 0, w.stdout + w.stderr);
    assert.match(w.stdout, /the stack is free after \d+ s/);
    assert.equal(await tp.holder(), null);
  });

  test(
    'a killed holder does not block: the next command releases its hold and says so',
    { timeout: scaled(120000) },
    async () => {
      // plain k6, killed outright: no teardown, the hold stays behind
      const holder = plainK6(env, { PROFILE: 'lte', LOAD: 'smoke', STEP_SECONDS: '20' });
      await waitHeld(tp);
      holder.kill('SIGKILL');
      await holder;
      assert.ok(await tp.holder(), 'the killed run left its hold');
      // ...while another stack's k6 runs a ws-vs-http.js (on CI, another test file's did,
      // and this stack stayed "in use" until it ended: 2026-11-29)
      const decoy = execa(
        requireK6(),
        k6RunArgs(DECOY, { env: { TOXIPROXY_URL: 'http://127.0.0.1:1', SECONDS: '60' }, args: ['--quiet'] }),
        { reject: false, timeout: scaled(90000), stdin: 'ignore' },
      );
      let r;
      try {
        await sleep(1000);
        assert.equal(decoy.exitCode, null, 'the decoy k6 is running');
        r = await runCli(['profile', 'lte'], { env: env.env });
      } finally {
        decoy.kill('SIGKILL');
        await decoy;
      }
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(
        r.stderr,
        /the stack's hold was left by k6 run ws-vs-http under lte .*which is no longer running: released it/,
      );

      // k6pack run, killed outright, and its k6 with it
      const args = ['--', '-e', 'STEP_SECONDS=20', '-e', `LANES=${WS_VS_HTTP_LANES}`];
      const cli = runCli(['run', 'ws-vs-http', '--profile', 'lte', '--load', 'smoke', ...args], {
        env: env.env,
        timeoutMs: scaled(60000),
      });
      await waitFor(cli, '== ws-vs-http, profile lte', scaled(30000));
      // The hold names the CLI's k6 once it has started it (a moment after that line).
      let held = await tp.holder();
      for (const deadline = Date.now() + scaled(20000); !held?.childPid && Date.now() < deadline;) {
        await sleep(100);
        held = await tp.holder();
      }
      assert.equal(held.kind, 'k6pack run');
      // The CLI killed outright: its k6 is in a process group of its own (for Ctrl-C),
      // which a SIGKILL of the CLI does not reach, but the kernel kills it with its parent.
      cli.kill('SIGKILL');
      assert.ok(held.childPid, 'the hold names the k6 the CLI runs');
      await cli;
      // Its k6 dies with it (lib/processes.js diesWithParent): no k6 is left running,
      // blocked on a samples FIFO nobody reads.
      const alive = (pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (const deadline = Date.now() + 5000; alive(held.childPid) && Date.now() < deadline;) await sleep(100);
      assert.equal(alive(held.childPid), false, `k6 (pid ${held.childPid}) outlived its killed CLI`);
      r = await runCli(['status'], { env: env.env });
      assert.match(r.stdout, /hold: was held by k6pack run ws-vs-http under lte .*no longer running: released it/);
      assert.equal(await tp.holder(), null);
    },
  );

  test(
    'a command that fails before its k6 run touches the network leaves live connections alone',
    { timeout: scaled(120000) },
    async () => {
      const port = env.ports.PROXY_GRAPHQL_PORT;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const R = loadProfile('lte').network.rttMs;
        await timedGet(agent, port); // opens the connection (pays the handshake)
        const warm = await timedGet(agent, port);
        const before = await proxiesText(tp);
        const broken = join(dir, 'broken.json');
        writeFileSync(broken, '{ "ws-vs-http": ');
        const r = await runCli(['run', 'ws-vs-http', '--profile', '3g', '--load', 'smoke'], {
          env: { ...env.env, THRESHOLDS: broken },
          timeoutMs: scaled(60000),
        });
        assert.notEqual(r.exitCode, 0);
        assert.match(r.stdout + r.stderr, /thresholds file .*broken\.json: not valid JSON/);
        assert.equal(await proxiesText(tp), before, 'the toxics changed');
        // Toxics removed and added again would treat this live connection as new: its
        // next request would pay the handshake (2 RTT) again, 3R in all. The bound sits midway
        // between that and a warm request's R: one request, which a busy machine may stall.
        const again = await timedGet(agent, port);
        assert.ok(
          again < 2 * R,
          `a request on the kept-alive connection took ${again.toFixed(1)} ms after the failed run (before: ${warm.toFixed(1)} ms; R = ${R} ms)`,
        );
      } finally {
        agent.destroy();
      }
    },
  );

  test('a second stack on other ports runs beside the first', { timeout: scaled(180000) }, async () => {
    const second = await cliEnv();
    try {
      const up = await runCli(['up', '--profile', '3g'], { env: second.env, timeoutMs: scaled(120000) });
      assert.equal(up.exitCode, 0, up.stderr);
      const [a, b] = await Promise.all([
        runCli(['run', TINY, '--profile', 'lte'], { env: env.env, timeoutMs: scaled(120000) }),
        runCli(['run', TINY, '--profile', '3g'], { env: second.env, timeoutMs: scaled(120000) }),
      ]);
      assert.equal(a.exitCode, 0, a.stderr);
      assert.equal(b.exitCode, 0, b.stderr);
      const second3g = new Toxiproxy(targetsFor(second.ports).TOXIPROXY_URL);
      assert.equal(
        (await second3g.proxies()).grpc.toxics.find((x) => x.name === 'link_upstream').attributes.latency,
        150,
      );
      assert.equal((await tp.proxies()).grpc.toxics.find((x) => x.name === 'link_upstream').attributes.latency, 35);
    } finally {
      await second.cleanup();
    }
  });
});
