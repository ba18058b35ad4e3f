// One cache of prepared GraphQL documents for every transport (HTTP/1.1, HTTP/2,
// WebSocket), keyed by the document text: a document is checked for shape,
// parsed and validated once, and an operation's cost verdict (cost.js) is kept
// per document, operation and the values of the variables the cost depends on.
//
// - WebSocket (ws.js): shapeError(query), then prepare(query).
// - HTTP (http.js, Apollo): shapeError(query) before Apollo; apolloPlugin hands
//   Apollo the cached document before it would parse (Apollo skips parsing and
//   validation of a request that already has its document, as it does for its
//   own documentStore, which is switched off in server.js so there is one cache),
//   stores what Apollo validated, and checks the cost.
// Only valid documents are kept, as Apollo's store does. The bound is Apollo's
// default documentStore's: 30 MiB, counting each document as its JSON.
import { parse, specifiedRules, validate } from 'graphql';
import { LRUCache } from 'lru-cache';
import { costLimitError, costVariables, costVerdict } from './cost.js';
import { documentSizeError, nestingError } from './rules.js';

export const DOCUMENT_CACHE_BYTES = 30 * 1024 * 1024;
// Variable values known to fit the cost limits, kept per document (beyond this
// the set starts again): a handful per operation in practice.
const MAX_FITTING_PER_DOCUMENT = 256;

const documentBytes = (entry) => Buffer.byteLength(JSON.stringify(entry.document));

// The values of `names` in raw `variables`, as one string ('' for none).
// An absent variable differs from one given as null (a default applies to it).
function valuesKey(names, variables) {
  let key = '';
  for (const name of names)
    key += `${variables && Object.hasOwn(variables, name) ? JSON.stringify(variables[name]) : '~'},`;
  return key;
}

export function createDocumentCache({ schema, validationRules, maxBytes = DOCUMENT_CACHE_BYTES }) {
  const rules = [...specifiedRules, ...validationRules];
  // text -> { document, costVariables, fitting: Set of `operationName|values` }
  const cache = new LRUCache({ maxSize: maxBytes, sizeCalculation: documentBytes });

  function remember(query, document) {
    if (!cache.has(query)) cache.set(query, { document, costVariables: costVariables(document), fitting: new Set() });
  }

  // A sentence when the text is too large or nests too deep to parse, else null
  // (rules.js). A cached text passed these checks when it was first seen.
  function shapeError(query) {
    if (cache.has(query)) return null;
    return documentSizeError(query) ?? nestingError(query);
  }

  // The validated document of a text whose shape passed: { document } or
  // { syntaxError } or { validationErrors } (graphql's errors, as they come).
  function prepare(query) {
    const hit = cache.get(query);
    if (hit) return { document: hit.document };
    let document;
    try {
      document = parse(query);
    } catch (syntaxError) {
      return { syntaxError };
    }
    const validationErrors = validate(schema, document, rules);
    if (validationErrors.length > 0) return { validationErrors };
    remember(query, document);
    return { document };
  }

  // cost.js's sentence for `operation` of `document` (the text's) with raw
  // `variables` when it is over the limits, else null; known verdicts are kept.
  function costError(query, document, operation, variables) {
    const entry = cache.get(query);
    if (entry?.document !== document) return costVerdict(schema, document, operation, variables).error;
    const key = `${operation.name?.value ?? ''}|${valuesKey(entry.costVariables, variables)}`;
    if (entry.fitting.has(key)) return null;
    const verdict = costVerdict(schema, document, operation, variables);
    if (verdict.cacheable) {
      if (entry.fitting.size >= MAX_FITTING_PER_DOCUMENT) entry.fitting.clear();
      entry.fitting.add(key);
    }
    return verdict.error;
  }

  // Apollo plugin: the cached document, parse and validation once, the cost limit.
  const apolloPlugin = {
    async requestDidStart() {
      return {
        async didResolveSource(requestContext) {
          const hit = cache.get(requestContext.source);
          if (hit) requestContext.document = hit.document;
        },
        async validationDidStart(requestContext) {
          return (errors) => {
            if (!errors) remember(requestContext.source, requestContext.document);
          };
        },
        // Refuses an operation over the limits once Apollo knows which operation
        // of the document runs, before it executes.
        async didResolveOperation({ source, document, operation, request }) {
          if (!operation) return; // Apollo answers "unknown operation" itself
          const problem = costError(source, document, operation, request.variables);
          if (problem) throw costLimitError(problem, { http: true });
        },
      };
    },
  };

  return { shapeError, prepare, costError, apolloPlugin };
}
