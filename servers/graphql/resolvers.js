// Resolvers for schema.graphql over the shared deterministic data (servers/shared/data.js),
// so the GraphQL and gRPC servers return identical books. Every argument that sizes
// a response is bounded; out-of-range values are BAD_USER_INPUT errors naming the bound.
import { performance } from 'node:perf_hooks';
import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import { bookResourceUrl } from '../../common/book-resource.js';
import { LIMITS } from '../../common/defaults.js';
import { NO_GENERATION } from '../../common/generation.js';
import {
  BOOK_COUNT,
  authorAt,
  authorIndex,
  bookAt,
  bookIndex,
  booksOfAuthor,
  checkCount,
  filler,
  fullBookAt,
} from '../shared/data.js';
import { generate, generateOne } from './generation.js';
import { MAX_AUTHOR_BOOKS } from './rules.js';
import { processStats } from '../shared/stats.js';

function badInput(message) {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}

// n when 0 <= n <= max, else a BAD_USER_INPUT error naming the argument and the bound.
function bounded(name, n, max) {
  const problem = checkCount(name, n, max);
  if (problem) throw badInput(problem);
  return n;
}

// Books first .. first+n-1 (1-based, clipped to the catalogue), authors resolved
// (or, with `make`, books made by it).
function bookRange(first, n, make = fullBookAt) {
  const last = Math.min(first + n - 1, BOOK_COUNT);
  const books = [];
  for (let i = first; i <= last; i++) books.push(make(i));
  return books;
}

// Study 002's executors (common/executors.js) that resolve each book's author on
// its own: the book carries its author's index and an `author` method, which
// graphql-js's default resolver calls for every book (a property that is a
// function is called with args, context and info). Plain books carry their
// author, which the default resolver reads as a property.
class PerItemBook {
  constructor(i) {
    Object.assign(this, bookAt(i));
  }

  // Its own async call per book, unbatched (Spring's @SchemaMapping per book).
  async author() {
    return authorAt(this.authorIndex);
  }
}

const AUTHORS = Symbol('k6pack.authorLoader');
const loadAuthors = async (keys) => keys.map(authorAt);
class LoadedBook extends PerItemBook {
  // Through the request's DataLoader: the books' loads of one tick are one batch.
  author(_args, context) {
    context[AUTHORS] ??= new DataLoader(loadAuthors);
    return context[AUTHORS].load(this.authorIndex);
  }
}

const BOOK_MAKERS = { 'per-item': (i) => new PerItemBook(i), dataloader: (i) => new LoadedBook(i) };

// Study 002: the typed list and its JSON string are built by the same function.
function allBooks(nrOfBooks, executor) {
  return bookRange(1, bounded('nrOfBooks', nrOfBooks, LIMITS.MAX_BOOKS), BOOK_MAKERS[executor]);
}

// What the x-generate header asked for (http.js puts it in the context).
const generationOf = (context) => context?.generate ?? NO_GENERATION;

function requireBook(id) {
  const i = bookIndex(id);
  if (i === null) throw badInput(`no book with id "${id}": ids are book-1 .. book-${BOOK_COUNT}`);
  return i;
}

const now = () => performance.timeOrigin + performance.now();

// `count` events, the k-th due at start + (k-1) * intervalMs (the first at once), as an
// async iterator whose return() clears the pending timer at once. (An async generator
// would sit in its sleep until the timer fired, keeping the process alive after the
// client left.) graphql-ws calls return() on `complete` and when the socket closes.
// The consumer pulls one event at a time, so a slow client slows the stream down
// instead of queueing events in memory. `timing.execStart` marks when an event left
// the stream, for the execMs that the WebSocket layer reports (ws.js).
function eventStream({ count, intervalMs, size }, timing) {
  const start = performance.now();
  let seq = 0;
  let timer = null;
  let pending = null;
  const done = () => ({ value: undefined, done: true });
  const stop = () => {
    seq = count;
    clearTimeout(timer);
    timer = null;
    pending?.(done());
    pending = null;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      if (seq >= count) return Promise.resolve(done());
      const delay = Math.max(0, start + seq * intervalMs - performance.now());
      return new Promise((resolve) => {
        pending = resolve;
        timer = setTimeout(() => {
          timer = null;
          pending = null;
          seq += 1;
          if (timing) timing.execStart = performance.now();
          resolve({ value: { id: `event-${seq}`, seq, data: filler(size, seq) }, done: false });
        }, delay);
      });
    },
    return() {
      stop();
      return Promise.resolve(done());
    },
    throw(err) {
      stop();
      return Promise.reject(err);
    },
  };
}

