// k6's JSON output (`--out json=...`, k6 v1.8.1 output/json), one object per line:
//   {"type":"Metric","data":{"name":"op_duration","type":"trend","contains":"time",...},"metric":"op_duration"}
//   {"metric":"op_duration","type":"Point","data":{"time":"2025-...Z","value":12.5,"tags":{"scenario":"ws_c1",...}}}
// A run writes hundreds of thousands of Point lines, so they are read without
// JSON.parse: the metric name, the value, the time and the tags object's raw
// text (k6 writes a sample's tags with sorted keys, so equal tags give equal
// text, and the text can key a cache of what those tags match). Anything
// unexpected falls back to JSON.parse.
import { createReadStream, existsSync } from 'node:fs';
import { createGunzip } from 'node:zlib';

export class SamplesError extends Error {}

const POINT_HEAD = '{"metric":"';

// The metric name of a Point line, or null for any other line (Metric lines, blanks).
export function pointMetric(line) {
  if (!line.startsWith(POINT_HEAD)) return null;
  const end = line.indexOf('"', POINT_HEAD.length);
  return end < 0 ? null : line.slice(POINT_HEAD.length, end);
}

// The end (index after '}') of the flat JSON object of strings starting at `start` ('{').
function objectEnd(line, start) {
  let i = start + 1;
  for (;;) {
    const c = line.charCodeAt(i);
    if (c === 0x7d) return i + 1; // }
    if (c === 0x22) {
      // a string: find its closing quote (one not escaped by an odd run of backslashes)
      let q = line.indexOf('"', i + 1);
      while (q > 0) {
        let b = q - 1;
        while (line.charCodeAt(b) === 0x5c) b--;
        if ((q - 1 - b) % 2 === 0) break;
        q = line.indexOf('"', q + 1);
      }
      if (q < 0) return -1;
      i = q + 1;
    } else if (Number.isNaN(c)) {
      return -1;
    } else {
      i++;
    }
  }
}

// A Point line -> { value, time (text), tags (raw JSON text of the tags object, '{}' for none) },
// or null when the line is not a Point. Throws a SyntaxError for a broken line.
export function parsePoint(line) {
  const d = line.indexOf('"data":{');
  const v = d < 0 ? -1 : line.indexOf('"value":', d);
  const t = d < 0 ? -1 : line.indexOf('"tags":', d);
  if (v > 0 && t > 0 && line.indexOf('"type":"Point"') > 0) {
    const valueEnd = line.indexOf(',', v + 8);
    const value = Number(line.slice(v + 8, valueEnd < 0 ? undefined : valueEnd));
    const ts = line.indexOf('"time":"', d);
    const time = ts < 0 ? null : line.slice(ts + 8, line.indexOf('"', ts + 8));
    let tags;
    if (line.startsWith('null', t + 7)) tags = '{}';
    else if (line.charCodeAt(t + 7) === 0x7b) {
      const end = objectEnd(line, t + 7);
      tags = end < 0 ? null : line.slice(t + 7, end);
    }
    // The line must also end as a whole object: a cut line falls through to JSON.parse.
    if (tags !== undefined && tags !== null && Number.isFinite(value) && line.endsWith('}'))
      return { value, time, tags };
  }
  const o = JSON.parse(line);
  if (o.type !== 'Point' || !o.data) return null;
  return { value: o.data.value, time: o.data.time, tags: JSON.stringify(o.data.tags || {}) };
}

// A Metric line -> { name, type ('trend' | 'rate' | 'counter' | 'gauge'), contains }, or null.
export function parseMetric(line) {
  if (!line.startsWith('{"type":"Metric"')) return null;
  const o = JSON.parse(line);
  return o.data ? { name: o.data.name, type: o.data.type, contains: o.data.contains } : null;
}

// Calls onLine(line) for every line of a chunked text stream (Buffers or strings).
export function lineSplitter(onLine) {
  let carry = '';
  return {
    push(chunk) {
      const text = carry + chunk;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        if (nl > start) onLine(text.slice(start, nl));
        start = nl + 1;
      }
      carry = text.slice(start);
    },
    end() {
      if (carry) onLine(carry);
      carry = '';
    },
  };
}

// Every line of a samples file (gzipped when its name ends in .gz) through onLine(line, lineNo).
// A line onLine cannot read (a SyntaxError: k6 writes the file completely only when
// it exits normally) becomes one SamplesError naming the file and line.
export async function readLines(file, onLine) {
  if (!existsSync(file)) throw new SamplesError(`no samples file ${file}`);
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  const stream = file.endsWith('.gz') ? input.pipe(createGunzip({ chunkSize: 1 << 18 })) : input;
  stream.setEncoding('utf8');
  let lineNo = 0;
  const lines = lineSplitter((line) => {
    lineNo++;
    try {
      onLine(line, lineNo);
    } catch (err) {
      if (err instanceof SyntaxError)
        throw new SamplesError(
          `${file} line ${lineNo}: not JSON (a truncated file? k6 writes it completely only when it exits normally)`,
        );
      throw err;
    }
  });
  try {
    for await (const chunk of stream) lines.push(chunk);
    lines.end();
  } catch (err) {
    input.destroy();
    if (err instanceof SamplesError) throw err;
    throw new SamplesError(`${file}: cannot read it (${err.message})`);
  }
  return lineNo;
}
