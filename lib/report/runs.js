// Run folders (results/<scenario>-<profile>-<UTC time>/, or any folder a run's
// RESULTS_DIR pointed at) and their summary.json documents.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { FILES, SCHEMA_VERSION } from '../../common/results.js';

export class ResultsError extends Error {}

// A run folder or a summary.json path -> { dir, name, doc, samples (path or null),
// histograms (path or null) }.
export function loadRun(arg) {
  const path = resolve(arg);
  if (!existsSync(path)) throw new ResultsError(`no run folder or summary file at ${arg}`);
  const file = statSync(path).isDirectory() ? join(path, FILES.summary) : path;
  if (!existsSync(file)) {
    throw new ResultsError(
      `${arg} has no ${FILES.summary}: give a run folder (\`npx k6pack run\` makes one per run under results/) or a summary.json`,
    );
  }
  let doc;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ResultsError(`${file} is not valid JSON (${err.message.split('\n')[0]})`);
  }
  if (!doc || doc.schemaVersion !== SCHEMA_VERSION || !doc.run || !Array.isArray(doc.rows)) {
    throw new ResultsError(
      `${file} is not a k6pack summary of schema version ${SCHEMA_VERSION} (found schemaVersion ${doc && doc.schemaVersion})`,
    );
  }
  const dir = dirname(file);
  const beside = (name) => (existsSync(join(dir, name)) ? join(dir, name) : null);
  return {
    dir,
    name: basename(dir),
    file,
    doc,
    samples: beside(doc.run.samples || FILES.samples),
    histograms: beside(doc.run.histograms || FILES.histograms),
  };
}

// 20260101T120000Z: run and gate folder names.
export const stamp = (date) =>
  date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
const safe = (s) => String(s).replace(/[^A-Za-z0-9_.+-]/g, '_');

// Creates results/<scenario>-<profile>-<YYYYMMDDTHHMMSSZ>/ (with -2, -3... when
// that name is taken) and returns its path.
export function createRunFolder(root, scenario, profile, date = new Date()) {
  mkdirSync(root, { recursive: true });
  const base = join(root, `${safe(scenario)}-${safe(profile)}-${stamp(date)}`);
  for (let i = 1; i < 1000; i++) {
    const dir = i === 1 ? base : `${base}-${i}`;
    try {
      mkdirSync(dir);
      return dir;
    } catch (err) {
      if (err.code !== 'EEXIST') throw new ResultsError(`cannot create the run folder ${dir}: ${err.message}`);
    }
  }
  throw new ResultsError(`cannot create a run folder under ${root}: too many runs named ${basename(base)}`);
}
