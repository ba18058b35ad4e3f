// Credentials for your own API (k6pack run api, up --api): headers sent on every HTTP
// request and on the WebSocket upgrade, the graphql-transport-ws connection_init payload,
// and gRPC metadata (the headers, names lowercased, unless the config gives its own).
//
// A value may name environment variables, `Bearer ${API_TOKEN}`: the CLI expands them
// from its environment for discovery, and k6 from its own (`k6 run` passes the system
// environment to __ENV), so neither a committed api.json nor the plan file k6 reads holds
// a secret. Every value counts as secret: names are shown, values never (redact()).
//
//   { headers: { Authorization: 'Bearer ${API_TOKEN}' }, initPayload: { token: '${API_TOKEN}' } | null,
//     metadata: { authorization: 'Bearer ${API_TOKEN}' } | null }
// Plain ES module with no k6 or Node imports.
import { configError } from './env.js';

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
// RFC 9110's token: what a header name may be.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export const REDACTED = '[redacted]';
// A value this short is not worth hiding, and hiding it would mangle unrelated text.
const MIN_SECRET = 4;

export const NO_CREDENTIALS = Object.freeze({ headers: {}, initPayload: null, metadata: null });

// The environment variables a value names.
export const envRefs = (text) => [...String(text).matchAll(REF)].map((m) => m[1]);

// `text` with every ${NAME} replaced from env; one line naming `where` when one is not set.
export function expandEnv(text, env, where) {
  return String(text).replace(REF, (_, name) => {
    const v = env[name];
    if (v === undefined || v === '')
      throw configError(`${where}: \${${name}} is not set: export ${name} before running (its value is never printed)`);
    return v;
  });
}

// Every string within a JSON value expanded (the init payload's leaves).
export function expandDeep(value, env, where) {
  if (typeof value === 'string') return expandEnv(value, env, where);
  if (Array.isArray(value)) return value.map((v) => expandDeep(v, env, where));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandDeep(v, env, `${where}.${k}`)]));
  return value;
}

// 'Name: value' (curl's and grpcurl's -H) -> [name, value].
export function parseHeader(line) {
  const text = String(line);
  const at = text.indexOf(':');
  const name = at > 0 ? text.slice(0, at).trim() : '';
  if (!HEADER_NAME.test(name))
    throw configError(
      `--header ${JSON.stringify(text)}: give 'Name: value', e.g. 'Authorization: Bearer \${API_TOKEN}'`,
    );
  return [name, text.slice(at + 1).trim()];
}

// A headers or metadata object, checked: names are tokens, values strings.
export function checkHeaders(obj, where) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
    throw configError(`${where} must be an object of name: value`);
  for (const [name, v] of Object.entries(obj)) {
    if (!HEADER_NAME.test(name)) throw configError(`${where}: "${name}" is not a header name`);
    if (typeof v !== 'string') throw configError(`${where}: the value of ${name} must be a string`);
  }
  return obj;
}

// gRPC metadata: the config's own, else the headers with their names lowercased.
export const metadataOf = (creds) =>
  creds.metadata || Object.fromEntries(Object.entries(creds.headers || {}).map(([name, v]) => [name.toLowerCase(), v]));

// The credentials with every value expanded from env. -> { headers, initPayload, metadata }
export function expandCredentials(creds, env) {
  const expandAll = (obj, what) =>
    Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, expandEnv(v, env, `${what} ${k}`)]));
  return {
    headers: expandAll(creds.headers || {}, 'header'),
    initPayload: creds.initPayload ? expandDeep(creds.initPayload, env, 'the init payload') : null,
    metadata: expandAll(metadataOf(creds), 'gRPC metadata'),
  };
}

// Every string an expanded set of credentials holds (what redact() hides).
export function secretsOf(expanded) {
  const out = new Set();
  const walk = (v) => {
    if (typeof v === 'string') {
      if (v.length >= MIN_SECRET) out.add(v);
      // 'Bearer abc…': the token alone may turn up too (an echoed error).
      for (const part of v.split(/\s+/)) if (part.length >= MIN_SECRET * 2) out.add(part);
    } else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(expanded.headers);
  walk(expanded.initPayload);
  walk(expanded.metadata);
  // Longest first, so a value is hidden whole before a part of it.
  return [...out].sort((a, b) => b.length - a.length);
}

// `text` with every secret replaced by REDACTED.
export function redact(text, secrets) {
  let out = String(text);
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

// What may be shown of a set of credentials: the names.
export function describeCredentials(creds) {
  const parts = [];
  const headers = Object.keys(creds.headers || {});
  if (headers.length) parts.push(`header${headers.length === 1 ? '' : 's'} ${headers.join(', ')}`);
  if (creds.initPayload) parts.push(`an init payload (${Object.keys(creds.initPayload).join(', ') || 'empty'})`);
  if (creds.metadata) parts.push(`gRPC metadata ${Object.keys(creds.metadata).join(', ')}`);
  return parts.length ? `${parts.join(', ')} (values hidden)` : null;
}

// What the plan file k6 reads keeps: each value that names no environment variable is
// replaced by a reference to one the CLI sets for its k6 alone (K6PACK_SECRET_<n>, in
// k6's process environment, never on its command line), so the file holds no secret.
// -> { credentials (for the plan), env: { K6PACK_SECRET_1: value, … }, literal: ['header X', …] }
export const SECRET_PREFIX = 'K6PACK_SECRET_';
export function planCredentials(creds) {
  const env = {};
  const literal = [];
  const keep = (v, where) => {
    if (typeof v === 'string') {
      if (envRefs(v).length || v === '') return v;
      const name = `${SECRET_PREFIX}${Object.keys(env).length + 1}`;
      env[name] = v;
      literal.push(where);
      return `\${${name}}`;
    }
    if (Array.isArray(v)) return v.map((x) => keep(x, where));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, keep(x, `${where}.${k}`)]));
    return v;
  };
  const each = (obj, what) => Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, keep(v, `${what} ${k}`)]));
  return {
    credentials: {
      headers: each(creds.headers || {}, 'header'),
      initPayload: creds.initPayload ? keep(creds.initPayload, 'the init payload') : null,
      metadata: creds.metadata ? each(creds.metadata, 'gRPC metadata') : null,
    },
    env,
    literal,
  };
}
