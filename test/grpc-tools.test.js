// Standard gRPC tools find what the gRPC server serves: grpcurl (a client
// nobody here wrote, built by dev/devtools.js) lists the services by server
// reflection, describes them, and gets SERVING from grpc.health.v1.Health/Check,
// on the plaintext port and over TLS, against `node servers/grpc/server.js` as
// a process on free ports. Also: why servers/grpc/reflection.js rewrites map
// entry names (grpcurl refuses protobufjs's own descriptors).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as HEALTH_PROTO } from 'grpc-health-check';
import { execa } from 'execa';
import { ensureDevTools } from '../dev/devtools.js';
import { fixMapEntryNames, HEALTH_SERVICE, mapEntryName, REFLECTION_SERVICES } from '../servers/grpc/reflection.js';
import { SERVICE_NAME } from '../servers/grpc/proto.js';
import { spawnServer } from './helpers/hostile.js';

let grpcurl;
let server;

before(async () => {
  ({ grpcurl } = ensureDevTools(['grpcurl']));
  server = await spawnServer('grpc', { nodeArgs: [] });
});
after(() => server?.stop());

// `grpcurl <-plaintext|-insecure> [flags] 127.0.0.1:<port> <rest>`; -insecure
// speaks TLS without verifying the self-signed certificate.
function grpcurlAt(port, secure, rest, flags = []) {
  return execa(
    grpcurl,
    [secure ? '-insecure' : '-plaintext', '-max-time', '10', ...flags, `127.0.0.1:${port}`, ...rest],
    {
      reject: false,
      timeout: 30000,
    },
  );
}
const ALL_SERVICES = [SERVICE_NAME, HEALTH_SERVICE, ...REFLECTION_SERVICES].sort();

