// Network and fault profiles for the Node side (CLI, tests): the same parsing and
// toxic arithmetic as k6 uses (common/profiles.js), reading the files with fs.
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './tools.js';
import { NETWORK_FILE_HINT, ProfileError, readIndex, resolveProfile } from '../common/profiles.js';
import { hugeMessage } from '../common/trace.js';

export { ProfileError };

function readText(path) {
  try {
    return readFileSync(join(ROOT, path), 'utf8');
  } catch (err) {
    throw new ProfileError(`${path}: cannot read it (${err.code || err.message})`);
  }
}

// The known profile names, from the catalogue profiles/index.json.
export function listProfiles() {
  const index = readIndex(readText);
  return {
    network: [...index.network],
    modifiers: [...index.modifiers],
    faults: [...index.faults],
    traces: [...(index.traces || [])],
  };
}

// The profiles the gate lint covers: every built-in network alone, with +loss3 (the
// heaviest built-in loss) and with +shared.
export const lintProfiles = () => listProfiles().network.flatMap((n) => [n, `${n}+loss3`, `${n}+shared`]);

// A file of the user's own (a network file, a trace), from the working directory; one
// over maxBytes is refused before it is read (a trace: common/trace.js's "huge").
function readUser(path, { what = 'profile file', hint = NETWORK_FILE_HINT, maxBytes } = {}) {
  const abs = resolve(path);
  let size = 0;
  try {
    if (maxBytes !== undefined) size = statSync(abs).size;
    if (!(size > maxBytes)) return { text: readFileSync(abs, 'utf8'), path: abs };
  } catch (err) {
    throw new ProfileError(`${what} ${path}: cannot read it (${err.code || err.message}): ${hint}`);
  }
  throw new ProfileError(hugeMessage(path, size));
}

// '3g+flaky', './my-network.json+flaky' or 'lte+trace=./my.trace' -> { name, spec,
// network, faults, toxics }; every toxic applies to every proxy, with the epoch 0
// (Toxiproxy.applyToxics sets it). Throws ProfileError (an Error) with a one-line message.
export function loadProfile(spec) {
  return resolveProfile(spec, readText, readUser);
}
