// The round-trip model of shared/NETWORK.md, as the report draws it next to the
// measurements: an operation on a warm connection costs R + q/Bu + s/Bd + t;
// a new TCP connection adds R, TLS 1.3 adds R; a WebSocket upgrade R and the
// graphql-transport-ws init R; k6's gRPC connect waits for the server's HTTP/2
// SETTINGS, so a new channel adds 2R (thresholds.json's $model says the same).
// A pushed event travels one way: R/2 + s/Bd.

// Round trips of one operation, by transport (null: the model does not say).
export function roundTrips(transport, tls) {
  switch (transport) {
    case 'ws':
    case 'http-keepalive':
    case 'http2':
    case 'grpc':
    case 'grpc-stream':
    case 'http-poll':
      return 1;
    case 'http-fresh':
      return tls ? 3 : 2;
    case 'grpc-fresh':
      return tls ? 4 : 3;
    default:
      return null;
  }
}

// Seconds -> ms to move `bytes` at `kbps` (0 when unlimited).
export const transferMs = (bytes, kbps) => (kbps ? (bytes * 8) / kbps : 0);

// The model for one step of a run: { ms, formula } or null.
//   step: summary.json steps[] entry; row: its row without dims (server time), if any.
export function predictStep(run, step, row) {
  const net = run.network;
  if (!net || !step.latency || !step.latency.count) return null;
  const R = net.rttMs || 0;
  const ops = step.latency.count;
  const up = step.bytesSent / ops;
  const down = step.bytesReceived / ops;
  const server = row?.metrics?.['server_duration{part:total}']?.avg || 0;
  if (run.latencyMetric === 'push_latency') {
    if (step.transport === 'http-poll') return null; // its wait depends on the poll interval
    const size = Number(run.hints?.pushSize) || 0;
    return { ms: R / 2 + transferMs(size, net.downKbps), formula: `R/2 + event/Bd` };
  }
  const k = roundTrips(step.transport, step.tls);
  if (k === null || step.variant === 'atomic') return null; // atomic documents: rounds depend on the page size
  const ms = k * R + transferMs(up, net.upKbps) + transferMs(down, net.downKbps) + server;
  return { ms, formula: `${k === 1 ? '' : k}R + ${Math.round(up)} B/Bu + ${Math.round(down)} B/Bd${server ? ' + server' : ''}` };
}

// WebSocket set-up, once per socket: upgrade 2R (TCP + upgrade; 3R with TLS), init R.
export function predictWsSetup(run, tls) {
  const R = run.network?.rttMs || 0;
  return { upgrade: (tls ? 3 : 2) * R, init: R };
}
