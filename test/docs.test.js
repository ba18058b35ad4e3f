// The README is a front page (at most 250 lines) and every relative link in it and in
// docs/ leads somewhere: to a file of the repository and, with #anchor, to one of that
// page's headings (GitHub's slugs). Every code block closes, every table row has its
// header's cells, and every figure quoted from bench/results.jsonl is the generated one, on
// every page of docs/ and its studies (bench/figures.js, run as a process: a test does not
// import a bench).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../lib/tools.js';

const README_MAX_LINES = 250;

function markdownFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

// GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(text) {
  const fenced = text.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...fenced.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

// [text](target) outside code: the relative targets, without the web's.
function linksOf(text) {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t));
}

test(`the README is a front page of at most ${README_MAX_LINES} lines`, () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines: move the detail into docs/`);
});

test('every relative link in README.md and docs/ leads to a file and a heading', () => {
  const broken = [];
  for (const file of [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))]) {
    const text = readFileSync(file, 'utf8');
    for (const link of linksOf(text)) {
      const [path, anchor] = link.split('#');
      const target = path ? join(dirname(file), path) : file;
      if (!existsSync(target)) broken.push(`${relative(ROOT, file)}: ${link} (no such file)`);
      else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        broken.push(`${relative(ROOT, file)}: ${link} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test("thresholds.json's reasons point at headings of docs/thresholds.md", () => {
  const policy = readFileSync(join(ROOT, 'thresholds.json'), 'utf8');
  const anchors = anchorsOf(readFileSync(join(ROOT, 'docs', 'thresholds.md'), 'utf8'));
  const cited = [...policy.matchAll(/docs\/thresholds\.md#([\w-]+)/g)].map((m) => m[1]);
  assert.ok(cited.length >= 8, `${cited.length} reasons cite docs/thresholds.md`);
  assert.deepEqual(
    cited.filter((a) => !anchors.has(a)),
    [],
  );
});

test('slugs as GitHub makes them', () => {
  assert.equal(
    slug('TCP on the link: slow start, loss, shared bandwidth'),
    'tcp-on-the-link-slow-start-loss-shared-bandwidth',
  );
  assert.equal(
    slug('What a run records (`METRICS`, `SERVER_TIMING_EVERY`)'),
    'what-a-run-records-metrics-server_timing_every',
  );
});

// Every line that opens or closes a code fence is a fence alone (``` and a language at
// most): a fence with text after it does not close on GitHub, and the block runs on
// over the headings below it (docs/your-api.md had one).
export function fenceFaults(text) {
  const faults = [];
  let open = false;
  text.split('\n').forEach((line, i) => {
    const m = /^(\s*)```(.*)$/.exec(line);
    if (!m) return;
    if (open && m[2].trim()) faults.push(`line ${i + 1}: a closing fence with text after it`);
    else if (!open && !/^[\w+-]*$/.test(m[2].trim()))
      faults.push(`line ${i + 1}: an opening fence with more than a language`);
    else open = !open;
  });
  if (open) faults.push('a code block never closed');
  return faults;
}

// Every table row has its header's number of cells (a row pasted into another has more).
export function tableFaults(text) {
  const faults = [];
  const prose = text.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''));
  const cells = (line) =>
    line
      .replace(/\\\|/g, '')
      .replace(/`[^`]*`/g, 'x')
      .split('|').length - 2;
  let header = null;
  prose.split('\n').forEach((line, i) => {
    if (!line.startsWith('|')) {
      header = null;
      return;
    }
    if (header === null) header = cells(line);
    else if (cells(line) !== header) faults.push(`line ${i + 1}: ${cells(line)} cells in a table of ${header}`);
  });
  return faults;
}

test('fences and tables: every code block closes on a fence alone, every table row has its header’s cells', () => {
  assert.deepEqual(fenceFaults('```sh\nx\n``` text after\n## Heading\n'), [
    'line 3: a closing fence with text after it',
    'a code block never closed',
  ]);
  assert.deepEqual(tableFaults('| a | b |\n|---|---|\n| 1 | 2 | 3 | 4 |\n'), ['line 3: 4 cells in a table of 2']);
  const faults = [];
  for (const file of [
    join(ROOT, 'README.md'),
    ...markdownFiles(join(ROOT, 'docs')),
    join(ROOT, 'bench', 'README.md'),
  ]) {
    const text = readFileSync(file, 'utf8');
    for (const f of [...fenceFaults(text), ...tableFaults(text)]) faults.push(`${relative(ROOT, file)}: ${f}`);
  }
  assert.deepEqual(faults, []);
});

const FIGURES = join(ROOT, 'bench', 'figures.js');
const figures = (...args) => spawnSync(process.execPath, [FIGURES, ...args], { encoding: 'utf8' });

test('every figures block in README.md and docs/ is what bench/results.jsonl gives, and no figure is typed beside it', () => {
  const r = figures();
  assert.equal(
    r.status,
    0,
    `stale or typed figures (node bench/figures.js --write, then quote or link the block):\n${r.stdout}${r.stderr}`,
  );
  const blocks = [
    'README.md',
    'docs/benchmarks.md',
    'docs/browser-rpc.md',
    'docs/tests.md',
    'docs/studies/000-ws-vs-http.md',
    'docs/studies/003-grpc-vs-graphql.md',
  ].map((f) => readFileSync(join(ROOT, f), 'utf8').match(/<!-- figures:begin [\w:-]+ -->/g));
  assert.ok(
    blocks.every((b) => b && b.length),
    'the README, benchmarks, browser-rpc and tests pages and studies 000 and 003 quote generated blocks',
  );
});

test('bench/figures.js names a stale block and a typed figure, exits 1, and --write mends the block', () => {
  const root = mkdtempSync(join(tmpdir(), 'k6pack-figures-'));
  try {
    mkdirSync(join(root, 'bench'));
    mkdirSync(join(root, 'docs'));
    copyFileSync(join(ROOT, 'bench', 'results.jsonl'), join(root, 'bench', 'results.jsonl'));
    const readme = (figure) =>
      `# x\n\nThe gate: <!-- figures:begin gate-seconds:short -->${figure}<!-- figures:end gate-seconds:short -->.\n`;
    writeFileSync(join(root, 'README.md'), readme('1 s'));
    let r = figures('--root', root);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /README\.md: stale gate-seconds:short/);
    r = figures('--root', root, '--write');
    assert.equal(r.status, 0, r.stdout);
    const fresh = readFileSync(join(root, 'README.md'), 'utf8');
    assert.notEqual(fresh, readme('1 s'));
    assert.equal(figures('--root', root).status, 0);
    const value = /-->([^<]+)<!--/.exec(fresh)[1];
    writeFileSync(join(root, 'docs', 'page.md'), `# y\n\nThe gate takes ${value}.\n`);
    r = figures('--root', root);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /docs\/page\.md: .* typed outside its block/);
    writeFileSync(
      join(root, 'docs', 'page.md'),
      '<!-- figures:begin no-such-figure --><!-- figures:end no-such-figure -->\n',
    );
    assert.match(figures('--root', root).stdout, /unknown figures block no-such-figure/);
    // A study's table block: its values typed on another page (a ratio, a range written with a
    // hyphen) are found there too, under docs/studies/.
    mkdirSync(join(root, 'docs', 'studies'));
    writeFileSync(join(root, 'docs', 'page.md'), '# y\n');
    const study = join(root, 'docs', 'studies', '000.md');
    writeFileSync(
      study,
      '# z\n\n<!-- figures:begin fidelity-table:ws-vs-http:3g -->\n<!-- figures:end fidelity-table:ws-vs-http:3g -->\n',
    );
    r = figures('--root', root, '--write');
    assert.equal(r.status, 0, r.stdout);
    const ratio = /^\| http fresh \| [\d.]+ \| [\d.]+ \| (\d\.\d{3}) \|$/m.exec(readFileSync(study, 'utf8'))[1];
    writeFileSync(join(root, 'docs', 'studies', '004.md'), `# w\n\nFresh HTTP: ${ratio} of the model.\n`);
    r = figures('--root', root);
    assert.equal(r.status, 1);
    assert.match(
      r.stdout,
      /docs\/studies\/004\.md: \d\.\d{3} \(fidelity-table:ws-vs-http:3g\) typed outside its block/,
    );
    const recovery = /recovery: lte \d+ of \d+, x(\d\.\d+)–(\d\.\d+)/.exec(figures('--root', root, '--list').stdout);
    writeFileSync(join(root, 'docs', 'studies', '004.md'), `# w\n\nRecovery ${recovery[1]}-${recovery[2]}.\n`);
    assert.match(figures('--root', root).stdout, /docs\/studies\/004\.md: .* \(recovery\) typed outside its block/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
