// Network and fault profiles for the Node side (CLI, tests): the same parsing and
// toxic arithmetic as k6 uses (common/profiles.js), reading the files with fs.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './tools.js';
import { ProfileError, readIndex, resolveProfile } from '../common/profiles.js';

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
  return { network: [...index.network], modifiers: [...index.modifiers], faults: [...index.faults] };
}

// A network file of the user's own, from the working directory.
function readUser(path) {
  const abs = resolve(path);
  try {
    return { text: readFileSync(abs, 'utf8'), path: abs };
  } catch (err) {
    throw new ProfileError(
      `profile file ${path}: cannot read it (${err.code || err.message}): give the path of a JSON file with rttMs, jitterMs, downKbps, upKbps and source`,
    );
  }
}

// '3g+flaky' or './my-network.json+flaky' -> { name, spec, network, faults, toxics };
// every toxic applies to every proxy. Throws ProfileError (an Error) with a one-line message.
export function loadProfile(spec) {
  return resolveProfile(spec, readText, readUser);
}
