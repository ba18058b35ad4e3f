// docs/lanes.md is generated from the lane catalogue and the specs (dev/lanes-doc.js):
// a lane added, moved or renamed shows there once the page is rewritten.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { LANES } from '../common/lanes/catalogue.js';
import { LANES_DOC, lanesDoc } from '../dev/lanes-doc.js';

test('docs/lanes.md shows the catalogue and the specs as they are (run `node dev/lanes-doc.js --write`)', async () => {
  const now = await lanesDoc();
  assert.equal(readFileSync(LANES_DOC, 'utf8'), now, 'run `node dev/lanes-doc.js --write`');
  for (const l of LANES) assert.match(now, new RegExp(`^\\| \`${l.name}\` \\| ${l.family} \\|`, 'm'), l.name);
});