// One resolver map per server instance: ratings live as long as their server.
export function createResolvers() {
  const ratings = new Map(); // book index -> { count, sum }: bounded by BOOK_COUNT entries

  return {
    Query: {
      allBooks: (_, { nrOfBooks }, context) => allBooks(nrOfBooks, context?.executor),
      allBooksAsJSON: (_, { nrOfBooks }) => JSON.stringify(allBooks(nrOfBooks)),
      payload: (_, { size }) => ({ size, data: filler(bounded('size', size, LIMITS.MAX_PAYLOAD_BYTES)) }),
      book: (_, { id }, context) => {
        const i = bookIndex(id);
        return i === null ? null : generateOne(() => fullBookAt(i), generationOf(context));
      },
      author: (_, { id }) => {
        const a = authorIndex(id);
        return a === null ? null : authorAt(a);
      },
      page: (_, { offset, size }, context) => {
        bounded('offset', offset, BOOK_COUNT);
        bounded('size', size, LIMITS.MAX_PAGE_SIZE);
        const count = Math.max(0, Math.min(size, BOOK_COUNT - offset));
        // Each book is a resource: generated as x-generate says (generation.js).
        const books = generate(count, (k) => fullBookAt(offset + 1 + k), generationOf(context), badInput);
        return { offset, size: count, total: BOOK_COUNT, books };
      },
      serverStats: () => processStats(),
    },
    Mutation: {
      rateBook: (_, { id, stars }) => {
        const i = requireBook(id);
        if (!Number.isInteger(stars) || stars < 1 || stars > 5)
          throw badInput(`stars must be an integer from 1 to 5 (got ${stars})`);
        const rating = ratings.get(i) ?? { count: 0, sum: 0 };
        rating.count += 1;
        rating.sum += stars;
        ratings.set(i, rating);
        return { bookId: `book-${i}`, count: rating.count, average: rating.sum / rating.count };
      },
    },
    Subscription: {
      events: {
        subscribe: (_, { count, intervalMs, size }, context) => {
          bounded('count', count, LIMITS.MAX_EVENTS);
          if (
            !Number.isInteger(intervalMs) ||
            intervalMs < LIMITS.MIN_EVENT_INTERVAL_MS ||
            intervalMs > LIMITS.MAX_EVENT_INTERVAL_MS
          ) {
            throw badInput(
              `intervalMs must be an integer from ${LIMITS.MIN_EVENT_INTERVAL_MS} to ${LIMITS.MAX_EVENT_INTERVAL_MS} (got ${intervalMs})`,
            );
          }
          bounded('size', size, LIMITS.MAX_PAYLOAD_BYTES);
          return eventStream({ count, intervalMs, size }, context?.timing);
        },
        resolve: (event) => event,
      },
    },
    Author: {
      books: (author, { first }) =>
        booksOfAuthor(authorIndex(author.id), bounded('first', first, MAX_AUTHOR_BOOKS)).map(fullBookAt),
    },
    Book: {
      blurb: (book, { size }) => filler(bounded('size', size, LIMITS.MAX_BLURB_BYTES), bookIndex(book.id)),
      href: (book, { blurb }) => bookResourceUrl(book.id, bounded('blurb', blurb, LIMITS.MAX_BLURB_BYTES)),
    },
    Event: {
      // Stamped while the event is being resolved, just before it is serialized and sent.
      sentAt: () => now(),
    },
  };
}
