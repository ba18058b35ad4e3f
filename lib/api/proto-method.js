// The team's gRPC method (--proto svc.proto --call pkg.Service/Method) and its request
// (--request JSON), checked before anything runs: a .proto that does not compile, an
// unknown service or method, or a request that does not fit the message is one line
// naming the file, the method or the field.
//
// @grpc/proto-loader compiles the .proto for @grpc/grpc-js (discovery calls the method
// with it); protobufjs, which proto-loader is built on, reflects the request type so the
// JSON is checked the way k6's gRPC client reads it (protobuf's JSON mapping: unknown
// fields refused; field names as in the .proto or lowerCamelCase; 64-bit integers as
// numbers or strings; enums by name or number; bytes as base64).
import { dirname, basename } from 'node:path';
import protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { UsageError } from '../cli-support.js';

export const LOADER_OPTIONS = { keepCase: false, longs: String, enums: String, defaults: false, oneofs: true };

function compile(file, show) {
  const includeDirs = [dirname(file)];
  try {
    const definition = protoLoader.loadSync(file, { ...LOADER_OPTIONS, includeDirs });
    const root = new protobuf.Root();
    root.resolvePath = (origin, target) =>
      target.startsWith('/') || target.startsWith('google/protobuf/') ? target : `${includeDirs[0]}/${target}`;
    root.loadSync(file, { keepCase: true });
    root.resolveAll();
    return { definition, root };
  } catch (err) {
    throw new UsageError(`--proto ${show}: does not compile: ${String(err.message || err).split('\n')[0]}`);
  }
}

// -> { definition (proto-loader's, for grpc-js), service, name, method ('pkg.Service/Method'),
//      def (proto-loader's method definition), requestType (protobufjs Type), stream,
//      importPaths, file }
export function loadMethod(file, call, show = file) {
  const m = /^([A-Za-z_][\w.]*)\/([A-Za-z_]\w*)$/.exec(String(call));
  if (!m) throw new UsageError(`--call ${call}: give package.Service/Method, e.g. routeguide.RouteGuide/GetFeature`);
  const [, service, name] = m;
  const { definition, root } = compile(file, show);
  const services = Object.keys(definition).filter((k) => definition[k] && !definition[k].format);
  const svc = definition[service];
  if (!svc || svc.format)
    throw new UsageError(
      `--call ${call}: ${show} has no service ${service} (it has: ${services.join(', ') || 'none'})`,
    );
  const def = svc[name];
  if (!def)
    throw new UsageError(`--call ${call}: ${service} has no method ${name} (it has: ${Object.keys(svc).join(', ')})`);
  if (def.requestStream)
    throw new UsageError(
      `--call ${call}: a ${def.responseStream ? 'bidirectional' : 'client'}-streaming method: the pack calls unary and server-streaming methods`,
    );
  const requestType = root.lookupService(service).methods[name].resolvedRequestType;
  return {
    definition,
    service,
    name,
    method: `${service}/${name}`,
    def,
    requestType,
    stream: def.responseStream,
    importPaths: [dirname(file)],
    file: basename(file),
  };
}

const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const jsonName = (f) => (f.options && f.options.json_name) || f.name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

function integer(v, unsigned, bits) {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) return false;
  if (unsigned && n < 0) return false;
  if (bits === 32) return unsigned ? n <= 0xffffffff : n >= -0x80000000 && n <= 0x7fffffff;
  return true;
}

// A problem with value v for field type `type` (a scalar name, or the resolved Type/Enum), or null.
function scalarProblem(v, f) {
  const t = f.type;
  const what = `${JSON.stringify(v)} is not a`;
  if (INT32.has(t)) return integer(v, false, 32) ? null : `${what} 32-bit integer`;
  if (UINT32.has(t)) return integer(v, true, 32) ? null : `${what}n unsigned 32-bit integer`;
  if (INT64.has(t))
    return integer(v, t.startsWith('u') || t === 'fixed64', 64)
      ? null
      : `${what} 64-bit integer (a number or a string of digits)`;
  if (t === 'double' || t === 'float')
    return typeof v === 'number' ||
      (typeof v === 'string' && (/^(NaN|-?Infinity)$/.test(v) || (v.trim() !== '' && !Number.isNaN(Number(v)))))
      ? null
      : `${what} number`;
  if (t === 'bool') return typeof v === 'boolean' ? null : `${what} boolean (true or false)`;
  if (t === 'string') return typeof v === 'string' ? null : `${what} string`;
  if (t === 'bytes')
    return typeof v === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/.test(v) ? null : `${what} base64 string (bytes)`;
  return null;
}

