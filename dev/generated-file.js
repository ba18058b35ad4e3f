// A generated file's command line, shared by the generators (dev/settings-doc.js,
// dev/lanes-doc.js): with --write it rewrites the file when it differs, else it says
// whether the file is current and exits 1 when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from '../lib/tools.js';

export function checkOrWrite(file, text, command, argv = process.argv) {
  const name = relative(ROOT, file);
  let old = '';
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    // not written yet
  }
  if (old === text) console.log(`${name} is current`);
  else if (argv.includes('--write')) {
    writeFileSync(file, text);
    console.log(`rewrote ${name}`);
  } else {
    console.log(`${name} is stale: run \`${command} --write\``);
    process.exitCode = 1;
  }
}
