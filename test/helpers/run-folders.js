// Runs that leave a run folder, and the checks every results test shares:
// runInto() runs a scenario with the real k6 into a folder (RESULTS_DIR plus
// the raw samples, as `k6pack run` does), validSummary() checks a document
// against docs/results-schema.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { ROOT } from '../../lib/tools.js';
import { runToFolder } from '../../dev/run-k6.js';

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addFormat('date-time', (s) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT/.test(s));
const validate = ajv.compile(JSON.parse(readFileSync(join(ROOT, 'docs', 'results-schema.json'), 'utf8')));

export function validSummary(doc, what = 'summary.json') {
  assert.ok(
    validate(doc),
    `${what} does not match docs/results-schema.json: ${ajv.errorsText(validate.errors, { separator: '\n' })}`,
  );
  return doc;
}

export const readSummary = (dir) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));

// scenarios/<name>.js into `dir` (created); resolves { ...runK6 result, dir, doc }.
export async function runInto(dir, name, env, { args = [], timeoutMs = 120000, allowThresholdFailure = true } = {}) {
  const r = await runToFolder(dir, join(ROOT, 'scenarios', `${name}.js`), { env, args, timeoutMs });
  const ok = r.code === 0 || (allowThresholdFailure && r.code === 99);
  assert.ok(
    ok,
    `k6 ${name} exited ${r.code} (timed out: ${r.timedOut})\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`,
  );
  return { ...r, doc: validSummary(readSummary(dir), `${name} summary.json`) };
}
