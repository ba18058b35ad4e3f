// GraphQL over WebSocket (graphql-transport-ws) at /graphql, for both the cleartext
// and the TLS server: one `ws` server in noServer mode, fed by both servers'
// 'upgrade' events, with graphql-ws's useServer on top.
//
// Beyond graphql-ws's defaults:
// - onSubscribe parses and validates itself, so syntax errors, oversized documents
//   and too-deep queries come back as `error` messages (graphql-ws would otherwise
//   let a parse error escape and close the socket with 4500);
// - messages only a server sends (connection_ack, next, error) and binary frames are
//   refused with 4400, frames over LIMITS.MAX_BODY_BYTES with 1009 (ws's maxPayload);
// - every `next` carries extensions.timing {execMs, serMs} (see timing.js).
import { performance } from 'node:perf_hooks';
import { GraphQLError, execute, parse, specifiedRules, subscribe, validate } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { LIMITS } from '../../scenarios/lib/defaults.js';
import { documentSizeError } from './rules.js';
import { fillSerPlaceholder, wsTimingExtension } from './timing.js';

export const WS_PATH = '/graphql';
const BAD_REQUEST = 4400; // graphql-ws CloseCode.BadRequest
const SERVER_ONLY_MESSAGES = new Set(['connection_ack', 'next', 'error']);

const withCode = (error, code) =>
  new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions: { ...error.extensions, code } });

// Time execution from here; for subscription events the stream restamps execStart
// as each event leaves it (resolvers.js).
const timed = (run) => (args) => {
  args.contextValue.timing.execStart = performance.now();
  return run(args);
};

// Reject an upgrade with a plain HTTP response and close the socket.
function refuseUpgrade(socket, status, reason, message) {
  socket.on('error', () => {});
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`);
}

// Per connection, before graphql-ws sees it: refuse binary frames, and fill in
// serMs as each message is handed to the socket.
function guardConnection(socket) {
  const send = socket.send.bind(socket);
  socket.send = (data, ...rest) => send(typeof data === 'string' ? fillSerPlaceholder(data) : data, ...rest);
  socket.on('message', (_data, isBinary) => {
    if (isBinary) socket.close(BAD_REQUEST, 'Binary frames are not supported; send messages as text frames');
  });
}

export function createWebSocketEndpoint({ schema, validationRules }) {
  const rules = [...specifiedRules, ...validationRules];
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.MAX_BODY_BYTES });
  wss.on('connection', guardConnection);

  const serverCleanup = useServer(
    {
      schema,
      execute: timed(execute),
      subscribe: timed(subscribe),
      // Runs while each incoming message is parsed; refusing here makes graphql-ws
      // close with 4400 "Invalid message received" instead of failing with 4500.
      jsonMessageReviver(key, value) {
        if (key === '' && SERVER_ONLY_MESSAGES.has(value?.type)) throw new Error(`"${value.type}" is a server-to-client message`);
        return value;
      },
      onSubscribe(_ctx, _id, payload) {
        const sizeError = documentSizeError(payload.query);
        if (sizeError) return [new GraphQLError(sizeError, { extensions: { code: 'BAD_REQUEST' } })];
        let document;
        try {
          document = parse(payload.query);
        } catch (err) {
          return [withCode(err, 'GRAPHQL_PARSE_FAILED')];
        }
        const errors = validate(schema, document, rules);
        if (errors.length > 0) return errors.map((err) => withCode(err, 'GRAPHQL_VALIDATION_FAILED'));
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: { timing: { execStart: performance.now() } },
        };
      },
      onNext(_ctx, _id, _payload, args, result) {
        // Same shape graphql-ws would send, with the timing last (see fillSerPlaceholder).
        const message = {};
        if (result.errors) message.errors = result.errors.map((err) => err.toJSON());
        if ('data' in result) message.data = result.data;
        message.extensions = { ...result.extensions, timing: wsTimingExtension(args.contextValue.timing.execStart) };
        return message;
      },
    },
    wss,
  );

  function handleUpgrade(req, socket, head) {
    let pathname;
    try {
      pathname = new URL(req.url, 'http://localhost').pathname;
    } catch {
      pathname = null;
    }
    if (pathname !== WS_PATH) {
      refuseUpgrade(socket, 404, 'Not Found', `WebSocket endpoint is ${WS_PATH} (graphql-transport-ws subprotocol)\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  }

  // Apollo plugin: close every WebSocket (1001) when Apollo drains.
  const drainPlugin = {
    async serverWillStart() {
      return {
        async drainServer() {
          await serverCleanup.dispose();
        },
      };
    },
  };

  return { handleUpgrade, drainPlugin };
}
