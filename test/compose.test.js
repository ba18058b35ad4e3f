// docker-compose.yml and docker/*.Dockerfile, checked without a Docker engine:
// valid against the Compose Specification's JSON schema, and in step with the
// embedded stack (common/defaults.js ports and k6 targets, lib/tools.js
// toxiproxy build, K6_VERSION), with every file they mount, copy or run present.
// test/compose-runtime.test.js runs the healthchecks and toxiproxy's -config for real.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import {
  DEFAULT_PORTS,
  K6_VERSION,
  PROXY_ROUTES,
  SERVER_PORTS,
  targetsFor,
  TOXIPROXY_PORTS,
  TOXIPROXY_VERSION,
} from '../common/defaults.js';
import { ROOT } from '../lib/tools.js';
import {
  copiedPaths,
  hostPathFor,
  interpolate,
  loadCompose,
  loadComposeRaw,
  parseDockerfile,
  parsePort,
  parseVolume,
} from './helpers/compose.js';

const require = createRequire(import.meta.url);
const readRepo = (path) => readFileSync(join(ROOT, path), 'utf8');
const pkg = JSON.parse(readRepo('package.json'));

const raw = loadComposeRaw();
const compose = loadCompose();
const { services } = compose;
const TOXIPROXY_SERVICE = 'toxiproxy';

// The Compose Specification schema as shipped by dclint (pinned devDependency).
// It names draft-07 by its https URL; Ajv registers draft-07 under http, so the
// same meta-schema is added under the name the schema uses.
function composeValidator() {
  const schemaFile = join(dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
  const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
  if (!ajv.getSchema(schema.$schema))
    ajv.addMetaSchema({ ...require('ajv/dist/refs/json-schema-draft-07.json'), $id: schema.$schema });
  return ajv.compile(schema);
}

const errorsOf = (validate, doc) =>
  validate(doc) ? [] : validate.errors.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);

// Which service publishes each port variable: graphql/grpc/connect by the port
// variables their servers read, toxiproxy all of TOXIPROXY_PORTS.
const SERVICE_PORT_VARS = {
  graphql: ['GRAPHQL_PORT', 'GRAPHQL_TLS_PORT', 'GRAPHQL_TLS_H1_PORT'],
  grpc: ['GRPC_PORT', 'GRPC_TLS_PORT', 'GRPC_KEEPALIVE_PORT'],
  connect: ['CONNECT_PORT', 'CONNECT_H2C_PORT', 'CONNECT_TLS_PORT'],
  [TOXIPROXY_SERVICE]: Object.keys(TOXIPROXY_PORTS),
};

const serviceBuiltFrom = (dockerfile) =>
  Object.keys(services).filter((name) => services[name].build?.dockerfile === dockerfile);

