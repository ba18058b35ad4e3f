// The protobuf wire format, as much of it as the Connect and gRPC-Web lanes need:
// k6's http module sends and receives bytes, and k6 has no protobuf codec outside its
// gRPC client. Messages are described by a table of fields ({ name: [number, kind] }:
// encodeValue lists the kinds); the api scenario's tables are made from the team's
// .proto (lib/api/proto-method.js fieldTable) (protobuf.dev/programming-guides/encoding).
// Maps and the well-known types' JSON forms are not encoded: those calls run on
// connect-json only. Plain ES module: k6 and Node load it.

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

// UTF-8, both ways (k6 has no TextEncoder/TextDecoder).
export function utf8Bytes(text) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.codePointAt(i);
    if (c > 0xffff) i++;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return out;
}

export function utf8Text(bytes, start, end) {
  let s = '';
  for (let i = start; i < end;) {
    const b = bytes[i++];
    let c;
    if (b < 0x80) c = b;
    else if (b < 0xe0) c = ((b & 31) << 6) | (bytes[i++] & 63);
    else if (b < 0xf0) c = ((b & 15) << 12) | ((bytes[i++] & 63) << 6) | (bytes[i++] & 63);
    else c = ((b & 7) << 18) | ((bytes[i++] & 63) << 12) | ((bytes[i++] & 63) << 6) | (bytes[i++] & 63);
    s += String.fromCodePoint(c);
  }
  return s;
}

// A varint; a negative number is its 64-bit two's complement (ten bytes), taken as two
// 32-bit halves since a JavaScript number cannot hold 2^64 - 1.
function pushVarint(out, n) {
  let lo = n >>> 0;
  let hi = Math.floor(n / 2 ** 32) >>> 0;
  while (hi > 0 || lo > 0x7f) {
    out.push((lo & 0x7f) | 0x80);
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  out.push(lo);
}

// Standard base64 or base64url -> bytes (protobuf's JSON form of `bytes`).
function base64Bytes(text) {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const clean = String(text).replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  const out = [];
  let bits = 0;
  let acc = 0;
  for (let i = 0; i < clean.length; i++) {
    acc = (acc << 6) | abc.indexOf(clean[i]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 255);
    }
  }
  return out;
}

function pushFixed(out, value, bytes, float) {
  const b = new Uint8Array(
    (float ? (bytes === 8 ? new Float64Array([value]) : new Float32Array([value])) : fixedInts(value, bytes)).buffer,
  );
  for (let i = 0; i < bytes; i++) out.push(b[i]);
}
const fixedInts = (value, bytes) =>
  bytes === 4
    ? new Uint32Array([value >>> 0])
    : new Uint32Array([(Number(value) % 2 ** 32) >>> 0, Math.floor(Number(value) / 2 ** 32) >>> 0]);

// One value of kind `kind` as field `number`. kinds: 'string', 'bytes' (base64), 'bool',
// 'int32' and 'int64' (varint; a negative one ten bytes), 'uint' (varint), 'sint'
// (zigzag), 'double', 'float', 'fixed32', 'fixed64', { enum: { NAME: n } }, or a nested
// table. 64-bit integers beyond 2^53 lose precision (JavaScript numbers).
function encodeValue(out, number, kind, value) {
  if (typeof kind === 'object' && kind.enum) {
    pushVarint(out, number * 8 + VARINT);
    pushVarint(out, typeof value === 'string' ? kind.enum[value] : value);
  } else if (kind === 'int32' || kind === 'int64' || kind === 'uint' || kind === 'bool') {
    pushVarint(out, number * 8 + VARINT);
    pushVarint(out, kind === 'bool' ? (value ? 1 : 0) : Number(value));
  } else if (kind === 'sint') {
    const n = Number(value);
    pushVarint(out, number * 8 + VARINT);
    pushVarint(out, n >= 0 ? 2 * n : -2 * n - 1);
  } else if (kind === 'double' || kind === 'fixed64') {
    pushVarint(out, number * 8 + I64);
    pushFixed(out, Number(value), 8, kind === 'double');
  } else if (kind === 'float' || kind === 'fixed32') {
    pushVarint(out, number * 8 + I32);
    pushFixed(out, Number(value), 4, kind === 'float');
  } else {
    const bytes =
      kind === 'string'
        ? utf8Bytes(String(value))
        : kind === 'bytes'
          ? base64Bytes(value)
          : encodeInto([], kind, value);
    pushVarint(out, number * 8 + LEN);
    pushVarint(out, bytes.length);
    for (let i = 0; i < bytes.length; i++) out.push(bytes[i]);
  }
}

// A message's fields by name: { jsonName: [number, kind, 'repeated'?] } (a table may
// also list a field under its .proto name). A name not in the table throws.
function encodeInto(out, fields, message) {
  for (const name of Object.keys(message)) {
    const value = message[name];
    const field = fields[name];
    if (!field) throw new Error(`no field "${name}" in the message`);
    if (value === undefined || value === null) continue;
    const [number, kind, repeated] = field;
    if (repeated) for (const item of value) encodeValue(out, number, kind, item);
    else if (value !== '' && value !== 0 && value !== false) encodeValue(out, number, kind, value); // proto3 defaults stay off the wire
  }
  return out;
}

// -> Uint8Array of the message's protobuf encoding.
export const encodeMessage = (fields, message) => new Uint8Array(encodeInto([], fields, message));

// Reads a message from bytes[start, end) by its table; a field not in it is skipped,
// a field that overruns the bytes throws (a truncated message). Strings named in
// `lengthOnly` keep their byte count instead of their text: a 1 MB payload is checked,
// not decoded into JavaScript.
export function decodeMessage(fields, bytes, start = 0, end = bytes.length, lengthOnly = null) {
  const byNumber = {};
  for (const name of Object.keys(fields)) byNumber[fields[name][0]] = name;
  const out = {};
  let i = start;
  const varint = () => {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (i >= end) throw new Error('truncated varint');
      const b = bytes[i++];
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 0x80;
    }
  };
  // A repeated field's values gather in a list (a packed list of numbers is skipped:
  // the lanes read answers' structure, not their numbers' lists).
  const put = (name, v) => {
    if (fields[name][2] === 'repeated') (out[name] = out[name] || []).push(v);
    else out[name] = v;
  };
  while (i < end) {
    const key = varint();
    const number = Math.floor(key / 8);
    const type = key % 8;
    const name = byNumber[number];
    const kind = name && fields[name][1];
    if (type === VARINT) {
      const v = varint();
      if (name) put(name, v >= 2 ** 63 ? v - 2 ** 64 : v >= 2 ** 31 && kind === 'int32' ? v - 2 ** 32 : v);
    } else if (type === I64 || type === I32) {
      const n = type === I64 ? 8 : 4;
      if (i + n > end) throw new Error(`field ${number} overruns the message`);
      // a copy: a Node Buffer's subarray shares its pool's memory
      if (name && kind === 'double') put(name, new Float64Array(new Uint8Array(bytes.subarray(i, i + 8)).buffer)[0]);
      i += n;
    } else if (type === LEN) {
      const n = varint();
      if (i + n > end) throw new Error(`field ${number} (${n} bytes) overruns the message by ${i + n - end} bytes`);
      if (name) {
        if (kind === 'string') put(name, lengthOnly && lengthOnly[name] ? { bytes: n } : utf8Text(bytes, i, i + n));
        else if (typeof kind === 'object' && !kind.enum) put(name, decodeMessage(kind, bytes, i, i + n));
      }
      i += n;
    } else throw new Error(`wire type ${type} of field ${number} is not protobuf`);
  }
  return out;
}
