// `k6pack init`: the pack in a team's repository. Given the endpoints (as `run api`
// takes them), it discovers them as `run api` does, then writes, in the working directory:
//   k6pack.json                        the API file `gate --api` and `run api --api` read
//   k6pack.graphql                     a first operation from introspection, when no --operations
//   .github/workflows/k6pack-gate.yml  the pull request's gate (the pack's action)
//   .github/workflows/k6pack-soak.yml  the nightly soak (the same action, load soak)
// and prints the next command. It never overwrites a file: when one of them exists it
// names it and writes nothing (exit 2). Bad input (an unreachable endpoint, a malformed
// URL, --grpc without --proto, an unknown method) is one line and exit 2, as for run api.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { hostPort } from '../../common/your-api.js';
import { action, UsageError } from '../cli-support.js';
import { addApiOptions, apiConfig } from '../api/api-config.js';
import { checkApiInput, describeApi, discoverApi } from '../api/discover.js';
import { graphqlSchema } from '../api/discover-graphql.js';
import { firstOperation } from '../api/first-operation.js';
import { actionRef, GATE_WORKFLOW, gateWorkflow, SOAK_WORKFLOW, soakWorkflow } from '../init-workflows.js';

export const API_FILE = 'k6pack.json';

// A path as the API file names it: relative to the file's folder, with forward slashes.
const relativeTo = (file, path) => relative(dirname(file), path).split('\\').join('/') || '.';

// The files init writes, all of them checked before any is written.
function targetsOf(opts, cwd) {
  const apiFile = resolve(cwd, opts.out ?? API_FILE);
  const ops = opts.graphql && !opts.operations ? apiFile.replace(/\.json$/, '') + '.graphql' : null;
  return {
    apiFile,
    ops,
    gate: join(cwd, GATE_WORKFLOW),
    soak: join(cwd, SOAK_WORKFLOW),
  };
}

function refuseExisting(targets, cwd) {
  const there = Object.values(targets).filter((f) => f && existsSync(f));
  if (there.length)
    throw new UsageError(
      `${relative(cwd, there[0])} exists: init never overwrites a file, and wrote nothing (move it away, or edit it instead)`,
    );
}

// The API file's content, paths relative to it; credentials as given (${VAR} stays a reference).
function apiDocument(cfg, { apiFile, opsFile, variables }) {
  const doc = {
    $comment: 'written by `npx k6pack init`: edit it (docs/your-api.md); `npx k6pack gate --api` reads it',
  };
  if (cfg.graphql) {
    doc.graphql = cfg.graphql;
    if (cfg.ws) doc.ws = cfg.ws;
    doc.operations = relativeTo(apiFile, opsFile);
    if (typeof variables === 'string') doc.variables = relativeTo(apiFile, variables);
    else if (variables && Object.keys(variables).length) doc.variables = variables;
  }
  if (cfg.grpc) doc.grpc = cfg.grpc;
  if (cfg.tls) doc.tls = true;
  if (cfg.connect) doc.connect = cfg.connect;
  if (cfg.insecure) doc.insecure = true;
  if (cfg.proto) {
    // Inside the repository, relative to the API file; outside it, as it is (init warns).
    doc.proto = relative(dirname(apiFile), cfg.proto).startsWith('..') ? cfg.proto : relativeTo(apiFile, cfg.proto);
    if (cfg.calls.length === 1) Object.assign(doc, { call: cfg.calls[0].call, request: cfg.calls[0].request });
    else doc.calls = cfg.calls.map((c) => ({ call: c.call, request: c.request }));
  }
  const { headers, initPayload } = cfg.credentials;
  if (Object.keys(headers).length) doc.headers = headers;
  if (initPayload) doc.initPayload = initPayload;
  return `${JSON.stringify(doc, null, 2)}\n`;
}

// host:port of every endpoint, which the workflows wait for once the API is started.
function addressesOf(cfg) {
  const urls = [cfg.graphql, cfg.ws, cfg.connect].filter(Boolean).map(hostPort);
  return [...new Set([...urls, cfg.grpc].filter(Boolean))];
}

