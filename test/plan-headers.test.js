// `k6pack plan` as the scenario files show it: each file's header holds its plan at
// LOAD=ci, as the command prints it today (dev/plan-headers.js --write rewrites them),
// and the printed table says each figure once, with where it comes from.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { blockIn, planBlock, scenarioFile, withBlock } from '../dev/plan-headers.js';
import { scenarioNames } from '../lib/cli-support.js';
import { planLines } from '../lib/plan-lines.js';

test("every scenario file's header shows its current ci plan", async () => {
  for (const name of scenarioNames()) {
    const text = readFileSync(scenarioFile(name), 'utf8');
    assert.equal(blockIn(text, name), await planBlock(name), `${name}.js: run \`node dev/plan-headers.js --write\``);
  }
});

test('a stale block is replaced, and a header without one gets it before its end', () => {
  const block =
    ' * Its plan at LOAD=ci (`npx k6pack plan x --load ci`; dev/plan-headers.js writes it):\n *   new\n * (end of the plan)';
  const old = block.replace('new', 'old');
  assert.equal(withBlock(`/*\n * x\n *\n${old}\n */\ncode\n`, 'x', block), `/*\n * x\n *\n${block}\n */\ncode\n`);
  assert.equal(withBlock('/*\n * x\n */\ncode\n', 'x', block), `/*\n * x\n *\n${block}\n */\ncode\n`);
  assert.throws(() => withBlock('code\n', 'x', block), /no header comment/);
});

test('each figure has its source: the level, the model, the spec or a variable', async () => {
  const lines = await planLines('ws-vs-http', { profile: 'lte', load: 'ci' }, {});
  const why = lines.slice(lines.indexOf('where the figures come from:') + 1);
  assert.match(
    why.find((l) => l.includes('VUs or rate')),
    /LOAD=ci's steps: 1, 4/,
  );
  assert.ok(
    why.some((l) => /graceful stop: 1\.5 x the model's 0\.310 s iteration/.test(l)),
    why.join('\n'),
  );
  const fixed = await planLines('ws-vs-http', { profile: 'lte', load: 'ci' }, { STEP_SECONDS: '5', STEPS: '2' });
  assert.ok(fixed.includes('  duration: STEP_SECONDS'), fixed.join('\n'));
  assert.ok(fixed.includes("  VUs or rate: each step's concurrency (STEPS: 2)"), fixed.join('\n'));
  const open = await planLines('ws-vs-http', { profile: 'lte', load: 'ci', workload: 'open' }, {});
  assert.ok(
    open.some((l) => /VUs or rate, ws_o90: 90 % of what 4 connections do .*VUs for the worst iteration/.test(l)),
    open.join('\n'),
  );
  const soak = await planLines('soak', { profile: 'lan', load: 'soak' }, {});
  assert.ok(soak.includes("  duration: LOAD=soak's (SOAK_DURATION)"), soak.join('\n'));
});
