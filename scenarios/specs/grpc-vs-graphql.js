// Studies 003 and 004's plan (scenarios/grpc-vs-graphql.js runs it).
import { machineOf } from '../../common/machine.js';
import { setting } from '../../common/settings.js';
import { laneEntry } from '../../common/lanes/catalogue.js';
import { RPC_WEB_PROTOCOLS } from '../../common/lanes/rpc-web.js';
import { K6_BYTE_MS, linkOf, transferMs } from '../../common/model.js';
import { callMs, DEFAULT_COLUMNS, lane, laneModelSeconds, rttOf, setupColumn } from '../../common/scenario.js';

export const SMALL = 100;

// A payload of `size` bytes each way round: payload(size) answers { size, data } with `size`
// characters of data in JSON (~40 B around it), asked in ~110 B; Payload answers the bytes
// with a 5-byte field header, asked in ~10. (The mobile scenario's MOBILE_ANSWER_BYTES too.)
export const PAYLOAD_OP = {
  graphql: (size) => ({ reqBytes: 110, resBytes: size + 40, serverMs: 1 }),
  grpc: (size) => ({ reqBytes: 10, resBytes: size + 10, serverMs: 1 }),
};

// An uploaded book on the wire (UploadBooks, one message each): ~65 B of protobuf, the
// 5-byte gRPC prefix and a 9-byte HTTP/2 DATA frame header.
export const BOOK_WIRE_BYTES = 80;
// k6's own time per message it writes to a stream (JavaScript object -> protobuf),
// and the server's per book it reads: measured under lan (1000-book uploads, p50).
export const K6_WRITE_MS = 0.03;
export const SERVER_BOOK_MS = 0.005;

// -> { TLS, BIG, PAYLOADS, UPLOADS, ...declaration }
// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = { runs: true, load: 'gate' };

