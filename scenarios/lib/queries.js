// The GraphQL documents and gRPC requests the scenarios send, with the checks
// of their answers (right shape and count). A validator returns null when the
// answer is right, else a sentence saying what is wrong.
import { BOOK_FIELDS, BOOK_RESOURCE_QUERY, bookResourceUrl } from '../../common/book-resource.js';

// Study 000: the same query and mutation on every transport.
export const BOOK_QUERY = `query Book($id: ID!) { book(id: $id) { ${BOOK_FIELDS} } }`;
export const RATE_MUTATION =
  'mutation Rate($id: ID!, $stars: Int!) { rateBook(id: $id, stars: $stars) { bookId count average } }';

// Study 002.
export const ALL_BOOKS = `query AllBooks($n: Int!) { allBooks(nrOfBooks: $n) { ${BOOK_FIELDS} } }`;
export const ALL_BOOKS_JSON = 'query AllBooksJSON($n: Int!) { allBooksAsJSON(nrOfBooks: $n) }';

// Studies 003/004.
export const PAYLOAD_QUERY = 'query Payload($size: Int!) { payload(size: $size) { size data } }';

// Study 001: one compound document vs atomic documents.
export const PAGE_QUERY = `query Page($offset: Int!, $size: Int!, $blurb: Int!) { page(offset: $offset, size: $size) { offset size books { ${BOOK_FIELDS} blurb(size: $blurb) } } }`;
// The same document the server links a book by (common/book-resource.js).
export const ATOMIC_BOOK_QUERY = BOOK_RESOURCE_QUERY;
// The Vulcain flow's root: the page's books as links (Book.href), which the
// Preload header selects.
export const PAGE_LINKS_QUERY =
  'query PageLinks($offset: Int!, $size: Int!, $blurb: Int!) { page(offset: $offset, size: $size) { books { href(blurb: $blurb) } } }';
export const PAGE_LINKS_PRELOAD = '"/data/page/books/*/href"';

// Push.
export const EVENTS_SUBSCRIPTION =
  'subscription Events($count: Int!, $intervalMs: Int!, $size: Int) { events(count: $count, intervalMs: $intervalMs, size: $size) { id seq sentAt data } }';
export const SERVER_STATS = 'query Stats { serverStats { rssBytes heapUsedBytes uptimeSeconds } }';

// Fan-out (hub.graphql).
export const TOPIC_SUBSCRIPTION =
  'subscription Topic($topic: String!, $announce: Boolean) { topicEvents(topic: $topic, announce: $announce) { seq origin publishedAt payload } }';
export const PUBLISH_MUTATION =
  'mutation Publish($topic: String!, $payload: String) { publish(topic: $topic, payload: $payload) { seq publishedAt subscribers } }';
export const TOPIC_STATE = 'query TopicState($topic: String!) { topic(name: $topic) { lastSeq subscribers now } }';
export const TOPIC_POLL =
  'query Poll($topic: String!, $after: Int!) { topic(name: $topic) { lastSeq events(afterSeq: $after) { seq origin publishedAt payload } } }';

export const bookId = (i) => `book-${i}`;

// The i-th operation of a client (seed: e.g. the VU id): queries and mutations
// alternate on varying books, the same on every transport (study 000).
export const bookOfOperation = (seed, i) => bookId(1 + ((seed * 7919 + i) % 1000));
export function bookOperation(seed, i) {
  const id = bookOfOperation(seed, i);
  return i % 2 === 0
    ? { query: BOOK_QUERY, variables: { id }, validate: validateBook(id), tags: { op: 'query' } }
    : {
        query: RATE_MUTATION,
        variables: { id, stars: 1 + (i % 5) },
        validate: validateRating(id),
        tags: { op: 'mutation' },
      };
}

export function checkBook(book, id, what = 'book') {
  if (!book) return `${what} is missing`;
  if (id !== undefined && book.id !== id) return `${what} has id ${book.id}, expected ${id}`;
  if (typeof book.name !== 'string' || !book.author || typeof book.author.lastName !== 'string')
    return `${what} lacks name or author`;
  return null;
}

export const validateBook = (id) => (data) => checkBook(data && data.book, id);

export const validateRating = (id) => (data) => {
  const r = data && data.rateBook;
  if (!r || r.bookId !== id || !(r.count >= 1) || !(r.average >= 1 && r.average <= 5))
    return `rateBook answer is wrong: ${JSON.stringify(r)}`;
  return null;
};

// Counting "pageCount" in the raw body checks N without parsing megabytes in
// k6's JavaScript (typed: "pageCount":, JSON string: \"pageCount\":).
export function countOccurrences(text, needle) {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

export const validateAllBooksBody = (field, n) => (body) => {
  if (typeof body !== 'string' || !body.startsWith(`{"data":{"${field}":`))
    return `answer does not start with {"data":{"${field}": ${String(body).slice(0, 120)}`;
  const count = countOccurrences(body, 'pageCount');
  return count === n ? null : `expected ${n} books, got ${count}`;
};

export const validatePayload = (size) => (data) => {
  const p = data && data.payload;
  if (!p || p.size !== size || typeof p.data !== 'string' || p.data.length !== size)
    return `payload of ${size} bytes expected, got ${p ? p.data.length : 'none'}`;
  return null;
};

// gRPC messages (k6 shows fields in lowerCamelCase).
export const validateGrpcPayload = (size) => (msg) => {
  if (!msg || Number(msg.size) !== size || typeof msg.data !== 'string' || msg.data.length !== size)
    return `Payload of ${size} bytes expected`;
  return null;
};

export const validateGrpcBooks = (n) => (msg) => {
  const books = (msg && msg.books) || [];
  if (books.length !== n) return `expected ${n} books, got ${books.length}`;
  return checkBook(books[0], bookId(1), 'first book');
};

export const validatePage = (offset, size, blurb) => (data) => {
  const page = data && data.page;
  if (!page || !Array.isArray(page.books) || page.books.length !== size) return `page of ${size} books expected`;
  for (let i = 0; i < size; i++) {
    const b = page.books[i];
    const problem = checkBook(b, bookId(offset + i + 1), `page book ${i + 1}`);
    if (problem) return problem;
    if (typeof b.blurb !== 'string' || b.blurb.length !== blurb)
      return `page book ${i + 1} blurb is not ${blurb} bytes`;
  }
  return null;
};

export const validateAtomicBook = (offset, blurb) => (data, res, i) => {
  const b = data && data.book;
  const problem = checkBook(b, bookId(offset + i + 1));
  if (problem) return problem;
  return typeof b.blurb === 'string' && b.blurb.length === blurb ? null : `blurb is not ${blurb} bytes`;
};

// The Vulcain root: the page's hrefs, each the atomic document's URL, and one
// preload link for each (links: what the Link headers named).
export const validatePageLinks = (offset, size, blurb) => (data, res, links) => {
  const books = data && data.page && data.page.books;
  if (!Array.isArray(books) || books.length !== size) return `page of ${size} links expected`;
  for (let i = 0; i < size; i++) {
    const want = bookResourceUrl(bookId(offset + i + 1), blurb);
    if (books[i].href !== want) return `link ${i + 1} is ${books[i].href}, expected ${want}`;
    if (links[i] !== want) return `Link header ${i + 1} is ${links[i]}, expected ${want}`;
  }
  return null;
};
