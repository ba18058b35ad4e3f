// Generation time per resource (study 001), switched per HTTP request with one
// header, in one place for the GraphQL server (servers/graphql/generation.js reads
// it) and the k6 clients (scenarios/compound-vs-parallel.js sends it):
//
//   x-generate: delay=20, hits=15, resolve=serial
//
//   delay    ms to generate each resource (a book of a page, or book(id)): the
//            study's "generation time for each resource (algorithms, SQL queries,
//            serialization...)"; 0 to LIMITS.MAX_GENERATE_DELAY_MS, default 0
//   hits     how many of the request's resources, the first ones in document order,
//            come from the server's cache without the delay (the study's
//            "server-side cache hits"); 0 to LIMITS.MAX_PAGE_SIZE, default 0.
//            An atomic request has one resource: hits=1 makes it a hit.
//   resolve  how a compound document's resources are generated:
//            serial      one after another, as the study's compound handler
//                        (time.Sleep((nb - hits) * delay)); at most
//                        LIMITS.MAX_GENERATE_MS in all
//            parallel    all of a level's resources at once (default): each is
//                        its own promise, which graphql-js awaits together
//            dataloader  the missing resources batched through one DataLoader
//                        (the `dataloader` package), generated in one go: one delay
//
// The study's defaults (its static/index.html form): 50 resources of 102400 bytes,
// delay 20, hits 15 (github.com/dunglas/api-parallelism-benchmark).
// Plain ES module with no k6 or Node imports.
import { LIMITS } from './defaults.js';

export const GENERATE_HEADER = 'x-generate';
export const RESOLVE_STRATEGIES = ['serial', 'parallel', 'dataloader'];
export const NO_GENERATION = Object.freeze({ delay: 0, hits: 0, resolve: 'parallel' });

const EXAMPLE = `"${GENERATE_HEADER}: delay=20, hits=15, resolve=serial"`;
const BOUNDS = { delay: LIMITS.MAX_GENERATE_DELAY_MS, hits: LIMITS.MAX_PAGE_SIZE };

// { delay, hits, resolve } -> the header's value.
export function formatGenerate({ delay = 0, hits = 0, resolve = 'parallel' } = {}) {
  return `delay=${delay}, hits=${hits}, resolve=${resolve}`;
}

// The header's value -> { value: { delay, hits, resolve } } or { error: sentence }.
// Absent or empty: no generation time.
export function parseGenerate(text) {
  if (text === undefined || text === null || String(text).trim() === '') return { value: NO_GENERATION };
  const value = { ...NO_GENERATION };
  for (const part of String(text).split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*([^\s]*)\s*$/.exec(part);
    if (!m)
      return {
        error: `${GENERATE_HEADER} must be key=value pairs separated by commas, such as ${EXAMPLE} (got "${text}")`,
      };
    const [, key, raw] = m;
    if (key === 'resolve') {
      if (!RESOLVE_STRATEGIES.includes(raw))
        return { error: `${GENERATE_HEADER}: resolve must be one of ${RESOLVE_STRATEGIES.join(', ')} (got "${raw}")` };
      value.resolve = raw;
    } else if (Object.prototype.hasOwnProperty.call(BOUNDS, key)) {
      // Own keys only: 'constructor' is in every object, and is no key of the header.
      const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!(n <= BOUNDS[key]))
        return { error: `${GENERATE_HEADER}: ${key} must be an integer from 0 to ${BOUNDS[key]} (got "${raw}")` };
      value[key] = n;
    } else {
      return { error: `${GENERATE_HEADER}: unknown key "${key}": use delay, hits and resolve, such as ${EXAMPLE}` };
    }
  }
  return { value };
}
