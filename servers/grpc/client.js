// grpc-js clients for the books and health services, promise-shaped: the tests
// use them, and anything in Node that needs to ask the gRPC server something.
import grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { packageDefinition } from './proto.js';

const BooksClient = grpc.loadPackageDefinition(packageDefinition).books.v1.Books;
const HealthClient = grpc.makeGenericClientConstructor(healthService, 'Health');

// Plaintext without `cert`; TLS trusting exactly `cert` (PEM) with it.
export function credentialsFor(cert) {
  return cert ? grpc.credentials.createSsl(Buffer.from(cert)) : grpc.credentials.createInsecure();
}

// Channel options: `options` (e.g. { 'grpc.max_receive_message_length': -1 }), and
// with TLS the name the certificate is checked against (the self-signed one names
// localhost and 127.0.0.1; Node warns when an IP address is sent as TLS server name).
function channelOptions({ cert, servername = 'localhost', options }) {
  return cert ? { 'grpc.ssl_target_name_override': servername, ...options } : options;
}

// Plaintext, or TLS when `cert` is given.
export function booksClient(address, opts = {}) {
  return new BooksClient(address, credentialsFor(opts.cert), channelOptions(opts));
}

export function healthClient(address, opts = {}) {
  return new HealthClient(address, credentialsFor(opts.cert), channelOptions(opts));
}

// Any client on the same address, to send raw or unknown calls with makeUnaryRequest.
export function genericClient(address, opts = {}) {
  return new grpc.Client(address, credentialsFor(opts.cert), channelOptions(opts));
}

const deadlineIn = (ms) => Date.now() + ms;

// { key: value } -> grpc.Metadata (a value may be a list: one entry each).
export function toMetadata(entries = {}) {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries)) for (const v of [value].flat()) metadata.add(key, v);
  return metadata;
}

// Unary call -> { message, trailers } (trailers as a grpc.Metadata); rejects with
// the grpc-js ServiceError (code, details, metadata). `metadata`: { key: value }.
export function unaryCall(client, method, request, { timeoutMs = 10_000, metadata } = {}) {
  return new Promise((resolve, reject) => {
    let message;
    let error = null;
    const call = client[method](request, toMetadata(metadata), { deadline: deadlineIn(timeoutMs) }, (err, value) => {
      error = err;
      message = value;
    });
    // 'status' comes after the callback and carries the trailers.
    call.on('status', (status) => (error ? reject(error) : resolve({ message, trailers: status.metadata })));
  });
}

// Raw bytes to any path, answered with raw bytes: for requests the typed client
// cannot send (invalid protobuf, unknown service or method).
export function rawCall(client, path, bytes, { timeoutMs = 10_000, metadata } = {}) {
  const identity = (b) => b;
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      identity,
      identity,
      bytes,
      toMetadata(metadata),
      { deadline: deadlineIn(timeoutMs) },
      (err, value) => (err ? reject(err) : resolve(value)),
    );
  });
}

// Server stream -> { messages, status } once it ends, whatever the status.
// onMessage(message, call) may cancel the call.
export function collectStream(call, onMessage = () => {}) {
  const messages = [];
  return new Promise((resolve) => {
    call.on('data', (m) => {
      messages.push(m);
      onMessage(m, call);
    });
    call.on('error', () => {}); // the status below says the same
    call.on('status', (status) => resolve({ messages, status }));
  });
}

// Client stream (e.g. UploadBooks) -> { message, status } once it ends, whatever the
// status: writes `messages`, then half-closes unless `end` is false (a stream that
// never ends); `call` is handed to onCall (to cancel it).
export function clientStreamCall(client, method, messages, { metadata, end = true, onCall = () => {} } = {}) {
  return new Promise((resolve) => {
    let message = null;
    const call = client[method](toMetadata(metadata), (_err, value) => {
      message = value ?? null;
    });
    call.on('status', (status) => resolve({ message, status }));
    call.on('error', () => {}); // the status says the same
    onCall(call);
    for (const m of messages) call.write(m);
    if (end) call.end();
  });
}
