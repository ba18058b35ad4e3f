// What docs/licences.md promises, checked: no Go code of the
// pack (git ls-files) names go.k6.io/k6 (k6 is AGPL-3.0 and runs as a separate,
// unmodified program); every HTML report carries Chart.js's MIT notice with the
// copy of Chart.js it inlines; LICENSE is the licence package.json names, word
// for word (SPDX's text). Each check is a function, shown failing on bad input.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import spdx from 'spdx-license-list/full.js';
import { ROOT } from '../lib/tools.js';
import { startTestStack } from '../dev/test-stack.js';
import { runCli } from './helpers/cli-env.js';
import { runInto } from './helpers/run-folders.js';

const normalise = (text) => text.replace(/\s+/g, ' ').trim();
const readRepo = (path) => readFileSync(join(ROOT, path), 'utf8');

// ---- the checks ----

// Go sources and module files ([{ path, text }]) that name k6's module: the paths.
function filesNamingK6(files) {
  return files
    .filter((f) => /\.go$|(^|\/)go\.(mod|sum)$/.test(f.path) && /\bgo\.k6\.io\/k6\b/.test(f.text))
    .map((f) => f.path);
}

// What is missing from a report's HTML for Chart.js's licence (its LICENSE.md text): [] when nothing.
function chartJsNoticeProblems(html, licence) {
  const problems = [];
  if (!/Chart\.js v\d+\.\d+\.\d+/.test(html)) problems.push('no inlined Chart.js build (its banner names the version)');
  if (!normalise(html).includes(normalise(licence)))
    problems.push("Chart.js's copyright and permission notice (LICENSE.md) is not in the report");
  return problems;
}

// Where LICENSE departs from the SPDX text of package.json's licence id, with
// `copyright` as its copyright line: [] when it does not.
function licenceProblems(pkg, licenceText, copyright) {
  const known = spdx[pkg.license];
  if (!known) return [`package.json's license ${JSON.stringify(pkg.license)} is not an SPDX licence id`];
  const template = known.licenseText;
  const holder = /^Copyright\b.*$/m; // its placeholder line, e.g. "Copyright (c) <year> <copyright holders>"
  if (!holder.test(template)) return [`no copyright line in SPDX's ${pkg.license} text to compare`];
  const want = normalise(template.replace(holder, copyright));
  const have = normalise(licenceText);
  if (want === have) return [];
  let i = 0;
  while (i < want.length && want[i] === have[i]) i++;
  return [
    `LICENSE is not SPDX's ${pkg.license} text with "${copyright}": they part at "…${have.slice(Math.max(0, i - 30), i + 30)}…" (expected "…${want.slice(Math.max(0, i - 30), i + 30)}…")`,
  ];
}

// ---- the pack ----

const COPYRIGHT = 'Copyright (c) 2026 the k6pack authors';
const MIT_LICENCE = readRepo('LICENSE');
const PKG = JSON.parse(readRepo('package.json'));
const CHART_JS_LICENCE = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('chart.js')), '..', 'LICENSE.md'),
  'utf8',
);

describe('k6 is never linked: no Go file or module of the pack names go.k6.io/k6', () => {
  test('git ls-files: no *.go, go.mod or go.sum names go.k6.io/k6', () => {
    const paths = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    const goFiles = paths.filter((p) => /\.go$|(^|\/)go\.(mod|sum)$/.test(p));
    assert.ok(goFiles.includes('tools/toxiproxy/go.mod'), `the Go files are found (${goFiles})`);
    assert.deepEqual(filesNamingK6(goFiles.map((path) => ({ path, text: readRepo(path) }))), []);
  });

  test('git ls-files: no compiled program is committed (no k6 binary ships with the pack)', () => {
    const paths = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    // ELF, Mach-O (32/64-bit, fat) and PE executables by their first bytes.
    const MAGIC = [
      [0x7f, 0x45, 0x4c, 0x46],
      [0xfe, 0xed, 0xfa, 0xce],
      [0xfe, 0xed, 0xfa, 0xcf],
      [0xcf, 0xfa, 0xed, 0xfe],
      [0xca, 0xfe, 0xba, 0xbe],
      [0x4d, 0x5a],
    ];
    const programs = paths.filter((p) => {
      const head = readFileSync(join(ROOT, p)).subarray(0, 4);
      return MAGIC.some((m) => m.every((b, i) => head[i] === b));
    });
    assert.deepEqual(programs, []);
  });

  test('the check fails on an import, a require and a go.sum line, and not on a README', () => {
    const bad = [
      { path: 'tools/x/main.go', text: 'package main\nimport "go.k6.io/k6/js/modules"\n' },
      { path: 'tools/x/go.mod', text: 'module x\nrequire go.k6.io/k6 v1.8.1\n' },
      { path: 'go.sum', text: 'go.k6.io/k6 v1.8.1 h1:abc=\n' },
      { path: 'tools/x/ok.go', text: 'package main\n// k6 runs as its own program\n' },
      { path: 'README.md', text: 'never imports go.k6.io/k6' },
    ];
    assert.deepEqual(filesNamingK6(bad), ['tools/x/main.go', 'tools/x/go.mod', 'go.sum']);
  });
});

