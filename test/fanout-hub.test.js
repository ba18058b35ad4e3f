// The fan-out hub across both reference servers, in-process on free ports: the
// GraphQL server's hub relays with the gRPC server's (HUB_PEER), so a write through
// either server reaches the subscribers of both, in order, with its publish time
// and id; polling reads the kept events; the link redials when the gRPC server
// comes (back); a WebSocket subscriber that stops reading is dropped with a
// sentence. Real clients: graphql-ws and @grpc/grpc-js.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { LIMITS } from '../common/defaults.js';
import { postGraphQL, runOperation, wsClient } from '../servers/graphql/client.js';
import { createServer as createGraphql } from '../servers/graphql/server.js';
import { booksClient, collectStream, unaryCall } from '../servers/grpc/client.js';
import { createServer as createGrpc } from '../servers/grpc/server.js';
import { freePorts } from '../dev/test-stack.js';

const SUBSCRIPTION = 'subscription($t: String!) { topicEvents(topic: $t) { topic seq id origin publishedAt payload } }';
const PUBLISH =
  'mutation($t: String!, $p: String) { publish(topic: $t, payload: $p) { seq id publishedAt subscribers } }';
const STATE =
  'query($t: String!, $a: Int, $l: Int) { topic(name: $t) { lastSeq subscribers now events(afterSeq: $a, limit: $l) { seq id origin payload } } }';

