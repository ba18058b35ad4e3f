// What an operation would make the server produce, worked out from the document
// and its variables before anything runs. Each argument has its own bound
// (resolvers.js), but a document can multiply them: aliases
// (`a1: allBooks(nrOfBooks: 500000) a2: allBooks(...)`), nested lists
// (page(size) > books > author > books(first) > ...), or a fragment of many
// aliases spread over many books. Three totals per operation:
//
//   items   list elements (books, events)                 at most LIMITS.MAX_BOOKS
//   values  leaf values in the result                     at most MAX_RESULT_VALUES
//   bytes   filler text (payload, blurb, event data)      at most MAX_FILLER_BYTES
//
// The largest legitimate requests fit: allBooks(MAX_BOOKS) with every book and
// author field, page(MAX_PAGE_SIZE) with blurbs of 64 KiB, study 001's page of 50
// books with blurbs of MAX_BLURB_BYTES (100 KiB), a payload of MAX_PAYLOAD_BYTES. The totals are upper bounds (a fragment spread twice counts
// twice; fields that GraphQL would merge are not merged), computed in one pass
// over the document: fragment totals are memoized, so no spread pattern makes the
// computation itself expensive. A subscription's totals are per event.
//
// What a verdict depends on (so documents.js can keep it): the document, the
// operation, and the values of costVariables(document), the variables used in the
// arguments of the fields below. Other variables only ever lower the totals: a
// field whose arguments do not resolve counts nothing, and variables that do not
// coerce make the verdict null. A verdict reached with neither (`cacheable`)
// therefore holds for every request with the same values of costVariables.
import { GraphQLError, Kind, getArgumentValues, getNamedType, getVariableValues, visit } from 'graphql';
import { LIMITS } from '../../common/defaults.js';
import { MAX_AUTHOR_BOOKS } from './rules.js';

// Ten values for each book of the largest list: a book and its author have seven
// leaf fields, which leaves room for __typename and the like.
export const MAX_RESULT_VALUES = 10 * LIMITS.MAX_BOOKS;
// Filler per operation: what page(MAX_PAGE_SIZE) with 64 KiB blurbs makes, 32.8 MB
// (MAX_BLURB_BYTES was 64 KiB until study 001's 100 KiB resources raised it; the
// total stayed, so a page of the largest blurbs holds up to 320 books).
export const MAX_FILLER_BYTES = Math.max(LIMITS.MAX_PAYLOAD_BYTES, LIMITS.MAX_PAGE_SIZE * 64 * 1024);
const BOOK_JSON_VALUES = 7; // allBooksAsJSON: id, name, pageCount and the author's id, firstName, lastName per book

// n when the resolver accepts it, else 0: an out-of-range argument is refused
// by the resolver, with its own message, and produces nothing.
const within = (n, max) => (Number.isInteger(n) && n >= 0 && n <= max ? n : 0);

// Per field: items (list elements it produces), each (how many times its
// selection is produced; default: items), bytes (filler text), leafValues.
const FIELDS = {
  'Query.allBooks': { items: (a) => within(a.nrOfBooks, LIMITS.MAX_BOOKS) },
  'Query.allBooksAsJSON': {
    items: (a) => within(a.nrOfBooks, LIMITS.MAX_BOOKS),
    leafValues: (a) => within(a.nrOfBooks, LIMITS.MAX_BOOKS) * BOOK_JSON_VALUES,
  },
  'Query.page': { items: (a) => within(a.size, LIMITS.MAX_PAGE_SIZE) }, // its Page.books
  'Query.payload': { bytes: (a) => within(a.size, LIMITS.MAX_PAYLOAD_BYTES) },
  'Author.books': { items: (a) => within(a.first, MAX_AUTHOR_BOOKS) },
  'Book.blurb': { bytes: (a) => within(a.size, LIMITS.MAX_BLURB_BYTES) },
  'Subscription.events': {
    items: (a) => within(a.count, LIMITS.MAX_EVENTS),
    each: () => 1, // one event per result
    bytes: (a) => within(a.size, LIMITS.MAX_PAYLOAD_BYTES),
  },
  // Fan-out (hub.graphql): a poll's kept events, and one event per subscription result.
  'TopicState.events': {
    items: (a) => within(a.limit, LIMITS.MAX_POLL_EVENTS),
    bytes: (a) => within(a.limit, LIMITS.MAX_POLL_EVENTS) * LIMITS.MAX_EVENT_PAYLOAD_BYTES,
  },
  'Subscription.topicEvents': { items: () => 1, each: () => 1, bytes: () => LIMITS.MAX_EVENT_PAYLOAD_BYTES },
};

const ZERO = { items: 0, values: 0, bytes: 0 };
const PRICED_FIELD_NAMES = new Set(Object.keys(FIELDS).map((key) => key.split('.')[1]));