export default function declare(settings) {
  const TLS = setting(settings, 'TLS');
  const BIG = setting(settings, 'BIG_SIZE');
  const BIG_UPLOAD = setting(settings, 'UPLOAD_BOOKS');
  const PAYLOADS = [
    ['small', SMALL],
    ['big', BIG],
  ];
  // The client stream's small and big uploads, in books.
  const UPLOADS = { small: 10, big: BIG_UPLOAD };
  const bytes = Object.fromEntries(PAYLOADS);
  // PAYLOAD_OP's bytes. A kept connection's first big answer comes while its window is still
  // the initial one (a small call opened it): it pays slow start's rounds. A gRPC lane's step holds
  // a second big call (laneSeconds below), so that first one is the warm row's tail
  // (p95); a GraphQL keep-alive lane's step holds one big call per VU, so it is the
  // row's median too.
  const firstBig = (op, onlyOne) => (dims, link) => {
    const e = op(dims);
    if (!(dims.conn === 'warm' && dims.payload === 'big' && link && link.initialWindow)) return e;
    const young = { ...e, window: link.initialWindow };
    return { p50: onlyOne ? young : e, p95: young };
  };
  const graphql = firstBig((dims) => ({ conn: dims.conn, ...PAYLOAD_OP.graphql(bytes[dims.payload]) }), true);
  const grpc = firstBig(
    (dims) => ({
      conn: dims.conn,
      ...PAYLOAD_OP.grpc(bytes[dims.payload]),
      // k6 decodes the big answer (protobuf -> JavaScript: ~15 ms a MB), CPU that a
      // c4 step on 2 cores shares (common/model.js contentionMs); HTTP/JSON's 8-9 ms
      // is left to the policy's 20 ms.
      clientMs: dims.payload === 'big' ? bytes.big * K6_BYTE_MS : 0,
    }),
    false,
  );
  // UploadBooks: every book up, one summary back once the stream ends.
  // k6 writes the books while the first ones are already on the link, and the server
  // reads them as they come: on a link slower than that, their time hides behind the
  // upload's (measured under lte: 164 ms where adding them in full said 181). That takes
  // a second core: on one (taskset -c 0, CPU_CORES=1) k6's script writing the messages
  // and its HTTP/2 writer sending them take turns, and the 100 KB upload under lte took
  // 185 ms against 150.8 with the writes hidden (2026-11-29), so there they add in full.
  const { cores } = machineOf(settings);
  const upload = (dims, link) => {
    const books = UPLOADS[dims.payload];
    const reqBytes = books * BOOK_WIRE_BYTES;
    const onLink = link && cores > 1 ? transferMs(reqBytes, link.upKbps) : 0;
    const hidden = (ms) => Math.max(0, ms - onLink);
    return {
      conn: dims.conn,
      reqBytes,
      resBytes: 30,
      serverMs: 1 + hidden(books * SERVER_BOOK_MS),
      clientMs: hidden(books * K6_WRITE_MS),
      upWindow: true,
    };
  };
  // The browser's RPC (servers/connect): Payload over Connect (JSON or binary protobuf)
  // and gRPC-Web. The message around `size` bytes of data: {"size":N,"data":"..."} or
  // its protobuf (a 5-byte prefix more, and the trailer frame, for gRPC-Web): Payload's
  // bytes and the headers around it are the protocol's (common/lanes/rpc-web.js).
  const rpcWeb = (protocol) =>
    firstBig(
      (dims) => ({
        conn: dims.conn,
        protocol,
        reqBytes: RPC_WEB_PROTOCOLS[protocol].payload.req,
        resBytes: bytes[dims.payload] + RPC_WEB_PROTOCOLS[protocol].payload.res,
        serverMs: 1,
      }),
      true,
    );
  const rpcLane = (name, more) => lane(name, { model: rpcWeb(laneEntry(name).protocol), ...more });
  // A kept connection's first call opens it (conn:cold), the rest are warm; a fresh
  // lane's every call is cold.
  const kept = PAYLOADS.flatMap(([payload]) => [
    { payload, conn: 'warm' },
    { payload, conn: 'cold' },
  ]);
  const fresh = PAYLOADS.map(([payload]) => ({ payload, conn: 'cold' }));
  const lanes = [
    lane('grpc', { tls: TLS, dims: kept, model: grpc, setups: true }),
    lane('grpc_fresh', { tls: TLS, dims: fresh, model: grpc }),
    // HTTP/2 with TLS=true: k6 takes h2 wherever TLS offers it (common/lanes/http.js).
    lane('http_keepalive', { tls: TLS, dims: kept, model: graphql }),
    lane('http_fresh', { tls: TLS, dims: fresh, model: graphql }),
    // HTTP/1.1 kept over TLS, whatever TLS says: a server that offers no h2.
    lane('https_keepalive', { dims: kept, model: graphql }),
    // The same small and big messages one after another on one long-lived
    // bidirectional stream per VU and step (PayloadStream): gRPC's counterpart of
    // many operations on one WebSocket.
    lane('grpc_bidi', { tls: TLS, dims: kept, model: grpc, setups: true }),
    // A client stream of books (UploadBooks), answered once it ends: 10 (small) or UPLOAD_BOOKS (big).
    lane('grpc_client_stream', { tls: TLS, dims: kept, model: upload }),
    // Connect and gRPC-Web, as a browser's fetch sends them: HTTP/1.1 keep-alive
    // (HTTP/2 with TLS=true: k6 takes h2 wherever TLS offers it), a fresh connection
    // per call, and HTTP/2 over TLS.
    ...['connect_json', 'connect_proto'].flatMap((name) => [
      rpcLane(name, { tls: TLS, dims: kept }),
      rpcLane(`${name}_fresh`, { tls: TLS, dims: fresh }),
      rpcLane(`${name}_h2`, { dims: kept }),
    ]),
    rpcLane('grpc_web', { tls: TLS, dims: kept }),
  ];
  return {
    TLS,
    BIG,
    PAYLOADS,
    UPLOADS,
    name: 'grpc-vs-graphql',
    defaultProfile: 'lan',
    lanes,
    columns: [...DEFAULT_COLUMNS, setupColumn('grpc connect p50', 'grpc_connect')],
    // The slowest lane's small and big call by the model (set-up, slow start, loss and
    // the server's time included), and k6's decoding of the big message.
    iterationSeconds: (profile) =>
      Math.max(...lanes.map((l) => laneModelSeconds(l, profile, { by: 'payload' }))) + 0.05,
    // A lane's step holds a VU's first iteration (its first call opens the
    // connection) and, for a kept connection, one warm small call, each as long as
    // the model says with a margin: calls start only if they fit before the step
    // ends (scenarios/lib/fit.js), so the last one in flight needs only a little
    // time to close (gracefulStop), not a whole iteration of big messages.
    // On a kept gRPC channel the first big message still pays the flow-control
    // window's ramp (grpc-go grows it from 64 KB as it measures the link): such a
    // lane's step holds a second big one, so its warm row is not that one alone.
    laneSeconds: (laneName, profile) => {
      const l = lanes.find((x) => x.name === laneName);
      const link = linkOf(profile);
      const freshLane = l.dims.every((d) => d.conn === 'cold');
      const first = PAYLOADS.map(([payload], i) => ({ payload, conn: freshLane || i === 0 ? 'cold' : 'warm' }));
      const again = l.tags.transport === 'grpc' || l.tags.transport === 'grpc-bidi' ? PAYLOADS : PAYLOADS.slice(0, 1);
      const calls = freshLane ? first : [...first, ...again.map(([payload]) => ({ payload, conn: 'warm' }))];
      // A browser-RPC lane's step opens with a request that closes the VU's kept
      // connection (scenarios/lib/rpc-web.js dropKeptConnection): a cold small call's time.
      const drop = !freshLane && l.tags.variant ? [{ payload: 'small', conn: 'cold' }] : [];
      return [...drop, ...calls].reduce((sum, d) => sum + callMs(l, d, link), 0) / 1000;
    },
    closeSeconds: (profile) => (2 * rttOf(profile)) / 1000 + 0.3,
    verdict: { where: { payload: 'small', conn: 'warm' } },
    // k6pack report: latency vs payload size, warm calls.
    // (The client stream's small and big are books, not these bytes.)
    hints: {
      sizes: {
        dim: 'payload',
        label: 'payload size',
        unit: 'payload bytes',
        bytes,
        where: { conn: 'warm' },
        lanes: lanes.map((l) => l.name).filter((n) => n !== 'grpc_client_stream'),
      },
    },
  };
}
