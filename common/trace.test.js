// Mahimahi traces (common/trace.js) and `+trace=` in a spec: parsing, hostile input
// refused in one line naming the file and the line, and what the link toxics get.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadProfile } from '../lib/profiles.js';
import { parseSpec, ProfileError, resolveProfile } from './profiles.js';
import { MAX_TRACE_BYTES, MAX_TRACE_LINES, parseTrace, traceStats } from './trace.js';

const oneLine = (re) => (e) => {
  assert.ok(e instanceof ProfileError, String(e));
  assert.doesNotMatch(e.message, /\n/);
  assert.match(e.message, re);
  return true;
};

test('parseTrace: whole ms a line, ascending (repeats allowed), a final newline or CRLF fine', () => {
  assert.deepEqual(parseTrace('0\n1\n1\n5\n', 'a.trace'), [0, 1, 1, 5]);
  assert.deepEqual(parseTrace('3\r\n7\r\n\r\n', 'a.trace'), [3, 7]);
  assert.deepEqual(parseTrace(' 12 ', 'a.trace'), [12]);
  assert.deepEqual(traceStats([1, 2, 3, 1000]), { periodMs: 1000, opportunities: 4, meanKbps: 48 });
  assert.deepEqual(traceStats([]), { periodMs: 0, opportunities: 0, meanKbps: 0 });
});

test('parseTrace: hostile input is one line naming the file and the line', () => {
  const cases = [
    ['', /^trace file x\.trace: empty: a Mahimahi trace has one whole number/],
    ['\n\n  \n', /^trace file x\.trace: empty/],
    ['1\n2\nabc\n', /^trace file x\.trace, line 3: "abc" is not a number: /],
    ['1\n-5\n', /^trace file x\.trace, line 2: "-5" is negative: /],
    ['1\n2.5\n', /^trace file x\.trace, line 2: "2\.5" is not a whole number: /],
    ['1\n1e3\n', /^trace file x\.trace, line 2: "1e3" is not a whole number: /],
    ['1\n\n2\n', /^trace file x\.trace, line 2: an empty line: /],
    ['5\n3\n', /^trace file x\.trace, line 2: 3 comes after 5 \(line 1\): /],
    [
      '0\n0\n',
      /^trace file x\.trace, line 2: the last timestamp is 0: it is the trace's period, so it must be above 0$/,
    ],
    ['99999999999\n', /^trace file x\.trace, line 1: 99999999999 ms is over a day/],
    [
      `${'1\n'.repeat(MAX_TRACE_LINES)}2\n`,
      /^trace file x\.trace, line 200001: huge \(200001 lines, at most 200000\)$/,
    ],
    [`${'1'.repeat(MAX_TRACE_BYTES + 1)}`, /^trace file x\.trace: huge \(2\.0 MB, over 2 MB\)/],
    [`${'x'.repeat(40)}\n`, /line 1: "x{20}…" is not a number/],
  ];
  for (const [text, re] of cases) assert.throws(() => parseTrace(text, 'x.trace'), oneLine(re), re.source);
  assert.throws(() => parseTrace(null, 'x.trace'), oneLine(/cannot read it as text/));
});

test('parseSpec: trace= (and nat=) are the only extras with an =, one file for both directions or DOWN:UP', () => {
  assert.deepEqual(parseSpec('lte+trace=walk-lte'), {
    network: 'lte',
    file: false,
    extras: [],
    trace: { down: 'walk-lte', up: 'walk-lte' },
  });
  assert.deepEqual(parseSpec('lte+handover+trace=./d.trace:./u.trace+flaky'), {
    network: 'lte',
    file: false,
    extras: ['handover', 'flaky'],
    trace: { down: './d.trace', up: './u.trace' },
  });
  assert.throws(() => parseSpec('lte+trace='), oneLine(/"trace=" is not a trace: give \+trace=FILE/));
  assert.throws(() => parseSpec('lte+trace=a:b:c'), oneLine(/is not a trace/));
  assert.throws(() => parseSpec('lte+trace=a:'), oneLine(/is not a trace/));
  assert.throws(() => parseSpec('lte+trace=a+trace=b'), oneLine(/names a trace twice/));
  assert.throws(
    () => parseSpec('lte+loss=1'),
    oneLine(/unknown parameter "loss" in "loss=1": the extras that take one are \+nat=SECONDS and \+trace=FILE/),
  );
  assert.throws(() => parseSpec('trace=a'), oneLine(/malformed/));
});

