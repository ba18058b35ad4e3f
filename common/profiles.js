// Network profiles -> Toxiproxy toxics.
//
// Plain ES module with no imports and no I/O, so k6 (scenarios/lib/network.js, which
// reads the files with open()) and Node (lib/profiles.js, which reads them with fs)
// share the parsing, validation and toxic arithmetic. A profile spec is a network
// profile plus any fault profiles: '3g', '3g+flaky', 'lte+flaky+jitter'.
//
// The toxics for a network profile with round-trip time R:
//   handshake  upstream    delay R     a fresh connection pays its TCP handshake (+1 RTT):
//                                      stock Toxiproxy accepts at once and dials upstream at
//                                      once, so without it a new connection costs nothing
//   handshake  downstream  until 1.5R  nothing from the server before the connection is
//                                      1.5R old: a server-first byte (an HTTP/2 server's
//                                      SETTINGS, which gRPC clients wait for) reaches the
//                                      client at 2R, as on a real link (tools/toxiproxy)
//   latency    upstream    R/2 (+- jitter/2)
//   latency    downstream  R/2 (+- jitter/2)
//   bandwidth  upstream    upKbps / 8 KB/s   (Toxiproxy's rate is KB/s with K = 1000:
//   bandwidth  downstream  downKbps / 8 KB/s  it sleeps len * 1 ms / rate per chunk)
// Order matters inside a stream and is fixed here: handshake, then latency, then bandwidth,
// then the other fault toxics. The latency toxic waits "delay - time since the chunk
// arrived", so a bandwidth toxic placed before it would have its transfer time swallowed
// by the latency; placed after, the two add up (R/2 + size/rate), as on a real link.

export const PROFILE_DIR = 'profiles';
export const INDEX_FILE = `${PROFILE_DIR}/index.json`;
export const KINDS = { network: 'network', faults: 'faults' };

// Toxic types Toxiproxy v2.5.0 knows, plus the pack's own `handshake`.
export const TOXIC_TYPES = ['latency', 'bandwidth', 'slow_close', 'timeout', 'reset_peer', 'slicer', 'limit_data', 'handshake'];
const STREAMS = ['upstream', 'downstream'];
const NAME_RE = /^[a-z0-9][a-z0-9-]*$/;
const TOXIC_NAME_RE = /^[A-Za-z0-9_.-]+$/;

export class ProfileError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ProfileError';
  }
}

export const profileFile = (kind, name) => `${PROFILE_DIR}/${kind}/${name}.json`;

// A network part that names a file of the user's own (./my-network.json) rather than
// a built-in profile: it has a slash or ends in .json.
export const isProfileFile = (part) => /[/\\]/.test(part) || /\.json$/i.test(part);

// '3g+flaky+jitter' -> { network: '3g', faults: ['flaky', 'jitter'] };
// './my-network.json+flaky' -> { network: './my-network.json', file: true, faults: ['flaky'] }
export function parseSpec(spec) {
  if (typeof spec !== 'string' || spec.trim() === '') {
    throw new ProfileError('profile spec is empty: give a network profile, optionally with faults, e.g. "3g" or "3g+flaky"');
  }
  const parts = spec.trim().split('+').map((p) => p.trim());
  parts.forEach((p, i) => {
    if (i === 0 && isProfileFile(p)) return;
    if (!NAME_RE.test(p)) {
      throw new ProfileError(`profile spec "${spec}" is malformed: expected NETWORK[+FAULT...] of lower-case names (or a file of your own, ./my-network.json), e.g. "3g+flaky"`);
    }
  });
  const faults = parts.slice(1);
  const dup = faults.find((f, i) => faults.indexOf(f) !== i);
  if (dup) throw new ProfileError(`profile spec "${spec}" names fault "${dup}" twice`);
  return { network: parts[0], file: isProfileFile(parts[0]), faults };
}

const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const isText = (v) => typeof v === 'string' && v.trim() !== '';

function checkFields(obj, file, allowed) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new ProfileError(`${file}: must be a JSON object`);
  }
  const extra = Object.keys(obj).find((k) => !allowed.includes(k));
  if (extra !== undefined) {
    throw new ProfileError(`${file}: unknown field "${extra}" (allowed: ${allowed.join(', ')})`);
  }
}

function checkHeader(obj, file, name) {
  if (obj.name !== name) throw new ProfileError(`${file}: name must be "${name}" (the file's name)`);
  if (!isText(obj.description)) throw new ProfileError(`${file}: description must be a non-empty string`);
}

