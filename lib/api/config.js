// The API to test, from flags or a config file a repo commits (--api ./api.json, the
// same fields), checked before anything starts: every problem is one line naming the
// flag, field or file (a UsageError: exit 2).
//
//   --graphql URL         http:// or https:// GraphQL endpoint
//   --ws URL              its WebSocket endpoint, when not the same URL (ws:// or wss://)
//   --operations FILE     a .graphql file of named operations
//   --variables FILE      JSON keyed by operation name (in the config file: a path or the object)
//   --grpc ADDR           host:port of a gRPC server; --tls for a TLS port
//   --proto FILE --call pkg.Service/Method --request JSON | --request-file FILE
//   --insecure            accept an untrusted certificate (GraphQL https and gRPC TLS)
// Paths in the config file are relative to the file; on the command line, to the
// working directory. Flags given with --api override the file's fields.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { hostOf, isLoopbackHost } from '../../common/loopback.js';
import { UsageError } from '../cli-support.js';
import { rawSetting } from '../../common/settings.js';

export const API_FIELDS = [
  'graphql',
  'ws',
  'operations',
  'variables',
  'grpc',
  'tls',
  'insecure',
  'proto',
  'call',
  'request',
  'requestFile',
];
const FLAG = { requestFile: '--request-file' };
export const flagOf = (field) => FLAG[field] || `--${field}`;
const PATHS = ['operations', 'variables', 'proto', 'requestFile'];

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// Reads a JSON file the user named; one line on any problem.
export function readJsonFile(file, what) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${what} ${file}: cannot read it (${err.code || err.message})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} ${file}: not valid JSON (${String(err.message).split('\n')[0]})`);
  }
}

function fromFile(file) {
  const doc = readJsonFile(file, 'API config');
  if (!isObject(doc))
    throw new UsageError(`API config ${file}: must be a JSON object with graphql, operations, grpc, proto, call, …`);
  const extra = Object.keys(doc).find((k) => !API_FIELDS.includes(k) && !k.startsWith('$') && !k.startsWith('_'));
  if (extra) throw new UsageError(`API config ${file}: unknown field "${extra}" (fields: ${API_FIELDS.join(', ')})`);
  const base = dirname(file);
  const out = {};
  for (const k of API_FIELDS) {
    if (doc[k] === undefined) continue;
    const v = doc[k];
    if (['tls', 'insecure'].includes(k)) {
      if (typeof v !== 'boolean') throw new UsageError(`API config ${file}: "${k}" must be true or false`);
    } else if (k === 'variables' || k === 'request') {
      if (typeof v !== 'string' && !isObject(v))
        throw new UsageError(
          `API config ${file}: "${k}" must be ${k === 'variables' ? 'a file path or an object keyed by operation name' : 'the request as a JSON object'}`,
        );
    } else if (typeof v !== 'string' || !v)
      throw new UsageError(`API config ${file}: "${k}" must be a non-empty string`);
    out[k] = PATHS.includes(k) && typeof v === 'string' ? resolve(base, v) : v;
  }
  // A request given as text in the file is JSON text, as on the command line.
  return out;
}

function url(value, flag, schemes) {
  let u;
  try {
    u = new URL(value);
  } catch {
    throw new UsageError(`${flag} ${value}: not a URL; give e.g. ${schemes[0]}://127.0.0.1:8080/graphql`);
  }
  if (!schemes.includes(u.protocol.slice(0, -1)))
    throw new UsageError(`${flag} ${value}: must be ${schemes.map((s) => `${s}://`).join(' or ')}`);
  return u.href;
}

function address(value) {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(String(value));
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535)
    throw new UsageError(`--grpc ${value}: give host:port, e.g. 127.0.0.1:9090`);
  return value;
}

function exists(file, flag) {
  if (!existsSync(file)) throw new UsageError(`${flag} ${file}: no such file`);
  return file;
}

// The API flags given (opts: commander's), as their flag names.
export const apiFlagsIn = (opts) => ['api', ...API_FIELDS].filter((k) => opts[k] !== undefined).map(flagOf);