for (const secure of [false, true]) {
  describe(`grpcurl on the ${secure ? 'TLS port (-insecure)' : 'plaintext port'}`, { timeout: 120000 }, () => {
    const run = (rest, flags) => grpcurlAt(secure ? server.tlsPort : server.port, secure, rest, flags);
    const ok = async (rest, flags) => {
      const r = await run(rest, flags);
      assert.equal(r.exitCode, 0, `grpcurl ${rest.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };

    test('list: books.v1.Books, grpc.health.v1.Health and both reflection services', async () => {
      assert.deepEqual((await ok(['list'])).trim().split('\n').sort(), ALL_SERVICES);
    });

    test("list <service>: each service's methods", async () => {
      assert.deepEqual(
        (await ok(['list', HEALTH_SERVICE])).trim().split('\n').sort(),
        ['Check', 'List', 'Watch'].map((m) => `${HEALTH_SERVICE}.${m}`),
      );
      const books = (await ok(['list', SERVICE_NAME])).trim().split('\n');
      for (const m of [
        'GetBook',
        'ListBooks',
        'Payload',
        'Stats',
        'StreamBooks',
        'StreamEvents',
        'Publish',
        'Subscribe',
        'TopicInfo',
        'Relay',
        'PayloadStream',
        'UploadBooks',
      ])
        assert.ok(books.includes(`${SERVICE_NAME}.${m}`), `${m} in ${books}`);
    });

    test('describe: every service and the messages they use', async () => {
      const books = await ok(['describe', SERVICE_NAME]);
      assert.match(books, /^books\.v1\.Books is a service:/);
      assert.match(books, /rpc GetBook \( \.books\.v1\.GetBookRequest \) returns \( \.books\.v1\.Book \);/);
      assert.match(
        books,
        /rpc StreamBooks \( \.books\.v1\.ListBooksRequest \) returns \( stream \.books\.v1\.Book \);/,
      );
      // The client and bidirectional streams, and the fan-out hub's methods.
      assert.match(
        books,
        /rpc PayloadStream \( stream \.books\.v1\.PayloadRequest \) returns \( stream \.books\.v1\.PayloadResponse \);/,
      );
      assert.match(books, /rpc UploadBooks \( stream \.books\.v1\.Book \) returns \( \.books\.v1\.UploadSummary \);/);
      assert.match(
        books,
        /rpc Subscribe \( \.books\.v1\.SubscribeRequest \) returns \( stream \.books\.v1\.TopicEvent \);/,
      );
      assert.match(
        books,
        /rpc Relay \( stream \.books\.v1\.TopicEvent \) returns \( stream \.books\.v1\.TopicEvent \);/,
      );
      assert.match(await ok(['describe', 'books.v1.UploadSummary']), /int32 count = 1;/);
      const health = await ok(['describe', HEALTH_SERVICE]);
      assert.match(
        health,
        /rpc Check \( \.grpc\.health\.v1\.HealthCheckRequest \) returns \( \.grpc\.health\.v1\.HealthCheckResponse \);/,
      );
      assert.match(
        health,
        /rpc Watch \( \.grpc\.health\.v1\.HealthCheckRequest \) returns \( stream \.grpc\.health\.v1\.HealthCheckResponse \);/,
      );
      // A message with a map field: what protobufjs's own descriptors get wrong (see below).
      assert.match(
        await ok(['describe', 'grpc.health.v1.HealthListResponse']),
        /map<string, \.grpc\.health\.v1\.HealthCheckResponse> statuses = 1;/,
      );
      for (const service of REFLECTION_SERVICES) {
        assert.match(
          await ok(['describe', service]),
          /rpc ServerReflectionInfo \( stream \.grpc\.reflection\.v1(alpha)?\.ServerReflectionRequest \) returns \( stream /,
        );
      }
    });

    test('grpc.health.v1.Health/Check: SERVING for the server and for books.v1.Books; NotFound for an unknown service', async () => {
      assert.deepEqual(JSON.parse(await ok([`${HEALTH_SERVICE}/Check`])), { status: 'SERVING' });
      assert.deepEqual(
        JSON.parse(await ok([`${HEALTH_SERVICE}/Check`], ['-d', JSON.stringify({ service: SERVICE_NAME })])),
        { status: 'SERVING' },
      );
      const unknown = await run([`${HEALTH_SERVICE}/Check`], ['-d', JSON.stringify({ service: 'no.such.Service' })]);
      assert.notEqual(unknown.exitCode, 0);
      assert.match(unknown.stderr, /Code: NotFound/);
    });

    test('a books.v1 call through reflection alone (no .proto given to grpcurl)', async () => {
      const book = JSON.parse(await ok([`${SERVICE_NAME}/GetBook`], ['-d', JSON.stringify({ id: 'book-7' })]));
      assert.equal(book.id, 'book-7');
      assert.equal(typeof book.author.first_name, 'string');
      server.assertHealthy();
    });

    test('a client stream and a bidirectional stream through reflection alone (grpcurl sends each JSON object as a message)', async () => {
      const books = [
        { id: 'book-1', page_count: 10 },
        { id: 'book-2', page_count: 20 },
        { id: 'book-3', page_count: 30 },
      ];
      const summary = JSON.parse(
        await ok([`${SERVICE_NAME}/UploadBooks`], ['-d', books.map((b) => JSON.stringify(b)).join('\n')]),
      );
      assert.deepEqual(summary, { count: 3, page_count: 60, first_id: 'book-1', last_id: 'book-3' });
      const answers = (await ok([`${SERVICE_NAME}/PayloadStream`], ['-d', '{"size":3}\n{"size":5}']))
        .trim()
        .split(/\n(?=\{)/)
        .map((t) => JSON.parse(t));
      assert.deepEqual(
        answers.map((a) => a.size),
        [3, 5],
      );
      server.assertHealthy();
    });
  });
}

describe('map entry names in reflected descriptors', { timeout: 60000 }, () => {
  test("mapEntryName is protoc's rule: CamelCase field name + Entry", () => {
    assert.equal(mapEntryName('statuses'), 'StatusesEntry');
    assert.equal(mapEntryName('foo_bar_baz'), 'FooBarBazEntry');
    assert.equal(mapEntryName('fooBar'), 'FooBarEntry');
  });

  test("fixMapEntryNames renames the entry message and the field's type, nested messages too", () => {
    const entry = (name) => ({ name, options: { mapEntry: true }, field: [{ name: 'key' }, { name: 'value' }] });
    const message = {
      name: 'Outer',
      field: [{ name: 'by_id', typeName: 'ById' }],
      nestedType: [
        entry('ById'),
        { name: 'Inner', field: [{ name: 'tags', typeName: 'Tags' }], nestedType: [entry('Tags')] },
      ],
    };
    fixMapEntryNames(message);
    assert.equal(message.field[0].typeName, 'ByIdEntry');
    assert.equal(message.nestedType[0].name, 'ByIdEntry');
    assert.equal(message.nestedType[1].field[0].typeName, 'TagsEntry');
    assert.equal(message.nestedType[1].nestedType[0].name, 'TagsEntry');
    assert.equal(message.nestedType[1].name, 'Inner', 'a message that is no map entry keeps its name');
  });

  // Proves the rewrite is needed (and that grpcurl would catch its absence):
  // reflection over protobufjs's descriptors, unchanged, on a throwaway server.
  test('without the rewrite grpcurl refuses the health service ("invalid map")', async (t) => {
    const bare = new grpc.Server();
    new ReflectionService(protoLoader.loadSync(HEALTH_PROTO, { keepCase: true })).addToServer(bare);
    const port = await new Promise((resolve, reject) =>
      bare.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    t.after(() => bare.forceShutdown());
    const r = await grpcurlAt(port, false, ['describe', HEALTH_SERVICE]);
    assert.notEqual(r.exitCode, 0, r.stdout);
    assert.match(r.stderr, /invalid map: incorrect implicit map entry name/);
  });
});
