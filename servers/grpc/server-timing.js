// Server time of one call, sent as the trailer `server-timing` in the format of
// the GraphQL server's Server-Timing header: `exec;dur=<ms>, ser;dur=<ms>, total;dur=<ms>`.
//   exec  building the response objects (request checks included)
//   ser   protobuf encoding of the response (the bytes that go on the wire)
//   total from the handler's start until the last message is encoded; for a
//         stream this includes the waits (interval, backpressure) between messages
// Streams add up exec and ser over all their messages.
import grpc from '@grpc/grpc-js';
import { formatServerTiming } from '../../common/server-timing.js';

export const SERVER_TIMING_KEY = 'server-timing';

export class ServerTiming {
  constructor() {
    this.start = performance.now();
    this.exec = 0;
    this.ser = 0;
    this.end = this.start;
  }

  // Runs fn, adding its duration to `part` ('exec' or 'ser').
  time(part, fn) {
    const t0 = performance.now();
    const value = fn();
    this.end = performance.now();
    this[part] += this.end - t0;
    return value;
  }

  metadata() {
    const md = new grpc.Metadata();
    md.set(SERVER_TIMING_KEY, formatServerTiming({ exec: this.exec, ser: this.ser, total: this.end - this.start }));
    return md;
  }
}
