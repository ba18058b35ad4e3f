/*
 * Studies 003 and 004: gRPC vs GraphQL round trips, small and big messages.
 * gRPC unary on a warm channel per VU and on a new channel per call, vs GraphQL
 * over HTTP with keep-alive and with a fresh connection per request; each
 * iteration sends a small (~100 B) and a big (BIG_SIZE, default 1 MB) message:
 * payload(size) / books.v1.Books/Payload. Beside them, the gRPC streams:
 * grpc-bidi sends the same messages one after another on one long-lived
 * bidirectional stream per VU and step (PayloadStream, timed request -> response:
 * gRPC's counterpart of many operations on one WebSocket), and grpc-client-stream
 * uploads 10 (small) or UPLOAD_BOOKS (default 1000, big) books in one client
 * stream (UploadBooks, timed from the first write to the summary).
 * The browser's RPC beside them (servers/connect, k6's http): Payload over the
 * Connect protocol in JSON (connect-json) and binary protobuf (connect-proto), each
 * on HTTP/1.1 keep-alive, a fresh connection per call and HTTP/2 over TLS, and over
 * gRPC-Web (a framed POST, the trailers read from the body). k6 reads an answer
 * whole, so a Connect or gRPC-Web server stream could only be timed to its end: no
 * streaming lane for them.
 * Servers: the GraphQL server and the gRPC server behind Toxiproxy; cleartext
 * (-e TLS=true: gRPC over TLS, HTTP/2 for keep-alive, HTTPS for fresh).
 * Default profile: lan, the studies' localhost; try -e PROFILE=4g to see set-up
 * costs in round trips.
 * Look at: op_duration{payload:small} p50: grpc (warm), grpc-bidi and
 * http-keepalive are close, grpc-fresh and http-fresh pay their set-up (the
 * studies' "10x"); the cold first call (conn:cold) apart from warm ones;
 * setup_duration{phase:grpc_connect}.
 * A call starts only if it fits before its step ends (lib/fit.js), so steps end
 * without cutting a big message in flight.
 * The big message on a new connection also pays TCP's slow start (a note under
 * the table gives the model's share; compare --profile 3g,3g+ideal).
 *
 *   npx k6pack up && k6 run scenarios/grpc-vs-graphql.js
 *   k6 run -e PROFILE=4g -e BIG_SIZE=200000 scenarios/grpc-vs-graphql.js
 *
 * Its plan at LOAD=ci (`npx k6pack plan grpc-vs-graphql --load ci`; dev/plan-headers.js writes it):
 *   grpc-vs-graphql under lan (R 0 ms, down ∞ / up ∞ kbit/s), load ci, closed workload: 28 k6 scenarios, 36.4 s in all
 *     k6 scenario             executor      VUs or rate  start  duration  graceful stop
 *     grpc_c1                 constant-vus  1 VU         0s     1s        0.3s
 *     grpc_c4                 constant-vus  4 VUs        1.3s   1s        0.3s
 *     grpc_fresh_c1           constant-vus  1 VU         2.6s   1s        0.3s
 *     grpc_fresh_c4           constant-vus  4 VUs        3.9s   1s        0.3s
 *     http_keepalive_c1       constant-vus  1 VU         5.2s   1s        0.3s
 *     http_keepalive_c4       constant-vus  4 VUs        6.5s   1s        0.3s
 *     http_fresh_c1           constant-vus  1 VU         7.8s   1s        0.3s
 *     http_fresh_c4           constant-vus  4 VUs        9.1s   1s        0.3s
 *     https_keepalive_c1      constant-vus  1 VU         10.4s  1s        0.3s
 *     https_keepalive_c4      constant-vus  4 VUs        11.7s  1s        0.3s
 *     grpc_bidi_c1            constant-vus  1 VU         13s    1s        0.3s
 *     grpc_bidi_c4            constant-vus  4 VUs        14.3s  1s        0.3s
 *     grpc_client_stream_c1   constant-vus  1 VU         15.6s  1s        0.3s
 *     grpc_client_stream_c4   constant-vus  4 VUs        16.9s  1s        0.3s
 *     connect_json_c1         constant-vus  1 VU         18.2s  1s        0.3s
 *     connect_json_c4         constant-vus  4 VUs        19.5s  1s        0.3s
 *     connect_json_fresh_c1   constant-vus  1 VU         20.8s  1s        0.3s
 *     connect_json_fresh_c4   constant-vus  4 VUs        22.1s  1s        0.3s
 *     connect_json_h2_c1      constant-vus  1 VU         23.4s  1s        0.3s
 *     connect_json_h2_c4      constant-vus  4 VUs        24.7s  1s        0.3s
 *     connect_proto_c1        constant-vus  1 VU         26s    1s        0.3s
 *     connect_proto_c4        constant-vus  4 VUs        27.3s  1s        0.3s
 *     connect_proto_fresh_c1  constant-vus  1 VU         28.6s  1s        0.3s
 *     connect_proto_fresh_c4  constant-vus  4 VUs        29.9s  1s        0.3s
 *     connect_proto_h2_c1     constant-vus  1 VU         31.2s  1s        0.3s
 *     connect_proto_h2_c4     constant-vus  4 VUs        32.5s  1s        0.3s
 *     grpc_web_c1             constant-vus  1 VU         33.8s  1s        0.3s
 *     grpc_web_c4             constant-vus  4 VUs        35.1s  1s        0.3s
 *   where the figures come from:
 *     VUs or rate: each step's concurrency (LOAD=ci's steps: 1, 4)
 *     duration: LOAD=ci's shortest step (its 10 s / 28 steps, less the graceful stop, is shorter)
 *     graceful stop: LOAD=ci's
 *     start: each step after the one before and its graceful stop (lanes run alone, one after another)
 * (end of the plan)
 */
