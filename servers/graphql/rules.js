// Request-shape bounds that hold on every transport: document size, query depth,
// and the numeric bounds the resolvers check. Numbers shared with clients live in
// LIMITS (scenarios/lib/defaults.js); the ones below only this server needs.
import { GraphQLError, Kind } from 'graphql';
import { LIMITS } from '../../scenarios/lib/defaults.js';

export const MAX_QUERY_BYTES = 100 * 1024; // a GraphQL document; data belongs in variables
export const MAX_AUTHOR_BOOKS = 50; // Author.books(first), as the schema says

// A sentence when the document is too large, else null.
export function documentSizeError(query) {
  if (typeof query !== 'string' || query.length <= MAX_QUERY_BYTES / 3) return null; // 3 bytes per UTF-16 unit at most
  const bytes = Buffer.byteLength(query);
  if (bytes <= MAX_QUERY_BYTES) return null;
  return `GraphQL document is ${bytes} bytes; the limit is ${MAX_QUERY_BYTES} bytes: send a shorter query and pass data as variables`;
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
        }
        else if (selection.kind === Kind.INLINE_FRAGMENT) depth = selectionDepth(selection.selectionSet);
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
            new GraphQLError(`${name} is nested ${depth} fields deep; the limit is ${maxDepth} (LIMITS.MAX_QUERY_DEPTH): select fewer nested levels`, { nodes: [node] }),
          );
        }
        return false; // depth is computed above; no need to walk the operation again
      },
    };
  };
}
