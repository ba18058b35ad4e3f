// "Your gRPC service" for the example of docs/your-api.md and the api tests:
// routeguide.RouteGuide from grpc-node's examples (route_guide.proto beside this file,
// Apache-2.0, copied with its header), served by @grpc/grpc-js with @grpc/proto-loader,
// after the example's own server (examples/routeguide/dynamic_codegen/route_guide_server.js):
// GetFeature (unary) and ListFeatures (server streaming) over a small feature list.
// RecordRoute and RouteChat (client and bidirectional streams) answer UNIMPLEMENTED.
//
//   node examples/api/route-guide-server.js            127.0.0.1:50151, plaintext
//   PORT=50200 TLS=on node examples/api/route-guide-server.js   TLS, self-signed certificate
//   BURN_US=2000 node examples/api/route-guide-server.js         every call burns 2 ms of CPU first (tests)
//   TOKEN=s3cret node examples/api/route-guide-server.js        asks for `authorization: Bearer s3cret`
//                                                               metadata on every call (else UNAUTHENTICATED)
//
// Stops on SIGINT/SIGTERM. Listens on 127.0.0.1 only.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { selfSignedPem } from './self-signed.js';
import { burn } from './burn.js';

const PORT = Number(process.env.PORT || 50151);
const TLS = process.env.TLS === 'on';
const BEARER = process.env.TOKEN ? `Bearer ${process.env.TOKEN}` : null;
const PROTO = join(dirname(fileURLToPath(import.meta.url)), 'route_guide.proto');

const definition = protoLoader.loadSync(PROTO, {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const routeguide = grpc.loadPackageDefinition(definition).routeguide;

// A few features on a grid (E7 coordinates, as the example's database).
const features = [];
for (let i = 0; i < 20; i++)
  features.push({
    name: `Feature ${i}`,
    location: { latitude: 400000000 + i * 1000000, longitude: -740000000 - i * 1000000 },
  });

const at = (point) =>
  features.find((f) => f.location.latitude === point.latitude && f.location.longitude === point.longitude) || {
    name: '',
    location: point,
  };

function inside(rect, p) {
  const [lo, hi] = [rect.lo || {}, rect.hi || {}];
  const between = (v, a, b) => v >= Math.min(a || 0, b || 0) && v <= Math.max(a || 0, b || 0);
  return between(p.latitude, lo.latitude, hi.latitude) && between(p.longitude, lo.longitude, hi.longitude);
}

// With TOKEN, a call without the bearer token in its metadata fails UNAUTHENTICATED.
// Every call burns BURN_US first, then is checked for its token.
function allowed(call) {
  burn();
  return !BEARER || call.metadata.get('authorization')[0] === BEARER;
}
const UNAUTHENTICATED = { code: grpc.status.UNAUTHENTICATED, details: 'a bearer token is required' };

const server = new grpc.Server();
server.addService(routeguide.RouteGuide.service, {
  getFeature: (call, callback) => (allowed(call) ? callback(null, at(call.request)) : callback(UNAUTHENTICATED)),
  listFeatures: (call) => {
    if (!allowed(call)) {
      call.emit('error', UNAUTHENTICATED);
      return;
    }
    for (const f of features) if (inside(call.request, f.location)) call.write(f);
    call.end();
  },
});

async function credentials() {
  if (!TLS) return grpc.ServerCredentials.createInsecure();
  const { key, cert } = await selfSignedPem();
  return grpc.ServerCredentials.createSsl(
    null,
    [{ private_key: Buffer.from(key), cert_chain: Buffer.from(cert) }],
    false,
  );
}

server.bindAsync(`127.0.0.1:${PORT}`, await credentials(), (err) => {
  if (err) {
    console.error(`route-guide-server: ${err.message}`);
    process.exit(1);
  }
  console.log(
    `route-guide-server: routeguide.RouteGuide on 127.0.0.1:${PORT} (${TLS ? 'TLS' : 'plaintext'}${BEARER ? ', a bearer token required' : ''})`,
  );
});

const stop = () => server.tryShutdown(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
