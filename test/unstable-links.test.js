// Unstable links (issue 26) from the CLI's side, where no assertion is a timing:
//   - a hostile trace (+trace=./bad.trace) is one line naming the file and the line,
//     exit 2, and nothing starts: `run` with --profile or with -- -e PROFILE=, and
//     `profile`;
//   - the CLI's Toxiproxy client sets a timed profile's epoch to the time it applies it
//     (an untimed profile's stays 0), checked against a fake Toxiproxy in this process.
// No stack, no k6: a few seconds.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { execa } from 'execa';
import { loadProfile } from '../lib/profiles.js';
import { Toxiproxy } from '../lib/toxiproxy.js';
import { CLI, cliEnv } from './helpers/cli-env.js';

const dir = mkdtempSync(join(tmpdir(), 'k6pack-traces-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (name, text) => writeFileSync(join(dir, name), text);

write('empty.trace', '');
write('unsorted.trace', '1\n5\n9\n7\n12\n');
write('words.trace', '10\n20\nthirty\n');
write('fraction.trace', '10\n20.5\n');
write('negative.trace', '-10\n20\n');
write('zero.trace', '0\n0\n0\n');
write('long.trace', '1\n'.repeat(200001));
write('huge.trace', `${'1'.repeat(3 * 1024 * 1024)}\n`);
write('good.trace', '5\n10\n');

const HOSTILE = [
  ['empty.trace', /^k6pack: trace file \.\/empty\.trace: empty: a Mahimahi trace has /],
  ['unsorted.trace', /^k6pack: trace file \.\/unsorted\.trace, line 4: 7 comes after 9 \(line 3\): /],
  ['words.trace', /^k6pack: trace file \.\/words\.trace, line 3: "thirty" is not a number: /],
  ['fraction.trace', /^k6pack: trace file \.\/fraction\.trace, line 2: "20\.5" is not a whole number: /],
  ['negative.trace', /^k6pack: trace file \.\/negative\.trace, line 1: "-10" is negative: /],
  ['zero.trace', /^k6pack: trace file \.\/zero\.trace, line 3: the last timestamp is 0/],
  ['long.trace', /^k6pack: trace file \.\/long\.trace, line 200001: huge \(200001 lines, at most 200000\)$/],
  ['huge.trace', /^k6pack: trace file \.\/huge\.trace: huge \(3\.0 MB, over 2 MB\)/],
  [
    'missing.trace',
    /^k6pack: trace file \.\/missing\.trace: cannot read it \(ENOENT\): give the path of a Mahimahi trace/,
  ],
];

// Live processes started with this K6PACK_RUN_DIR in their environment (the CLI's
// children inherit it: servers, toxiproxy, k6).
function processesOf(runDir) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`K6PACK_RUN_DIR=${runDir}`))
        found.push(Number(name));
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found;
}

describe('a hostile trace: one line naming the file and the line, exit 2, nothing started', () => {
  const some = ['empty.trace', 'unsorted.trace', 'words.trace', 'huge.trace'];
  const forms = [
    ['run --profile', (f) => ['run', 'ws-vs-http', '--profile', `lte+trace=./${f}`], HOSTILE],
    [
      'run --profile DOWN:UP, the bad one second',
      (f) => ['run', 'ws-vs-http', '--profile', `lan,lte+handover+trace=./good.trace:./${f}`],
      HOSTILE.filter(([f]) => some.includes(f)),
    ],
    [
      'run -- -e PROFILE=',
      (f) => ['run', 'ws-vs-http', '--', '-e', `PROFILE=3g+trace=./${f}`],
      HOSTILE.filter(([f]) => some.includes(f)),
    ],
    ['profile', (f) => ['profile', `3g+trace=./${f}`], HOSTILE.filter(([f]) => some.includes(f))],
  ];
  for (const [form, args, cases] of forms) {
    test(form, async () => {
      const { env, runDir, cleanup } = await cliEnv();
      try {
        const runs = await Promise.all(
          cases.map(([file]) =>
            execa(process.execPath, [CLI, ...args(file)], {
              cwd: dir,
              env,
              reject: false,
              timeout: 30000,
              stdin: 'ignore',
            }),
          ),
        );
        runs.forEach((r, i) => {
          const [file, message] = cases[i];
          assert.equal(r.exitCode, 2, `${file}: ${r.stdout}${r.stderr}`);
          assert.equal(r.stdout, '', `${file}: nothing said on stdout (nothing started)`);
          assert.equal(r.stderr.split('\n').length, 1, `${file}: one line: ${r.stderr}`);
          assert.match(r.stderr, message, file);
        });
        assert.deepEqual(readdirSync(runDir), [], 'no stack recorded: nothing started');
        assert.deepEqual(processesOf(runDir), [], 'no process left');
      } finally {
        await cleanup();
      }
    });
  }
});

// A fake Toxiproxy: four proxies, each with the link toxics of `have`; records every
// toxic change it is sent.
async function fakeToxiproxy(have) {
  const sent = [];
  const proxies = Object.fromEntries(
    ['graphql_http', 'graphql_tls', 'grpc', 'grpc_tls'].map((name) => [
      name,
      { name, listen: '127.0.0.1:0', upstream: '127.0.0.1:9', enabled: true, toxics: have },
    ]),
  );
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/proxies') return res.end(JSON.stringify(proxies));
      sent.push({ method: req.method, url: req.url, body: body ? JSON.parse(body) : null });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, sent, close: () => server.close() };
}

// What Toxiproxy lists: an empty Go slice as null.
const asListed = (toxics) =>
  toxics.map((t) => ({
    ...t,
    attributes: { ...t.attributes, trace: t.attributes.trace.length ? t.attributes.trace : null },
  }));

test('the CLI applies a timed profile with epoch = now, an untimed one with epoch 0 (and nothing to change)', async () => {
  const lte = loadProfile('lte');
  const fake = await fakeToxiproxy(asListed(lte.toxics));
  try {
    const tp = new Toxiproxy(fake.url);
    const untouched = await tp.applyToxics(lte.toxics);
    assert.equal(untouched.epochMs, 0);
    assert.deepEqual(fake.sent, [], 'lte on lte (its null traces as []): nothing sent');

    const t0 = Date.now();
    const applied = await tp.applyToxics(loadProfile('lte+handover+trace=walk-lte').toxics);
    const t1 = Date.now();
    assert.ok(applied.epochMs >= t0 && applied.epochMs <= t1, `epoch ${applied.epochMs} within [${t0}, ${t1}]`);
    assert.equal(fake.sent.length, 8, 'two updates in place on each of four proxies');
    for (const { method, url, body } of fake.sent) {
      assert.equal(method, 'POST');
      assert.match(url, /\/toxics\/link_(up|down)stream$/);
      assert.equal(body.attributes.epoch, applied.epochMs);
      assert.equal(body.attributes.event, 1);
      assert.ok(body.attributes.trace.length > 1000);
    }
    // A given epoch is used as given.
    fake.sent.length = 0;
    const given = await tp.applyToxics(loadProfile('3g+dip').toxics, { epochMs: 1767225600000 });
    assert.equal(given.epochMs, 1767225600000);
    assert.ok(fake.sent.every((s) => s.body.attributes.epoch === 1767225600000 && s.body.attributes.event === 4));
  } finally {
    fake.close();
  }
});
