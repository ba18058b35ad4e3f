// Safety: the pack only ever listens on, and loads, this machine's loopback.
//  - A started stack's real listening sockets (/proc/net/tcp{,6} of its pids),
//    Toxiproxy's proxies and profiles/proxies.json are all on 127.0.0.1.
//  - k6 refuses a target that is not loopback at init, in one sentence, before
//    any connection: k6 runs in a network namespace of its own (unshare -rn,
//    no route anywhere, so nothing can leave even if the check broke) under
//    strace, which lists every connect() it makes.
//  - k6pack refuses a HOST or TOXIPROXY_URL that is not loopback.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import { k6RunArgs, requireK6 } from '../lib/k6.js';
import { refuseRemoteHosts, StackError } from '../lib/stack.js';
import { ROOT } from '../lib/tools.js';
import { DEFAULT_PORTS, PROXY_ROUTES, TARGET_DEFAULTS, targetsFor } from '../common/defaults.js';
import { cliEnv, portsInUse, recordedPids, runCli } from './helpers/cli-env.js';
import { startTestStack } from '../dev/test-stack.js';

const SCENARIOS = readdirSync(join(ROOT, 'scenarios')).filter((f) => f.endsWith('.js'));
const REMOTE = '192.0.2.1'; // TEST-NET-1 (RFC 5737): reserved, routed nowhere
const REMOTE_TARGETS = targetsFor(DEFAULT_PORTS, REMOTE);

// ---- listening sockets ----

// "0100007F:0FA0" (little-endian IPv4) -> "127.0.0.1:4000"; IPv6 as 32 hex digits.
function decodeAddress(hex) {
  const [ip, port] = hex.split(':');
  if (ip.length === 8)
    return `${ip
      .match(/../g)
      .reverse()
      .map((b) => parseInt(b, 16))
      .join('.')}:${parseInt(port, 16)}`;
  const words = ip.match(/.{8}/g).map((w) => w.match(/../g).reverse().join(''));
  return `[${words.join('').match(/.{4}/g).join(':')}]:${parseInt(port, 16)}`;
}

// The TCP sockets `pid` listens on, as "address:port".
function listeningSockets(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed while we looked
    }
  }
  const listening = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A' && inodes.has(cols[9])) listening.push(decodeAddress(cols[1])); // 0A: LISTEN
    }
  }
  return listening.sort();
}

describe('the embedded stack listens on loopback only', { timeout: 90_000 }, () => {
  let stack;
  before(async () => {
    stack = await startTestStack();
  });
  after(() => stack?.stop());

  const expected = {
    graphql: ['GRAPHQL_PORT', 'GRAPHQL_TLS_PORT', 'GRAPHQL_TLS_H1_PORT'],
    grpc: ['GRPC_PORT', 'GRPC_TLS_PORT', 'GRPC_KEEPALIVE_PORT'],
    connect: ['CONNECT_PORT', 'CONNECT_H2C_PORT', 'CONNECT_TLS_PORT'],
    toxiproxy: ['TOXIPROXY_PORT', ...PROXY_ROUTES.map(([, listenVar]) => listenVar)],
  };
  for (const [name, portVars] of Object.entries(expected)) {
    test(`${name}: its listening sockets are exactly its ports, on 127.0.0.1`, () => {
      const want = portVars.map((v) => `127.0.0.1:${stack.ports[v]}`).sort();
      assert.deepEqual(listeningSockets(stack.pids[name]), want);
    });
  }

  test("Toxiproxy's proxies listen on 127.0.0.1 and forward to 127.0.0.1", async () => {
    const proxies = Object.values(await stack.toxiproxy.proxies());
    assert.equal(proxies.length, PROXY_ROUTES.length);
    for (const p of proxies) {
      assert.match(p.listen, /^127\.0\.0\.1:\d+$/, p.name);
      assert.match(p.upstream, /^127\.0\.0\.1:\d+$/, p.name);
    }
  });
});