const dir = mkdtempSync(join(tmpdir(), 'k6pack-trace-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name, text) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

test('lte+trace=walk-lte: the shipped trace, .down downstream and .up upstream, the bitrate kept, epoch 0 until applied', () => {
  const p = loadProfile('lte+trace=walk-lte');
  assert.equal(p.name, 'lte+trace=walk-lte');
  assert.equal(p.spec, 'lte+trace=walk-lte');
  const [up, down] = p.toxics;
  assert.equal(up.name, 'link_upstream');
  assert.ok(up.attributes.trace.length > 1000 && down.attributes.trace.length > 1000);
  assert.notDeepEqual(up.attributes.trace, down.attributes.trace);
  assert.equal(down.attributes.trace.at(-1), 15000);
  assert.equal(up.attributes.epoch, 0);
  assert.equal(up.attributes.event, 0);
  assert.equal(down.attributes.bitrate, 12000000);
  // On lan too: a trace is a link of its own.
  assert.equal(loadProfile('lan+trace=walk-3g').toxics.length, 2);
  assert.throws(
    () => loadProfile('lte+trace=walk-5g'),
    oneLine(/^unknown trace "walk-5g": the shipped traces are walk-lte, walk-3g; for a file of your own give its path/),
  );
});

test('a trace of your own: absolute in the spec k6 gets, named by its file, DOWN:UP each its own', () => {
  const d = file('Down Link.trace', '1\n2\n10\n');
  const u = file('up.trace', '5\n20\n');
  const p = loadProfile(`3g+trace=${d}+flaky`);
  assert.equal(p.name, '3g+flaky+trace=down-link');
  assert.equal(p.spec, `3g+flaky+trace=${d}`);
  assert.deepEqual(
    p.toxics.filter((t) => t.type === 'link').map((t) => t.attributes.trace),
    [
      [1, 2, 10],
      [1, 2, 10],
    ],
  );
  const both = loadProfile(`3g+trace=${d}:${u}`);
  assert.equal(both.name, '3g+trace=down-link:up');
  assert.deepEqual(
    both.toxics.map((t) => [t.name, t.attributes.trace]),
    [
      ['link_upstream', [5, 20]],
      ['link_downstream', [1, 2, 10]],
    ],
  );
  // The spec k6 gets resolves to the same profile.
  assert.deepEqual(loadProfile(both.spec).toxics, both.toxics);
  assert.throws(
    () => loadProfile(`3g+trace=${join(dir, 'missing.trace')}`),
    oneLine(/^trace file .*missing\.trace: cannot read it \(ENOENT\): give the path of a Mahimahi trace/),
  );
  const bad = file('bad.trace', '1\n3\n2\n');
  assert.throws(() => loadProfile(`3g+trace=${bad}`), oneLine(/^trace file .*bad\.trace, line 3: 2 comes after 3/));
  const huge = file('huge.trace', `${'1\n'.repeat(MAX_TRACE_BYTES / 2 + 1)}`);
  assert.throws(
    () => loadProfile(`3g+trace=${huge}`),
    oneLine(/^trace file .*huge\.trace: huge \(2\.0 MB, over 2 MB\)/),
  );
  // Without a reader of the user's files (the catalogue's own checks): said so.
  assert.throws(
    () => resolveProfile('3g+trace=./x.trace', (p) => loadText(p)),
    oneLine(/trace file \.\/x\.trace: files of your own are read by k6 and the CLI/),
  );
});

function loadText(path) {
  if (path === 'profiles/index.json') return JSON.stringify({ network: ['3g'], modifiers: [], faults: [], traces: [] });
  return JSON.stringify({
    name: '3g',
    description: '3g',
    source: 'x',
    rttMs: 300,
    jitterMs: 0,
    downKbps: 1600,
    upKbps: 768,
  });
}
