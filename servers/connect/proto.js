// The books.v1 contract (servers/proto/books.proto) for @connectrpc/connect, which
// takes @bufbuild/protobuf descriptors. They are built at start-up from the file
// descriptors @grpc/proto-loader already makes of the same .proto (servers/grpc/proto.js),
// so there is no generated code to keep in step with the file. protobufjs writes
// those descriptors as protoc would not, in two ways @bufbuild/protobuf refuses:
//  - type names are relative ("Author"), where protoc writes ".books.v1.Author";
//  - no json_name, which protoc always fills (page_count -> pageCount).
// qualify() mends both, for the protos served here (books.proto, grpc/health/v1 with
// its map, grpc/reflection), whose nested types are one level deep.
import { create, createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { SERVICE_NAME } from '../grpc/proto.js';
import { describedDefinition } from '../grpc/reflection.js';

const lowerCamel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

export function qualify(file) {
  const full = (t, scope = file.package) => (t && !t.startsWith('.') ? `.${scope}.${t}` : t);
  const fields = (message, scope) => {
    const path = `${scope}.${message.name}`;
    const nested = new Set([...message.nestedType, ...message.enumType].map((n) => n.name));
    for (const f of message.field) {
      f.typeName = full(f.typeName, nested.has(f.typeName) ? path : file.package);
      f.jsonName ||= lowerCamel(f.name);
    }
    for (const n of message.nestedType) fields(n, path);
  };
  for (const m of file.messageType) fields(m, file.package);
  for (const service of file.service)
    for (const m of service.method) {
      m.inputType = full(m.inputType);
      m.outputType = full(m.outputType);
    }
  return file;
}

// A registry of every file behind a proto-loader package definition.
export function registryOf(definition) {
  const seen = new Map();
  for (const entry of Object.values(definition))
    for (const bytes of entry.fileDescriptorProtos || []) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      if (!seen.has(file.name)) seen.set(file.name, qualify(file));
    }
  return createFileRegistry(create(FileDescriptorSetSchema, { file: [...seen.values()] }));
}

// books.v1, grpc.health.v1 and grpc.reflection, as reflection describes them (map
// entries named as protoc names them).
export const registry = registryOf(describedDefinition());
export const BooksService = registry.getService(SERVICE_NAME);
