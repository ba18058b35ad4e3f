// Mahimahi packet-delivery traces (`+trace=FILE` in a profile spec): text -> the
// integer array the link toxic's `trace` attribute takes (tools/toxiproxy/link.go).
//
// Plain ES module with no I/O (its one import is the shared error): k6 (open()) and Node (fs) read the file,
// this parses it. The format is Mahimahi's (mm-link(1)): one whole number of
// milliseconds a line, ascending (equal neighbours allowed: two opportunities in the
// same millisecond), each a delivery opportunity for one packet of up to 1500 bytes;
// the list repeats with a period of its last timestamp, which must be above 0.
//
// Hostile input is refused with one line naming the file and the line: an empty file,
// a line that is not a whole number >= 0, timestamps that go down, a last timestamp of
// 0, more than MAX_TRACE_LINES lines or more than MAX_TRACE_BYTES ("huge").

import { ProfileError } from './profile-error.js';

export const TRACE_PACKET_BYTES = 1500;
export const MAX_TRACE_LINES = 200000;
export const MAX_TRACE_BYTES = 2 * 1024 * 1024;
// A day: a trace's period (its last timestamp) beyond this is a mistake, not a link.
export const MAX_TRACE_MS = 86400000;

const FORMAT = 'a Mahimahi trace has one whole number of milliseconds a line, ascending, the last above 0';

// The message for a file over MAX_TRACE_BYTES (also what the Node reader says when it
// refuses to read one: lib/profiles.js).
export const hugeMessage = (file, bytes) =>
  `trace file ${file}: huge (${(bytes / 1024 / 1024).toFixed(1)} MB, over ${MAX_TRACE_BYTES / 1024 / 1024} MB): ${FORMAT}, at most ${MAX_TRACE_LINES} lines`;

// text -> [ms, ...]. file: the path as the user gave it (or the shipped trace's).
export function parseTrace(text, file) {
  const at = (n) => `trace file ${file}, line ${n}`;
  if (typeof text !== 'string') throw new ProfileError(`trace file ${file}: cannot read it as text: ${FORMAT}`);
  if (text.length > MAX_TRACE_BYTES) throw new ProfileError(hugeMessage(file, text.length));
  // Trailing blank lines (a final newline, CRLF) are fine; blank lines before the end are not.
  const lines = text.replace(/[\s]+$/, '').split('\n');
  if (lines.length === 1 && lines[0].trim() === '') throw new ProfileError(`trace file ${file}: empty: ${FORMAT}`);
  if (lines.length > MAX_TRACE_LINES)
    throw new ProfileError(`${at(MAX_TRACE_LINES + 1)}: huge (${lines.length} lines, at most ${MAX_TRACE_LINES})`);
  const out = new Array(lines.length);
  let prev = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    const n = i + 1;
    if (!/^\d+$/.test(raw)) {
      const shown = raw.length > 20 ? `${raw.slice(0, 20)}…` : raw;
      const what =
        raw === ''
          ? 'an empty line'
          : /^-\s*\d/.test(raw)
            ? `"${shown}" is negative`
            : /^\d*[.,]\d+$/.test(raw) || /^\d+(\.\d*)?e/i.test(raw)
              ? `"${shown}" is not a whole number`
              : `"${shown}" is not a number`;
      throw new ProfileError(`${at(n)}: ${what}: ${FORMAT}`);
    }
    const ms = Number(raw);
    if (ms > MAX_TRACE_MS) throw new ProfileError(`${at(n)}: ${raw} ms is over a day (${MAX_TRACE_MS} ms): ${FORMAT}`);
    if (ms < prev) throw new ProfileError(`${at(n)}: ${ms} comes after ${prev} (line ${n - 1}): ${FORMAT}`);
    out[i] = ms;
    prev = ms;
  }
  if (prev === 0)
    throw new ProfileError(
      `${at(lines.length)}: the last timestamp is 0: it is the trace's period, so it must be above 0`,
    );
  return out;
}

// What a trace gives: its period, its opportunities, and the mean rate they make.
export function traceStats(trace) {
  const periodMs = trace.length ? trace[trace.length - 1] : 0;
  return {
    periodMs,
    opportunities: trace.length,
    meanKbps: periodMs > 0 ? Math.round((trace.length * TRACE_PACKET_BYTES * 8) / periodMs) : 0,
  };
}