async function until(check, what, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('the fan-out hub across both servers', { timeout: 120_000 }, () => {
  let grpcServer;
  let graphql;
  let grpc;
  let url;
  let wsUrl;
  before(async () => {
    grpcServer = await createGrpc({ port: 0, tlsPort: 0 });
    graphql = await createGraphql({ port: 0, tlsPort: 0, hubPeer: `127.0.0.1:${grpcServer.port}` });
    grpc = booksClient(`127.0.0.1:${grpcServer.port}`);
    url = `http://127.0.0.1:${graphql.httpPort}/graphql`;
    wsUrl = `ws://127.0.0.1:${graphql.httpPort}/graphql`;
    await until(() => graphql.relay.state.up, 'the hub link');
  });
  after(async () => {
    grpc?.close();
    await graphql?.close();
    await grpcServer?.close();
  });

  const gql = async (query, variables) => {
    const r = await postGraphQL(url, { query, variables });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  const grpcSubscribers = async (t) => (await unaryCall(grpc, 'TopicInfo', { topic: t })).message.subscribers;
  const graphqlSubscribers = async (t) => (await gql(STATE, { t })).data.topic.subscribers;

  // n graphql-ws subscribers; resolves their events once each has `count`.
  function wsSubscribers(t, n, count) {
    const clients = Array.from({ length: n }, () => wsClient(wsUrl));
    const runs = clients.map((c) =>
      runOperation(
        c,
        { query: SUBSCRIPTION, variables: { t } },
        { onNext: (_r, all) => all.length >= count, timeoutMs: 20_000 },
      ),
    );
    return {
      events: Promise.all(runs).then((rs) => rs.map((r) => r.results.map((x) => x.data.topicEvents))),
      dispose: () => Promise.all(clients.map((c) => c.dispose())),
    };
  }

  test('a GraphQL write reaches graphql-ws and gRPC subscribers, a gRPC write too: each in order, each server numbering its own', async () => {
    const t = 'hub.cross';
    const ws = wsSubscribers(t, 3, 6);
    const streams = [grpc.Subscribe({ topic: t }), grpc.Subscribe({ topic: t })];
    const got = streams.map((s) => collectStream(s));
    await until(
      async () => (await graphqlSubscribers(t)) === 3 && (await grpcSubscribers(t)) === 2,
      'every subscriber',
    );
    const written = [];
    for (let i = 1; i <= 6; i++) {
      if (i % 2) written.push((await gql(PUBLISH, { t, p: `g${i}` })).data.publish);
      else written.push((await unaryCall(grpc, 'Publish', { topic: t, payload: `r${i}` })).message);
      await sleep(20); // the relay is a loopback hop: keep the writes' order unambiguous
    }
    const wsEvents = await ws.events;
    await until(() => grpcServer.hub.stats().delivered >= 12, 'the gRPC subscribers to get all six');
    await sleep(50);
    for (const s of streams) s.cancel();
    const grpcEvents = (await Promise.all(got)).map((r) => r.messages);
    await ws.dispose();
    const payloads = ['g1', 'r2', 'g3', 'r4', 'g5', 'r6'];
    for (const events of wsEvents) {
      assert.deepEqual(
        events.map((e) => [e.seq, e.payload, e.origin]),
        payloads.map((p, i) => [i + 1, p, p[0] === 'g' ? 'graphql' : 'grpc']),
      );
    }
    for (const events of grpcEvents)
      assert.deepEqual(
        events.map((e) => [e.seq, e.payload]),
        payloads.map((p, i) => [i + 1, p]),
      );
    // The same event on both servers: its id and publish time travel with it.
    assert.deepEqual(
      wsEvents[0].map((e) => [e.id, e.publishedAt]),
      grpcEvents[0].map((e) => [e.id, e.published_at]),
    );
    assert.deepEqual(
      wsEvents[0].map((e) => e.id),
      written.map((w) => w.id),
    );
    assert.ok(wsEvents[0].every((e, i) => i === 0 || e.publishedAt >= wsEvents[0][i - 1].publishedAt));
  });

  test('polling: topic.events returns the kept events after afterSeq, at most `limit`; lastSeq and the server clock', async () => {
    const t = 'hub.poll';
    for (let i = 1; i <= 7; i++) await gql(PUBLISH, { t, p: `p${i}` });
    const before = Date.now();
    const { data } = await gql(STATE, { t, a: 2, l: 3 });
    assert.equal(data.topic.lastSeq, 7);
    assert.deepEqual(
      data.topic.events.map((e) => e.seq),
      [3, 4, 5],
    );
    assert.ok(Math.abs(data.topic.now - before) < 1000, `server clock ${data.topic.now} vs ${before}`);
    // relayed to the gRPC server's hub, under its own numbering
    assert.equal((await unaryCall(grpc, 'TopicInfo', { topic: t })).message.last_seq, 7);
  });

  test('bounds: one sentence each, over HTTP', async () => {
    const bad = async (query, variables, pattern) => {
      const { errors } = await gql(query, variables);
      assert.ok(errors, 'an error');
      assert.equal(errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.match(errors[0].message, pattern);
    };
    await bad(
      PUBLISH,
      { t: 'a topic', p: '' },
      /topic must be 1 to 128 characters of letters, digits, '\.', '_', ':' or '-' \(got "a topic"\)/,
    );
    await bad(
      PUBLISH,
      { t: 't', p: 'x'.repeat(LIMITS.MAX_EVENT_PAYLOAD_BYTES + 1) },
      /payload is 65537 bytes; the limit is 65536 per event: publish less/,
    );
    await bad(
      STATE,
      { t: 't', a: 0, l: LIMITS.MAX_POLL_EVENTS + 1 },
      /limit must be an integer from 1 to 100 \(got 101\)/,
    );
    await bad(STATE, { t: 't', a: -1, l: 1 }, /afterSeq must be a whole number >= 0 \(got -1\)/);
    const client = wsClient(wsUrl);
    try {
      const { results } = await runOperation(client, { query: SUBSCRIPTION, variables: { t: '' } });
      assert.match(results[0].errors[0].message, /topic must be 1 to 128 characters/);
    } finally {
      await client.dispose();
    }
  });

  test('announce: true: a marker first, with the last seq when the subscription began; then only later events', async () => {
    const t = 'hub.announce';
    for (let i = 1; i <= 3; i++) await gql(PUBLISH, { t, p: `early${i}` });
    const client = wsClient(wsUrl);
    try {
      const query =
        'subscription($t: String!, $a: Boolean) { topicEvents(topic: $t, announce: $a) { topic seq id origin payload } }';
      const run = runOperation(client, { query, variables: { t, a: true } }, { onNext: (_r, all) => all.length >= 3 });
      await until(async () => (await graphqlSubscribers(t)) === 1, 'the subscriber');
      for (let i = 4; i <= 5; i++) await gql(PUBLISH, { t, p: `late${i}` });
      const events = (await run).results.map((x) => x.data.topicEvents);
      assert.deepEqual(
        events.map((e) => [e.seq, e.origin, e.payload]),
        [
          [3, 'subscribed', ''],
          [4, 'graphql', 'late4'],
          [5, 'graphql', 'late5'],
        ],
      );
    } finally {
      await client.dispose();
    }
  });

  test('a graphql-ws subscriber that stops reading is dropped once SUBSCRIBER_QUEUE_EVENTS wait, with an error saying so', async () => {
    const t = 'hub.slow';
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
    const messages = [];
    socket.on('message', (d) => messages.push(JSON.parse(d)));
    await new Promise((resolve) => socket.on('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await until(() => messages.some((m) => m.type === 'connection_ack'), 'connection_ack');
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION, variables: { t } } }));
    await until(() => graphql.hub.info(t).subscribers === 1, 'the subscriber');
    socket._socket.pause(); // stop reading: the server's writes pile up
    const payload = 'x'.repeat(8192);
    for (let i = 0; i < 20 * LIMITS.SUBSCRIBER_QUEUE_EVENTS && graphql.hub.info(t).subscribers > 0; i++) {
      graphql.hub.publish(t, payload);
      if (i % 100 === 0) await sleep(1); // let the socket writes run
    }
    assert.equal(graphql.hub.info(t).subscribers, 0, 'the hub let go of the slow subscriber');
    socket._socket.resume();
    await until(() => messages.some((m) => m.type === 'complete'), 'the subscription to end', 20_000);
    const last = messages.filter((m) => m.type === 'next').at(-1);
    assert.match(
      last.payload.errors[0].message,
      /this subscriber fell 1000 events behind and was dropped: read faster, or subscribe again/,
    );
    socket.close();
  });
});

test(
  'the hub link redials: a GraphQL server up before the gRPC server relays once it is there',
  { timeout: 60_000 },
  async () => {
    const [port] = await freePorts(1);
    const graphql = await createGraphql({ port: 0, tlsPort: 0, hubPeer: `127.0.0.1:${port}` });
    let grpcServer;
    const grpc = booksClient(`127.0.0.1:${port}`);
    try {
      graphql.hub.publish('hub.early', 'lost'); // the link is down: not relayed
      await sleep(300);
      assert.equal(graphql.relay.state.up, false);
      grpcServer = await createGrpc({ port, tlsPort: 0 });
      await until(() => graphql.relay.state.up, 'the link to come up', 15_000);
      graphql.hub.publish('hub.early', 'relayed');
      await until(
        async () => (await unaryCall(grpc, 'TopicInfo', { topic: 'hub.early' })).message.last_seq === 1,
        'the relayed event',
      );
      assert.ok(graphql.relay.state.dropped >= 1, 'the event published while down is counted as dropped');
    } finally {
      grpc.close();
      await graphql.close();
      await grpcServer?.close();
    }
  },
);
