// "Your server" for the example of docs/your-api.md and the api tests: a small
// GraphQL API of its own (a bookshelf, and a subscription, ticks), served by graphql-yoga
// (a third-party server from npm), with graphql-ws on the same port for
// graphql-transport-ws unless WS=off.
//
//   node examples/api/yoga-server.js                  http://127.0.0.1:4100/graphql (+ ws://)
//   PORT=4200 WS=off node examples/api/yoga-server.js  HTTP only: the pack skips the ws lane
//   TLS=on node examples/api/yoga-server.js            https:// (HTTP/1.1) with a self-signed certificate
//   BURN_US=2000 node examples/api/yoga-server.js      every request burns 2 ms of CPU first (tests)
//   TOKEN=s3cret node examples/api/yoga-server.js      asks for `Authorization: Bearer s3cret` on every
//                                                      request (else 401) and `{"authorization": "Bearer
//                                                      s3cret"}` in connection_init (else close 4403)
//
// Stops on SIGINT/SIGTERM. Listens on 127.0.0.1 only.
import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createSchema, createYoga } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { selfSignedPem } from './self-signed.js';
import { burn } from './burn.js';

const PORT = Number(process.env.PORT || 4100);
const WS = process.env.WS !== 'off';
const TLS = process.env.TLS === 'on';
const BEARER = process.env.TOKEN ? `Bearer ${process.env.TOKEN}` : null;

const books = Array.from({ length: 50 }, (_, i) => ({
  id: String(i + 1),
  title: `Book ${i + 1}`,
  year: 1950 + i,
  reviews: [],
}));

const reviewIds = new Set();
const MAX_REVIEW_IDS = 1_000_000;

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Book {
      id: ID!
      title: String!
      year: Int!
      reviews: [Review!]!
    }
    type Review {
      stars: Int!
      text: String
    }
    type Query {
      book(id: ID!): Book
      books(first: Int!): [Book!]!
      broken: String!
    }
    type Mutation {
      review(id: ID!, bookId: ID!, stars: Int!, text: String): Review!
    }
    type Tick {
      n: Int!
      book: Book!
    }
    type Subscription {
      ticks(count: Int!, everyMs: Int!): Tick!
    }
  `,
  resolvers: {
    Subscription: {
      // A live feed: \`count\` events (at most 100000), the first at once, then one every
      // \`everyMs\` (1 ms to 60 s); the server completes it after the last.
      ticks: {
        subscribe: async function* ticks(_, { count, everyMs }) {
          const n = Math.max(0, Math.min(count, 100000));
          const every = Math.max(1, Math.min(everyMs, 60000));
          for (let i = 0; i < n; i++) {
            if (i) await new Promise((resolve) => setTimeout(resolve, every));
            yield { ticks: { n: i + 1, book: books[i % books.length] } };
          }
        },
      },
    },
    Query: {
      book: (_, { id }) => books.find((b) => b.id === id) || null,
      books: (_, { first }) => books.slice(0, Math.max(0, Math.min(first, books.length))),
      // An operation that always fails, as a resolver error: GraphQL answers 200 with `errors`.
      broken: () => {
        throw new Error('the shelf is locked');
      },
    },
    Mutation: {
      // Each review is created once: an id used before is refused, as a real API refuses a
      // second create (the pack's templates, {{uuid}}, give a new one per call).
      review: (_, { id, bookId, stars, text }) => {
        if (reviewIds.has(id)) throw new Error(`review ${id} exists: each review needs a new id`);
        const book = books.find((b) => b.id === bookId);
        if (!book) throw new Error(`no book ${bookId}`);
        reviewIds.add(id);
        // Bounded: the oldest ids are forgotten past a million.
        if (reviewIds.size > MAX_REVIEW_IDS) reviewIds.delete(reviewIds.values().next().value);
        const review = { stars, text };
        book.reviews = [review, ...book.reviews].slice(0, 10);
        return review;
      },
    },
  },
});

const yoga = createYoga({ schema, logging: false, maskedErrors: false, graphiql: false });

// With TOKEN, a request without the bearer token gets 401, as an API behind a gateway does.
function handler(req, res) {
  burn();
  if (BEARER && req.headers.authorization !== BEARER) {
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
    res.end('{"errors":[{"message":"unauthorized: a bearer token is required"}]}');
    return;
  }
  yoga(req, res);
}
const server = TLS ? createHttps(await selfSignedPem(), handler) : createHttp(handler);
let wsCleanup = null;
if (WS) {
  // The graphql-ws recipe from yoga's documentation: yoga parses, validates and executes.
  const wsServer = new WebSocketServer({ server, path: yoga.graphqlEndpoint });
  wsCleanup = useServer(
    {
      // graphql-ws closes with 4403 Forbidden when onConnect returns false.
      onConnect: (ctx) => !BEARER || (ctx.connectionParams && ctx.connectionParams.authorization) === BEARER,
      execute: (args) => args.rootValue.execute(args),
      subscribe: (args) => args.rootValue.subscribe(args),
      onSubscribe: async (ctx, _id, params) => {
        burn();
        const {
          schema: s,
          execute,
          subscribe,
          contextFactory,
          parse,
          validate,
        } = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, socket: ctx.extra.socket, params });
        const args = {
          schema: s,
          operationName: params.operationName,
          document: parse(params.query),
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        return errors.length ? errors : args;
      },
    },
    wsServer,
  );
}

server.listen(PORT, '127.0.0.1', () => {
  console.log(
    `yoga-server: ${TLS ? 'https' : 'http'}://127.0.0.1:${PORT}/graphql${WS ? ` and ${TLS ? 'wss' : 'ws'}://127.0.0.1:${PORT}/graphql (graphql-ws)` : ' (no WebSocket)'}${BEARER ? ', a bearer token required' : ''}`,
  );
});
server.on('error', (err) => {
  console.error(`yoga-server: ${err.message}`);
  process.exit(1);
});

const stop = async () => {
  await wsCleanup?.dispose();
  server.closeAllConnections?.();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
