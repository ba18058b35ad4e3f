// The lane catalogue: every lane the pack runs, declared once, for k6 and Node alike
// (plain ES module). A lane is a way of carrying a scenario's operation: a transport,
// TLS or not, a protocol; one file per family (http.js, ws.js, grpc.js, rpc-web.js)
// declares its transports and its lanes. The specs (common/scenario.js lane()), the
// round-trip model's transport terms (common/model.js), `run api`'s lanes
// (common/your-api.js API_LANES), the recovery model (common/recovery.js) and the
// tests' lane lists read it.
//
// An entry: { name, family, transport, tls, overTls (the transport a kept connection
// becomes over TLS), protocol and variant (the browser's RPC, a subscription), setups
// (set-up phases its client measures apart), phases (the model's set-up round trips),
// framing ({ req, res } bytes around its messages, TLS records apart), client (the
// module that drives it), policy (its client's recovery policy, common/policies.js),
// api (the kind of endpoint `run api` needs for it: http, ws, grpc, connect; or none) }.
import { GRPC_LANES, GRPC_TRANSPORTS } from './grpc.js';
import { HTTP_LANES, HTTP_TRANSPORTS } from './http.js';
import { RPC_WEB_LANES, rpcWebFraming } from './rpc-web.js';
import { WS_LANES, WS_TRANSPORTS } from './ws.js';

// Every transport, with its family: { phases, tls, fresh, framing } (common/lanes/http.js).
export const TRANSPORTS = Object.fromEntries(
  [
    ['http', HTTP_TRANSPORTS],
    ['ws', WS_TRANSPORTS],
    ['grpc', GRPC_TRANSPORTS],
  ].flatMap(([family, transports]) => Object.entries(transports).map(([t, v]) => [t, { family, ...v }])),
);

const transportOf = (transport) => {
  const t = TRANSPORTS[transport];
  if (!t) throw new Error(`lanes: no transport ${JSON.stringify(transport)} (${Object.keys(TRANSPORTS).join(', ')})`);
  return t;
};

// A transport's cost terms for the round-trip model (common/lanes/http.js says what each
// means): the CPU a request costs beyond a keep-alive HTTP/1.1 one (ms), the least segments
// a message travels in, and whether k6 times its operations in whole milliseconds.
export const requestCpuMsOf = (transport) => TRANSPORTS[transport]?.requestCpuMs || 0;
export const messageSegmentsOf = (transport) => TRANSPORTS[transport]?.messageSegments || 1;
export const wholeMsOf = (transport) => Boolean(TRANSPORTS[transport]?.wholeMs);

// Transports that open a connection for every operation.
export const FRESH_TRANSPORTS = new Set(Object.keys(TRANSPORTS).filter((t) => TRANSPORTS[t].fresh));

// The set-up round trips a new connection of a transport pays: TCP, TLS where the lane
// has it (or the transport always does), then the transport's own.
export function setupPhasesOf(transport, tls) {
  const t = transportOf(transport);
  return [...(tls || t.tls === 'always' ? ['tcp', 'tls'] : ['tcp']), ...t.phases];
}

// The bytes a transport adds around a request and a response ({ req, res }, TLS records
// apart); protocol: the browser's RPC, whose headers are its own on the HTTP transports.
// warm: on a connection that has carried a call before, where the transport says what its
// later calls add (warmFraming: HPACK's indexed headers); else its first call's.
export const framingOf = (transport, protocol, warm = false) => {
  if (protocol) return rpcWebFraming(protocol, transport);
  const t = transportOf(transport);
  return (warm && t.warmFraming) || t.framing;
};

const withFamily = (family, lanes) =>
  lanes.map((l) => ({
    ...l,
    family,
    setups: l.setups || [],
    phases: setupPhasesOf(l.transport, l.tls),
    framing: framingOf(l.transport, l.protocol),
  }));

// Every lane, in the order `run api` runs them (common/your-api.js API_LANES).
export const LANES = [
  ...withFamily('http', HTTP_LANES),
  ...withFamily('ws', WS_LANES),
  ...withFamily('grpc', GRPC_LANES),
  ...withFamily('rpc-web', RPC_WEB_LANES),
];
const BY_NAME = Object.fromEntries(LANES.map((l) => [l.name, l]));

// A lane of the catalogue by name (an entry passes through).
export function laneEntry(lane) {
  if (typeof lane === 'object' && lane) return lane;
  const l = BY_NAME[lane];
  if (!l)
    throw new Error(`lanes: no lane ${JSON.stringify(lane)} in common/lanes/ (${Object.keys(BY_NAME).join(', ')})`);
  return l;
}

// A lane's transport and TLS when a scenario (TLS=true) or an endpoint sets its TLS: a
// lane with overTls (a kept HTTP/1.1 connection) becomes that transport over TLS where
// the server offers h2 (k6 takes h2 wherever TLS offers it).
export function atTls(lane, tls) {
  const l = laneEntry(lane);
  return { transport: tls && l.overTls ? l.overTls : l.transport, tls: Boolean(tls) };
}
