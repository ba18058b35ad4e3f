// `k6pack init` without --operations: a first operation to edit, from the endpoint's
// schema (introspection). The first Query field whose required arguments are all scalars
// or enums, each given a placeholder value, with the scalar fields of what it returns as
// the selection (or __typename when it has none). -> { name, text, variables, field }
import { getNamedType, isEnumType, isLeafType, isNonNullType, isObjectType, isScalarType } from 'graphql';

// A placeholder for a required argument of each built-in scalar (a custom one gets a string).
const PLACEHOLDER = { ID: '1', String: 'k6pack', Int: 1, Float: 1, Boolean: true };
// Fields in the selection at most: enough to look like a client's query.
const MAX_FIELDS = 8;

const required = (field) => field.args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined);
const leafArgs = (field) => required(field).every((a) => isLeafType(getNamedType(a.type)));

function placeholder(type) {
  const named = getNamedType(type);
  if (isEnumType(named)) return named.getValues()[0]?.value ?? null;
  if (isScalarType(named)) return PLACEHOLDER[named.name] ?? '1';
  return null;
}

function selectionOf(type) {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  const leaves = Object.values(named.getFields())
    .filter((f) => isLeafType(getNamedType(f.type)) && !required(f).length)
    .slice(0, MAX_FIELDS)
    .map((f) => f.name);
  return ` { ${(leaves.length ? leaves : ['__typename']).join(' ')} }`;
}

const pascal = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// schema: a GraphQLSchema (null: introspection is off). -> the operation, or null when the
// schema has no Query field init can call (the user then gives --operations).
export function firstOperation(schema) {
  const query = schema?.getQueryType();
  if (!query) return null;
  const field = Object.values(query.getFields()).find((f) => !f.name.startsWith('__') && leafArgs(f));
  if (!field) return null;
  const args = required(field);
  const name = `First${pascal(field.name)}`;
  const decl = args.length ? `(${args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ')})` : '';
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
  const text = `query ${name}${decl} {\n  ${field.name}${call}${selectionOf(field.type)}\n}\n`;
  const variables = Object.fromEntries(args.map((a) => [a.name, placeholder(a.type)]));
  return { name, text, variables, field: field.name };
}
