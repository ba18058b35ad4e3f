// Vulcain's Preload header (draft-dunglas-vulcain-01, "Preload Header" and
// "Selectors"), answered with preload links: the client names the links of the
// answer it will follow, and the server lists them in `Link: <url>; rel=preload;
// as=fetch` headers, so the client can fetch them all at once as soon as the
// headers are in, instead of after reading the document. (Vulcain's other answer,
// HTTP/2 Server Push, is gone from browsers and k6.)
//
//   Preload: "/data/page/books/*/href"
//
// The value is a list of quoted selectors (a Structured Fields list of strings;
// parameters such as ;rel=... are accepted and ignored): extended JSON pointers
// into the JSON answer, `*` standing for every element of an array (or value of an
// object), `~2` for a literal `*`. A selected value is a link when it is a string
// starting with /graphql? (the schema's href fields); an empty selector selects
// every link of the answer. Each link is listed once, at most MAX_PRELOAD_LINKS.
import { GRAPHQL_PATH, LIMITS } from '../../common/defaults.js';

export const PRELOAD_HEADER = 'preload';
export const MAX_PRELOAD_LINKS = LIMITS.MAX_PAGE_SIZE;
export const MAX_SELECTOR_SEGMENTS = 16;
const EXAMPLE = 'Preload: "/data/page/books/*/href"';
const LINK_PREFIX = `${GRAPHQL_PATH}?`;

// `*` selects every element; ~2, ~1 and ~0 stand for a literal *, / and ~.
const EVERY = Symbol('every element');
const segmentOf = (text) => (text === '*' ? EVERY : text.replace(/~2/g, '*').replace(/~1/g, '/').replace(/~0/g, '~'));

// The header -> { selectors: [[segment, ...]] } or { error: sentence }; null when absent.
export function parsePreload(header) {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header.join(', ') : String(header);
  const item = /\s*"((?:[^"\\]|\\.)*)"\s*((?:;\s*[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\.)*"|[^,;\s]*))?\s*)*)(,|$)/gy;
  const selectors = [];
  let end = 0;
  for (let m = item.exec(text); m && end < text.length; m = item.exec(text)) {
    const pointer = m[1].replace(/\\(.)/g, '$1');
    if (pointer !== '' && !pointer.startsWith('/'))
      return {
        error: `Preload selector "${pointer}" must be empty or start with "/" (an extended JSON pointer), such as ${EXAMPLE}`,
      };
    const segments = pointer === '' ? [] : pointer.slice(1).split('/').map(segmentOf);
    if (segments.length > MAX_SELECTOR_SEGMENTS)
      return {
        error: `Preload selector "${pointer}" has ${segments.length} segments; the limit is ${MAX_SELECTOR_SEGMENTS}`,
      };
    selectors.push(segments);
    end = item.lastIndex;
    if (!m[3]) break;
  }
  if (end !== text.length || !selectors.length)
    return {
      error: `Preload must be a list of quoted selectors (draft-dunglas-vulcain-01), such as ${EXAMPLE} (got ${JSON.stringify(text.slice(0, 200))})`,
    };
  return { selectors };
}

const isLink = (v) => typeof v === 'string' && v.startsWith(LINK_PREFIX);

// Every link under `value` (an empty selector).
function allLinks(value, out) {
  if (out.size >= MAX_PRELOAD_LINKS) return;
  if (isLink(value)) out.add(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) allLinks(v, out);
}

function select(value, segments, i, out) {
  if (out.size >= MAX_PRELOAD_LINKS || value === null || value === undefined) return;
  if (i === segments.length) {
    if (isLink(value)) out.add(value);
    return;
  }
  if (typeof value !== 'object') return;
  const key = segments[i];
  if (key === EVERY) for (const v of Object.values(value)) select(v, segments, i + 1, out);
  else if (Object.hasOwn(value, key)) select(value[key], segments, i + 1, out);
}

// The links `selectors` pick in the JSON answer `body` (text), in document order.
export function preloadLinks(selectors, body) {
  let doc;
  try {
    doc = JSON.parse(body);
  } catch {
    return [];
  }
  const out = new Set();
  for (const segments of selectors) {
    if (segments.length) select(doc, segments, 0, out);
    else allLinks(doc, out);
  }
  return [...out];
}

// The Link header's values for `links`.
export const linkValues = (links) => links.map((url) => `<${url}>; rel=preload; as=fetch`);
