// deploy/k8s without a cluster: `kustomize build` of a copy with a freshly
// built archive, kubeconform -strict against schemas from the Kubernetes
// OpenAPI spec (and the k6-operator CRD when K6_OPERATOR_CRD names it), the
// manifests in step with the pack (ports, proxies, images, k6 version), and
// the operator's runner model run for real: the initializer's `k6 archive` +
// `k6 inspect` on the ConfigMap's archive, then two paused runners with the
// operator's segment flags and the TestRun's arguments, through one Toxiproxy
// started as its Deployment starts it, resumed as the operator's starter does.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import YAML from 'yaml';
import { buildArchive, PROXIES_FILE } from '../deploy/k8s/archive.js';
import { validate } from '../deploy/k8s/validate.js';
import { ensureDevTools } from '../dev/devtools.js';
import { requireK6 } from '../lib/k6.js';
import { loadProfile } from '../lib/profiles.js';
import { findToxiproxy, ROOT } from '../lib/tools.js';
import {
  DEFAULT_PORTS,
  K6_VERSION,
  PROXY_ROUTES,
  SERVER_PORTS,
  TOXIPROXY_PORTS,
  targetsFor,
} from '../common/defaults.js';
import { parseDockerfile } from './helpers/compose.js';
import { freePorts, startTestStack } from '../dev/test-stack.js';
import { segmentFlags } from '../dev/run-segments.js';
import declareWsVsHttp from '../scenarios/specs/ws-vs-http.js';

const K8S_DIR = join(ROOT, 'deploy', 'k8s');
const CRD = process.env.K6_OPERATOR_CRD;
// The archive under test: the flagship scenario, LTE (70 ms RTT), two VUs per
// step so each of the two runners gets one, steps short enough for a test.
const RUN = { scenario: 'ws-vs-http', profile: 'lte', load: 'smoke', env: ['STEPS=2', 'STEP_SECONDS=2'] };
const RTT_MS = loadProfile(RUN.profile).network.rttMs;
// The kinds of lane the run's samples tell apart (transport and TLS): the spec's lanes'.
const LANE_KINDS = new Set(declareWsVsHttp({}).lanes.map((l) => `${l.tags.transport} tls=${l.tags.tls}`)).size;

let work;
let k8s;
let result; // validate(): kubeconform's verdict and the built manifests
let docs;
const one = (kind, name) => {
  const found = docs.filter((d) => d.kind === kind && (!name || d.metadata.name === name));
  assert.equal(found.length, 1, `one ${kind} ${name || ''}`);
  return found[0];
};

before(
  () => {
    ensureDevTools(['kustomize', 'kubeconform'], { log: (l) => process.stderr.write(`${l}\n`) });
    work = mkdtempSync(join(tmpdir(), 'k6pack-k8s-'));
    k8s = join(work, 'k8s');
    cpSync(K8S_DIR, k8s, { recursive: true, filter: (src) => !src.includes(`${K8S_DIR}/generated`) });
    buildArchive({ ...RUN, output: join(k8s, 'generated') });
    result = validate({ dir: k8s, crdFile: CRD, workDir: join(work, 'validate') });
    docs = YAML.parseAllDocuments(result.manifests).map((d) => d.toJS());
  },
  { timeout: 600000 },
);
after(() => rmSync(work, { recursive: true, force: true }));

