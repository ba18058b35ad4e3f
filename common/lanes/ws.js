// The WebSocket family: GraphQL over graphql-transport-ws (scenarios/lib/sessions.js
// wsSession on scenarios/lib/ws.js GraphqlWs), its transport and its lanes. Plain ES
// module with no imports; common/lanes/http.js says what a transport's fields mean.
export const WS_TRANSPORTS = {
  // The HTTP Upgrade and its 101, then connection_init / connection_ack; framing: the
  // frame headers and the graphql-transport-ws envelope.
  ws: { phases: ['ws_upgrade', 'ws_init'], framing: { req: 40, res: 60 }, wholeMs: true },
};

// setups: the set-up phases the client measures apart (setup_duration{phase}); a
// scenario gates them where it asks (lane(name, { setups: true })). policy: the ws lanes
// follow graphql-ws's defaults, keepAlive off: they do not ping yet (a busy socket's
// operation times out before a ping would find the death: the model gives 0.04 s at p50
// under lte+move for the ping, common/recovery.js). sub_ws holds one subscription
// through the link's events with graphql-ws's keepAlive (10 s, 5 s pong timeout) and no
// resume.
const client = 'scenarios/lib/sessions.js wsSession';
const setups = ['ws_upgrade', 'ws_init'];
export const WS_LANES = [
  { name: 'ws', transport: 'ws', tls: false, setups, policy: 'ws-nokeepalive', api: 'ws', client },
  { name: 'wss', transport: 'ws', tls: true, setups, policy: 'ws-nokeepalive', api: 'ws', client },
  // A subscription held through the link's events (unstable).
  {
    name: 'sub_ws',
    transport: 'ws',
    tls: false,
    variant: 'subscription',
    policy: 'sub-ws',
    client: 'scenarios/lib/held-subscription.js',
  },
];
