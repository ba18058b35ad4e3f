// scenarios/lib/protowire.js, the protobuf wire format k6's http lanes write and read,
// checked against protobufjs (a codec this project did not write): every kind it
// encodes decodes there to the same values, and what protobufjs encodes it reads back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import { decodeMessage, encodeMessage } from '../scenarios/lib/protowire.js';

const { root } = protobuf.parse(`syntax = "proto3";
  message Sub { int64 x = 1; }
  enum E { A = 0; B = 2; }
  message M { string id = 1; int32 n = 2; bool f = 3; repeated string tags = 4; E e = 5; sint32 s = 6;
    double d = 7; bytes b = 8; Sub sub = 9; uint64 big = 10; int64 neg = 11; float fl = 12; fixed32 fx = 13; }`);
const M = root.lookupType('M');
const TABLE = {
  id: [1, 'string'],
  n: [2, 'int32'],
  f: [3, 'bool'],
  tags: [4, 'string', 'repeated'],
  e: [5, { enum: { A: 0, B: 2 } }],
  s: [6, 'sint'],
  d: [7, 'double'],
  b: [8, 'bytes'],
  sub: [9, { x: [1, 'int64'] }],
  big: [10, 'uint'],
  neg: [11, 'int64'],
  fl: [12, 'float'],
  fx: [13, 'fixed32'],
};

test('every kind it writes, protobufjs reads as written', () => {
  const message = {
    id: 'é ✓ 𝄞',
    n: -1,
    f: true,
    tags: ['a', 'b'],
    e: 'B',
    s: -3,
    d: 1.5,
    b: 'AQI=',
    sub: { x: '12345678901' },
    big: 300,
    neg: -5000000000,
    fl: 0.5,
    fx: 4000000000,
  };
  const read = M.toObject(M.decode(encodeMessage(TABLE, message)), { longs: String, enums: String, bytes: String });
  assert.deepEqual(read, { ...message, sub: { x: '12345678901' }, big: '300', neg: '-5000000000' });
});

test('proto3 defaults stay off the wire; an unknown field name throws', () => {
  assert.equal(encodeMessage(TABLE, { id: '', n: 0, f: false }).length, 0);
  assert.throws(() => encodeMessage(TABLE, { nope: 1 }), /no field "nope"/);
});

test('what protobufjs writes, it reads; a string may be kept as its length; a cut message throws', () => {
  const bytes = M.encode(M.fromObject({ id: 'book-7', n: 42, sub: { x: 9 }, d: 2.25, tags: ['x'] })).finish();
  assert.deepEqual(decodeMessage(TABLE, bytes), { id: 'book-7', n: 42, sub: { x: 9 }, d: 2.25, tags: ['x'] });
  assert.deepEqual(decodeMessage(TABLE, bytes, 0, bytes.length, { id: true }).id, { bytes: 6 });
  assert.deepEqual(decodeMessage({}, bytes), {}, 'an empty table skips every field');
  assert.throws(() => decodeMessage(TABLE, bytes.slice(0, 5)), /overruns the message/);
});
