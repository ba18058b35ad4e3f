// The history folder (`--history DIR`, `k6pack history`): one JSON-lines file per
// scenario and profile, <dir>/<scenario>/<profile>.jsonl, each line one run's digest
// (common/history.js). Lines are only ever appended, and the folder's .gitattributes
// merges these files by union: two branches that each added runs merge without a
// conflict (parseHistory orders the lines by date again). No service: a folder, kept
// in a git branch, the Actions cache, or on disk.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { comparableBefore, digestOf, HISTORY_RULE, parseHistory } from '../../common/history.js';
import { FILES } from '../../common/results.js';
import { loadRun, ResultsError } from '../report/runs.js';
import { ROOT } from '../tools.js';

export const HISTORY_EXT = '.jsonl';
// `history report`'s page, drawn into the folder by default: not a part of the history.
export const TRENDS_FILE = 'trends.html';
const KEPT = {
  '.gitattributes': `# k6pack history: every line is one run; branches that added runs merge by union.\n*${HISTORY_EXT} merge=union\n`,
  '.gitignore': `# drawn from the history by \`k6pack history report\`\n${TRENDS_FILE}\n`,
};
const safe = (s) => String(s).replace(/[^A-Za-z0-9_.+-]/g, '_');
export const historyFile = (dir, scenario, profile) => join(dir, safe(scenario), `${safe(profile)}${HISTORY_EXT}`);

const PACK_VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

// The machine a digest records: the one adding it, where the runs ran (gate and run
// --history add as they end; `history add` is meant for the same machine).
export function thisMachine() {
  const list = cpus();
  return { cores: list.length, cpu: (list[0]?.model || '').replace(/\s+/g, ' ').trim() || null, pack: PACK_VERSION };
}

export const digestRun = (run) => digestOf(run.doc, thisMachine());

// RUN arguments: run folders, summary.json files, or folders of run folders (a gate
// folder, a results/ folder) -> loadRun's runs.
export function runsIn(args) {
  const runs = [];
  for (const arg of args) {
    const path = resolve(arg);
    if (!existsSync(path))
      throw new ResultsError(`no run folder at ${arg}: give run folders, summary.json files or a gate folder`);
    if (statSync(path).isFile() || existsSync(join(path, FILES.summary))) {
      runs.push(loadRun(path));
      continue;
    }
    const inside = readdirSync(path)
      .sort()
      .filter((name) => existsSync(join(path, name, FILES.summary)));
    if (!inside.length)
      throw new ResultsError(`${arg} holds no run folder with a ${FILES.summary}: give run folders or a gate folder`);
    runs.push(...inside.map((name) => loadRun(join(path, name))));
  }
  return runs;
}

function readFile(file) {
  if (!existsSync(file)) return { digests: [], bad: [] };
  return parseHistory(readFileSync(file, 'utf8'));
}

// One scenario and profile's digests, oldest first; a line that is no digest is named.
export function readHistoryOf(dir, scenario, profile, warn = () => {}) {
  const file = historyFile(dir, scenario, profile);
  const { digests, bad } = readFile(file);
  for (const b of bad) warn(`${file}:${b.line}: skipped, not a k6pack digest (${b.message})`);
  return digests;
}

// Every file of the folder: [{ file, scenario, profile, digests }].
export function readHistory(dir, warn = () => {}) {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new ResultsError(
      `no history folder at ${dir}: add runs with \`npx k6pack history add --history ${dir} RUN…\``,
    );
  const files = [];
  for (const scenario of readdirSync(root).sort()) {
    const sub = join(root, scenario);
    if (scenario.startsWith('.') || !statSync(sub).isDirectory()) continue;
    for (const name of readdirSync(sub).sort()) {
      if (!name.endsWith(HISTORY_EXT)) continue;
      const file = join(sub, name);
      const { digests, bad } = readFile(file);
      for (const b of bad) warn(`${file}:${b.line}: skipped, not a k6pack digest (${b.message})`);
      if (digests.length) files.push({ file, scenario, profile: name.slice(0, -HISTORY_EXT.length), digests });
    }
  }
  return files;
}

// Appends each run's digest; a run already there (same scenario, profile, start and
// commit) is not added twice. -> [{ run, file, added }].
export function addRuns(dir, runs) {
  const root = resolve(dir);
  try {
    mkdirSync(root, { recursive: true });
    for (const [name, text] of Object.entries(KEPT))
      if (!existsSync(join(root, name))) writeFileSync(join(root, name), text);
  } catch (err) {
    throw new ResultsError(`cannot write the history folder ${dir}: ${err.message}`);
  }
  return runs.map((run) => {
    const digest = digestRun(run);
    const file = historyFile(root, digest.scenario, digest.profile);
    const held = readFile(file).digests;
    if (held.some((d) => d.startedAt === digest.startedAt && d.commit === digest.commit))
      return { run, file, digest, added: false };
    mkdirSync(join(file, '..'), { recursive: true });
    appendFileSync(file, `${JSON.stringify(digest)}\n`);
    return { run, file, digest, added: true };
  });
}

// compareDocs' history option for `run`: the comparable runs before it in the folder
// (none when the folder or its file does not exist yet), and how many the rule needs.
export function historyFor(dir, run, runs = HISTORY_RULE.runs, warn = () => {}) {
  const digest = digestRun(run);
  const all = readHistoryOf(resolve(dir), digest.scenario, digest.profile, warn);
  return { before: comparableBefore(all, digest, runs), runs };
}
