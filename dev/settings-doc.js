#!/usr/bin/env node
// docs/settings.md from common/settings.js (the one list of environment variables).
// test/settings.test.js checks it is current; this rewrites it:
//   node dev/settings-doc.js --write
import { join } from 'node:path';
import { describeSettings } from '../common/settings.js';
import { ROOT } from '../lib/tools.js';
import { checkOrWrite } from './generated-file.js';

export const SETTINGS_DOC = join(ROOT, 'docs', 'settings.md');

const cell = (text) => text.replace(/\|/g, '\\|');

export function settingsDoc() {
  const rows = describeSettings().map(
    (r) => `| \`${r.name}\` | ${cell(r.default)} | ${cell(r.bounds)} | ${r.readers} | ${cell(r.doc)} |`,
  );
  return [
    '# Settings',
    '',
    'Every environment variable the pack reads, from one list: `common/settings.js` (this page is generated',
    'from it by `node dev/settings-doc.js --write`; `npx k6pack list --env` prints the same). k6 takes them',
    'as `-e NAME=value`; the CLI passes its own flags and the environment on to the k6 runs it starts; the',
    'servers read theirs from their process. A run reads the ones k6 reads once, where it begins (the k6 init',
    'context, or the CLI for `plan` and `thresholds`), and checks them all at once: a value out of its bounds',
    'stops the run before it starts, with one line saying what to give, whichever scenario would read it.',
    '"read by": k6 (the scenarios), cli (`npx k6pack`), server (`servers/`), bench (a bench\'s or a test\'s own',
    'script, set by the code that runs it: bench/, dev/; not yours to set).',
    '',
    '| name | default | values | read by | what |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`)
  checkOrWrite(SETTINGS_DOC, settingsDoc(), 'node dev/settings-doc.js');
