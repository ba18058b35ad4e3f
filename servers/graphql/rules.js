// Request-shape bounds that hold on every transport: document size, query depth,
// and the numeric bounds the resolvers check. Numbers shared with clients live in
// LIMITS (common/defaults.js); the ones below only this server needs.
import { GraphQLError, Kind } from 'graphql';
import { LIMITS } from '../../common/defaults.js';

export const MAX_QUERY_BYTES = 100 * 1024; // a GraphQL document; data belongs in variables
export const MAX_AUTHOR_BOOKS = 50; // Author.books(first), as the schema says

// A sentence when the document is too large, else null.
export function documentSizeError(query) {
  if (typeof query !== 'string' || query.length <= MAX_QUERY_BYTES / 3) return null; // 3 bytes per UTF-16 unit at most
  const bytes = Buffer.byteLength(query);
  if (bytes <= MAX_QUERY_BYTES) return null;
  return `GraphQL document is ${bytes} bytes; the limit is ${MAX_QUERY_BYTES} bytes: send a shorter query and pass data as variables`;
}

// Brackets ({ [ () nested deeper than this are refused before anything parses
// them: graphql-js's parser recurses per level (a 100 KB document of `[` overflows
// the stack, and the error would only say "Maximum call stack size exceeded"),
// and so does JSON.stringify. MAX_QUERY_DEPTH fields need far fewer levels.
export const MAX_NESTING = 64;

// `pos` just past an opening quote -> the index after its closing quote. One
// scanner for GraphQL and JSON, with GraphQL's rules (a superset): "..." with
// backslash escapes, """...""" block strings that only \""" escapes.
function stringEnd(text, pos) {
  if (text.startsWith('""', pos)) {
    const close = /[^\\]"""/g; // from the third opening quote, so """""" closes at once
    close.lastIndex = pos + 1;
    const m = close.exec(text);
    return m ? m.index + m[0].length : text.length;
  }
  for (let i = pos; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

// A sentence when `text` nests brackets deeper than MAX_NESTING, else null.
// Strings and # comments are skipped; `what` names the text in the sentence.
export function nestingError(text, what = 'GraphQL document') {
  if (typeof text !== 'string') return null;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[' || c === '(') {
      if (++depth > MAX_NESTING) return `${what} nests brackets more than ${MAX_NESTING} levels deep: flatten it`;
    } else if (c === '}' || c === ']' || c === ')') depth--;
    else if (c === '"') i = stringEnd(text, i + 1) - 1;
    else if (c === '#') {
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
    }
  }
  return null;
}

// Validation rule: refuse operations nested deeper than maxDepth fields.
// A top-level field has depth 1; fragments and inline fragments add no level.
// Fragment depths are memoized (linear in the document, whatever the spreads)
// and cycles are cut here, since NoFragmentCyclesRule runs in the same pass.
// Introspection (__schema, __type, __typename) is not counted: the standard
// introspection query is 15 levels deep, and what it can reach is bounded by this
// small schema and the document size limit.
export function depthLimitRule(maxDepth = LIMITS.MAX_QUERY_DEPTH) {
  return function QueryDepthLimit(context) {
    const fragments = new Map();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const memo = new Map();
    const visiting = new Set();

    function fragmentDepth(name) {
      if (memo.has(name)) return memo.get(name);
      const fragment = fragments.get(name);
      if (!fragment || visiting.has(name)) return 0;
      visiting.add(name);
      const depth = selectionDepth(fragment.selectionSet);
      visiting.delete(name);
      memo.set(name, depth);
      return depth;
    }

    function selectionDepth(selectionSet) {
      let max = 0;
      for (const selection of selectionSet.selections) {
        let depth = 0;
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith('__')) continue; // introspection: see above
          depth = 1 + (selection.selectionSet ? selectionDepth(selection.selectionSet) : 0);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) depth = selectionDepth(selection.selectionSet);
        else if (selection.kind === Kind.FRAGMENT_SPREAD) depth = fragmentDepth(selection.name.value);
        if (depth > max) max = depth;
      }
      return max;
    }

    return {
      OperationDefinition(node) {
        const depth = selectionDepth(node.selectionSet);
        if (depth > maxDepth) {
          const name = node.name ? `Operation "${node.name.value}"` : 'The operation';
          context.reportError(
            new GraphQLError(
              `${name} is nested ${depth} fields deep; the limit is ${maxDepth} (LIMITS.MAX_QUERY_DEPTH): select fewer nested levels`,
              { nodes: [node] },
            ),
          );
        }
        return false; // depth is computed above; no need to walk the operation again
      },
    };
  };
}

// graphql-js (16.11+) stops validating a document whose fields would take too many
// comparisons to check for conflicts (e.g. one field repeated thousands of times)
// and says only "Validation aborted."; this says why.
export const VALIDATION_ABORTED = 'Validation aborted.';
export const VALIDATION_ABORTED_EXPLAINED =
  "Validation aborted: the document repeats fields so often that checking them for conflicts exceeds graphql-js's budget; remove the repeated fields and aliases";

export function explainValidationError(message) {
  return message === VALIDATION_ABORTED ? VALIDATION_ABORTED_EXPLAINED : message;
}