// A network of the user's own (user: true) has the same fields; it needs the numbers
// and where they come from, and its name is the file's (my-network.json -> my-network)
// unless it gives one.
const NETWORK_FIELDS = ['name', 'description', 'source', 'rttMs', 'jitterMs', 'downKbps', 'upKbps'];
// Toxiproxy's bandwidth rate is a whole number of KB/s, so 8 kbit/s is the least it can express.
const MIN_KBPS = 8;

export function validateNetworkProfile(obj, name, file = profileFile(KINDS.network, name), { user = false } = {}) {
  checkFields(obj, file, NETWORK_FIELDS);
  if (user) {
    if (obj.name !== undefined && (typeof obj.name !== 'string' || !NAME_RE.test(obj.name))) throw new ProfileError(`${file}: name must be lower-case letters, digits and dashes (or leave it out: the file's name is used)`);
    if (obj.description !== undefined && !isText(obj.description)) throw new ProfileError(`${file}: description must be a non-empty string (or leave it out)`);
    for (const f of ['rttMs', 'jitterMs', 'downKbps', 'upKbps', 'source']) if (!(f in obj)) throw new ProfileError(`${file}: ${f} is missing (a network file needs rttMs, jitterMs, downKbps, upKbps and source)`);
  } else checkHeader(obj, file, name);
  if (!isText(obj.source)) throw new ProfileError(`${file}: source must be a non-empty string saying where the numbers come from`);
  if (!isNumber(obj.rttMs) || obj.rttMs < 0) throw new ProfileError(`${file}: rttMs must be a number >= 0`);
  if (!isNumber(obj.jitterMs) || obj.jitterMs < 0 || obj.jitterMs > obj.rttMs) {
    throw new ProfileError(`${file}: jitterMs must be a number between 0 and rttMs (${obj.rttMs})`);
  }
  for (const f of ['downKbps', 'upKbps']) {
    if (obj[f] !== null && (!isNumber(obj[f]) || obj[f] < MIN_KBPS)) {
      throw new ProfileError(`${file}: ${f} must be null (no limit) or a number >= ${MIN_KBPS}`);
    }
  }
  return obj;
}

const FAULT_FIELDS = ['name', 'description', 'toxics'];
const TOXIC_FIELDS = ['name', 'type', 'stream', 'toxicity', 'attributes'];

export function validateFaultProfile(obj, name, file = profileFile(KINDS.faults, name)) {
  checkFields(obj, file, FAULT_FIELDS);
  checkHeader(obj, file, name);
  if (!Array.isArray(obj.toxics) || obj.toxics.length === 0) {
    throw new ProfileError(`${file}: toxics must be a non-empty array of Toxiproxy toxics {name, type, stream, toxicity, attributes}`);
  }
  obj.toxics.forEach((t, i) => {
    const at = `${file}: toxics[${i}]`;
    checkFields(t, at, TOXIC_FIELDS);
    if (typeof t.name !== 'string' || !TOXIC_NAME_RE.test(t.name)) throw new ProfileError(`${at}.name must be a string of letters, digits, _ . -`);
    if (obj.toxics.findIndex((o) => o.name === t.name) !== i) throw new ProfileError(`${at}.name "${t.name}" is used twice`);
    if (!TOXIC_TYPES.includes(t.type)) throw new ProfileError(`${at}.type must be one of ${TOXIC_TYPES.join(', ')}`);
    if (!STREAMS.includes(t.stream)) throw new ProfileError(`${at}.stream must be "upstream" or "downstream"`);
    if (!isNumber(t.toxicity) || t.toxicity < 0 || t.toxicity > 1) throw new ProfileError(`${at}.toxicity must be a number between 0 and 1`);
    if (t.attributes === null || typeof t.attributes !== 'object' || Array.isArray(t.attributes)) {
      throw new ProfileError(`${at}.attributes must be an object of the toxic's settings`);
    }
    for (const [k, v] of Object.entries(t.attributes)) {
      // Toxiproxy decodes every attribute into an int64.
      if (!Number.isInteger(v) || v < 0) throw new ProfileError(`${at}.attributes.${k} must be a whole number >= 0`);
    }
  });
  return obj;
}

// Whole milliseconds split across the two directions (Toxiproxy takes integers).
function split(ms) {
  const total = Math.round(ms);
  const up = Math.floor(total / 2);
  return [up, total - up];
}

const toxic = (name, type, stream, attributes) => ({ name, type, stream, toxicity: 1, attributes });
const kbpsToRate = (kbps) => Math.max(1, Math.round(kbps / 8)); // kbit/s -> KB/s (K = 1000)

