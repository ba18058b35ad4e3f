// The protobuf wire format, as much of it as the Connect and gRPC-Web lanes need:
// k6's http module sends and receives bytes, and k6 has no protobuf codec outside its
// gRPC client. Messages are described by a table of fields ({ name: [number, kind] },
// kind 'string', 'int32', 'double' or a nested table), enough for books.proto's
// requests and answers (protobuf.dev/programming-guides/encoding). Plain ES module:
// k6 and Node (its test) load it.

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

function pushVarint(out, n) {
  let v = n < 0 ? n + 2 ** 64 : n; // a negative int32 is ten bytes of two's complement
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

function encodeInto(out, fields, message) {
  for (const name of Object.keys(fields)) {
    const value = message[name];
    if (value === undefined || value === null || value === '' || value === 0) continue; // proto3 defaults
    const [number, kind] = fields[name];
    if (kind === 'int32') {
      pushVarint(out, number * 8 + VARINT);
      pushVarint(out, value);
    } else if (kind === 'double') {
      pushVarint(out, number * 8 + I64);
      const b = new Uint8Array(new Float64Array([value]).buffer);
      for (let i = 0; i < 8; i++) out.push(b[i]);
    } else {
      const bytes = kind === 'string' ? utf8Bytes(String(value)) : encodeInto([], kind, value);
      pushVarint(out, number * 8 + LEN);
      pushVarint(out, bytes.length);
      for (let i = 0; i < bytes.length; i++) out.push(bytes[i]);
    }
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
  while (i < end) {
    const key = varint();
    const number = Math.floor(key / 8);
    const type = key % 8;
    const name = byNumber[number];
    const kind = name && fields[name][1];
    if (type === VARINT) {
      const v = varint();
      if (name) out[name] = v >= 2 ** 63 ? v - 2 ** 64 : v >= 2 ** 31 && kind === 'int32' ? v - 2 ** 32 : v;
    } else if (type === I64 || type === I32) {
      const n = type === I64 ? 8 : 4;
      if (i + n > end) throw new Error(`field ${number} overruns the message`);
      if (name && kind === 'double') out[name] = new Float64Array(bytes.slice(i, i + 8).buffer)[0];
      i += n;
    } else if (type === LEN) {
      const n = varint();
      if (i + n > end) throw new Error(`field ${number} (${n} bytes) overruns the message by ${i + n - end} bytes`);
      if (name) {
        if (kind === 'string') out[name] = lengthOnly && lengthOnly[name] ? { bytes: n } : utf8Text(bytes, i, i + n);
        else if (typeof kind === 'object') {
          const nested = decodeMessage(kind, bytes, i, i + n);
          if (fields[name][2] === 'repeated') (out[name] = out[name] || []).push(nested);
          else out[name] = nested;
        }
      }
      i += n;
    } else throw new Error(`wire type ${type} of field ${number} is not protobuf`);
  }
  return out;
}
