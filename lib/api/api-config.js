// The API to test, from flags or a config file a repo commits (--api ./api.json, the
// same fields), checked before anything starts: every problem is one line naming the
// flag, field or file (a UsageError: exit 2).
//
//   --graphql URL         http:// or https:// GraphQL endpoint
//   --ws URL              its WebSocket endpoint, when not the same URL (ws:// or wss://)
//   --operations FILE     a .graphql file of named operations
//   --variables FILE      JSON keyed by operation name (in the config file: a path or the object)
//   --grpc ADDR           host:port of a gRPC server; --tls for a TLS port
//   --connect URL         a Connect / gRPC-Web server's base URL (http:// or https://), its
//                         calls given as gRPC's (--proto, --call, --request)
//   --proto FILE --call pkg.Service/Method --request JSON | --request-file FILE (an object,
//                         or an array cycled per call; {{vu}} {{iter}} {{uuid}}: common/variables.js)
//   --insecure            accept an untrusted certificate (GraphQL https and gRPC TLS)
//   --header 'Name: value' (repeatable), --init-payload JSON: credentials (common/credentials.js);
//                         the file's headers, initPayload and metadata (gRPC's, when not the headers)
// Paths in the config file are relative to the file; on the command line, to the
// working directory. Flags given with --api override the file's fields.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { hostOf, isLoopbackHost } from '../../common/loopback.js';
import { UsageError } from '../cli-support.js';
import { rawSetting } from '../../common/settings.js';
import { checkHeaders, expandCredentials, parseHeader } from '../../common/credentials.js';
import { parseServerPids } from './server-sampler.js';

export const API_FIELDS = [
  'graphql',
  'ws',
  'operations',
  'variables',
  'grpc',
  'connect',
  'tls',
  'insecure',
  'proto',
  'call',
  'request',
  'requestFile',
  'calls',
  'headers',
  'initPayload',
  'metadata',
];
const FLAG = {
  serverPid: '--server-pid',
  requestFile: '--request-file',
  headers: '--header',
  initPayload: '--init-payload',
  metadata: '"metadata"',
};
export const flagOf = (field) => FLAG[field] || `--${field}`;
const PATHS = ['operations', 'variables', 'proto', 'requestFile'];
// Given by --header and --init-payload (credentialsOf), and by repeatable --call,
// --request and --request-file (callsOf): not copied from the flags as they are.
const CREDENTIAL_FIELDS = ['headers', 'initPayload', 'metadata'];
const CALL_FIELDS = ['call', 'request', 'requestFile', 'calls'];

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
    if (k === 'headers' || k === 'metadata') {
      asUsage(() => checkHeaders(v, `API config ${file}: "${k}"`));
    } else if (k === 'initPayload') {
      if (!isObject(v)) throw new UsageError(`API config ${file}: "initPayload" must be a JSON object`);
    } else if (['tls', 'insecure'].includes(k)) {
      if (typeof v !== 'boolean') throw new UsageError(`API config ${file}: "${k}" must be true or false`);
    } else if (k === 'variables') {
      if (typeof v !== 'string' && !isObject(v))
        throw new UsageError(
          `API config ${file}: "variables" must be a file path or an object keyed by operation name`,
        );
    } else if (k === 'calls') {
      if (!Array.isArray(v) || !v.length || !v.every((c) => isObject(c) && typeof c.call === 'string'))
        throw new UsageError(
          `API config ${file}: "calls" must be a non-empty array of {"call": "pkg.Service/Method", "request": {…}} (or "requestFile")`,
        );
      for (const c of v) {
        const extraKey = Object.keys(c).find((x) => !['call', 'request', 'requestFile'].includes(x));
        if (extraKey)
          throw new UsageError(
            `API config ${file}: "calls": unknown field "${extraKey}" (fields: call, request, requestFile)`,
          );
      }
      out.calls = v.map((c) => (c.requestFile ? { ...c, requestFile: resolve(base, String(c.requestFile)) } : c));
      continue;
    } else if (k === 'request') {
      if (typeof v !== 'string' && !isObject(v) && !Array.isArray(v))
        throw new UsageError(`API config ${file}: "request" must be the request as a JSON object, or an array of them`);
    } else if (typeof v !== 'string' || !v)
      throw new UsageError(`API config ${file}: "${k}" must be a non-empty string`);
    out[k] = PATHS.includes(k) && typeof v === 'string' ? resolve(base, v) : v;
  }
  // A request given as text in the file is JSON text, as on the command line.
  return out;
}

// common/credentials.js throws its one line as a string: a UsageError here.
function asUsage(fn) {
  try {
    return fn();
  } catch (err) {
    if (typeof err === 'string') throw new UsageError(err);
    throw err;
  }
}