// The toxics that make a link behave like the network profile (pure; none for lan).
export function networkToxics(profile) {
  const out = [];
  const [upMs, downMs] = split(profile.rttMs);
  const [upJitter, downJitter] = split(profile.jitterMs);
  if (upMs + downMs > 0) {
    out.push(toxic('handshake_upstream', 'handshake', 'upstream', { delay: upMs + downMs }));
    out.push(toxic('handshake_downstream', 'handshake', 'downstream', { until: upMs + downMs + upMs }));
    out.push(toxic('latency_upstream', 'latency', 'upstream', { latency: upMs, jitter: upJitter }));
    out.push(toxic('latency_downstream', 'latency', 'downstream', { latency: downMs, jitter: downJitter }));
  }
  if (profile.upKbps !== null) out.push(toxic('bandwidth_upstream', 'bandwidth', 'upstream', { rate: kbpsToRate(profile.upKbps) }));
  if (profile.downKbps !== null) out.push(toxic('bandwidth_downstream', 'bandwidth', 'downstream', { rate: kbpsToRate(profile.downKbps) }));
  return out;
}

const RANK = { handshake: 0, latency: 1, bandwidth: 2 };
const rank = (t) => RANK[t.type] ?? 3;

// Every toxic of a network profile and its faults, in the order they must be added.
export function profileToxics(network, faults = []) {
  const all = [...networkToxics(network)];
  for (const f of faults) {
    for (const t of f.toxics) {
      const clash = all.find((o) => o.name === t.name);
      if (clash) throw new ProfileError(`fault "${f.name}" defines toxic "${t.name}", which another part of the profile already uses: rename it`);
      all.push({ ...t, attributes: { ...t.attributes } });
    }
  }
  // Stable sort: within a rank the profile's own order is kept.
  return all.map((t, i) => [t, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([t]) => t);
}

export function validateIndex(obj, file = INDEX_FILE) {
  for (const kind of [KINDS.network, KINDS.faults]) {
    if (!obj || !Array.isArray(obj[kind]) || !obj[kind].every((n) => typeof n === 'string' && NAME_RE.test(n))) {
      throw new ProfileError(`${file}: ${kind} must be an array of profile names`);
    }
  }
  return obj;
}

function unknownMessage(kind, name, index) {
  const what = kind === KINDS.network ? 'network profile' : 'fault profile';
  return `unknown ${what} "${name}": network profiles are ${index.network.join(', ')}; fault profiles (add with +, e.g. 3g+flaky) are ${index.faults.join(', ')}`;
}

function parseJson(text, file) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ProfileError(`${file}: not valid JSON (${String(err.message).split('\n')[0]})`);
  }
}

// `readText(path)` returns the text of a file under the repository root
// ('profiles/network/3g.json') or throws.

// The catalogue of known names, profiles/index.json (k6 cannot list a directory).
export const readIndex = (readText) => validateIndex(parseJson(readText(INDEX_FILE), INDEX_FILE));

// Resolves a spec to { name, spec, network, faults, toxics }. readUser(path) reads a
// network file of the user's own (k6: open() from where k6 was started; Node: fs
// from the working directory) and returns { text, path (absolute) }.
export function resolveProfile(spec, readText, readUser) {
  const index = readIndex(readText);
  const parsed = parseSpec(spec);
  const load = (kind, name, validate) => {
    if (!index[kind].includes(name)) throw new ProfileError(unknownMessage(kind, name, index));
    const file = profileFile(kind, name);
    return validate(parseJson(readText(file), file), name, file);
  };
  let network;
  let specOut = spec.trim();
  if (parsed.file) {
    if (!readUser) throw new ProfileError(`profile file ${parsed.network}: files of your own are read by k6 and the CLI, not here`);
    const { text, path } = readUser(parsed.network);
    const obj = validateNetworkProfile(parseJson(text, parsed.network), null, parsed.network, { user: true });
    const base = String(path).split(/[/\\]/).pop().replace(/\.json$/i, '').toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'custom';
    network = { ...obj, name: obj.name || base, description: obj.description || `your own network (${parsed.network})`, file: path };
    // k6 gets the absolute path: it may run from another directory than the CLI.
    specOut = [path, ...parsed.faults].join('+');
  } else network = load(KINDS.network, parsed.network, validateNetworkProfile);
  const faults = parsed.faults.map((f) => load(KINDS.faults, f, validateFaultProfile));
  return {
    name: [network.name, ...parsed.faults].join('+'),
    spec: specOut,
    network,
    faults,
    toxics: profileToxics(network, faults),
  };
}
