// The one server-timing format both servers send, so a scenario parses it once:
// HTTP header `Server-Timing` (GraphQL) and trailer `server-timing` (gRPC):
//   exec;dur=<ms>, ser;dur=<ms>, total;dur=<ms>
// Milliseconds are rounded to the microsecond.
export const roundMs = (ms) => Math.round(ms * 1000) / 1000;

export function formatServerTiming({ exec, ser, total }) {
  return `exec;dur=${roundMs(exec)}, ser;dur=${roundMs(ser)}, total;dur=${roundMs(total)}`;
}