import exec from 'k6/execution';
import declare from './specs/grpc-vs-graphql.js';
import { fitter, waitOutStep } from './lib/fit.js';
import { BidiStream, Channel, clientStream, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { dropKeptConnection, rpcCall, validateRpcPayload } from './lib/rpc-web.js';
import { remainingMs } from './lib/load.js';
import { recordOp, withTag } from './lib/metrics.js';
import { PAYLOAD_QUERY, validateGrpcPayload, validatePayload } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';
import { SETTINGS } from './lib/config.js';

const decl = declare(SETTINGS);
const { TLS, PAYLOADS, BIG, UPLOADS } = decl;
const s = defineScenario(decl, { notes: slowStartNotes });
export const { options, setup, teardown, handleSummary } = s;
const fits = fitter(s);

// Init context: one client per channel kind (k6 loads the proto here).
const warm = new Channel(newClient(), { tls: TLS });
const fresh = new Channel(newClient(), { tls: TLS });
const bidiChannel = new Channel(newClient(), { tls: TLS });
const uploadChannel = new Channel(newClient(), { tls: TLS });

function grpcCalls(lane, channel, isFresh) {
  let ran = 0;
  for (const [payload, size] of PAYLOADS) {
    if (!fits(lane, { payload, conn: isFresh || !channel.connected ? 'cold' : 'warm' })) continue;
    channel.call('Payload', { size }, { validate: validateGrpcPayload(size), fresh: isFresh, tags: { payload } });
    ran++;
  }
  if (!ran) waitOutStep(s);
}

// A kept HTTP connection is opened by the VU's first request in a lane (a VU can run
// several lanes one after another, each to its own endpoint). The lane's TLS is its own:
// the scenario's TLS where it follows it, or TLS always where the lane says so.
const httpWarm = {};
function graphqlCalls({ name: lane, transport, tls }) {
  let ran = 0;
  for (const [payload, size] of PAYLOADS) {
    if (!fits(lane, { payload, conn: transport === 'http-fresh' || !httpWarm[lane] ? 'cold' : 'warm' })) continue;
    const r = graphqlHttp({
      transport,
      tls,
      query: PAYLOAD_QUERY,
      variables: { size },
      validate: validatePayload(size),
      tags: { payload },
    });
    httpWarm[lane] = r.ok;
    ran++;
  }
  if (!ran) waitOutStep(s);
}

// The browser's RPC: Payload over Connect (JSON, protobuf) and gRPC-Web, with k6's http.
// A kept connection is opened by the VU's first call.
const rpcWarm = {};
function rpcCalls({ name: lane, protocol, transport, tls }) {
  const step = exec.scenario.name;
  // Each step's first call opens the VU's connection (conn:cold).
  if (transport !== 'http-fresh' && rpcWarm[step] === undefined) {
    dropKeptConnection(tls || transport === 'http2');
    rpcWarm[step] = false;
  }
  let ran = 0;
  for (const [payload, size] of PAYLOADS) {
    if (!fits(lane, { payload, conn: transport === 'http-fresh' || !rpcWarm[step] ? 'cold' : 'warm' })) continue;
    const r = rpcCall({
      protocol,
      transport,
      tls,
      method: 'Payload',
      request: { size },
      validate: validateRpcPayload(size),
      tags: { payload },
    });
    rpcWarm[step] = r.ok;
    ran++;
  }
  if (!ran) waitOutStep(s);
}

// grpc-bidi: under the closed workload a VU's first iteration in a step keeps one
// PayloadStream for the whole step, sending small and big messages one after
// another while they fit; an open workload's arrival sends one of each on a
// stream of its own. The call that opens the channel is conn:cold.
const bidiStarted = {};
const opTags = {};
const tagsOf = (payload, conn) => (opTags[`${payload}${conn}`] ||= withTag({ payload }, 'conn', conn));

async function bidiRound(stream, lane) {
  let ran = 0;
  for (const [payload, size] of PAYLOADS) {
    const conn = bidiChannel.connected ? 'warm' : 'cold';
    if (!fits(lane, { payload, conn })) continue;
    const t0 = Date.now();
    const b = stream.get();
    const { message, at, error } = await b.send({ size });
    const problem = error || validateGrpcPayload(size)(message);
    recordOp({
      ok: !problem,
      ms: at - t0,
      tags: tagsOf(payload, conn),
      checks: { 'stream answered': !error, 'right shape and count': !problem },
      reason: problem,
    });
    ran++;
    if (error) {
      bidiChannel.reset();
      break;
    }
  }
  return ran;
}

async function grpcBidi() {
  const open = s.plan.workload === 'open';
  const name = exec.scenario.name;
  if (!open && bidiStarted[name]) return waitOutStep(s);
  bidiStarted[name] = true;
  // The stream is opened with the first message (and the channel, if it is not).
  let b = null;
  const stream = {
    get: () =>
      b && !b.ended
        ? b
        : (b = new BidiStream(bidiChannel, 'PayloadStream', { timeout: `${Math.max(1000, remainingMs() + 5000)}ms` })),
  };
  for (let round = 0; round < (open ? 1 : 100000); round++) {
    if (!(await bidiRound(stream, 'grpc_bidi'))) break;
  }
  if (b) await b.close(Math.max(0, remainingMs()));
  if (!open) waitOutStep(s);
  return undefined;
}

// grpc-client-stream: one UploadBooks call per message size, each book a message.
function booksFor(count) {
  const books = [];
  for (let i = 1; i <= count; i++)
    books.push({
      id: `book-${i}`,
      name: `Upload ${i}`,
      pageCount: 100 + (i % 900),
      author: { id: `author-${1 + (i % 1000)}`, firstName: 'Ada', lastName: 'Lovelace' },
    });
  return books;
}
const UPLOAD_BOOKS = Object.fromEntries(Object.entries(UPLOADS).map(([payload, count]) => [payload, booksFor(count)]));

async function grpcClientStream() {
  let ran = 0;
  for (const [payload] of PAYLOADS) {
    const conn = uploadChannel.connected ? 'warm' : 'cold';
    if (!fits('grpc_client_stream', { payload, conn })) continue;
    const books = UPLOAD_BOOKS[payload];
    const t0 = Date.now();
    const { message, at, error } = await clientStream(uploadChannel, 'UploadBooks', books);
    const problem =
      error ||
      (message && message.count === books.length && message.lastId === books[books.length - 1].id
        ? null
        : `expected a summary of ${books.length} books, got ${JSON.stringify(message).slice(0, 120)}`);
    recordOp({
      ok: !problem,
      ms: at - t0,
      tags: tagsOf(payload, conn),
      checks: { 'upload answered': !error, 'right shape and count': !problem },
      reason: problem,
    });
    if (error) uploadChannel.reset();
    ran++;
  }
  if (!ran) waitOutStep(s);
}

// Every lane's exec: its family's client (scenarios/lib/scenario.js dispatch); the gRPC
// lanes differ by transport (a kept or fresh channel's unary calls, a bidirectional or
// client stream).
const GRPC_CLIENTS = {
  grpc: () => grpcCalls('grpc', warm, false),
  'grpc-fresh': () => grpcCalls('grpc_fresh', fresh, true),
  'grpc-bidi': grpcBidi,
  'grpc-client-stream': grpcClientStream,
};
export const runLane = s.dispatch({
  grpc: (l) => GRPC_CLIENTS[l.transport](),
  http: graphqlCalls,
  'rpc-web': rpcCalls,
});

// The big message's time beside what TCP's slow start costs it by the model: on a
// new connection (fresh lanes) it starts from a 10-segment window; on a kept one
// the window is open. Under +ideal (or lan) the model's term is 0.
function slowStartNotes(data) {
  const first = `c${s.plan.steps[0]}`;
  const gates = s.gates.filter((g) => g.which === 'op' && g.dims.payload === 'big' && g.step === first);
  const fresh = gates.filter((g) => g.dims.conn === 'cold' && /fresh/.test(g.lane));
  const kept = gates.filter((g) => g.dims.conn === 'warm');
  if (!fresh.length) return [];
  const term = (g) => (g.expected.p50.terms.find((t) => t.name === 'window') || { ms: 0 }).ms;
  const p50 = (g) => p50Of(data, g.key);
  const show = (g) =>
    `${g.lane} ${p50(g) === null ? '-' : `${p50(g).toFixed(0)} ms`} (model ${g.expected.p50.ms.toFixed(0)})`;
  return [
    '',
    `big message (${BIG} B), p50 at ${first}: on a new connection, TCP's slow start costs ${term(fresh[0]).toFixed(0)} ms of it by the model (${fresh[0].expected.p50.formula}):`,
    `  new connection: ${fresh.map(show).join('; ')}`,
    `  kept connection (window open): ${kept.map(show).join('; ')}`,
  ];
}