// Names of the variables used in the arguments of fields named like a priced
// field (FIELDS) anywhere in the document, sorted: a superset of those a cost
// verdict depends on.
export function costVariables(document) {
  const names = new Set();
  visit(document, {
    Field(node) {
      if (!PRICED_FIELD_NAMES.has(node.name.value)) return;
      for (const arg of node.arguments ?? []) visit(arg.value, { Variable: (v) => void names.add(v.name.value) });
    },
  });
  return [...names].sort();
}

// { items, values, bytes, argumentErrors } of `operation` with raw `variables`, or
// null when the variables do not coerce (execution reports that, and runs nothing).
export function operationCost(schema, document, operation, variables) {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 });
  if (coerced.errors) return null;
  const vars = coerced.coerced;
  const fragments = new Map();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const memo = new Map();
  let argumentErrors = 0;

  function fieldCost(parentType, node) {
    const name = node.name.value;
    if (name.startsWith('__')) return { ...ZERO, values: 1 }; // introspection: bounded by the schema
    const def = parentType.getFields?.()[name];
    if (!def) return ZERO;
    let args;
    try {
      args = getArgumentValues(def, node, vars);
    } catch {
      argumentErrors += 1;
      return ZERO; // a bad argument: the field errors and produces nothing
    }
    const rule = FIELDS[`${parentType.name}.${name}`] ?? {};
    const items = rule.items ? rule.items(args) : 0;
    const each = rule.each ? rule.each(args) : rule.items ? items : 1;
    const bytes = rule.bytes ? rule.bytes(args) : 0;
    if (!node.selectionSet) return { items, values: rule.leafValues ? rule.leafValues(args) : each, bytes };
    const child = selectionCost(node.selectionSet, getNamedType(def.type));
    return { items: items + each * child.items, values: each * child.values, bytes: bytes + each * child.bytes };
  }

  function fragmentCost(name) {
    if (!memo.has(name)) {
      memo.set(name, ZERO); // cycles are a validation error; cut them here too
      const fragment = fragments.get(name);
      const type = fragment && schema.getType(fragment.typeCondition.name.value);
      memo.set(name, type ? selectionCost(fragment.selectionSet, type) : ZERO);
    }
    return memo.get(name);
  }

  function selectionCost(selectionSet, type) {
    const total = { ...ZERO };
    for (const selection of selectionSet.selections) {
      let cost = ZERO;
      if (selection.kind === Kind.FIELD) cost = fieldCost(type, selection);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) cost = fragmentCost(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition && schema.getType(selection.typeCondition.name.value);
        cost = selectionCost(selection.selectionSet, condition ?? type);
      }
      total.items += cost.items;
      total.values += cost.values;
      total.bytes += cost.bytes;
    }
    return total;
  }

  const root = schema.getRootType(operation.operation);
  const total = root ? selectionCost(operation.selectionSet, root) : ZERO;
  return { ...total, argumentErrors };
}

// A sentence naming the first total over its limit, else null.
export function costError(schema, document, operation, variables) {
  return costVerdict(schema, document, operation, variables).error;
}

// { error: sentence or null, cacheable }: cacheable when the operation fits and
// the verdict holds for every request with the same values of costVariables
// (the variables coerced and every argument resolved; see the top of this file).
export function costVerdict(schema, document, operation, variables) {
  const cost = operationCost(schema, document, operation, variables);
  if (!cost) return { error: null, cacheable: false };
  const error = overLimitSentence(cost, operation);
  return { error, cacheable: error === null && cost.argumentErrors === 0 };
}

function overLimitSentence(cost, operation) {
  const what = operation.name ? `Operation "${operation.name.value}"` : 'The operation';
  if (cost.items > LIMITS.MAX_BOOKS) {
    return `${what} asks for up to ${cost.items} list items (books, events); the limit is ${LIMITS.MAX_BOOKS} per operation (LIMITS.MAX_BOOKS): use fewer aliases or smaller counts, or split it into several requests`;
  }
  if (cost.values > MAX_RESULT_VALUES) {
    return `${what} would return up to ${cost.values} values; the limit is ${MAX_RESULT_VALUES} per operation: select fewer fields, aliases or fragment spreads`;
  }
  if (cost.bytes > MAX_FILLER_BYTES) {
    return `${what} asks for up to ${cost.bytes} bytes of payload, blurb and event data; the limit is ${MAX_FILLER_BYTES} per operation: ask for less`;
  }
  return null;
}

export const COST_ERROR_CODE = 'COST_LIMIT_EXCEEDED';

// `http`: Apollo reads the status from extensions.http (and drops it from the answer).
export function costLimitError(message, { http = false } = {}) {
  return new GraphQLError(message, {
    extensions: { code: COST_ERROR_CODE, ...(http ? { http: { status: 400 } } : {}) },
  });
}
