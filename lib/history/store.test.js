// The history folder (store.js): run folders -> digests appended one JSON line each to
// <dir>/<scenario>/<profile>.jsonl (the same run never twice), read back oldest first with
// lines that are not digests named, and the comparable runs before a run that compare's
// history rule judges it against. Real run folders and a history in a temp folder.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { digestOf } from '../../common/history.js';
import { ResultsError } from '../report/runs.js';
import {
  addRuns,
  digestRun,
  HISTORY_EXT,
  historyFile,
  historyFor,
  readHistory,
  readHistoryOf,
  runsIn,
  thisMachine,
  TRENDS_FILE,
} from './store.js';

const tmp = mkdtempSync(join(tmpdir(), 'k6pack-history-store-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

// A run folder holding a summary.json: one row, its p50 given; passed unless told.
function runFolder(name, { day, p50 = 70, scenario = 'ws-vs-http', profile = 'lte', passed = true, commit }) {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const doc = {
    schemaVersion: 1,
    run: {
      scenario,
      profile,
      load: 'ci',
      workload: 'closed',
      startedAt: `2026-11-${String(day).padStart(2, '0')}T10:00:00.000Z`,
      gitCommit: commit ?? `c${day}`,
      k6Version: '1.8.1',
    },
    rows: [
      {
        id: 'ws_c1',
        lane: 'ws',
        step: 'c1',
        dims: {},
        latency: { count: 50, p50, p95: p50 + 3, p99: p50 + 5 },
        failures: { rate: 0, total: 50 },
        gate: { ok: passed },
      },
    ],
    thresholds: [{ key: 'op_failed', threshold: 'rate<0.01', ok: passed }],
  };
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(doc));
  return dir;
}

test('historyFile: <dir>/<scenario>/<profile>.jsonl, odd characters made safe', () => {
  assert.equal(HISTORY_EXT, '.jsonl');
  assert.equal(historyFile('/h', 'ws-vs-http', 'lte'), '/h/ws-vs-http/lte.jsonl');
  assert.equal(historyFile('/h', 'a b/../c', '3g+flaky'), '/h/a_b_.._c/3g+flaky.jsonl');
});

test("thisMachine: this machine's cores and CPU, the pack's version", () => {
  const m = thisMachine();
  assert.equal(m.cores, cpus().length);
  assert.equal(m.cpu, cpus()[0].model.replace(/\s+/g, ' ').trim() || null);
  assert.equal(m.pack, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
});

test('runsIn: run folders, summary.json files and folders of run folders; one line for the rest', () => {
  const a = runFolder('gate/b-run', { day: 2 });
  const b = runFolder('gate/a-run', { day: 3 });
  mkdirSync(join(tmp, 'gate', 'not-a-run'));
  const c = runFolder('single', { day: 4 });
  const runs = runsIn([join(tmp, 'gate'), join(c, 'summary.json'), c]);
  assert.deepEqual(
    runs.map((r) => r.dir),
    [b, a, c, c],
  );
  assert.equal(runs[0].doc.run.startedAt, '2026-11-03T10:00:00.000Z');
  const missing = join(tmp, 'nowhere');
  assert.throws(() => runsIn([missing]), {
    name: 'Error',
    message: `no run folder at ${missing}: give run folders, summary.json files or a gate folder`,
  });
  assert.throws(
    () => runsIn([join(tmp, 'gate', 'not-a-run')]),
    (err) =>
      err instanceof ResultsError &&
      err.message ===
        `${join(tmp, 'gate', 'not-a-run')} holds no run folder with a summary.json: give run folders or a gate folder`,
  );
});

test('addRuns: each run one digest line, never twice; the folder keeps its .gitattributes and .gitignore', () => {
  const dir = join(tmp, 'hist-add');
  const r1 = runsIn([runFolder('add/1', { day: 1 })])[0];
  const r2 = runsIn([runFolder('add/2', { day: 2, p50: 75 })])[0];
  const first = addRuns(dir, [r1]);
  const file = join(dir, 'ws-vs-http', 'lte.jsonl');
  assert.deepEqual(
    first.map((a) => [a.file, a.added]),
    [[file, true]],
  );
  assert.deepEqual(first[0].digest, digestOf(r1.doc, thisMachine()));
  assert.deepEqual(digestRun(r1), first[0].digest);
  assert.equal(readFileSync(file, 'utf8'), `${JSON.stringify(first[0].digest)}\n`);
  assert.equal(
    readFileSync(join(dir, '.gitattributes'), 'utf8'),
    '# k6pack history: every line is one run; branches that added runs merge by union.\n*.jsonl merge=union\n',
  );
  assert.equal(
    readFileSync(join(dir, '.gitignore'), 'utf8'),
    `# drawn from the history by \`k6pack history report\`\n${TRENDS_FILE}\n`,
  );
  // The same run again (same start and commit): not added; a new one is.
  const again = addRuns(dir, [r1, r2]);
  assert.deepEqual(
    again.map((a) => a.added),
    [false, true],
  );
  assert.deepEqual(
    readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).startedAt),
    ['2026-11-01T10:00:00.000Z', '2026-11-02T10:00:00.000Z'],
  );
  // A kept file the user changed is left as it is.
  writeFileSync(join(dir, '.gitignore'), 'mine\n');
  addRuns(dir, []);
  assert.equal(readFileSync(join(dir, '.gitignore'), 'utf8'), 'mine\n');
  // A folder that cannot be made: one line.
  const blocked = join(tmp, 'a-file');
  writeFileSync(blocked, '');
  assert.throws(
    () => addRuns(join(blocked, 'h'), [r1]),
    (err) =>
      err instanceof ResultsError &&
      /^cannot write the history folder .*a-file\/h: ENOTDIR: not a directory, mkdir '.*a-file\/h'$/.test(err.message),
  );
});

