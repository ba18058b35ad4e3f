// GraphQL over WebSocket (graphql-transport-ws) at /graphql, for both the cleartext
// and the TLS server: one `ws` server in noServer mode, fed by both servers'
// 'upgrade' events, with graphql-ws's useServer on top.
//
// Beyond graphql-ws's defaults:
// - onSubscribe takes the document from the cache every transport shares
//   (documents.js: shape checks, parse and validation once per document text, the
//   cost verdict once per document and cost variables), so syntax errors,
//   oversized or too deeply nested documents, too-deep or too costly queries and
//   unknown operation names come back as `error` messages (graphql-ws would
//   otherwise let a parse error escape and close the socket with 4500); at most
//   MAX_OPERATIONS_PER_SOCKET operations run at once on one socket;
// - operations run through execution.js with the executor the operation's
//   extensions ask for (`extensions.executor`, common/executors.js), as over HTTP;
// - a connection_init payload over MAX_INIT_PAYLOAD_BYTES closes with 4400;
// - messages only a server sends (connection_ack, next, error) and binary frames are
//   refused with 4400, frames over LIMITS.MAX_BODY_BYTES with 1009 (ws's maxPayload);
// - every `next` carries extensions.timing {execMs, serMs, totalMs} (timing.js).
import { performance } from 'node:perf_hooks';
import { GraphQLError, getOperationAST } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { GRAPHQL_PATH, LIMITS } from '../../common/defaults.js';
import { executorOf } from '../../common/executors.js';
import { costLimitError } from './cost.js';
import { explainValidationError } from './rules.js';
import { newTiming, wsTiming } from './timing.js';

export const WS_PATH = GRAPHQL_PATH;
const BAD_REQUEST = 4400; // graphql-ws CloseCode.BadRequest
const SERVER_ONLY_MESSAGES = new Set(['connection_ack', 'next', 'error']);

// Operations (queries, mutations, subscriptions) one socket may run at once, and
// the size of its connection_init payload (connection params are for a token or two).
export const MAX_OPERATIONS_PER_SOCKET = 100;
export const MAX_INIT_PAYLOAD_BYTES = 64 * 1024;

const badRequest = (message) => new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });

const withCode = (error, code) =>
  new GraphQLError(explainValidationError(error.message), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code },
  });

// Reject an upgrade with a plain HTTP response and close the socket.
function refuseUpgrade(socket, status, reason, message) {
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
  );
}

// When the message being handled arrived: a WebSocket operation's timing starts
// there, as an HTTP request's starts once its body is in.
const RECEIVED_AT = Symbol('receivedAt');

// Per connection, before graphql-ws sees it (this listener runs before its own):
// refuse binary frames, and note when each message arrives.
function guardConnection(socket) {
  // A frame that breaks the WebSocket protocol (invalid UTF-8, over maxPayload, bad
  // opcode) is answered by `ws` with its close code (1007, 1009, 1002) and then
  // emitted as an 'error', which graphql-ws would log with a stack trace: one
  // line of log per hostile frame. The client has its answer; nothing to log.
  const emit = socket.emit.bind(socket);
  socket.emit = (event, ...args) =>
    event === 'error' && String(args[0]?.code).startsWith('WS_ERR_') ? false : emit(event, ...args);
  socket.on('message', (_data, isBinary) => {
    if (isBinary) socket.close(BAD_REQUEST, 'Binary frames are not supported; send messages as text frames');
    else socket[RECEIVED_AT] = performance.now();
  });
}

// `documents`: the shared document cache (documents.js); `execution`: where
// operations run (execution.js).
export function createWebSocketEndpoint({ schema, documents, execution }) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.MAX_BODY_BYTES });
  wss.on('connection', guardConnection);

  const serverCleanup = useServer(
    {
      schema,
      execute: execution.executeOperation,
      subscribe: execution.subscribeOperation,
      // Runs while each incoming message is parsed; refusing here makes graphql-ws
      // close with 4400 "Invalid message received" instead of failing with 4500.
      jsonMessageReviver(key, value) {
        if (key === '' && SERVER_ONLY_MESSAGES.has(value?.type))
          throw new Error(`"${value.type}" is a server-to-client message`);
        return value;
      },
      // connection_init's payload lives as long as the connection: keep it small.
      onConnect(ctx) {
        const size = ctx.connectionParams ? Buffer.byteLength(JSON.stringify(ctx.connectionParams)) : 0;
        if (size <= MAX_INIT_PAYLOAD_BYTES) return true;
        ctx.extra.socket.close(
          BAD_REQUEST,
          `connection_init payload is ${size} bytes; the limit is ${MAX_INIT_PAYLOAD_BYTES}`,
        );
        return false;
      },
      onSubscribe(ctx, _id, payload) {
        const start = ctx.extra.socket[RECEIVED_AT] ?? performance.now();
        const running = Object.keys(ctx.subscriptions).length; // this one included
        if (running > MAX_OPERATIONS_PER_SOCKET) {
          return [
            badRequest(
              `this connection already runs ${running - 1} operations; the limit is ${MAX_OPERATIONS_PER_SOCKET}: complete some first or open another connection`,
            ),
          ];
        }
        const shapeError = documents.shapeError(payload.query);
        if (shapeError) return [badRequest(shapeError)];
        const executor = executorOf(payload.extensions);
        if (executor.error) return [badRequest(executor.error)];
        const prepared = documents.prepare(payload.query);
        if (prepared.syntaxError) return [withCode(prepared.syntaxError, 'GRAPHQL_PARSE_FAILED')];
        if (prepared.validationErrors)
          return prepared.validationErrors.map((err) => withCode(err, 'GRAPHQL_VALIDATION_FAILED'));
        const { document } = prepared;
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) {
          const named = payload.operationName
            ? `no operation named "${payload.operationName}" in the document`
            : 'the document has several operations: name one in operationName';
          return [badRequest(named)];
        }
        const tooCostly = documents.costError(payload.query, document, operation, payload.variables);
        if (tooCostly) return [costLimitError(tooCostly)];
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: {
            timing: newTiming({ start, operation: operation.operation }),
            executor: executor.value,
            source: payload.query,
          },
        };
      },
      onNext(_ctx, _id, _payload, args, result) {
        // Same shape graphql-ws would send (errors serialize through their toJSON),
        // with the timing last (see wsTiming).
        const message = {};
        if (result.errors) message.errors = result.errors;
        if ('data' in result) message.data = result.data;
        message.extensions = { ...result.extensions, timing: wsTiming(args.contextValue.timing) };
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