// The credentials given: the file's, then the flags' (a --header replaces the file's
// header of the same name). -> { headers, initPayload, metadata } (values unexpanded)
function credentialsOf(cfg, opts) {
  const headers = { ...(cfg.headers || {}) };
  for (const line of opts.header || []) {
    const [name, value] = asUsage(() => parseHeader(line));
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
    headers[name] = value;
  }
  let initPayload = cfg.initPayload || null;
  if (opts.initPayload !== undefined) {
    try {
      initPayload = JSON.parse(opts.initPayload);
    } catch (err) {
      throw new UsageError(
        `--init-payload ${opts.initPayload}: not valid JSON (${String(err.message).split('\n')[0]}): give an object, e.g. '{"authorization": "Bearer \${API_TOKEN}"}'`,
      );
    }
    if (!isObject(initPayload))
      throw new UsageError(
        `--init-payload must be a JSON object (the connection_init payload), not ${opts.initPayload}`,
      );
  }
  return { headers, initPayload, metadata: cfg.metadata || null };
}

// The gRPC calls given: the flags' (--call repeatable, the i-th --request or --request-file
// for the i-th --call), else the file's ("calls", or "call" with "request"); a lone
// --request beside a file's one call replaces its request. -> [{ call, request }]
function callsOf(cfg, opts, cwd) {
  const list = (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const flagCalls = list(opts.call);
  const texts = list(opts.request);
  const files = list(opts.requestFile).map((f) => resolve(cwd, f));
  if (texts.length && files.length)
    throw new UsageError('give the gRPC requests one way: --request JSON or --request-file FILE, not both');
  const flagRequests = texts.length
    ? texts.map((request) => ({ request }))
    : files.map((requestFile) => ({ requestFile }));
  let calls;
  if (flagCalls.length) {
    if (flagCalls.length === 1 && flagRequests.length > 1)
      throw new UsageError(
        "one --call and several requests: give them as one JSON array (--request '[{…}, {…}]'), cycled per call",
      );
    if (flagCalls.length > 1 && flagRequests.length && flagRequests.length !== flagCalls.length)
      throw new UsageError(
        `${flagCalls.length} --call and ${flagRequests.length} requests: give one --request (or --request-file) per --call, in the same order, or none`,
      );
    calls = flagCalls.map((call, i) => ({ call, ...(flagRequests[i] || {}) }));
  } else {
    if (cfg.calls && (cfg.call || cfg.request !== undefined || cfg.requestFile !== undefined))
      throw new UsageError('the API config gives "calls" and "call"/"request": give the calls one way');
    calls = cfg.calls
      ? cfg.calls.map((c) => ({ ...c }))
      : cfg.call
        ? [{ call: cfg.call, request: cfg.request, requestFile: cfg.requestFile }]
        : [];
    if (flagRequests.length) {
      if (calls.length !== 1) throw new UsageError('--request and --request-file need --call (one per --call)');
      calls = [{ call: calls[0].call, ...flagRequests[0] }];
    }
  }
  const seen = new Set();
  return calls.map((c) => {
    if (seen.has(c.call))
      throw new UsageError(`--call ${c.call} is given twice: give its requests as one JSON array, cycled per call`);
    seen.add(c.call);
    return { call: c.call, request: requestOf(c) };
  });
}

// One call's request: from its file, its JSON text or the object(s) the config holds.
function requestOf(c) {
  if (c.request !== undefined && c.requestFile !== undefined)
    throw new UsageError(`--call ${c.call}: give its request once: --request JSON or --request-file FILE, not both`);
  let request = {};
  if (c.requestFile !== undefined) request = readJsonFile(exists(c.requestFile, '--request-file'), '--request-file');
  else if (isObject(c.request) || Array.isArray(c.request)) request = c.request;
  else if (c.request !== undefined) {
    try {
      request = JSON.parse(c.request);
    } catch (err) {
      throw new UsageError(
        `--request ${c.request}: not valid JSON (${String(err.message).split('\n')[0]}): give the request message as a JSON object, e.g. '{"id": 1}'`,
      );
    }
  }
  // One request, or an array of them cycled per call (common/variables.js).
  const sets = Array.isArray(request) ? request : [request];
  if (!sets.length || !sets.every(isObject))
    throw new UsageError(
      `the gRPC request must be a JSON object (the message's fields), or a non-empty array of them, not ${JSON.stringify(request)}`,
    );
  return request;
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
export const apiFlagsIn = (opts) =>
  ['api', ...API_FIELDS, 'header', 'serverPid'].filter((k) => opts[k] !== undefined && k !== 'headers').map(flagOf);

// commander options for the API flags (run and up take the same).
export function addApiOptions(command) {
  return command
    .option(
      '--api <file>',
      'your API from a config file (JSON: graphql, ws, operations, variables, grpc, tls, insecure, proto, call, request, requestFile, calls, headers, initPayload, metadata)',
    )
    .option('--graphql <url>', 'your GraphQL endpoint, http:// or https://')
    .option('--ws <url>', 'its WebSocket endpoint when not the same URL (ws:// or wss://)')
    .option('--operations <file>', 'a .graphql file of named operations, each run on every lane that applies')
    .option('--variables <file>', 'JSON object of variables keyed by operation name')
    .option('--grpc <addr>', 'your gRPC endpoint, host:port')
    .option(
      '--connect <url>',
      'your Connect / gRPC-Web endpoint, http:// or https:// (the base of /package.Service/Method), with --proto and --call',
    )
    .option('--tls', 'the gRPC port speaks TLS')
    .option('--insecure', 'accept an untrusted certificate (self-signed, another name)')
    .option('--proto <file>', 'the .proto of the gRPC service')
    .option(
      '--call <method>',
      'a method to call: package.Service/Method (repeatable: each a row of its own)',
      (v, all = []) => [...all, v],
    )
    .option(
      '--request <json>',
      'the gRPC request as JSON, checked against the message type (an array: cycled per call; one per --call)',
      (v, all = []) => [...all, v],
    )
    .option('--request-file <file>', 'the gRPC request from a JSON file (one per --call)', (v, all = []) => [...all, v])
    .option(
      '--header <line>',
      "a header for every request, the WebSocket upgrade and gRPC metadata: 'Name: value' (repeatable; ${VAR} reads the environment; values are never printed)",
      (line, all = []) => [...all, line],
    )
    .option(
      '--server-pid <pids>',
      "your server's process id(s) on this machine, comma-separated: each lane's server CPU per operation and RSS",
    )
    .option(
      '--init-payload <json>',
      "graphql-ws's connection_init payload, a JSON object (${VAR} reads the environment)",
    );
}

// -> { graphql, ws, operations, variables (path | object | null), grpc, tls, insecure,
//      proto, calls: [{ call, request (object | array) }], credentials (as given), expanded (their values),
//      source, remote: [hosts not on loopback] }
export function apiConfig(opts, { cwd = process.cwd(), env = process.env } = {}) {
  const file = opts.api ? resolve(cwd, opts.api) : null;
  const cfg = file ? fromFile(file) : {};
  for (const k of API_FIELDS) {
    if (opts[k] === undefined || CREDENTIAL_FIELDS.includes(k) || CALL_FIELDS.includes(k)) continue;
    cfg[k] = PATHS.includes(k) ? resolve(cwd, opts[k]) : opts[k];
  }
  if (!cfg.graphql && !cfg.grpc && !cfg.connect)
    throw new UsageError(
      'give --graphql URL, --grpc ADDR, --connect URL or several (or --api ./api.json with those fields): `npx k6pack run api --help`',
    );
  // A field given in the file or as a flag (the call flags are kept apart: callsOf pairs them).
  const needs = (field, other, alt) => {
    const v = cfg[field] ?? opts[field];
    if (v !== undefined && v !== false && !cfg[other] && !(alt && cfg[alt]))
      throw new UsageError(`${flagOf(field)} needs ${flagOf(other)}${alt ? ` or ${flagOf(alt)}` : ''}`);
  };
  for (const f of ['ws', 'operations', 'variables']) needs(f, 'graphql');
  needs('metadata', 'grpc');
  const credentials = credentialsOf(cfg, opts);
  if (credentials.initPayload && !cfg.graphql) throw new UsageError('--init-payload needs --graphql');
  for (const f of ['proto', 'call', 'calls', 'request', 'requestFile']) needs(f, 'grpc', 'connect');
  needs('tls', 'grpc');
  const out = {
    source: file,
    tls: Boolean(cfg.tls),
    insecure: Boolean(cfg.insecure),
    graphql: null,
    ws: null,
    operations: null,
    variables: null,
    grpc: null,
    connect: null,
    proto: null,
    calls: [],
    credentials,
    // Your server's processes, whose CPU time and memory each step costs (server-sampler.js).
    serverPids: opts.serverPid === undefined ? null : parseServerPids(opts.serverPid),
    // The values, from this environment: discovery sends them (never printed).
    expanded: asUsage(() => expandCredentials(credentials, env)),
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
  if (cfg.grpc) out.grpc = address(cfg.grpc);
  // A Connect / gRPC-Web endpoint: the base URL its /package.Service/Method paths hang off.
  if (cfg.connect) out.connect = url(cfg.connect, '--connect', ['http', 'https']).replace(/\/+$/, '');
  if (cfg.grpc || cfg.connect) {
    const flag = cfg.grpc ? '--grpc' : '--connect';
    if (!cfg.proto)
      throw new UsageError(`${flag} needs --proto FILE (the service's .proto) and --call package.Service/Method`);
    out.proto = exists(cfg.proto, '--proto');
    out.calls = callsOf(cfg, opts, cwd);
    if (!out.calls.length) throw new UsageError(`${flag} needs --call package.Service/Method (the method to call)`);
  }
  // Loopback only, unless the user says otherwise; the proxies stay on 127.0.0.1 either way.
  const hosts = [out.graphql, out.ws, out.grpc, out.connect].filter(Boolean).map(hostOf);
  out.remote = [...new Set(hosts.filter((h) => !isLoopbackHost(h)))];
  if (out.remote.length && rawSetting(env, 'ALLOW_REMOTE_TARGET') !== '1') {
    throw new UsageError(
      `${out.remote.join(', ')} is not a loopback address: the pack only loads 127.0.0.1/::1 unless you set ALLOW_REMOTE_TARGET=1 on purpose`,
    );
  }
  return out;
}