test('readHistoryOf and readHistory: oldest first, a line that is no digest named and skipped', () => {
  const dir = join(tmp, 'hist-read');
  const runs = [
    runFolder('read/3', { day: 3 }),
    runFolder('read/1', { day: 1 }),
    runFolder('read/2', { day: 2, profile: 'lan' }),
  ].map((d) => runsIn([d])[0]);
  addRuns(dir, runs);
  const file = historyFile(dir, 'ws-vs-http', 'lte');
  writeFileSync(file, `${readFileSync(file, 'utf8')}{"v": 1}\n\nnot json\n`);
  const warned = [];
  const digests = readHistoryOf(dir, 'ws-vs-http', 'lte', (line) => warned.push(line));
  assert.deepEqual(
    digests.map((d) => d.startedAt),
    ['2026-11-01T10:00:00.000Z', '2026-11-03T10:00:00.000Z'],
  );
  assert.equal(warned.length, 2);
  assert.equal(warned[0], `${file}:3: skipped, not a k6pack digest (not a digest)`);
  assert.match(warned[1], new RegExp(`^${file}:5: skipped, not a k6pack digest \\(.*JSON.*\\)$`));
  // No file yet: no digest.
  assert.deepEqual(readHistoryOf(dir, 'ws-vs-http', '3g'), []);

  // The folder: every scenario's files, sorted; dot folders, other files and empty files left out.
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'x.jsonl'), readFileSync(file));
  writeFileSync(join(dir, 'ws-vs-http', 'notes.txt'), 'x');
  writeFileSync(join(dir, 'ws-vs-http', 'empty.jsonl'), '');
  writeFileSync(join(dir, TRENDS_FILE), '<html>');
  const seen = [];
  const files = readHistory(dir, (line) => seen.push(line));
  assert.deepEqual(
    files.map((f) => [f.file, f.scenario, f.profile, f.digests.length]),
    [
      [historyFile(dir, 'ws-vs-http', 'lan'), 'ws-vs-http', 'lan', 1],
      [file, 'ws-vs-http', 'lte', 2],
    ],
  );
  assert.deepEqual(seen, warned);
  const none = join(tmp, 'no-history');
  assert.throws(() => readHistory(none), {
    message: `no history folder at ${none}: add runs with \`npx k6pack history add --history ${none} RUN…\``,
  });
  assert.throws(() => readHistory(join(dir, TRENDS_FILE)), /^Error: no history folder at /);
});

test("historyFor: the comparable runs before this one that passed, the rule's count", () => {
  const dir = join(tmp, 'hist-for');
  const past = [
    runFolder('for/1', { day: 1, p50: 70 }),
    runFolder('for/2', { day: 2, p50: 71 }),
    // Failed its thresholds: not what is normal.
    runFolder('for/3', { day: 3, p50: 90, passed: false }),
    runFolder('for/4', { day: 4, p50: 72 }),
    // Another load: not comparable.
    runFolder('for/5', { day: 5, p50: 72 }),
    // After the run judged.
    runFolder('for/7', { day: 7, p50: 72 }),
  ];
  const other = JSON.parse(readFileSync(join(past[4], 'summary.json'), 'utf8'));
  other.run.load = 'soak';
  writeFileSync(join(past[4], 'summary.json'), JSON.stringify(other));
  addRuns(dir, runsIn(past));
  const current = runsIn([runFolder('for/6', { day: 6, p50: 80 })])[0];
  const h = historyFor(dir, current);
  assert.equal(h.runs, 10);
  assert.deepEqual(
    h.before.map((d) => [d.startedAt.slice(0, 10), d.rows[0].p50]),
    [
      ['2026-11-01', 70],
      ['2026-11-02', 71],
      ['2026-11-04', 72],
    ],
  );
  assert.deepEqual(
    historyFor(dir, current, 2).before.map((d) => d.rows[0].p50),
    [71, 72],
  );
  // No folder yet: no history, and nothing written.
  const fresh = join(tmp, 'hist-none');
  assert.deepEqual(historyFor(fresh, current), { before: [], runs: 10 });
  assert.equal(existsSync(fresh), false);
});