// commander options for the API flags (run and up take the same).
export function addApiOptions(command) {
  return command
    .option(
      '--api <file>',
      'your API from a config file (JSON: graphql, ws, operations, variables, grpc, tls, insecure, proto, call, request, requestFile)',
    )
    .option('--graphql <url>', 'your GraphQL endpoint, http:// or https://')
    .option('--ws <url>', 'its WebSocket endpoint when not the same URL (ws:// or wss://)')
    .option('--operations <file>', 'a .graphql file of named operations, each run on every lane that applies')
    .option('--variables <file>', 'JSON object of variables keyed by operation name')
    .option('--grpc <addr>', 'your gRPC endpoint, host:port')
    .option('--tls', 'the gRPC port speaks TLS')
    .option('--insecure', 'accept an untrusted certificate (self-signed, another name)')
    .option('--proto <file>', 'the .proto of the gRPC service')
    .option('--call <method>', 'the method to call: package.Service/Method')
    .option('--request <json>', 'the gRPC request as JSON, checked against the message type')
    .option('--request-file <file>', 'the gRPC request from a JSON file');
}

// -> { graphql, ws, operations, variables (path | object | null), grpc, tls, insecure,
//      proto, call, request (object), source, remote: [hosts not on loopback] }
export function apiConfig(opts, { cwd = process.cwd(), env = process.env } = {}) {
  const file = opts.api ? resolve(cwd, opts.api) : null;
  const cfg = file ? fromFile(file) : {};
  for (const k of API_FIELDS) {
    if (opts[k] === undefined) continue;
    cfg[k] = PATHS.includes(k) ? resolve(cwd, opts[k]) : opts[k];
  }
  if (!cfg.graphql && !cfg.grpc)
    throw new UsageError(
      'give --graphql URL, --grpc ADDR or both (or --api ./api.json with those fields): `npx k6pack run api --help`',
    );
  const needs = (field, other) => {
    if (cfg[field] !== undefined && cfg[field] !== false && !cfg[other])
      throw new UsageError(`${flagOf(field)} needs ${flagOf(other)}`);
  };
  for (const f of ['ws', 'operations', 'variables']) needs(f, 'graphql');
  for (const f of ['proto', 'call', 'request', 'requestFile', 'tls']) needs(f, 'grpc');
  const out = {
    source: file,
    tls: Boolean(cfg.tls),
    insecure: Boolean(cfg.insecure),
    graphql: null,
    ws: null,
    operations: null,
    variables: null,
    grpc: null,
    proto: null,
    call: null,
    request: {},
  };
  if (cfg.graphql) {
    out.graphql = url(cfg.graphql, '--graphql', ['http', 'https']);
    if (cfg.ws) out.ws = url(cfg.ws, '--ws', ['ws', 'wss']);
    if (!cfg.operations)
      throw new UsageError(
        '--graphql needs --operations FILE: a .graphql file of named operations (query GetBook($id: ID!) { … })',
      );
    out.operations = exists(cfg.operations, '--operations');
    out.variables = typeof cfg.variables === 'string' ? exists(cfg.variables, '--variables') : cfg.variables || null;
  }
  if (cfg.grpc) {
    out.grpc = address(cfg.grpc);
    if (!cfg.proto)
      throw new UsageError("--grpc needs --proto FILE (the service's .proto) and --call package.Service/Method");
    if (!cfg.call) throw new UsageError('--grpc needs --call package.Service/Method (the method to call)');
    out.proto = exists(cfg.proto, '--proto');
    out.call = cfg.call;
    if (cfg.request !== undefined && cfg.requestFile !== undefined)
      throw new UsageError('give the gRPC request once: --request JSON or --request-file FILE, not both');
    if (cfg.requestFile !== undefined)
      out.request = readJsonFile(exists(cfg.requestFile, '--request-file'), '--request-file');
    else if (isObject(cfg.request)) out.request = cfg.request;
    else if (cfg.request !== undefined) {
      try {
        out.request = JSON.parse(cfg.request);
      } catch (err) {
        throw new UsageError(
          `--request ${cfg.request}: not valid JSON (${String(err.message).split('\n')[0]}): give the request message as a JSON object, e.g. '{"id": 1}'`,
        );
      }
    }
    if (!isObject(out.request))
      throw new UsageError(
        `the gRPC request must be a JSON object (the message's fields), not ${JSON.stringify(out.request)}`,
      );
  }
  // Loopback only, unless the user says otherwise; the proxies stay on 127.0.0.1 either way.
  const hosts = [out.graphql, out.ws, out.grpc].filter(Boolean).map(hostOf);
  out.remote = [...new Set(hosts.filter((h) => !isLoopbackHost(h)))];
  if (out.remote.length && rawSetting(env, 'ALLOW_REMOTE_TARGET') !== '1') {
    throw new UsageError(
      `${out.remote.join(', ')} is not a loopback address: the pack only loads 127.0.0.1/::1 unless you set ALLOW_REMOTE_TARGET=1 on purpose`,
    );
  }
  return out;
}
