// Bare servers for the harness-overhead bench: the least code that answers
// the same request with the same bytes as the reference servers, so the
// bench can say how much of a request's cost is the reference servers' own
// (Apollo, graphql-ws, validation, timing, bounds) and where their ceiling is.
//
//   node bench/lib/bare-servers.js <capture.json>
// capture.json: { http: { body, contentType }, wsNext: '<next payload JSON>',
//                 grpc: <GetBook reply object> }, as the reference servers sent them.
// Listens on free ports of 127.0.0.1 (node:http + ws on one port, grpc-js on
// another) and prints one line {"http": port, "grpc": port}; stops on SIGTERM.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import grpc from '@grpc/grpc-js';
import { WebSocketServer } from 'ws';
import { booksService } from '../../servers/grpc/proto.js';

const capture = JSON.parse(readFileSync(process.argv[2], 'utf8'));

// GraphQL over HTTP: any POST /graphql gets the captured answer.
const server = http.createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': capture.http.contentType,
      'content-length': Buffer.byteLength(capture.http.body),
    });
    res.end(capture.http.body);
  });
});

// graphql-transport-ws: ack the init, answer every subscribe with the captured next + complete.
const wss = new WebSocketServer({
  server,
  path: '/graphql',
  handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
});
wss.on('connection', (socket) => {
  socket.on('message', (data) => {
    const msg = JSON.parse(data);
    if (msg.type === 'connection_init') socket.send('{"type":"connection_ack"}');
    else if (msg.type === 'ping') socket.send('{"type":"pong"}');
    else if (msg.type === 'subscribe') {
      socket.send(`{"id":${JSON.stringify(msg.id)},"type":"next","payload":${capture.wsNext}}`);
      socket.send(`{"id":${JSON.stringify(msg.id)},"type":"complete"}`);
    }
  });
});

// gRPC: GetBook answers the captured book.
const grpcServer = new grpc.Server();
grpcServer.addService(booksService, { GetBook: (_call, callback) => callback(null, capture.grpc) });

const httpPort = await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const grpcPort = await new Promise((resolve, reject) =>
  grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
    err ? reject(err) : resolve(port),
  ),
);
console.log(JSON.stringify({ http: httpPort, grpc: grpcPort }));

process.on('SIGTERM', () => {
  grpcServer.forceShutdown();
  for (const c of wss.clients) c.terminate();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
