#!/usr/bin/env node
// Each scenario file's header ends with its plan at LOAD=ci under its own profile, as
// `npx k6pack plan NAME --load ci` prints it (with no other setting in the
// environment). test/plan-headers.test.js checks they are current; this rewrites them:
//   node dev/plan-headers.js --write
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioNames } from '../lib/cli-support.js';
import { planLines } from '../lib/plan-lines.js';
import { ROOT } from '../lib/tools.js';

const START = ' * Its plan at LOAD=ci (`npx k6pack plan NAME --load ci`; dev/plan-headers.js writes it):';
const END = ' * (end of the plan)';

export const scenarioFile = (name) => join(ROOT, 'scenarios', `${name}.js`);

// The block as it should read.
export async function planBlock(name) {
  const lines = await planLines(name, { load: 'ci' }, {});
  return [START.replace('NAME', name), ...lines.map((l) => ` *   ${l}`.trimEnd()), END].join('\n');
}

// The block the file holds now, or null.
export function blockIn(text, name) {
  const i = text.indexOf(START.replace('NAME', name));
  if (i < 0) return null;
  const j = text.indexOf(END, i);
  return j < 0 ? null : text.slice(i, j + END.length);
}

// The file's text with the block put in (replacing the old one, else before the header's end).
export function withBlock(text, name, block) {
  const old = blockIn(text, name);
  if (old) return text.replace(old, block);
  const end = text.indexOf('\n */\n');
  if (end < 0) throw new Error(`${name}.js: no header comment (/* ... */) to put its plan in`);
  return `${text.slice(0, end)}\n *\n${block}${text.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const write = process.argv.includes('--write');
  let stale = 0;
  for (const name of scenarioNames()) {
    const file = scenarioFile(name);
    const text = readFileSync(file, 'utf8');
    const block = await planBlock(name);
    if (blockIn(text, name) === block) continue;
    stale += 1;
    if (write) writeFileSync(file, withBlock(text, name, block));
    console.log(`${write ? 'rewrote' : 'stale:'} scenarios/${name}.js`);
  }
  if (stale && !write) {
    console.log('run `node dev/plan-headers.js --write`');
    process.exitCode = 1;
  }
}
