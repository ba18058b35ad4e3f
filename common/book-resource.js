// One book as a resource of its own (study 001): the GraphQL document the atomic
// requests send, and the URL the server links to it by (Book.href, the Vulcain
// flow's `Link: <...>; rel=preload`), so both fetch exactly the same thing.
// Plain ES module with no k6 or Node imports.
import { GRAPHQL_PATH } from './defaults.js';

export const BOOK_FIELDS = 'id name pageCount author { id firstName lastName }';
export const BOOK_RESOURCE_QUERY = `query AtomicBook($id: ID!, $blurb: Int!) { book(id: $id) { ${BOOK_FIELDS} blurb(size: $blurb) } }`;

// The path and query of a GET for book `id` with a blurb of `blurb` bytes.
export function bookResourceUrl(id, blurb) {
  return `${GRAPHQL_PATH}?query=${encodeURIComponent(BOOK_RESOURCE_QUERY)}&variables=${encodeURIComponent(JSON.stringify({ id, blurb }))}`;
}
