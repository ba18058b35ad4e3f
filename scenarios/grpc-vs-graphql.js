/*
 * Studies 003 and 004: gRPC vs GraphQL round trips, small and big messages.
 * gRPC unary on a warm channel per VU and on a new channel per call, vs GraphQL
 * over HTTP with keep-alive and with a fresh connection per request; each
 * iteration sends a small (~100 B) and a big (BIG_SIZE, default 1 MB) message:
 * payload(size) / books.v1.Books/Payload.
 * Servers: the GraphQL server and the gRPC server behind Toxiproxy; cleartext
 * (-e TLS=true: gRPC over TLS, HTTP/2 for keep-alive, HTTPS for fresh).
 * Default profile: lan, the studies' localhost; try -e PROFILE=4g to see set-up
 * costs in round trips.
 * Look at: op_duration{payload:small} p50: grpc (warm) vs http-keepalive are
 * close, grpc-fresh and http-fresh pay their set-up (the studies' "10x"); the
 * cold first call (conn:cold) apart from warm ones; setup_duration{phase:grpc_connect}.
 * The big message on a new connection also pays TCP's slow start (a note under
 * the table gives the model's share; compare --profile 3g,3g+ideal).
 *
 *   npx k6pack up && k6 run scenarios/grpc-vs-graphql.js
 *   k6 run -e PROFILE=4g -e BIG_SIZE=200000 scenarios/grpc-vs-graphql.js
 */
import declare from './plans/grpc-vs-graphql.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { PAYLOAD_QUERY, validateGrpcPayload, validatePayload } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';
import { p50Of } from './lib/summary.js';

const plan = declare(__ENV);
const { TLS, PAYLOADS, BIG } = plan;
const s = defineScenario(plan, { notes: slowStartNotes });
export const { options, setup, teardown, handleSummary } = s;

// Init context: one client per channel kind (k6 loads the proto here).
const warm = new Channel(newClient(), { tls: TLS });
const fresh = new Channel(newClient(), { tls: TLS });

function grpcCalls(channel, isFresh) {
  for (const [payload, size] of PAYLOADS) {
    channel.call('Payload', { size }, { validate: validateGrpcPayload(size), fresh: isFresh, tags: { payload } });
  }
}

export function grpcWarm() {
  grpcCalls(warm, false);
}
export function grpcFresh() {
  grpcCalls(fresh, true);
}

function graphqlCalls(transport) {
  for (const [payload, size] of PAYLOADS) {
    graphqlHttp({ transport, tls: TLS, query: PAYLOAD_QUERY, variables: { size }, validate: validatePayload(size), tags: { payload } });
  }
}

export function httpKeepalive() {
  graphqlCalls(TLS ? 'http2' : 'http-keepalive');
}
export function httpFresh() {
  graphqlCalls('http-fresh');
}

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
  const show = (g) => `${g.lane} ${p50(g) === null ? '-' : `${p50(g).toFixed(0)} ms`} (model ${g.expected.p50.ms.toFixed(0)})`;
  return [
    '',
    `big message (${BIG} B), p50 at ${first}: on a new connection, TCP's slow start costs ${term(fresh[0]).toFixed(0)} ms of it by the model (${fresh[0].expected.p50.formula}):`,
    `  new connection: ${fresh.map(show).join('; ')}`,
    `  kept connection (window open): ${kept.map(show).join('; ')}`,
  ];
}
