// From the API config (api-config.js) to what the scenario runs: the static checks (the
// operations and their variables, the .proto, the method and the request), then
// discovery against the endpoints (discover-graphql.js, discover-grpc.js,
// discover-connect.js), then the lanes that apply and one reason for each that does
// not (common/your-api.js API_LANES), and the lines that say so.
import { API_LANES } from '../../common/your-api.js';
import { describeCredentials } from '../../common/credentials.js';
import { fill, SAMPLE, setsOf } from '../../common/variables.js';
import { formatMs } from '../../common/results.js';
import { show, UsageError } from '../cli-support.js';
import { discoverGraphql } from './discover-graphql.js';
import { discoverGrpc } from './discover-grpc.js';
import { discoverConnect } from './discover-connect.js';
import { checkVariables, readOperations, readVariables, validateOperations } from './operations.js';
import { checkRequest, loadMethod } from './proto-method.js';

// Everything that can be checked without the network. -> { ops, variables, methods:
// [loadMethod()'s, with its request] }
export function checkApiInput(cfg) {
  const out = { ops: [], variables: {}, methods: [] };
  if (cfg.graphql) {
    out.ops = readOperations(cfg.operations, show(cfg.operations));
    const vars = readVariables(cfg.variables, out.ops, show);
    out.varsLabel =
      typeof cfg.variables === 'string' ? show(cfg.variables) : cfg.variables ? 'the config file\'s "variables"' : null;
    out.variables = checkVariables(out.ops, vars, null, out.varsLabel);
  }
  if (cfg.grpc || cfg.connect) {
    out.methods = cfg.calls.map((c) => {
      const m = loadMethod(cfg.proto, c.call, show(cfg.proto));
      const base = cfg.source ? `the request in ${show(cfg.source)}` : '--request';
      const where = cfg.calls.length > 1 ? `${base} of ${m.method}` : base;
      // Each request of an array, with its templates filled as VU 1's first call fills them.
      const sets = setsOf(c.request);
      sets.forEach((r, i) =>
        checkRequest(fill(r, SAMPLE), m, sets.length > 1 ? `${where} (${i + 1} of ${sets.length})` : where),
      );
      return { ...m, request: c.request };
    });
  }
  return out;
}

// Which lanes run, and why the others do not. ops: the GraphQL operations (a
// subscription runs on ws and wss only). -> { lanes: [{ name, transport, tls }], skipped: [{ lane, reason }] }
export function lanesFor(cfg, g, r, methods, ops = [], c = null) {
  const run = new Map();
  const skipped = [];
  const skip = (name, reason) => skipped.push({ lane: name, reason });
  if (!g)
    for (const l of API_LANES.filter((x) => x.kind === 'http' || x.kind === 'ws'))
      skip(l.name, 'no GraphQL endpoint given (--graphql)');
  else {
    const cleartext = ['http_fresh', 'http_keepalive'];
    const tls = ['https_fresh', 'https_keepalive', 'http2'];
    const onlySubscriptions = ops.length > 0 && ops.every((o) => o.kind === 'subscription');
    if (onlySubscriptions)
      for (const n of [...cleartext, ...tls]) skip(n, 'every operation is a subscription: they run on ws and wss only');
    else if (!g.tls) {
      for (const n of cleartext) run.set(n, false);
      for (const n of tls) skip(n, `the GraphQL endpoint is cleartext (${g.url}): the TLS lanes need an https:// URL`);
    } else {
      for (const n of cleartext)
        skip(n, `the GraphQL endpoint is TLS (${g.url}): the cleartext lanes need an http:// URL`);
      run.set('https_fresh', true);
      if (g.h2) {
        run.set('http2', true);
        skip('https_keepalive', 'the endpoint offers h2 by ALPN, so its kept TLS connection is the http2 lane');
      } else {
        run.set('https_keepalive', true);
        skip('http2', `the endpoint's TLS does not offer h2 by ALPN (it chose ${g.alpn || 'nothing'})`);
      }
    }
    const secure = g.wsUrl.startsWith('wss:');
    const [mine, other] = secure ? ['wss', 'ws'] : ['ws', 'wss'];
    if (g.ws.ok) run.set(mine, secure);
    else skip(mine, g.ws.reason);
    skip(other, `the WebSocket endpoint is ${secure ? 'TLS' : 'cleartext'} (${g.wsUrl})`);
  }
  const connectLanes = API_LANES.filter((x) => x.kind === 'connect');
  if (!c) for (const l of connectLanes) skip(l.name, 'no Connect endpoint given (--connect)');
  else {
    const unary = c.calls.filter((x) => !x.stream);
    const streams = methods.filter((m, i) => c.calls[i].stream).map((m) => m.method);
    if (!unary.length)
      for (const l of connectLanes)
        skip(
          l.name,
          `${streams.join(', ')} stream${streams.length === 1 ? 's its' : ' their'} answer: k6's http reads an answer whole`,
        );
    else
      for (const l of connectLanes) {
        // A binary lane runs when every unary call went through it in discovery.
        const refused = l.protocol === 'connect-json' ? null : unary.map((x) => x.binary[l.protocol]).find(Boolean);
        if (refused) skip(l.name, refused);
        else run.set(l.name, c.url.startsWith('https:'));
      }
  }
  if (!r) for (const l of API_LANES.filter((x) => x.kind === 'grpc')) skip(l.name, 'no gRPC endpoint given (--grpc)');
  else {
    const names = (ms) => ms.map((m) => m.method).join(', ');
    const unary = methods.filter((m) => !m.stream);
    const streams = methods.filter((m) => m.stream);
    if (unary.length) {
      run.set('grpc', r.tls);
      run.set('grpc_fresh', r.tls);
    } else
      for (const n of ['grpc', 'grpc_fresh'])
        skip(
          n,
          `${names(streams)} ${streams.length === 1 ? 'streams its' : 'stream their'} answer: the unary lanes do not apply`,
        );
    if (streams.length) run.set('grpc_stream', r.tls);
    else skip('grpc_stream', `${names(unary)} ${unary.length === 1 ? 'is' : 'are'} unary: no server stream`);
  }
  const lanes = API_LANES.filter((l) => run.has(l.name)).map((l) => ({
    name: l.name,
    // A Connect lane over TLS whose server offers h2 is HTTP/2 (k6 takes h2 wherever TLS offers it).
    transport: l.kind === 'connect' && c.h2 ? 'http2' : l.transport,
    tls: run.get(l.name),
  }));
  const order = (n) => API_LANES.findIndex((l) => l.name === n);
  return { lanes, skipped: skipped.sort((a, b) => order(a.lane) - order(b.lane)) };
}