function checkValue(v, f, path, problems) {
  const r = f.resolvedType;
  if (r instanceof protobuf.Enum) {
    const ok = typeof v === 'string' ? v in r.values : Number.isInteger(v);
    if (!ok)
      problems.push(
        `${path}: ${JSON.stringify(v)} is not one of ${r.name}'s values (${Object.keys(r.values).join(', ')})`,
      );
  } else if (r instanceof protobuf.Type) {
    // The well-known types have JSON forms of their own (a Timestamp is a string): the server checks those.
    if (r.fullName.startsWith('.google.protobuf.')) return;
    if (!isObject(v)) problems.push(`${path}: ${JSON.stringify(v)} is not an object (${r.name})`);
    else checkMessage(v, r, path, problems);
  } else {
    const p = scalarProblem(v, f);
    if (p) problems.push(`${path}: ${p} (${f.type})`);
  }
}

function checkMessage(obj, type, path, problems) {
  const fields = type.fieldsArray;
  const oneofs = {};
  for (const [key, v] of Object.entries(obj)) {
    const f = fields.find((x) => x.name === key || jsonName(x) === key);
    const at = path ? `${path}.${key}` : key;
    if (!f) {
      problems.push(`${at}: ${type.name} has no field "${key}" (fields: ${fields.map(jsonName).join(', ') || 'none'})`);
      continue;
    }
    if (v === null) continue; // null: the field's default, as protobuf's JSON mapping reads it
    if (f.partOf) {
      if (oneofs[f.partOf.name])
        problems.push(`${at}: oneof ${f.partOf.name} already has ${oneofs[f.partOf.name]}: give one of its fields`);
      oneofs[f.partOf.name] = key;
    }
    if (f.map) {
      if (!isObject(v)) problems.push(`${at}: ${JSON.stringify(v)} is not an object (a map)`);
      else for (const [k, item] of Object.entries(v)) checkValue(item, f, `${at}["${k}"]`, problems);
    } else if (f.repeated) {
      if (!Array.isArray(v)) problems.push(`${at}: ${JSON.stringify(v)} is not a list (repeated ${f.type})`);
      else v.forEach((item, i) => checkValue(item, f, `${at}[${i}]`, problems));
    } else checkValue(v, f, at, problems);
  }
}

// The request checked against the method's message; throws one line naming the field.
export function checkRequest(request, m, where) {
  const problems = [];
  checkMessage(request, m.requestType, '', problems);
  if (problems.length)
    throw new UsageError(
      `${where}: does not fit ${m.requestType.fullName.slice(1)} (--call ${m.method}): ${problems[0]}`,
    );
}

// The request as @grpc/proto-loader's serializer takes it (lowerCamelCase names), and its encoded size.
export function encodeRequest(request, m) {
  const rename = (obj, type) => {
    const out = {};
    for (const [key, v] of Object.entries(obj)) {
      const f = type.fieldsArray.find((x) => x.name === key || jsonName(x) === key);
      const sub =
        f.resolvedType instanceof protobuf.Type && !f.resolvedType.fullName.startsWith('.google.protobuf.')
          ? f.resolvedType
          : null;
      let value = v;
      if (sub && v !== null)
        value =
          f.repeated && Array.isArray(v)
            ? v.map((x) => rename(x, sub))
            : f.map
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rename(x, sub)]))
              : rename(v, sub);
      out[f.name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase())] = value;
    }
    return out;
  };
  const message = rename(request, m.requestType);
  return { message, bytes: m.def.requestSerialize(message).length };
}

// The wire kind of each scalar type (scenarios/lib/protowire.js encodeValue).
const WIRE_KIND = {
  string: 'string',
  bytes: 'bytes',
  bool: 'bool',
  int32: 'int32',
  int64: 'int64',
  uint32: 'uint',
  uint64: 'uint',
  sint32: 'sint',
  sint64: 'sint',
  double: 'double',
  float: 'float',
  fixed32: 'fixed32',
  sfixed32: 'fixed32',
  fixed64: 'fixed64',
  sfixed64: 'fixed64',
};

// A message type as the table k6's protobuf writer takes (protowire.js): every field
// under its JSON name and, when another, its .proto name. -> { table } or { problem }:
// a map or a well-known type has a JSON form of its own that the table cannot write.
export function fieldTable(type, seen = new Set()) {
  if (seen.has(type.fullName)) return { problem: `${type.name} contains itself` };
  const table = {};
  for (const f of type.fieldsArray) {
    if (f.map) return { problem: `field ${f.name} of ${type.name} is a map` };
    const r = f.resolvedType;
    let kind;
    if (r instanceof protobuf.Enum) kind = { enum: { ...r.values } };
    else if (r instanceof protobuf.Type) {
      if (r.fullName.startsWith('.google.protobuf.'))
        return { problem: `field ${f.name} of ${type.name} is ${r.fullName.slice(1)}, a well-known type` };
      const sub = fieldTable(r, new Set([...seen, type.fullName]));
      if (sub.problem) return sub;
      kind = sub.table;
    } else kind = WIRE_KIND[f.type];
    const entry = f.repeated ? [f.id, kind, 'repeated'] : [f.id, kind];
    table[jsonName(f)] = entry;
    table[f.name] = entry;
  }
  return { table };
}