test('profiles/proxies.json: every proxy listens on 127.0.0.1', () => {
  const proxies = JSON.parse(readFileSync(join(ROOT, 'profiles', 'proxies.json'), 'utf8'));
  assert.equal(proxies.length, PROXY_ROUTES.length);
  for (const p of proxies) assert.match(p.listen, /^127\.0\.0\.1:\d+$/, p.name);
});

// ---- k6 and remote targets ----

// Can k6 run in a network namespace of its own, under strace?
function isolationAvailable() {
  try {
    execFileSync('unshare', ['-rn', 'strace', '-f', '-qq', '-e', 'trace=connect', '-o', '/dev/null', 'true'], {
      stdio: 'ignore',
      timeout: 10_000,
    });
    return true;
  } catch {
    return false;
  }
}
const ISOLATED = isolationAvailable();
const NO_ISOLATION = 'needs unshare -rn and strace (util-linux, strace) to watch k6 without letting anything out';

// strace lines -> the inet addresses connect() was called on:
//   connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("192.0.2.1")}, 16) = ...
//   connect(5, {sa_family=AF_INET6, sin6_port=htons(80), ..., inet_pton(AF_INET6, "::1", &sin6_addr), ...}, 28) = ...
function inetConnects(trace) {
  return trace
    .split('\n')
    .filter((line) => /connect\(\d+, \{sa_family=AF_INET6?,/.test(line))
    .map((line) => {
      const port = /sin6?_port=htons\((\d+)\)/.exec(line)?.[1];
      const ip = /inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
      return `${ip?.[1] ?? `[${ip?.[2]}]`}:${port}`;
    });
}

// `k6 <args>` in its own network namespace under strace -> { code, stderr, connects: ["192.0.2.1:8474", ...] }
// (the inet addresses k6 called connect() on; none can be reached from there).
async function isolatedK6(args) {
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-safety-'));
  const trace = join(dir, 'connect.trace');
  try {
    const r = await execa(
      'unshare',
      ['-rn', 'strace', '-f', '-qq', '-e', 'trace=connect', '-o', trace, requireK6(), ...args],
      {
        reject: false,
        timeout: 60_000,
        stdin: 'ignore',
      },
    );
    return { code: r.exitCode, stderr: r.stderr, connects: inetConnects(readFileSync(trace, 'utf8')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const k6Run = (env, script = join(ROOT, 'scenarios', 'ws-vs-http.js')) =>
  isolatedK6(k6RunArgs(script, { env, args: ['--quiet', '--no-color', '--address', ''] }));
const k6Inspect = (env, scenario) =>
  isolatedK6([
    'inspect',
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    join(ROOT, 'scenarios', scenario),
  ]);

function refusedBeforeTraffic(r, name, value) {
  assert.equal(r.code, 107, r.stderr); // k6: a script error in init
  assert.ok(r.stderr.includes(`${name}=${value} is not a loopback address`), r.stderr);
  assert.match(r.stderr, /set -e ALLOW_REMOTE_TARGET=1 on purpose/);
  assert.deepEqual(r.connects, [], 'k6 tried to connect');
}

test('inetConnects reads IPv4 and IPv6 connect() lines of strace', () => {
  const trace = [
    '12 connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("192.0.2.1")}, 16) = -1 ENETUNREACH (Network is unreachable)',
    '12 connect(6, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH',
    '12 connect(7, {sa_family=AF_UNIX, sun_path="/run/x"}, 110) = -1 ENOENT',
  ].join('\n');
  assert.deepEqual(inetConnects(trace), ['192.0.2.1:80', '[2001:db8::1]:443']);
});

describe(
  'k6 refuses a target that is not loopback at init, before any connection',
  { skip: !ISOLATED && NO_ISOLATION, timeout: 180_000 },
  () => {
    for (const [name, value] of Object.entries(REMOTE_TARGETS)) {
      test(`-e ${name}=${value}`, async () => refusedBeforeTraffic(await k6Run({ [name]: value }), name, value));
    }

    test('a loopback host in the userinfo does not fool it: -e GRAPHQL_HTTP_URL=http://127.0.0.1:1@192.0.2.1/graphql', async () => {
      const value = `http://127.0.0.1:1@${REMOTE}/graphql`;
      refusedBeforeTraffic(await k6Run({ GRAPHQL_HTTP_URL: value }), 'GRAPHQL_HTTP_URL', value);
    });

    test('every scenario refuses a remote TOXIPROXY_URL at init', async () => {
      for (const scenario of SCENARIOS)
        refusedBeforeTraffic(
          await k6Inspect({ TOXIPROXY_URL: REMOTE_TARGETS.TOXIPROXY_URL }, scenario),
          'TOXIPROXY_URL',
          REMOTE_TARGETS.TOXIPROXY_URL,
        );
    });

    test('with ALLOW_REMOTE_TARGET=1 init accepts it, and the first connection goes there (the watch sees it; the namespace stops it)', async () => {
      const env = { ...TARGET_DEFAULTS, TOXIPROXY_URL: REMOTE_TARGETS.TOXIPROXY_URL, ALLOW_REMOTE_TARGET: '1' };
      assert.equal((await k6Inspect(env, 'ws-vs-http.js')).code, 0);
      const r = await k6Run(env);
      assert.notEqual(r.code, 0);
      assert.ok(r.connects.includes(`${REMOTE}:${DEFAULT_PORTS.TOXIPROXY_PORT}`), `connects: ${r.connects}`);
    });
  },
);

// ---- k6pack ----

describe('k6pack refuses a HOST or TOXIPROXY_URL that is not loopback', { timeout: 120_000 }, () => {
  test('refuseRemoteHosts: loopback values pass, others are refused naming the variable', () => {
    for (const HOST of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]', ''])
      assert.doesNotThrow(() => refuseRemoteHosts({ HOST }), HOST);
    for (const TOXIPROXY_URL of ['http://127.0.0.1:8474', 'http://localhost:8474/', 'http://[::1]:8474'])
      assert.doesNotThrow(() => refuseRemoteHosts({ TOXIPROXY_URL }));
    for (const HOST of ['0.0.0.0', '::', '10.1.2.3', 'myhost.example']) {
      assert.throws(
        () => refuseRemoteHosts({ HOST }),
        (err) => err instanceof StackError && err.message.startsWith(`HOST=${HOST} is not a loopback address`),
      );
    }
    for (const TOXIPROXY_URL of ['http://10.1.2.3:8474', 'http://127.0.0.1:1@10.1.2.3:8474', 'toxiproxy:8474']) {
      assert.throws(() => refuseRemoteHosts({ TOXIPROXY_URL }), {
        message: new RegExp(`^TOXIPROXY_URL=${TOXIPROXY_URL.replace(/[.]/g, '\\.')} is not a loopback address`),
      });
    }
  });

  const commands = [
    ['up', { HOST: '0.0.0.0' }],
    ['profile lan', { TOXIPROXY_URL: REMOTE_TARGETS.TOXIPROXY_URL }],
    ['run ws-vs-http', { HOST: REMOTE }],
  ];
  for (const [command, bad] of commands) {
    const [name, value] = Object.entries(bad)[0];
    test(`${name}=${value} k6pack ${command}: exit 1, one line, nothing started`, async (t) => {
      const ctx = await cliEnv();
      t.after(ctx.cleanup);
      const r = await runCli(command.split(' '), { env: { ...ctx.env, ...bad }, timeoutMs: 30_000 });
      assert.equal(r.exitCode, 1, r.stderr);
      assert.equal(
        r.stderr,
        `k6pack: ${name}=${value} is not a loopback address: k6pack's stack is on 127.0.0.1 only; unset ${name} (to serve beyond this machine, run the servers with HOST yourself or use docker compose)`,
      );
      assert.deepEqual(recordedPids(ctx.runDir), []);
      assert.deepEqual(await portsInUse(ctx.ports), []);
    });
  }
});