export async function runInit(opts, ctx, { cwd = process.cwd() } = {}) {
  const { out, warn } = ctx;
  if (!opts.graphql && !opts.grpc && !opts.connect)
    throw new UsageError(
      'give your endpoints: --graphql URL, --grpc ADDR --proto FILE --call pkg.Service/Method, --connect URL, or several',
    );
  const targets = targetsOf(opts, cwd);
  if (!targets.apiFile.endsWith('.json'))
    throw new UsageError(`--out ${opts.out}: the API file is JSON: name it *.json`);
  refuseExisting(targets, cwd);

  // Without --operations, a first operation from the schema, written to a scratch file so
  // that the config is checked and discovered exactly as `run api` checks and discovers it.
  const scratch = mkdtempSync(join(tmpdir(), 'k6pack-init-'));
  try {
    let first = null;
    let given = opts;
    if (targets.ops) {
      const probe = join(scratch, 'probe.graphql');
      writeFileSync(probe, 'query K6packProbe { __typename }\n');
      const cfg0 = apiConfig({ ...opts, operations: probe }, { cwd });
      const schema = await graphqlSchema(cfg0, { signal: ctx.trap?.signal });
      if (!schema)
        throw new UsageError(
          `GraphQL endpoint ${cfg0.graphql}: introspection is off, so init cannot write a first operation: give --operations FILE (a .graphql file of named operations)`,
        );
      first = firstOperation(schema);
      if (!first)
        throw new UsageError(
          `GraphQL endpoint ${cfg0.graphql}: no Query field takes only scalar arguments: give --operations FILE (a .graphql file of named operations)`,
        );
      const ops = join(scratch, 'operations.graphql');
      const vars = join(scratch, 'variables.json');
      writeFileSync(ops, first.text);
      writeFileSync(vars, JSON.stringify({ [first.name]: first.variables }));
      given = { ...opts, operations: ops, variables: vars };
    }
    const cfg = apiConfig(given, { cwd });
    const input = checkApiInput(cfg);
    const api = await discoverApi(cfg, input, { signal: ctx.trap?.signal });
    for (const line of describeApi(api)) out(line);
    for (const w of api.warnings) warn(w);

    // Everything checked: the files, none of which may exist (checked again, written with 'wx').
    refuseExisting(targets, cwd);
    const opsFile = targets.ops ?? cfg.operations;
    const variables = first
      ? Object.keys(first.variables).length
        ? { [first.name]: first.variables }
        : null
      : cfg.variables;
    const files = [];
    const write = (file, text) => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text, { flag: 'wx' });
      files.push(relative(cwd, file));
    };
    const apiName = relativeTo(join(cwd, 'x'), targets.apiFile);
    if (targets.ops)
      write(
        targets.ops,
        `# A first operation, built by \`npx k6pack init\` from ${cfg.graphql}'s schema: edit it, add yours.\n${first.text}`,
      );
    write(targets.apiFile, apiDocument(cfg, { apiFile: targets.apiFile, opsFile, variables }));
    const addresses = addressesOf(cfg);
    const ref = actionRef();
    write(targets.gate, gateWorkflow({ apiFile: apiName, addresses, action: ref }));
    write(targets.soak, soakWorkflow({ apiFile: apiName, addresses, action: ref }));
    out(`== wrote ${files.join(', ')}`);
    if (first)
      out(
        `== ${relative(cwd, targets.ops)}: ${first.name} calls ${first.field}${Object.keys(first.variables).length ? ` with placeholder variables in ${apiName} (${Object.keys(first.variables).join(', ')})` : ''}: edit it`,
      );
    const literal = Object.entries(cfg.credentials.headers).filter(([, v]) => !/\$\{\w+\}/.test(v));
    for (const [name] of literal)
      warn(
        `${apiName} holds header ${name}'s value as given: before committing it, write \${VAR} instead and set VAR from a secret`,
      );
    if (cfg.proto && relative(cwd, cfg.proto).startsWith('..'))
      warn(
        `${cfg.proto} is outside this repository: copy it in and point "proto" in ${apiName} at it, or CI will not find it`,
      );
    out(`== the workflows use ${ref}; set API_START in them to the command that starts your API`);
    out('next: npx k6pack gate --api ' + apiName);
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function register(program, ctx) {
  const command = program
    .command('init')
    .description(
      "the pack in your repository: discover your API, write k6pack.json and the gate's and nightly soak's GitHub workflows",
    )
    .option('--out <file>', `the API file to write (default ${API_FILE})`)
    .addHelpText(
      'after',
      `
Writes, in the working directory (never over an existing file: exit 2, nothing written):
  ${API_FILE}                        the API file (\`gate --api\`, \`run api --api\`)
  k6pack.graphql                     a first operation from introspection (without --operations)
  ${GATE_WORKFLOW}  the pull request's gate (the pack's GitHub Action)
  ${SOAK_WORKFLOW}  the nightly soak
Without --operations the operation is the first Query field that takes scalar
arguments, with placeholder variables; a gRPC --call without --request sends {}.

Examples:
  $ npx k6pack init --graphql http://127.0.0.1:4000/graphql
  $ npx k6pack init --graphql http://127.0.0.1:4000/graphql --operations ops.graphql \\
      --grpc 127.0.0.1:50051 --proto api.proto --call pkg.Svc/Method --header 'Authorization: Bearer \${API_TOKEN}'
  $ npx k6pack gate --api ${API_FILE}`,
    );
  addApiOptions(command);
  // run api's flags but --api (init writes that file) and --server-pid (a pid changes on every start).
  command.options = command.options.filter((o) => !['--api', '--server-pid'].includes(o.long));
  command.action(action((opts) => runInit(opts, ctx)));
}
