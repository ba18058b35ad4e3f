// The team's GraphQL operations (--operations ops.graphql) and their variables
// (--variables vars.json, keyed by operation name), parsed and checked with graphql-js
// before anything runs: a syntax error, an anonymous operation among several, a
// required variable not given or a value of the wrong type is one line naming the file,
// the operation and the variable. Against the endpoint's schema when it answers
// introspection (unknown fields too), else against the operations' own variable types
// (built-in scalars; input objects, enums and custom scalars are left to the server).
import { fill, SAMPLE, setsOf } from '../../common/variables.js';
import { readFileSync } from 'node:fs';
import {
  GraphQLSchema,
  Kind,
  getVariableValues,
  parse,
  print,
  specifiedScalarTypes,
  typeFromAST,
  validate,
  visit,
} from 'graphql';
import { UsageError } from '../cli-support.js';
import { readJsonFile } from './api-config.js';

const at = (file, node) => (node && node.loc ? `${file}:${node.loc.startToken.line}` : file);

// The fragments an operation uses, transitively.
function fragmentsOf(node, byName, seen = new Set()) {
  visit(node, {
    FragmentSpread(spread) {
      const name = spread.name.value;
      if (seen.has(name) || !byName[name]) return;
      seen.add(name);
      fragmentsOf(byName[name], byName, seen);
    },
  });
  return seen;
}

// -> [{ name, kind (query, mutation or subscription: a subscription runs on ws and wss
//      only), query (a document of this operation and its fragments), node, where }]
export function readOperations(file, show = file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--operations ${show}: cannot read it (${err.code || err.message})`);
  }
  let doc;
  try {
    doc = parse(text);
  } catch (err) {
    const loc = err.locations && err.locations[0];
    throw new UsageError(`${show}${loc ? `:${loc.line}:${loc.column}` : ''}: ${err.message}`);
  }
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const fragments = Object.fromEntries(
    doc.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  if (!ops.length)
    throw new UsageError(
      `${show}: no operation in it: write named operations, e.g. query GetBook($id: ID!) { book(id: $id) { title } }`,
    );
  const anonymous = ops.find((o) => !o.name);
  if (anonymous && ops.length > 1)
    throw new UsageError(
      `${at(show, anonymous)}: an anonymous operation among ${ops.length}: give each one a name (query GetBook { … }), which is also its key in --variables`,
    );
  const seen = new Set();
  return ops.map((node) => {
    const name = node.name ? node.name.value : 'operation';
    if (seen.has(name))
      throw new UsageError(`${at(show, node)}: a second operation named ${name}: give each its own name`);
    seen.add(name);
    const used = [...fragmentsOf(node, fragments)].map((f) => fragments[f]);
    return {
      name,
      kind: node.operation,
      node,
      where: at(show, node),
      query: print({ kind: Kind.DOCUMENT, definitions: [node, ...used] }),
    };
  });
}

// --variables: a file or the config file's object, keyed by operation name.
export function readVariables(source, ops, show) {
  if (!source) return {};
  const doc = typeof source === 'string' ? readJsonFile(source, '--variables') : source;
  const label = typeof source === 'string' ? show(source) : 'the config file\'s "variables"';
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError(`${label}: must be a JSON object keyed by operation name, e.g. {"GetBook": {"id": "1"}}`);
  const names = ops.map((o) => o.name);
  for (const [k, v] of Object.entries(doc)) {
    if (!names.includes(k))
      throw new UsageError(`${label}: "${k}" is not an operation in the operations file (it has: ${names.join(', ')})`);
    // One set, or an array of sets cycled per call (common/variables.js).
    const sets = Array.isArray(v) ? v : [v];
    if (!sets.length || sets.some((x) => x === null || typeof x !== 'object' || Array.isArray(x)))
      throw new UsageError(
        `${label}: "${k}" must be an object of variables, e.g. {"id": "1"}, or a non-empty array of them`,
      );
  }
  return doc;
}

const BUILT_IN = new GraphQLSchema({ types: specifiedScalarTypes });
const namedType = (t) => (t.kind === Kind.NAMED_TYPE ? t.name.value : namedType(t.type));

// Every operation's variables checked, each set of an array and with its templates
// filled as VU 1's first call fills them (common/variables.js); returns { opName:
// variables as given }. schema: the endpoint's (introspection) or null. label: how to
// name the variables' source.
export function checkVariables(ops, variables, schema, label) {
  const out = {};
  for (const op of ops) {
    const given = variables[op.name] || {};
    const sets = setsOf(given);
    sets.forEach((set, i) =>
      checkSet(
        op,
        fill(set, SAMPLE),
        schema,
        sets.length > 1 ? `${label || 'variables'} (set ${i + 1} of ${sets.length})` : label,
      ),
    );
    out[op.name] = given;
  }
  return out;
}

// One set of an operation's variables against its definitions (and the schema's types).
function checkSet(op, values, schema, label) {
  const give = label ? `give it in ${label} under "${op.name}"` : `give --variables FILE with {"${op.name}": {…}}`;
  const defs = op.node.variableDefinitions || [];
  for (const d of defs) {
    const v = d.variable.name.value;
    if (values[v] === undefined && !d.defaultValue && d.type.kind === Kind.NON_NULL_TYPE) {
      throw new UsageError(`${op.where}: operation ${op.name} needs variable $${v} (${print(d.type)}): ${give}`);
    }
  }
  // The types checked where they are known: the schema's, else the built-in scalars.
  const s = schema || BUILT_IN;
  const known = defs.filter((d) => {
    const t = typeFromAST(s, d.type);
    return t && (schema || specifiedScalarTypes.some((x) => x.name === namedType(d.type)));
  });
  const unknownInSchema = schema ? defs.find((d) => !typeFromAST(schema, d.type)) : null;
  if (unknownInSchema)
    throw new UsageError(
      `${op.where}: operation ${op.name}: the endpoint's schema has no type ${namedType(unknownInSchema.type)} (variable $${unknownInSchema.variable.name.value})`,
    );
  const r = getVariableValues(s, known, values);
  if (r.errors && r.errors.length)
    throw new UsageError(`${label || 'variables'}: operation ${op.name}: ${r.errors[0].message}`);
}

// The operations against the endpoint's schema (unknown fields, wrong arguments).
export function validateOperations(ops, schema) {
  for (const op of ops) {
    const errors = validate(schema, parse(op.query));
    if (errors.length)
      throw new UsageError(
        `${op.where}: operation ${op.name}: ${errors[0].message} (the endpoint's schema, from introspection)`,
      );
  }
}
