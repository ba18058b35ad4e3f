// Reading docker-compose.yml and the Dockerfiles the way Docker does, for the
// compose tests (no Docker engine needed): YAML with merge keys, Compose's
// ${VAR} interpolation, short port and volume syntax, Dockerfile instructions.
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../../lib/tools.js';

export const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');

// The file as Compose sees it before interpolation (`<<: *anchor` merged).
export function loadComposeRaw(file = COMPOSE_FILE) {
  return parse(readFileSync(file, 'utf8'), { merge: true });
}

// Compose's interpolation: $$ is a literal $, ${VAR}, $VAR, ${VAR:-default}
// (unset or empty), ${VAR-default} (unset), ${VAR:?message} / ${VAR?message}.
export function interpolate(text, env = {}) {
  return text.replace(
    /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (all, dollar, name, op, arg, bare) => {
      if (dollar === '$') return '$';
      if (bare) return env[bare] ?? '';
      const value = env[name];
      const missing = op?.startsWith(':') ? value === undefined || value === '' : value === undefined;
      if (!op || !missing) return value ?? '';
      if (op.endsWith('-')) return arg;
      throw new Error(`${name}: ${arg || 'required variable is missing'}`);
    },
  );
}

function interpolateAll(value, env) {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((v) => interpolateAll(v, env));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env)]));
  return value;
}

// The file after interpolation with `env` (default: no variables set, so every
// ${VAR:-default} takes its default), i.e. what `docker compose config` shows.
export function loadCompose(env = {}, file = COMPOSE_FILE) {
  return interpolateAll(loadComposeRaw(file), env);
}

// "127.0.0.1:4000:4000" -> { hostIp, published, target }; null for any other form.
export function parsePort(spec) {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d+):(\d+)(?:\/tcp)?$/.exec(String(spec));
  return m ? { hostIp: m[1], published: Number(m[2]), target: Number(m[3]) } : null;
}

// "./profiles:/profiles:ro" -> { source (repo-relative), target, readOnly }.
export function parseVolume(spec) {
  const [source, target, mode = ''] = spec.split(':');
  return { source: posix.normalize(source), target, readOnly: mode.split(',').includes('ro') };
}

// The repo path a service sees at `containerPath` through its bind mounts
// (relative paths resolve against working_dir), or null if none covers it.
export function hostPathFor(service, containerPath) {
  const abs = posix.resolve(service.working_dir || '/', containerPath);
  for (const { source, target } of (service.volumes || []).map(parseVolume)) {
    if (abs === target || abs.startsWith(`${target}/`)) return posix.join(source, posix.relative(target, abs));
  }
  return null;
}

// A Dockerfile as instructions [{ op, args, stage }] (line continuations
// joined, comments dropped); `stage` counts FROM lines from 0.
export function parseDockerfile(path) {
  const text = readFileSync(join(ROOT, path), 'utf8').replace(/\\\n/g, ' ');
  const out = [];
  let stage = -1;
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m || line.trim().startsWith('#')) continue;
    const op = m[1].toUpperCase();
    if (op === 'FROM') stage++;
    out.push({ op, args: m[2].trim(), stage });
  }
  return out;
}

// Build-context paths a Dockerfile copies in (COPY/ADD without --from).
export function copiedPaths(instructions) {
  return instructions
    .filter((i) => (i.op === 'COPY' || i.op === 'ADD') && !/--from=/.test(i.args))
    .flatMap((i) => {
      const words = i.args.startsWith('[') ? JSON.parse(i.args) : i.args.split(/\s+/);
      return words.filter((w) => !w.startsWith('--')).slice(0, -1);
    });
}