// Discovery against the endpoints. -> the plan's API part (common/your-api.js), with
// warnings: operations that already failed before the run.
export async function discoverApi(cfg, input, { signal }) {
  let g = null;
  if (cfg.graphql) {
    g = await discoverGraphql(cfg, input.ops, input.variables, {
      signal,
      checkOperations: (schema) => {
        if (!schema) return;
        validateOperations(input.ops, schema);
        checkVariables(input.ops, input.variables, schema, input.varsLabel);
      },
    });
  }
  const r = cfg.grpc ? await discoverGrpc(cfg, input.methods, { signal }) : null;
  const c = cfg.connect ? await discoverConnect(cfg, input.methods, { signal }) : null;
  const warnings = [];
  // A subscription with no WebSocket lane to run on is left out, and said so.
  const ops = g ? input.ops.filter((op) => g.measured[op.name] !== null) : [];
  if (g) {
    const left = input.ops.filter((op) => g.measured[op.name] === null);
    if (left.length && !ops.length)
      throw new UsageError(
        `every operation in ${show(cfg.operations)} is a subscription, which runs on graphql-transport-ws only, and the WebSocket endpoint does not: ${g.ws.reason}`,
      );
    for (const op of left)
      warnings.push(`${op.name} is a subscription, which runs on ws and wss only, and ws does not run: it is left out`);
  }
  const { lanes, skipped } = lanesFor(cfg, g, r, input.methods, ops, c);
  const graphql = g && {
    url: g.url,
    wsUrl: g.ws.ok ? g.wsUrl : null,
    introspection: Boolean(g.schema),
    alpn: g.alpn,
    operations: ops.map((op) => {
      const m = g.measured[op.name];
      if (m.error) warnings.push(`${op.name} failed before the run (${m.error}): it will count in op_failed`);
      return {
        name: op.name,
        kind: op.kind,
        query: op.query,
        variables: input.variables[op.name] || {},
        reqBytes: m.reqBytes,
        resBytes: m.resBytes,
        serverMs: m.serverMs,
        serverFrom: m.serverFrom,
        calls: m.calls,
        // A subscription: the events it runs for, and what they took under lan.
        ...(op.kind === 'subscription'
          ? { events: m.events, firstEventMs: m.firstEventMs, eventsPerSecond: m.eventsPerSecond }
          : {}),
      };
    }),
  };
  const grpc = r && {
    addr: r.addr,
    tls: r.tls,
    importPaths: input.methods[0].importPaths,
    file: input.methods[0].file,
    calls: input.methods.map((m, i) => {
      const c = r.calls[i];
      if (c.error) warnings.push(`${m.method} failed before the run (${c.error}): it will count in op_failed`);
      return {
        method: m.method,
        service: m.service,
        name: m.name,
        stream: m.stream,
        request: m.request,
        reqBytes: c.reqBytes,
        resBytes: c.resBytes,
        messages: c.messages,
        serverMs: c.serverMs,
        serverFrom: c.serverFrom,
        calls: c.calls,
      };
    }),
  };
  const connect = c && {
    url: c.url,
    h2: c.h2,
    calls: input.methods
      .map((m, i) => ({ m, x: c.calls[i] }))
      .filter(({ x }) => !x.stream)
      .map(({ m, x }) => {
        if (x.error)
          warnings.push(`${m.method} over Connect failed before the run (${x.error}): it will count in op_failed`);
        return {
          method: m.method,
          service: m.service,
          name: m.name,
          request: m.request,
          fields: x.fields,
          reqBytes: x.reqBytes,
          resBytes: x.resBytes,
          serverMs: x.serverMs,
          serverFrom: x.serverFrom,
          calls: x.calls,
        };
      }),
  };
  // The calls each measure took (a subscription's, fewer and longer, are said apart).
  const measures = [
    ...(graphql ? graphql.operations : []),
    ...(grpc ? grpc.calls : []),
    ...(connect ? connect.calls : []),
  ];
  const single = measures.filter((o) => !o.events);
  const calls = Math.min(...(single.length ? single : measures).map((o) => o.calls));
  return {
    graphql,
    grpc,
    connect,
    lanes,
    skipped,
    insecure: cfg.insecure,
    // As given: values name environment variables or are literal (writePlan moves those out).
    credentials: cfg.credentials,
    measured: { profile: 'lan', vus: 1, calls },
    source: cfg.source ? show(cfg.source) : 'flags',
    warnings,
  };
}

