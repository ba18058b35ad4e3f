// books.v1.Books's client and bidirectional streams (scenario grpc-vs-graphql):
//   PayloadStream  bidirectional: one PayloadResponse per PayloadRequest, in order,
//                  on one long-lived stream (the grpc-bidi lane: many operations
//                  on one stream, as on one WebSocket). While the client does not
//                  read the answers the server reads no more requests (HTTP/2 flow
//                  control then stops the client), so memory stays bounded.
//   UploadBooks    client stream: books in, one UploadSummary once the client ends
//                  (the grpc-client-stream lane), with the server-timing trailer.
// Both end a stream that breaks a bound, with a sentence: a message that is not
// valid protobuf or a bad size (INVALID_ARGUMENT), more than MAX_UPLOAD_BOOKS books
// (RESOURCE_EXHAUSTED), a message over LIMITS.MAX_BODY_BYTES (grpc-js:
// RESOURCE_EXHAUSTED), and no message for STREAM_IDLE_MS (DEADLINE_EXCEEDED: a
// stream that never ends is ended, as an idle kept-alive connection is; the
// server's STREAM_IDLE_MS variable changes it).
import grpc from '@grpc/grpc-js';
import { LIMITS } from '../../common/defaults.js';
import { checkMessage, checkMetadata, Outbound, payload, RpcError, toStatus } from './books-service.js';
import { encodeResponse } from './proto.js';
import { ServerTiming } from './server-timing.js';

const { status } = grpc;

const INT32 = 2 ** 31 - 1;

const idleError = (idleMs) =>
  new RpcError(
    status.DEADLINE_EXCEEDED,
    `no message for ${idleMs / 1000} s: the stream was idle and is ended; open a new one`,
  );

function payloadStream(active, idleMs) {
  return (call) => {
    const out = new Outbound('PayloadStream', call, active);
    let idle = null;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => out.fail(idleError(idleMs)), idleMs);
    };
    out.onFinish(() => clearTimeout(idle));
    try {
      checkMetadata(call);
    } catch (err) {
      out.fail(err);
      return;
    }
    arm();
    let paused = false;
    call.on('data', (message) => {
      if (!out.open) return;
      arm();
      let bytes;
      try {
        const answer = out.timing.time('exec', () => payload(checkMessage(message)));
        bytes = out.timing.time('ser', () => encodeResponse('PayloadStream', answer));
      } catch (err) {
        out.fail(err);
        return;
      }
      if (!call.write(bytes) && !paused) {
        paused = true;
        call.pause();
        call.once('drain', () => {
          paused = false;
          if (out.open) call.resume();
        });
      }
    });
    call.on('end', () => out.end());
    call.on('error', () => out.finish());
  };
}

function uploadBooks(active, idleMs) {
  return (call, callback) => {
    const timing = new ServerTiming();
    const summary = { count: 0, page_count: 0, first_id: '', last_id: '' };
    let done = false;
    let idle = null;
    const handle = {
      shutdown: () => finish(new RpcError(status.UNAVAILABLE, 'server is shutting down; reconnect and retry')),
    };
    const stop = () => {
      done = true;
      active.delete(handle);
      clearTimeout(idle);
    };
    function finish(err) {
      if (done) return;
      stop();
      if (err) {
        callback(toStatus(err));
        return;
      }
      // The sum of what a client sent may leave int32: it says so at the bound.
      summary.page_count = Math.max(-INT32, Math.min(INT32, summary.page_count));
      const bytes = timing.time('ser', () => encodeResponse('UploadBooks', summary));
      callback(null, bytes, timing.metadata());
    }
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => finish(idleError(idleMs)), idleMs);
    };
    active.add(handle);
    call.on('cancelled', stop);
    try {
      checkMetadata(call);
    } catch (err) {
      finish(err);
      return;
    }
    arm();
    call.on('data', (message) => {
      if (done) return;
      arm();
      try {
        timing.time('exec', () => {
          const book = checkMessage(message);
          summary.count += 1;
          if (summary.count > LIMITS.MAX_UPLOAD_BOOKS) {
            throw new RpcError(
              status.RESOURCE_EXHAUSTED,
              `an upload takes at most ${LIMITS.MAX_UPLOAD_BOOKS} books: split it into several calls`,
            );
          }
          summary.page_count += book.page_count;
          if (!summary.first_id) summary.first_id = book.id;
          summary.last_id = book.id;
        });
      } catch (err) {
        finish(err);
      }
    });
    call.on('end', () => finish(null));
    call.on('error', () => stop());
  };
}

// idleMs: how long a stream may stay silent (STREAM_IDLE_MS).
export function streamHandlers(active = new Set(), { idleMs = LIMITS.STREAM_IDLE_MS } = {}) {
  return {
    PayloadStream: payloadStream(active, idleMs),
    UploadBooks: uploadBooks(active, idleMs),
  };
}