describe('LICENSE and package.json agree', () => {
  test("package.json says MIT, and LICENSE is the MIT text with the pack's copyright line", () => {
    assert.equal(PKG.license, 'MIT');
    assert.match(MIT_LICENCE, /^MIT License\n\nCopyright \(c\) 2026 the k6pack authors\n/);
    assert.deepEqual(licenceProblems(PKG, MIT_LICENCE, COPYRIGHT), []);
  });

  test('the check fails on another licence id, an edited text, another copyright line and an unknown id', () => {
    assert.match(licenceProblems({ license: 'MIT-0' }, MIT_LICENCE, COPYRIGHT)[0], /LICENSE is not SPDX's MIT-0 text/);
    assert.match(
      licenceProblems({ license: 'BSD-2-Clause' }, MIT_LICENCE, COPYRIGHT)[0],
      /LICENSE is not SPDX's BSD-2-Clause text/,
    );
    const edited = MIT_LICENCE.replace('free of charge', 'for a fee');
    assert.match(licenceProblems(PKG, edited, COPYRIGHT)[0], /they part at "…[^"]*for a fee/);
    const noWarranty = MIT_LICENCE.replace(/THE SOFTWARE IS PROVIDED[\s\S]*$/, '');
    assert.equal(licenceProblems(PKG, noWarranty, COPYRIGHT).length, 1);
    assert.equal(licenceProblems(PKG, MIT_LICENCE.replace('the k6pack authors', 'someone else'), COPYRIGHT).length, 1);
    assert.match(licenceProblems({ license: 'MIT-ish' }, MIT_LICENCE, COPYRIGHT)[0], /not an SPDX licence id/);
  });
});

describe("an HTML report carries Chart.js's licence notice", { timeout: 180000 }, () => {
  let stack;
  let tmp;
  after(async () => {
    await stack?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('`k6pack report` on a real run folder: Chart.js inlined with its copyright and permission notice', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'k6pack-licences-'));
    stack = await startTestStack();
    const run = await runInto(join(tmp, 'run'), 'grpc-vs-graphql', {
      ...stack.env,
      LOAD: 'smoke',
      STEP_SECONDS: '1',
      PROFILE: 'lan',
      BIG_SIZE: '1000',
    });
    const r = await runCli(['report', run.dir], { timeoutMs: 60000 });
    assert.equal(r.exitCode, 0, r.stdout + r.stderr);
    const html = readFileSync(join(run.dir, 'report.html'), 'utf8');
    assert.deepEqual(chartJsNoticeProblems(html, CHART_JS_LICENCE), []);
    assert.match(CHART_JS_LICENCE, /Copyright \(c\) [\d-]+ Chart\.js Contributors/, "the notice read is Chart.js's");

    // The same report without the notice, and without Chart.js: both fail.
    const stripped = html.replace(/\/\*! Chart\.js licence[\s\S]*?\*\//, '');
    assert.notEqual(stripped, html, 'the notice was found to strip');
    assert.deepEqual(chartJsNoticeProblems(stripped, CHART_JS_LICENCE), [
      "Chart.js's copyright and permission notice (LICENSE.md) is not in the report",
    ]);
    assert.equal(chartJsNoticeProblems('<html></html>', CHART_JS_LICENCE).length, 2);
  });
});
