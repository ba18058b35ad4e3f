// Server reflection for every service the server exposes: books.v1.Books, the
// standard grpc.health.v1.Health and the reflection services themselves
// (grpc.reflection.v1 and v1alpha), so standard tools (grpcurl list / describe,
// grpcurl grpc.health.v1.Health/Check) find all of them. @grpc/reflection
// describes only the package definition it is given and registers its own
// services without describing them, so the health and reflection protos are
// loaded here from the packages that serve them.
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as HEALTH_PROTO } from 'grpc-health-check';
import { LOADER_OPTIONS, packageDefinition as booksDefinition } from './proto.js';

const require = createRequire(import.meta.url);
const { FileDescriptorProto } = require('protobufjs/ext/descriptor');

export const HEALTH_SERVICE = 'grpc.health.v1.Health';
export const REFLECTION_SERVICES = ['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'];

// health.proto sits at health/v1/health.proto under the package's proto/ folder.
const healthDefinition = protoLoader.loadSync('health/v1/health.proto', {
  ...LOADER_OPTIONS,
  includeDirs: [resolve(dirname(HEALTH_PROTO), '..', '..')],
});
const reflectionDefinition = protoLoader.loadSync(
  ['grpc/reflection/v1/reflection.proto', 'grpc/reflection/v1alpha/reflection.proto'],
  {
    ...LOADER_OPTIONS,
    includeDirs: [join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto')],
  },
);

// The name protoc gives a map field's implicit entry message: the field name in
// CamelCase + "Entry" (statuses -> StatusesEntry; protobuf-go's MapEntryName).
export function mapEntryName(fieldName) {
  return fieldName.replace(/(?:^|_)(.)/g, (_, c) => c.toUpperCase()) + 'Entry';
}

// protobufjs (7.6.6, and upstream still) names a map entry message after the
// field alone ("Statuses"), which protobuf-go rejects ("is an invalid map:
// incorrect implicit map entry name"), so Go clients such as grpcurl could not
// use any message with a map (grpc.health.v1.HealthListResponse has one).
// Renames every entry message, and the field's type with it, as protoc would.
export function fixMapEntryNames(message) {
  for (const nested of message.nestedType || []) {
    if (nested.options && nested.options.mapEntry) {
      const field = (message.field || []).find(
        (f) => f.typeName === nested.name || String(f.typeName || '').endsWith(`.${nested.name}`),
      );
      if (field) {
        const name = mapEntryName(field.name);
        field.typeName = field.typeName.slice(0, field.typeName.length - nested.name.length) + name;
        nested.name = name;
      }
    }
    fixMapEntryNames(nested);
  }
  return message;
}

function withGoCompatibleDescriptors(definition) {
  const fixed = new Map(); // each file's bytes are shared by every entry of its package
  const fix = (bytes) => {
    if (!fixed.has(bytes)) {
      const file = FileDescriptorProto.decode(bytes);
      for (const message of file.messageType || []) fixMapEntryNames(message);
      fixed.set(bytes, Buffer.from(FileDescriptorProto.encode(file).finish()));
    }
    return fixed.get(bytes);
  };
  return Object.fromEntries(
    Object.entries(definition).map(([name, entry]) => [
      name,
      Array.isArray(entry.fileDescriptorProtos)
        ? { ...entry, fileDescriptorProtos: entry.fileDescriptorProtos.map(fix) }
        : entry,
    ]),
  );
}

// Every service either books server serves, as reflection describes it.
export const describedDefinition = () =>
  withGoCompatibleDescriptors({ ...booksDefinition, ...healthDefinition, ...reflectionDefinition });

export function addReflection(server) {
  new ReflectionService(describedDefinition()).addToServer(server);
}