// Build-context path `p` is copied in by one of `copied` (a file, a directory, or a *-glob).
function isCopied(p, copied) {
  return copied.some((c) => {
    const src = c.replace(/\/$/, '');
    if (src.includes('*'))
      return new RegExp(`^${src.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(p);
    if (p === src) return true;
    return existsSync(join(ROOT, src)) && statSync(join(ROOT, src)).isDirectory() && p.startsWith(`${src}/`);
  });
}

// Repo files a module loads through static and dynamic imports, and the npm packages it needs.
function importClosure(entries) {
  const files = new Set();
  const packages = new Set();
  const pending = [...entries];
  while (pending.length) {
    const file = pending.pop();
    if (files.has(file)) continue;
    files.add(file);
    assert.ok(existsSync(join(ROOT, file)), `${file} is imported but missing`);
    // Comments out, so an import quoted in a comment does not count.
    const src = readRepo(file)
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|\s)\/\/.*$/gm, '$1');
    for (const m of src.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) {
      const spec = m[1];
      if (spec.startsWith('.')) pending.push(posix.join(posix.dirname(file), spec));
      else if (!isBuiltin(spec))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  }
  return { files: [...files], packages: [...packages] };
}

// The ldflags template of lib/tools.js's toxiproxy `go build`, with its ${...} filled in.
function toolsLdflags() {
  const template = /'-ldflags',\s*`([^`]*)`/.exec(readRepo('lib/tools.js'))?.[1];
  assert.ok(template, "lib/tools.js no longer passes '-ldflags' as a template literal: update this test");
  return template.replace(/\$\{(\w+)\}/g, (_, name) => {
    assert.equal(name, 'TOXIPROXY_VERSION', `unexpected variable ${name} in lib/tools.js ldflags`);
    return TOXIPROXY_VERSION;
  });
}

describe('docker-compose.yml against the Compose Specification schema', () => {
  const validate = composeValidator();

  test('is valid as written and after interpolation', () => {
    assert.deepEqual(errorsOf(validate, raw), []);
    assert.deepEqual(errorsOf(validate, compose), []);
  });

  test('the validator rejects what Compose rejects (so the check above can fail)', () => {
    const typo = structuredClone(compose);
    typo.services.graphql.portz = typo.services.graphql.ports;
    assert.match(errorsOf(validate, typo).join('\n'), /portz/);
    const badCondition = structuredClone(compose);
    badCondition.services.k6.depends_on.graphql.condition = 'healthy';
    assert.notDeepEqual(errorsOf(validate, badCondition), []);
  });
});

describe('docker-compose.yml matches the embedded stack', () => {
  test('the stack services and the on-demand k6 service', () => {
    assert.deepEqual(Object.keys(services).sort(), ['connect', 'graphql', 'grpc', 'k6', TOXIPROXY_SERVICE].sort());
    for (const name of Object.keys(SERVICE_PORT_VARS))
      assert.equal(services[name].profiles, undefined, `${name} must start with a plain 'docker compose up'`);
    assert.deepEqual(services.k6.profiles, ['k6']);
  });

  test('every published port binds 127.0.0.1, at the default of the variable that overrides it', () => {
    const seen = [];
    for (const [name, svc] of Object.entries(raw.services)) {
      for (const spec of svc.ports || []) {
        const m = /^127\.0\.0\.1:\$\{([A-Z][A-Z0-9_]*):-(\d+)\}:(\d+)$/.exec(spec);
        assert.ok(m, `${name}: port "${spec}" must be "127.0.0.1:\${VAR:-default}:target"`);
        const [, variable, fallback, target] = m;
        assert.ok(SERVICE_PORT_VARS[name]?.includes(variable), `${name} publishes ${variable}, which is not its port`);
        assert.equal(Number(fallback), DEFAULT_PORTS[variable], `${name}: default for ${variable}`);
        assert.equal(Number(target), DEFAULT_PORTS[variable], `${name}: container port for ${variable}`);
        seen.push(variable);
      }
    }
    assert.deepEqual(
      seen.sort(),
      Object.keys(DEFAULT_PORTS).sort(),
      'every port of DEFAULT_PORTS is published exactly once',
    );
  });

  test('port overrides move the host side only, and never off loopback', () => {
    const env = Object.fromEntries(Object.keys(DEFAULT_PORTS).map((name, i) => [name, String(21000 + i)]));
    const moved = loadCompose(env);
    for (const [name, vars] of Object.entries(SERVICE_PORT_VARS)) {
      const ports = moved.services[name].ports.map(parsePort);
      assert.deepEqual(
        ports,
        vars.map((v) => ({ hostIp: '127.0.0.1', published: Number(env[v]), target: DEFAULT_PORTS[v] })),
      );
    }
  });

  test('the servers listen on all container interfaces at the default ports', () => {
    for (const name of ['graphql', 'grpc', 'connect']) {
      // The GraphQL server's fan-out hub relays through the gRPC server's (lib/stack.js does the same).
      const peer = name === 'graphql' ? { HUB_PEER: `grpc:${SERVER_PORTS.GRPC_PORT}` } : {};
      const expected = {
        HOST: '0.0.0.0',
        ...Object.fromEntries(SERVICE_PORT_VARS[name].map((v) => [v, String(SERVER_PORTS[v])])),
        ...peer,
      };
      assert.deepEqual(services[name].environment, expected, name);
    }
  });

  test('toxiproxy: API on the compose network at TOXIPROXY_PORT, proxies from profiles/proxies.compose.json', () => {
    const cmd = services[TOXIPROXY_SERVICE].command;
    const flag = (f) => cmd[cmd.indexOf(f) + 1];
    assert.equal(flag('-host'), '0.0.0.0');
    assert.equal(flag('-port'), String(DEFAULT_PORTS.TOXIPROXY_PORT));
    assert.equal(hostPathFor(services[TOXIPROXY_SERVICE], flag('-config')), 'profiles/proxies.compose.json');
  });

  // The service whose server reads a port variable.
  const serviceOf = (portVar) => Object.keys(services).find((s) => services[s].environment?.[portVar] !== undefined);

  test('profiles/proxies.compose.json: the PROXY_ROUTES on 0.0.0.0, upstreams by service name', () => {
    const file = 'profiles/proxies.compose.json';
    assert.ok(existsSync(join(ROOT, file)), `${file} is missing`);
    const proxies = JSON.parse(readRepo(file));
    const expected = PROXY_ROUTES.map(([name, listenVar, upstreamVar]) => ({
      name,
      listen: `0.0.0.0:${DEFAULT_PORTS[listenVar]}`,
      upstream: `${serviceOf(upstreamVar)}:${DEFAULT_PORTS[upstreamVar]}`,
      enabled: true,
    }));
    assert.deepEqual(proxies, expected);
  });

  test('k6 targets are targetsFor() with the toxiproxy service as host', () => {
    const env = services.k6.environment;
    for (const [name, value] of Object.entries(targetsFor(DEFAULT_PORTS, TOXIPROXY_SERVICE, serviceOf('GRAPHQL_PORT'))))
      assert.equal(env[name], value, name);
    assert.equal(env.ALLOW_REMOTE_TARGET, '1');
    assert.equal(raw.services.k6.environment.PROFILE, '${PROFILE:-3g}');
    assert.equal(raw.services.k6.environment.LOAD, '${LOAD:-ci}');
    assert.ok(
      existsSync(join(ROOT, 'profiles', 'network', `${env.PROFILE}.json`)),
      `default PROFILE ${env.PROFILE} has no profiles/network file`,
    );
  });

  test('k6: grafana/k6 at K6_VERSION, after a healthy stack, run once, as a non-root user', () => {
    const k6 = services.k6;
    assert.equal(k6.image, `grafana/k6:${K6_VERSION.replace(/^v/, '')}`);
    assert.equal(k6.restart, 'no');
    assert.deepEqual(
      k6.depends_on,
      Object.fromEntries(Object.keys(SERVICE_PORT_VARS).map((s) => [s, { condition: 'service_healthy' }])),
    );
    assert.notEqual(k6.user.split(':')[0], '0');
    assert.deepEqual(raw.services.k6.command, ['run', 'scenarios/${SCENARIO:-ws-vs-http}.js']);
  });

  test('every stack service has a healthcheck probing its own container ports', () => {
    for (const [name, vars] of Object.entries(SERVICE_PORT_VARS)) {
      const { test: check } = services[name].healthcheck;
      assert.equal(check[0], 'CMD', `${name}: exec form, no shell in the toxiproxy image`);
      const probed = check.filter((a) => /^\w+:\/\//.test(a)).map((a) => Number(new URL(a).port));
      assert.ok(probed.length > 0, `${name}: the healthcheck probes no URL`);
      for (const port of probed)
        assert.ok(
          vars.map((v) => DEFAULT_PORTS[v]).includes(port),
          `${name}: healthcheck probes ${port}, not one of its ports`,
        );
    }
    assert.equal(new URL(services[TOXIPROXY_SERVICE].healthcheck.test.at(-1)).pathname, '/version');
  });
});

describe('what compose mounts, builds and runs exists and is in the images', () => {
  test('bind mounts: the repo paths exist (results/ is output), k6 mounts read-only', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const v of (svc.volumes || []).map(parseVolume)) {
        assert.ok(v.source.startsWith('./') || !v.source.startsWith('/'), `${name}: ${v.source} must be a repo path`);
        if (v.source === 'results') continue;
        assert.ok(existsSync(join(ROOT, v.source)), `${name} mounts ${v.source}, which is not in the repo`);
        assert.ok(v.readOnly, `${name} mounts ${v.source} writable`);
      }
    }
    const k6Sources = services.k6.volumes.map((v) => parseVolume(v).source).sort();
    assert.deepEqual(k6Sources, ['common', 'profiles', 'results', 'scenarios', 'servers/proto', 'thresholds.json']);
  });

  test("k6's default scenario resolves through the mounts to a repo file", () => {
    const script = hostPathFor(services.k6, services.k6.command[1]);
    assert.equal(script, 'scenarios/ws-vs-http.js');
    assert.ok(existsSync(join(ROOT, script)), `${script} is missing`);
  });

  test('build contexts and Dockerfiles exist; the images build from the repo root', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (!svc.build) continue;
      assert.equal(svc.build.context, '.', name);
      assert.ok(existsSync(join(ROOT, svc.build.dockerfile)), `${name}: ${svc.build.dockerfile} is missing`);
      assert.equal(
        svc.image,
        undefined,
        `${name}: with both build and image, Compose first tries to pull the image from a registry`,
      );
    }
  });

  test('the server image copies every file the servers and their healthcheck load, and installs their packages', () => {
    const dockerfile = 'docker/servers.Dockerfile';
    const instructions = parseDockerfile(dockerfile);
    const workdir = instructions.findLast((i) => i.op === 'WORKDIR').args;
    const copied = copiedPaths(instructions);
    const built = serviceBuiltFrom(dockerfile);
    assert.deepEqual(built.sort(), ['connect', 'graphql', 'grpc']);
    const entries = built.flatMap((s) =>
      [...services[s].command, ...services[s].healthcheck.test]
        .filter((a) => a.endsWith('.js'))
        .map((a) => posix.relative(workdir, posix.resolve(workdir, a))),
    );
    for (const entry of entries) assert.ok(existsSync(join(ROOT, entry)), `${entry} is missing`);
    const { files, packages } = importClosure(entries);
    for (const file of files)
      assert.ok(isCopied(file, copied), `${file} is loaded in the container but ${dockerfile} does not copy it`);
    for (const name of packages)
      assert.ok(
        pkg.dependencies[name],
        `${name} is imported by the servers but is not a dependency (npm ci --omit=dev drops it)`,
      );
    assert.ok(
      instructions.some((i) => i.op === 'RUN' && /\bnpm ci\b.*--omit=dev/.test(i.args)),
      `${dockerfile} must install with npm ci --omit=dev`,
    );
  });

  test('the toxiproxy image builds tools/toxiproxy as lib/tools.js does', () => {
    const dockerfile = 'docker/toxiproxy.Dockerfile';
    assert.deepEqual(serviceBuiltFrom(dockerfile), [TOXIPROXY_SERVICE]);
    const instructions = parseDockerfile(dockerfile);
    assert.match(instructions[0].args, /^golang:\d+\.\d+\.\d+\S* AS build$/i);

    // Every source file lib/tools.js fingerprints is copied into the build.
    const copied = copiedPaths(instructions);
    for (const f of readdirSync(join(ROOT, 'tools', 'toxiproxy')).filter((f) => /\.(go|mod|sum)$/.test(f))) {
      assert.ok(isCopied(`tools/toxiproxy/${f}`, copied), `tools/toxiproxy/${f} is not copied into the build`);
    }

    // ... and so is every patch, applied with git apply to the vendored toxiproxy module.
    for (const f of readdirSync(join(ROOT, 'tools', 'toxiproxy', 'patches')).filter((f) => f.endsWith('.patch'))) {
      assert.ok(
        isCopied(`tools/toxiproxy/patches/${f}`, copied),
        `tools/toxiproxy/patches/${f} is not copied into the build`,
      );
    }
    const vendor = instructions.find((i) => i.op === 'RUN' && /\bgo mod vendor\b/.test(i.args));
    assert.ok(vendor, `${dockerfile} has no 'go mod vendor'`);
    assert.match(
      vendor.args,
      /vendor\/github\.com\/Shopify\/toxiproxy\/v2\b.*\bgit apply\b/,
      `${dockerfile} must git apply the patches in vendor/github.com/Shopify/toxiproxy/v2`,
    );

    const build = instructions.find((i) => i.op === 'RUN' && /go build .*-o \/out\/toxiproxy-server/.test(i.args));
    assert.ok(build, `${dockerfile} has no 'go build ... -o /out/toxiproxy-server'`);
    const toolsSrc = readRepo('lib/tools.js');
    if (toolsSrc.includes("'-mod=vendor'")) assert.match(build.args, / -mod=vendor /);
    if (/CGO_ENABLED:\s*'0'/.test(toolsSrc)) assert.match(build.args, /\bCGO_ENABLED=0 /);
    if (toolsSrc.includes("'-trimpath'")) assert.match(build.args, / -trimpath /);
    const ldflags = /-ldflags "([^"]*)"/.exec(build.args)?.[1];
    assert.ok(ldflags, `${dockerfile}: go build has no -ldflags "..."`);
    const argDefault = /^TOXIPROXY_VERSION=(\S+)$/.exec(
      instructions.find((i) => i.op === 'ARG' && i.args.startsWith('TOXIPROXY_VERSION')).args,
    )[1];
    const composeArg = services[TOXIPROXY_SERVICE].build.args.TOXIPROXY_VERSION;
    assert.equal(composeArg, TOXIPROXY_VERSION, 'compose build arg');
    assert.equal(interpolate(ldflags, { TOXIPROXY_VERSION: composeArg }), toolsLdflags(), 'ldflags (compose build)');
    assert.equal(
      interpolate(ldflags, { TOXIPROXY_VERSION: argDefault }),
      toolsLdflags(),
      'ldflags (plain docker build)',
    );
  });

  test('Dockerfiles: base images pinned to a version, final stage non-root, ports exposed', () => {
    for (const dockerfile of new Set(
      Object.values(services)
        .filter((s) => s.build)
        .map((s) => s.build.dockerfile),
    )) {
      const instructions = parseDockerfile(dockerfile);
      for (const from of instructions.filter((i) => i.op === 'FROM')) {
        const image = from.args.split(/\s+/)[0];
        assert.ok(
          image === 'scratch' || /^[\w./-]+:\d+\.\d+\.\d+[\w.-]*$/.test(image),
          `${dockerfile}: ${image} is not pinned to a version tag`,
        );
      }
      const last = instructions.at(-1).stage;
      const user = instructions.findLast((i) => i.op === 'USER' && i.stage === last)?.args;
      assert.ok(user && !/^(root|0)(:|$)/.test(user), `${dockerfile}: the final stage must set a non-root USER`);
      const exposed = instructions.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map(Number));
      for (const name of serviceBuiltFrom(dockerfile)) {
        for (const p of services[name].ports.map(parsePort))
          assert.ok(exposed.includes(p.target), `${dockerfile} does not EXPOSE ${p.target}`);
      }
    }
  });

  test('.dockerignore keeps local installs, builds and results out of the build context', () => {
    const ignored = readRepo('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const entry of ['.git', 'node_modules', '.tools', '.run', 'results']) {
      assert.ok(ignored.includes(entry) || ignored.includes(`**/${entry}`), `.dockerignore lacks ${entry}`);
    }
  });
});
