// Server-side response cache (study 001): serialized answers to queries, keyed by
// what determines them (query, variables, operationName, and Accept, which picks
// the content type). Bounded in entries and bytes; least recently used goes first.
// On for every request with RESPONSE_CACHE=on, or per request with the header
// `x-response-cache: on|off`.
import { LRUCache } from 'lru-cache';

export const RESPONSE_CACHE_MAX_ENTRIES = 1000;
export const RESPONSE_CACHE_MAX_BYTES = 64 * 1024 * 1024;

// `on` -> true, `off` -> false, unset -> fallback; anything else -> null (caller says what is wrong).
export function parseOnOff(value, fallback) {
  if (value === undefined || value === '') return fallback;
  const v = String(value).trim().toLowerCase();
  if (v === 'on') return true;
  if (v === 'off') return false;
  return null;
}

// entries: { status, headers: [[name, value]], body, etag? }
export function createResponseCache() {
  return new LRUCache({
    max: RESPONSE_CACHE_MAX_ENTRIES,
    maxSize: RESPONSE_CACHE_MAX_BYTES,
    sizeCalculation: (entry) => entry.body.length + 256, // UTF-16 units: close enough for a bound
  });
}

// The cache key for an operation (operationParams in http.js), or null when it
// names no query (Apollo answers those with an error).
export function responseCacheKey({ query, variables, operationName }, accept) {
  if (typeof query !== 'string') return null;
  return JSON.stringify([query, variables ?? null, operationName ?? null, accept ?? '']);
}
