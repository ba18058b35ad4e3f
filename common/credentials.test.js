import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  checkHeaders,
  describeCredentials,
  envRefs,
  expandCredentials,
  expandDeep,
  expandEnv,
  metadataOf,
  parseHeader,
  planCredentials,
  redact,
  REDACTED,
  secretsOf,
} from './credentials.js';

const refused = (fn) => {
  try {
    fn();
  } catch (err) {
    assert.equal(typeof err, 'string');
    assert.ok(!err.includes('\n'), err);
    return err;
  }
  assert.fail('not refused');
};

test('parseHeader: curl\'s "Name: value"; a line without a name is one line saying how', () => {
  assert.deepEqual(parseHeader('Authorization: Bearer ${API_TOKEN}'), ['Authorization', 'Bearer ${API_TOKEN}']);
  assert.deepEqual(parseHeader('x-api-key:abc:def '), ['x-api-key', 'abc:def']);
  assert.match(
    refused(() => parseHeader('Authorization Bearer x')),
    /give 'Name: value'/,
  );
  assert.match(
    refused(() => parseHeader(': x')),
    /give 'Name: value'/,
  );
  assert.match(
    refused(() => parseHeader('Bad Name: x')),
    /give 'Name: value'/,
  );
});

test('checkHeaders: names are tokens and values strings', () => {
  assert.deepEqual(checkHeaders({ A: 'b' }, 'headers'), { A: 'b' });
  assert.match(
    refused(() => checkHeaders([], 'headers')),
    /headers must be an object of name: value/,
  );
  assert.match(
    refused(() => checkHeaders({ 'a b': 'x' }, 'headers')),
    /"a b" is not a header name/,
  );
  assert.match(
    refused(() => checkHeaders({ A: 1 }, 'headers')),
    /the value of A must be a string/,
  );
});

test('expandEnv: ${NAME} from the environment; an unset one is named, its value never', () => {
  const env = { API_TOKEN: 'abc123', EMPTY: '' };
  assert.deepEqual(envRefs('Bearer ${API_TOKEN} ${X_2}'), ['API_TOKEN', 'X_2']);
  assert.equal(expandEnv('Bearer ${API_TOKEN}', env, 'header A'), 'Bearer abc123');
  assert.equal(expandEnv('$API_TOKEN and ${1X}', env, 'header A'), '$API_TOKEN and ${1X}');
  assert.equal(
    refused(() => expandEnv('${NOPE}', env, 'header A')),
    'header A: ${NOPE} is not set: export NOPE before running (its value is never printed)',
  );
  assert.match(
    refused(() => expandEnv('${EMPTY}', env, 'header A')),
    /\$\{EMPTY\} is not set/,
  );
  assert.deepEqual(expandDeep({ a: ['${API_TOKEN}', 2], b: { c: 'x${API_TOKEN}' }, d: null }, env, 'payload'), {
    a: ['abc123', 2],
    b: { c: 'xabc123' },
    d: null,
  });
  assert.match(
    refused(() => expandDeep({ b: { c: '${NOPE}' } }, env, 'the init payload')),
    /^the init payload\.b\.c:/,
  );
});

test("expandCredentials: gRPC metadata is the headers' with names lowercased, unless given", () => {
  const creds = { headers: { Authorization: 'Bearer ${T}' }, initPayload: { token: '${T}' }, metadata: null };
  const env = { T: 'tok-123456' };
  assert.deepEqual(expandCredentials(creds, env), {
    headers: { Authorization: 'Bearer tok-123456' },
    initPayload: { token: 'tok-123456' },
    metadata: { authorization: 'Bearer tok-123456' },
  });
  assert.deepEqual(metadataOf({ ...creds, metadata: { 'x-key': 'k' } }), { 'x-key': 'k' });
  assert.deepEqual(expandCredentials({}, env), { headers: {}, initPayload: null, metadata: {} });
});

test('secretsOf and redact: every value, and a long token within it, hidden whole', () => {
  const expanded = {
    headers: { Authorization: 'Bearer tok-1234567890', 'X-Short': 'ab' },
    initPayload: { nested: { key: 'payload-secret' } },
    metadata: { authorization: 'Bearer tok-1234567890' },
  };
  const secrets = secretsOf(expanded);
  assert.deepEqual(secrets, ['Bearer tok-1234567890', 'tok-1234567890', 'payload-secret']);
  assert.equal(
    redact('sent Bearer tok-1234567890; echoed tok-1234567890 and payload-secret; ab stays', secrets),
    `sent ${REDACTED}; echoed ${REDACTED} and ${REDACTED}; ab stays`,
  );
  assert.equal(redact('nothing here', []), 'nothing here');
});

test('planCredentials: ${VAR} references stay, literal values move to K6PACK_SECRET_n', () => {
  const p = planCredentials({
    headers: { Authorization: 'Bearer literal-token', 'X-Env': '${API_KEY}' },
    initPayload: { authorization: 'Bearer ${API_TOKEN}', id: 7, key: 'literal-key' },
    metadata: null,
  });
  assert.deepEqual(p.credentials, {
    headers: { Authorization: '${K6PACK_SECRET_1}', 'X-Env': '${API_KEY}' },
    initPayload: { authorization: 'Bearer ${API_TOKEN}', id: 7, key: '${K6PACK_SECRET_2}' },
    metadata: null,
  });
  assert.deepEqual(p.env, { K6PACK_SECRET_1: 'Bearer literal-token', K6PACK_SECRET_2: 'literal-key' });
  assert.deepEqual(p.literal, ['header Authorization', 'the init payload.key']);
  assert.ok(!JSON.stringify(p.credentials).includes('literal'));
  // k6 gets back what was given.
  const env = { ...p.env, API_KEY: 'k', API_TOKEN: 't' };
  assert.deepEqual(expandCredentials(p.credentials, env).headers, {
    Authorization: 'Bearer literal-token',
    'X-Env': 'k',
  });
});

test('describeCredentials: names only', () => {
  assert.equal(describeCredentials({ headers: {} }), null);
  assert.equal(
    describeCredentials({ headers: { A: 'x', B: 'y' }, initPayload: { token: 's' }, metadata: { m: 'z' } }),
    'headers A, B, an init payload (token), gRPC metadata m (values hidden)',
  );
});