// The lines discovery prints (k6pack run api, k6pack up --api).
export function describeApi(api) {
  const lines = [];
  const parts = [];
  if (api.graphql) {
    const g = api.graphql;
    const tls = g.url.startsWith('https:') ? `TLS, ALPN ${g.alpn || 'none'}` : 'cleartext';
    parts.push(
      `GraphQL ${g.url} (${tls}; introspection ${g.introspection ? 'on: operations checked against its schema' : 'off'}), ${g.operations.length} operation${g.operations.length === 1 ? '' : 's'}: ${g.operations.map((o) => o.name).join(', ')}`,
    );
  }
  if (api.grpc)
    parts.push(
      `gRPC ${api.grpc.addr} (${api.grpc.tls ? 'TLS' : 'plaintext, no TLS'}): ${api.grpc.calls.map((c) => `${c.method} (${c.stream ? 'server streaming' : 'unary'})`).join(', ')}`,
    );
  if (api.connect)
    parts.push(
      `Connect ${api.connect.url} (${api.connect.url.startsWith('https:') ? `TLS${api.connect.h2 ? ', h2' : ''}` : 'cleartext'}): ${api.connect.calls.map((c) => c.method).join(', ')}`,
    );
  lines.push(`== your API: ${parts.join('; ')}`);
  const creds = api.credentials && describeCredentials(api.credentials);
  if (creds) lines.push(`== credentials: ${creds}`);
  lines.push(`== lanes: ${api.lanes.map((l) => l.name).join(', ')}`);
  for (const s of api.skipped) lines.push(`== not run: ${s.lane}: ${s.reason}`);
  const all = [
    ...(api.graphql ? api.graphql.operations : []),
    ...(api.grpc ? api.grpc.calls : []),
    ...(api.connect ? api.connect.calls.map((c) => ({ ...c, name: `${c.name} (Connect)` })) : []),
  ];
  lines.push(
    `== server time under lan at 1 VU (median of ${api.measured.calls} calls each; the budgets add it to the model): ${all
      .map(
        (o) =>
          `${o.name} ${formatMs(o.serverMs)} (${o.serverFrom}${o.events ? `, median of ${o.calls} subscriptions; first event ${formatMs(o.firstEventMs)}, ${o.eventsPerSecond ?? '-'} events/s` : ''}; ${o.reqBytes} B up, ${o.resBytes} B down)`,
      )
      .join(', ')}`,
  );
  return lines;
}
