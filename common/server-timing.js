// The one server-timing format both servers send and the k6 clients parse:
// HTTP header `Server-Timing` (GraphQL) and trailer `server-timing` (gRPC):
//   exec;dur=<ms>, ser;dur=<ms>, total;dur=<ms>[, cpu;dur=<ms>]
// Milliseconds are rounded to the microsecond. `cpu`, the process's CPU time over total
// (servers/graphql/timing.js), only from the GraphQL server over HTTP and only to a request
// that asks for it with the header CPU_ASK (the serialization scenario's): the other
// answers keep the bytes the model's framing was measured with (common/lanes/http.js).
export const roundMs = (ms) => Math.round(ms * 1000) / 1000;
export const CPU_ASK = { header: 'x-server-timing', value: 'cpu' };

export function formatServerTiming({ exec, ser, total, cpu }) {
  const parts = `exec;dur=${roundMs(exec)}, ser;dur=${roundMs(ser)}, total;dur=${roundMs(total)}`;
  return cpu === undefined ? parts : `${parts}, cpu;dur=${roundMs(cpu)}`;
}

// 'exec;dur=1.2, ser;dur=0.4, total;dur=1.7' -> { exec: 1.2, ser: 0.4, total: 1.7 } (null if absent).
// Entries are name;param;...;dur=N; entries without dur= are skipped. It runs on
// every response, so it walks the text with indexOf instead of splitting it
// into arrays and matching each piece (k6's JS runtime pays for every object).
export function parseServerTiming(header) {
  if (!header) return null;
  const text = typeof header === 'string' ? header : Array.isArray(header) ? header.join(',') : String(header);
  let out = null;
  for (let from = 0; from < text.length;) {
    let end = text.indexOf(',', from);
    if (end === -1) end = text.length;
    const semi = text.indexOf(';', from);
    if (semi !== -1 && semi < end) {
      const dur = lastDur(text, semi, end);
      if (dur !== -1) {
        const name = text.slice(from, semi).trim();
        const value = parseFloat(text.slice(dur, end));
        if (TIMING_NAME.test(name) && value >= 0) {
          if (!out) out = {};
          out[name] = value;
        }
      }
    }
    from = end + 1;
  }
  return out;
}
const TIMING_NAME = /^[A-Za-z0-9_-]+$/;

// Where the value of the last ";dur=" parameter in text[from, end) starts, or -1.
function lastDur(text, from, end) {
  for (let at = text.lastIndexOf('dur=', end - 4); at > from; at = text.lastIndexOf('dur=', at - 1)) {
    let k = at - 1;
    while (k > from && (text[k] === ' ' || text[k] === '\t')) k--;
    if (text[k] === ';') return at + 4;
  }
  return -1;
}

// The server's whole time straight from a header's text, without parsing every entry:
// the value of a `total;dur=N` entry, else (another entry layout, a server of the team's
// own) serverTotal of the parsed header. null when there is none.
export function serverTotalOf(header) {
  if (typeof header === 'string') {
    for (let at = header.indexOf('total;dur='); at !== -1; at = header.indexOf('total;dur=', at + 10)) {
      // An entry of its own: at the start, or after a comma and spaces.
      let k = at - 1;
      while (k >= 0 && (header[k] === ' ' || header[k] === '\t')) k--;
      if (k >= 0 && header[k] !== ',') continue;
      const value = parseFloat(header.slice(at + 10));
      if (value >= 0) return value;
    }
  }
  return serverTotal(parseServerTiming(header));
}

// The server's whole time from a parsed Server-Timing: its `total`, else the longest
// entry (a server of the team's own may name its parts otherwise: db, app, ...; entries
// may nest, so they are not added up). null when there is none.
export function serverTotal(timing) {
  if (!timing) return null;
  if (typeof timing.total === 'number') return timing.total;
  const values = Object.values(timing).filter((v) => typeof v === 'number');
  return values.length ? Math.max(...values) : null;
}