describe('deploy/k8s: kustomize build and kubeconform -strict', () => {
  test('the build has the stack and the TestRun, and every Kubernetes kind is valid', (t) => {
    t.diagnostic(result.output);
    assert.deepEqual(docs.map((d) => `${d.kind}/${d.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>')}`).sort(), [
      'ConfigMap/k6pack-proxies-<hash>',
      'ConfigMap/k6pack-test-<hash>',
      'Deployment/connect',
      'Deployment/graphql',
      'Deployment/grpc',
      'Deployment/toxiproxy',
      'Namespace/k6pack',
      'PersistentVolumeClaim/k6pack-results',
      'Service/connect',
      'Service/graphql',
      'Service/grpc',
      'Service/toxiproxy',
      'TestRun/k6pack',
    ]);
    assert.equal(result.code, 0, result.output);
    assert.deepEqual(
      result.validated
        .map((k) => k.kind)
        .filter((k) => k !== 'TestRun')
        .sort(),
      ['ConfigMap', 'Deployment', 'Namespace', 'PersistentVolumeClaim', 'Pod', 'Service'],
    );
    const skipped = result.skipped.map((k) => k.kind);
    assert.deepEqual(skipped, CRD ? [] : ['TestRun']);
    // 13 built + results-reader.yaml; only TestRun may lack a schema.
    assert.match(
      result.output,
      new RegExp(
        `14 resources found in 2 files - Valid: ${14 - skipped.length}, Invalid: 0, Errors: 0, Skipped: ${skipped.length}`,
      ),
    );
  });

  test('the TestRun is valid against the k6-operator CRD', (t) => {
    if (!CRD) {
      t.skip(
        'K6_OPERATOR_CRD is not set: the k6-operator module is not on the Go module proxy; set it to config/crd/bases/k6.io_testruns.yaml of grafana/k6-operator',
      );
      return;
    }
    assert.ok(result.validated.some((k) => k.kind === 'TestRun'));
  });

  test('the schemas are strict: an unknown field fails, a wrong type fails', () => {
    const bad = join(work, 'k8s-bad');
    cpSync(k8s, bad, { recursive: true });
    const servers = join(bad, 'servers.yaml');
    writeFileSync(
      servers,
      readFileSync(servers, 'utf8').replace('  replicas: 1\n', '  replicas: one\n  replicaz: 1\n'),
    );
    const r = validate({ dir: bad, workDir: join(work, 'validate-bad') });
    assert.equal(r.code, 1);
    assert.match(r.output, /additional properties 'replicaz' not allowed/);
    assert.match(r.output, /replicas.*(integer|got string)|got string, want integer/);
  });
});

