// The books.v1 contract (servers/proto/books.proto), loaded once with the
// options the grpc-node examples use. k6 loads the same file with client.load().
//
// The service definition the server registers differs from the loaded one in
// two ways, neither visible on the wire:
//  - a response may be handed over already encoded (a Buffer): the handlers
//    encode it themselves to time protobuf encoding (server-timing `ser`)
//    without grpc-js encoding it a second time;
//  - a request that is not valid protobuf decodes to a BadRequest instead of
//    throwing, so the handler can answer INVALID_ARGUMENT with the reason
//    (grpc-js alone answers INTERNAL "Error deserializing request").
import { fileURLToPath } from 'node:url';
import protoLoader from '@grpc/proto-loader';

export const PROTO_PATH = fileURLToPath(new URL('../proto/books.proto', import.meta.url));
export const LOADER_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
export const SERVICE_NAME = 'books.v1.Books';

export const packageDefinition = protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS);
export const booksService = packageDefinition[SERVICE_NAME];

export class BadRequest {
  constructor(typeName, reason) {
    this.message = `request is not a valid books.v1.${typeName} protobuf message (${reason})`;
  }
}

export const serverBooksService = Object.fromEntries(
  Object.entries(booksService).map(([name, method]) => [
    name,
    {
      ...method,
      responseSerialize: (value) => (Buffer.isBuffer(value) ? value : method.responseSerialize(value)),
      requestDeserialize: (bytes) => {
        try {
          return method.requestDeserialize(bytes);
        } catch (err) {
          return new BadRequest(method.requestType.type.name, err.message);
        }
      },
    },
  ]),
);

// Protobuf bytes of a response message of `method` (e.g. 'ListBooks').
export function encodeResponse(method, message) {
  return booksService[method].responseSerialize(message);
}
