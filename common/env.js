// Settings from the environment (k6's -e NAME=value, or Node's process.env), each
// checked: a bad value stops with one sentence saying what to give instead.
// Plain ES module: every reader takes the env object it reads.

// k6 prints a thrown Error with its stack trace and a thrown string as it is, so
// a setting the user must fix is thrown as a string: one line that says what to do.
export const configError = (message) => String(message);

const given = (env, name) => env[name] !== undefined && env[name] !== '';

// An integer from NAME, within [min, max].
export function envInt(env, name, fallback, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  if (!given(env, name)) return fallback;
  const raw = env[name];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw configError(`${name}=${raw} must be a whole number from ${min} to ${max}`);
  return n;
}

// A number (decimals allowed) from NAME, within [min, max].
export function envNumber(env, name, fallback, { min = -Infinity, max = Infinity } = {}) {
  if (!given(env, name)) return fallback;
  const raw = env[name];
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max)
    throw configError(`${name}=${raw} must be a number from ${min} to ${max}`);
  return n;
}

// A comma-separated list of integers, e.g. NS=100,1000.
export function envIntList(env, name, fallback, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  if (!given(env, name)) return fallback;
  const raw = env[name];
  return String(raw)
    .split(',')
    .map((part, i) => {
      const n = Number(part.trim());
      if (!Number.isInteger(n) || n < min || n > max)
        throw configError(`${name}=${raw}: item ${i + 1} must be a whole number from ${min} to ${max}`);
      return n;
    });
}

// A comma-separated list of names, each one of `known`.
export function envNames(env, name, fallback, known) {
  if (!given(env, name)) return fallback;
  const raw = env[name];
  const list = String(raw)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const item of list)
    if (!known.includes(item)) throw configError(`${name}=${raw}: "${item}" is not one of ${known.join(', ')}`);
  if (!list.length) throw configError(`${name}= names nothing: give one or more of ${known.join(', ')}`);
  return list;
}

// A duration in seconds from '90', '90s', '15m' or '1h'.
export function envSeconds(env, name, fallback) {
  if (!given(env, name)) return fallback;
  const raw = env[name];
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(String(raw).trim());
  if (!m) throw configError(`${name}=${raw} must be a duration such as 90s, 15m or 1h`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] || 's'];
}

// true/false from NAME=true|false|1|0.
export function envBool(env, name, fallback) {
  if (!given(env, name)) return fallback;
  const raw = env[name];
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw configError(`${name}=${raw} must be true or false`);
}