describe('deploy/k8s in step with the pack', () => {
  const container = (deployment) => deployment.spec.template.spec.containers[0];
  const testRun = () => one('TestRun');

  test('servers: the ports of defaults.js, Services named as the compose upstreams', () => {
    for (const [name, vars] of [
      ['graphql', ['GRAPHQL_PORT', 'GRAPHQL_TLS_PORT', 'GRAPHQL_TLS_H1_PORT']],
      ['grpc', ['GRPC_PORT', 'GRPC_TLS_PORT', 'GRPC_KEEPALIVE_PORT']],
      ['connect', ['CONNECT_PORT', 'CONNECT_H2C_PORT', 'CONNECT_TLS_PORT']],
    ]) {
      const c = container(one('Deployment', name));
      const env = Object.fromEntries(c.env.map((e) => [e.name, e.value]));
      assert.equal(env.HOST, '0.0.0.0');
      for (const v of vars) assert.equal(Number(env[v]), SERVER_PORTS[v], `${name} ${v}`);
      assert.deepEqual(
        c.ports.map((p) => p.containerPort),
        vars.map((v) => SERVER_PORTS[v]),
      );
      assert.deepEqual(c.command, ['node', `servers/${name}/server.js`]);
      const svc = one('Service', name);
      assert.deepEqual(
        svc.spec.ports.map((p) => [p.port, p.targetPort]),
        c.ports.map((p) => [p.containerPort, p.name]),
      );
      assert.equal(svc.spec.selector['app.kubernetes.io/name'], name);
    }
  });

  test("toxiproxy: populated from profiles/proxies.compose.json, upstreams are the servers' Services", () => {
    const d = one('Deployment', 'toxiproxy');
    assert.equal(d.spec.replicas, 1);
    assert.equal(d.spec.strategy.type, 'Recreate');
    const c = container(d);
    const arg = (flag) => c.args[c.args.indexOf(flag) + 1];
    assert.equal(arg('-port'), String(TOXIPROXY_PORTS.TOXIPROXY_PORT));
    const mount = c.volumeMounts.find((m) => arg('-config').startsWith(`${m.mountPath}/`));
    const cm = one('ConfigMap', d.spec.template.spec.volumes.find((v) => v.name === mount.name).configMap.name);
    const proxies = JSON.parse(cm.data[arg('-config').slice(mount.mountPath.length + 1)]);
    assert.deepEqual(proxies, JSON.parse(readFileSync(PROXIES_FILE, 'utf8')));
    assert.deepEqual(
      proxies.map((p) => p.name),
      PROXY_ROUTES.map(([name]) => name),
    );
    const svc = one('Service', 'toxiproxy');
    const published = (port) =>
      c.ports.some((cp) => cp.containerPort === port) && svc.spec.ports.some((sp) => sp.port === port);
    assert.ok(published(TOXIPROXY_PORTS.TOXIPROXY_PORT), 'API port');
    for (const [name, listenVar, upstreamVar] of PROXY_ROUTES) {
      const p = proxies.find((x) => x.name === name);
      assert.equal(p.listen, `0.0.0.0:${TOXIPROXY_PORTS[listenVar]}`);
      assert.ok(published(TOXIPROXY_PORTS[listenVar]), `${name} listen port`);
      const [host, port] = p.upstream.split(':');
      assert.equal(Number(port), SERVER_PORTS[upstreamVar]);
      assert.ok(
        one('Service', host).spec.ports.some((sp) => sp.port === Number(port)),
        p.upstream,
      );
    }
  });

  test('TestRun: targets the toxiproxy Service as the compose k6 service does', () => {
    const env = Object.fromEntries([...testRun().spec.arguments.matchAll(/-e (\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    const targets = targetsFor(DEFAULT_PORTS, 'toxiproxy', 'graphql');
    assert.deepEqual(Object.fromEntries(Object.keys(targets).map((k) => [k, env[k]])), targets);
    assert.equal(env.ALLOW_REMOTE_TARGET, '1');
    const compose = YAML.parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')).services.k6.environment;
    for (const k of Object.keys(targets)) assert.equal(env[k], compose[k], `${k} as in docker-compose.yml`);
  });

  test('TestRun: the archive ConfigMap, raw samples and summaries on the results volume per runner', () => {
    const tr = testRun();
    assert.ok(tr.spec.parallelism >= 2);
    const cm = one('ConfigMap', tr.spec.script.configMap.name);
    assert.ok(cm.data?.[tr.spec.script.configMap.file] || cm.binaryData?.[tr.spec.script.configMap.file]);
    const words = tr.spec.arguments.split(/\s+/);
    assert.equal(words[words.indexOf('--out') + 1], 'json=/results/samples.json.gz');
    assert.ok(words.includes('RESULTS_DIR=/results'));
    const mount = tr.spec.runner.volumeMounts.find((m) => m.mountPath === '/results');
    assert.equal(mount.subPathExpr, '$(RUNNER)');
    assert.ok(tr.spec.runner.env.some((e) => e.name === 'RUNNER' && /job-name/.test(e.valueFrom.fieldRef.fieldPath)));
    const claim = tr.spec.runner.volumes.find((v) => v.name === mount.name).persistentVolumeClaim.claimName;
    one('PersistentVolumeClaim', claim);
    const reader = YAML.parse(readFileSync(join(K8S_DIR, 'results-reader.yaml'), 'utf8'));
    assert.equal(reader.spec.volumes[0].persistentVolumeClaim.claimName, claim);
    assert.equal(reader.metadata.namespace, one('Namespace').metadata.name);
  });

  test('images: k6 at the pinned version, the pack images named as the Dockerfiles build them', () => {
    const k6Image = `grafana/k6:${K6_VERSION.replace(/^v/, '')}`;
    const tr = testRun();
    assert.equal(tr.spec.runner.image, k6Image);
    assert.equal(tr.spec.initializer.image, k6Image);
    const tag = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    assert.equal(container(one('Deployment', 'toxiproxy')).image, `k6pack-toxiproxy:${tag}`);
    for (const name of ['graphql', 'grpc', 'connect'])
      assert.equal(container(one('Deployment', name)).image, `k6pack-servers:${tag}`);
    // The names the Dockerfiles' build comments use (docker build -t NAME).
    for (const [file, name] of [
      ['docker/servers.Dockerfile', 'k6pack-servers'],
      ['docker/toxiproxy.Dockerfile', 'k6pack-toxiproxy'],
    ]) {
      assert.match(readFileSync(join(ROOT, file), 'utf8'), new RegExp(`docker build -f ${file} -t ${name} `));
      assert.ok(parseDockerfile(file).length);
    }
    assert.match(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), new RegExp(`image: ${k6Image}`));
  });
});

describe("deploy/k8s: the operator's runner model, run locally", () => {
  let stack;
  const procs = [];
  const samples = {};
  before(async () => {
    stack = await startTestStack();
  });
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.allSettled(procs);
    await stack?.stop();
  });

  async function waitFor(fn, what, timeoutMs = 30000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await fn().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  // The toxiproxy Deployment's command on this machine: its args on loopback and
  // free ports, its ConfigMap's proxies pointed at the test stack's servers.
  // Returns { Service port -> local port } for rewriting the TestRun's targets.
  async function startToxiproxy(deployment, proxiesJson, dir) {
    const c = deployment.spec.template.spec.containers[0];
    const [api, ...listen] = await freePorts(1 + PROXY_ROUTES.length);
    const local = { [TOXIPROXY_PORTS.TOXIPROXY_PORT]: api };
    const proxies = JSON.parse(proxiesJson).map((p, i) => {
      const [, listenVar, upstreamVar] = PROXY_ROUTES.find(([name]) => name === p.name);
      local[TOXIPROXY_PORTS[listenVar]] = listen[i];
      return { ...p, listen: `127.0.0.1:${listen[i]}`, upstream: `127.0.0.1:${stack.ports[upstreamVar]}` };
    });
    const config = join(dir, 'proxies.json');
    writeFileSync(config, JSON.stringify(proxies));
    const args = [...c.args];
    args[args.indexOf('-host') + 1] = '127.0.0.1';
    args[args.indexOf('-port') + 1] = String(api);
    args[args.indexOf('-config') + 1] = config;
    const proc = execa(findToxiproxy(), args, { reject: false, stdin: 'ignore' });
    procs.push(proc);
    await waitFor(
      async () =>
        Object.keys(await (await fetch(`http://127.0.0.1:${api}/proxies`)).json()).length === PROXY_ROUTES.length,
      'toxiproxy',
    );
    return local;
  }

  test(
    'initializer, then two runners through one Toxiproxy: every operation of both is shaped',
    { timeout: 150000 },
    async (t) => {
      const k6 = requireK6();
      const tr = one('TestRun');
      const archiveCm = one('ConfigMap', tr.spec.script.configMap.name);
      const toxiproxy = one('Deployment', 'toxiproxy');
      const proxiesCm = one('ConfigMap', toxiproxy.spec.template.spec.volumes[0].configMap.name);
      // What the runners mount at /test: the ConfigMap's bytes, the archive archive.js built.
      const testDir = join(work, 'test');
      mkdirSync(testDir);
      const archive = join(testDir, tr.spec.script.configMap.file);
      const stored = archiveCm.data?.['archive.tar'] ?? Buffer.from(archiveCm.binaryData['archive.tar'], 'base64');
      writeFileSync(archive, stored);
      assert.deepEqual(readFileSync(archive), readFileSync(join(k8s, 'generated', 'archive.tar')));

      // The TestRun's arguments here: the Service's host:port -> this machine's.
      const local = await startToxiproxy(toxiproxy, proxiesCm.data['proxies.json'], work);
      const words = tr.spec.arguments
        .split(/\s+/)
        .map((w) => w.replace(/toxiproxy:(\d+)/, (_, port) => `127.0.0.1:${local[port]}`));

      // Initializer: `k6 archive` with the arguments minus --out (its ParseCLI), then `k6 inspect`.
      const archiveArgs = words.filter((w, i) => w !== '--out' && words[i - 1] !== '--out');
      const inspected = join(work, 'inspected.tar');
      await execa(k6, ['archive', archive, '-O', inspected, ...archiveArgs], { timeout: 60000 });
      const req = JSON.parse(
        (await execa(k6, ['inspect', '--execution-requirements', inspected], { timeout: 60000 })).stdout,
      );
      assert.equal(req.maxVUs, 2);
      assert.ok(req.totalDuration);

      // Runners: `k6 run --quiet <segment> <arguments> /test/archive.tar --address --paused --tag ...`,
      // with /results -> the runner's own directory, as its subPathExpr mount makes it.
      const total = tr.spec.parallelism;
      assert.equal(total, 2);
      const env = Object.fromEntries(tr.spec.runner.env.filter((e) => 'value' in e).map((e) => [e.name, e.value]));
      const runners = [];
      for (let i = 1; i <= total; i++) {
        const dir = join(work, `k6pack-${i}`);
        mkdirSync(dir);
        const [apiPort] = await freePorts(1);
        const args = [
          'run',
          '--quiet',
          ...segmentFlags(i, total),
          ...words.map((w) => w.replace(/^(json=|RESULTS_DIR=)\/results/, `$1${dir}`)),
        ];
        args.push(
          archive,
          `--address=127.0.0.1:${apiPort}`,
          '--paused',
          '--tag',
          `instance_id=${i}`,
          '--tag',
          `testrun_name=${tr.metadata.name}`,
        );
        const proc = execa(k6, args, { reject: false, timeout: 120000, env, stdin: 'ignore', cwd: dir });
        procs.push(proc);
        runners.push({ i, dir, proc, api: `http://127.0.0.1:${apiPort}/v1/status` });
      }
      // Ready (the operator's readiness probe), then the starter's PATCH to each, in turn.
      for (const r of runners) await waitFor(async () => (await fetch(r.api)).ok, `runner ${r.i}`);
      const resume = JSON.stringify({ data: { attributes: { paused: false }, id: 'default', type: 'status' } });
      for (const r of runners) {
        const res = await fetch(r.api, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/json' },
          body: resume,
        });
        assert.equal(res.status, 200, `resume runner ${r.i}`);
      }

      const results = await Promise.all(runners.map((r) => r.proc));
      for (const r of runners) {
        const res = results[r.i - 1];
        t.diagnostic(`runner ${r.i}: exit ${res.exitCode}${res.stderr ? `\n${res.stderr}` : ''}`);
      }
      for (const r of runners) {
        const res = results[r.i - 1];
        // 99 is a result (this runner's own thresholds); anything else is a broken run.
        assert.ok([0, 99].includes(res.exitCode), `runner ${r.i} exited ${res.exitCode}: ${res.stderr}`);
        // The scenario's summary files, in this runner's RESULTS_DIR.
        const files = readdirSync(r.dir);
        assert.ok(files.includes('summary.json'), `runner ${r.i}: no summary in RESULTS_DIR (${files})`);
        const points = gunzipSync(readFileSync(join(r.dir, 'samples.json.gz')))
          .toString('utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .filter((x) => x.type === 'Point' && x.metric === 'op_duration');
        samples[r.i] = points;
        const lanes = [...new Set(points.map((p) => `${p.data.tags.transport} tls=${p.data.tags.tls}`))].sort();
        const min = Math.min(...points.map((p) => p.data.value));
        t.diagnostic(
          `runner ${r.i}: ${points.length} operations, min ${min.toFixed(1)} ms, lanes: ${lanes.join(', ')}`,
        );
        assert.equal(lanes.length, LANE_KINDS, 'each runner ran its VU of every lane');
        assert.ok(points.every((p) => p.data.tags.instance_id === String(r.i)));
        // A warm operation costs at least one RTT through the profile's toxics; one
        // run while the profile was off (another runner's setup or teardown reset
        // Toxiproxy) costs a few ms.
        assert.ok(min >= 0.9 * RTT_MS, `runner ${r.i}: an operation took ${min} ms < ${RTT_MS} ms RTT: not shaped`);
      }
    },
  );

  test('`npx k6pack merge` pools the two runners into one result', { timeout: 60000 }, async () => {
    const dirs = Object.keys(samples).map((i) => join(work, `k6pack-${i}`));
    assert.equal(dirs.length, 2, 'both runners ran');
    const merged = join(work, 'merged');
    const r = await execa(process.execPath, [join(ROOT, 'bin', 'k6pack.js'), 'merge', ...dirs, '--out', merged], {
      reject: false,
      timeout: 50000,
    });
    // 99: a threshold failed on the pooled data, which is a result.
    assert.ok([0, 99].includes(r.exitCode), r.stderr);
    const doc = JSON.parse(readFileSync(join(merged, 'summary.json'), 'utf8'));
    assert.equal(doc.run.merged.samples > 0, true);
    assert.equal(doc.run.merged.method, 'exact');
    // The runners run stock k6: raw samples, no histograms. At scale (or with --method hdr)
    // the merge builds each runner's histograms from its samples: the same counts, rates
    // and verdicts, percentiles within the histograms' precision.
    const viaHdr = join(work, 'merged-hdr');
    const h = await execa(
      process.execPath,
      [join(ROOT, 'bin', 'k6pack.js'), 'merge', ...dirs, '--out', viaHdr, '--method', 'hdr'],
      { reject: false, timeout: 50000 },
    );
    assert.equal(h.exitCode, r.exitCode, h.stderr);
    const hdr = JSON.parse(readFileSync(join(viaHdr, 'summary.json'), 'utf8'));
    assert.equal(hdr.run.merged.method, 'hdr (3 significant digits)');
    assert.deepEqual(
      hdr.run.merged.parts.map((p) => p.source),
      ['samples.json.gz', 'samples.json.gz'],
    );
    for (const [i, row] of doc.rows.entries()) {
      assert.equal(hdr.rows[i].latency.count, row.latency.count, row.id);
      assert.equal(hdr.rows[i].failures.rate, row.failures.rate, row.id);
      for (const stat of ['p50', 'p95', 'p99'])
        assert.ok(
          Math.abs(hdr.rows[i].latency[stat] - row.latency[stat]) <= 1e-3 * row.latency.max,
          `${row.id} ${stat}`,
        );
    }
    assert.deepEqual(
      hdr.thresholds.map((t) => t.ok),
      doc.thresholds.map((t) => t.ok),
    );
  });

  // k6 replaces the script's options.tags with the CLI's --tag flags, and the
  // operator always passes --tag instance_id=N --tag testrun_name=...: the
  // profile tag must come from each k6 scenario's own tags (scenario.js).
  test("the runners' raw samples still carry the profile tag", () => {
    for (const [i, points] of Object.entries(samples)) {
      const tags = [...new Set(points.map((p) => p.data.tags.profile))];
      assert.deepEqual(
        tags,
        [RUN.profile],
        `runner ${i}: profile tags ${JSON.stringify(tags)} (k6 drops options.tags when --tag is given: tag profile per sample)`,
      );
    }
    assert.equal(Object.keys(samples).length, 2);
  });
});
