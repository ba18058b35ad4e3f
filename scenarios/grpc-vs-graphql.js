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
 *
 *   npx k6pack up && k6 run scenarios/grpc-vs-graphql.js
 *   k6 run -e PROFILE=4g -e BIG_SIZE=200000 scenarios/grpc-vs-graphql.js
 */
import declare from './plans/grpc-vs-graphql.js';
import { Channel, newClient } from './lib/grpc.js';
import { graphqlHttp } from './lib/http.js';
import { PAYLOAD_QUERY, validateGrpcPayload, validatePayload } from './lib/queries.js';
import { defineScenario } from './lib/scenario.js';

const plan = declare(__ENV);
const { TLS, PAYLOADS } = plan;
const s = defineScenario(plan);
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
