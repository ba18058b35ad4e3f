#!/usr/bin/env node
// Validates deploy/k8s offline: `kustomize build`, then kubeconform -strict
// against JSON schemas made here, with no schema download:
//   - Kubernetes kinds: from the OpenAPI spec inside the k8s.io/kubernetes Go
//     module (dev/devtools.js KUBERNETES_API), converted as kubeconform's own
//     openapi2jsonschema does (int-or-string, additionalProperties: false).
//   - TestRun (k6.io/v1alpha1): from the k6-operator CRD file given with
//     --crd (config/crd/bases/k6.io_testruns.yaml of grafana/k6-operator).
//     Without it TestRun is skipped, and this says so: the operator's module
//     is not served by the Go module proxy this pack builds from.
//
//   node deploy/k8s/validate.js [--crd k6.io_testruns.yaml] [--dir deploy/k8s]
//
// Schemas and the built manifests go to .tools/k8s-validate/ (git-ignored). Exit 0 when valid.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { ensureDevTools, KUBERNETES_API, kubernetesOpenApiSpec } from '../../dev/devtools.js';
import { ROOT } from '../../lib/tools.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// Where the schemas and the built manifests go (git-ignored).
export const WORK_DIR = join(ROOT, '.tools', 'k8s-validate');
// Validated as it is, next to the kustomize output (it is applied on its own).
const EXTRA_FILES = [join(HERE, 'results-reader.yaml')];

// kubeconform's file name for a kind: deployment-apps-v1.json, service-v1.json, testrun-k6-v1alpha1.json.
function schemaFileName(kind, apiVersion) {
  const [groupOrVersion, version] = apiVersion.split('/');
  const suffix = `-${groupOrVersion.split('.')[0].toLowerCase()}${version ? `-${version.toLowerCase()}` : ''}`;
  return `${kind.toLowerCase()}${suffix}.json`;
}
const schemaLocation = (dir) => `${dir}/{{ .ResourceKind }}{{ .KindSuffix }}.json`;

const INT_OR_STRING = { oneOf: [{ type: 'string' }, { type: 'integer' }] };

// Strict: every object with listed properties takes no others, unless the
// schema says unknown fields are kept (x-kubernetes-preserve-unknown-fields).
function strict(node) {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  let out = Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === 'enum' || k === 'default' || k === 'example' ? v : strict(v)]),
  );
  if (out.format === 'int-or-string' || out['x-kubernetes-int-or-string'] === true) {
    const { type, format, ...rest } = out;
    out = { ...rest, ...INT_OR_STRING };
  }
  if (
    out.properties &&
    out.additionalProperties === undefined &&
    out['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out.additionalProperties = false;
  }
  return out;
}

// The kind's own schema with apiVersion and kind pinned to it.
function pinKind(schema, kind, apiVersion) {
  const properties = {
    ...schema.properties,
    apiVersion: { type: 'string', enum: [apiVersion] },
    kind: { type: 'string', enum: [kind] },
  };
  return { ...schema, properties, required: [...new Set([...(schema.required || []), 'apiVersion', 'kind'])] };
}

// Definitions reachable from a definition through $ref, so each schema file stands alone.
function reachable(definitions, start) {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    if (!definitions[name]) throw new Error(`OpenAPI spec: no definition ${name}`);
    seen.add(name);
    JSON.stringify(definitions[name], (k, v) => {
      if (k === '$ref' && typeof v === 'string') visit(v.replace('#/definitions/', ''));
      return v;
    });
  };
  visit(start);
  return seen;
}

// { 'deployment-apps-v1.json': schema, ... } for the kinds asked, from a Swagger 2 spec.
function schemasFromOpenApi(swagger, wanted) {
  const out = {};
  for (const [name, def] of Object.entries(swagger.definitions)) {
    for (const gvk of def['x-kubernetes-group-version-kind'] || []) {
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      if (!wanted.some((w) => w.kind === gvk.kind && w.apiVersion === apiVersion)) continue;
      const definitions = {};
      for (const d of reachable(swagger.definitions, name)) definitions[d] = strict(swagger.definitions[d]);
      // Quantities are strings in the spec but numbers are accepted too (cpu: 1).
      const q = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
      if (definitions[q]) definitions[q] = { oneOf: [{ type: 'string' }, { type: 'number' }] };
      out[schemaFileName(gvk.kind, apiVersion)] = { ...pinKind(definitions[name], gvk.kind, apiVersion), definitions };
    }
  }
  return out;
}

// { 'testrun-k6-v1alpha1.json': schema } from a CustomResourceDefinition document.
function schemasFromCrd(crd) {
  if (crd?.kind !== 'CustomResourceDefinition') throw new Error('not a CustomResourceDefinition');
  const { group, names, versions } = crd.spec;
  const out = {};
  for (const v of versions) {
    const schema = v.schema?.openAPIV3Schema;
    if (!schema) continue;
    const apiVersion = `${group}/${v.name}`;
    out[schemaFileName(names.kind, apiVersion)] = pinKind(strict(schema), names.kind, apiVersion);
  }
  return out;
}

// Writes the schemas for every kind in `docs` (plus the CRD's); returns what is validated and what is skipped.
function writeSchemas(docs, { crdFile, dir }) {
  const wanted = [
    ...new Map(docs.map((d) => [`${d.apiVersion} ${d.kind}`, { kind: d.kind, apiVersion: d.apiVersion }])).values(),
  ];
  const schemas = schemasFromOpenApi(JSON.parse(readFileSync(kubernetesOpenApiSpec(), 'utf8')), wanted);
  if (crdFile) {
    for (const doc of YAML.parseAllDocuments(readFileSync(crdFile, 'utf8')).map((d) => d.toJS()))
      Object.assign(schemas, schemasFromCrd(doc));
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [file, schema] of Object.entries(schemas)) writeFileSync(join(dir, file), JSON.stringify(schema));
  const has = (w) => Boolean(schemas[schemaFileName(w.kind, w.apiVersion)]);
  return { validated: wanted.filter(has), skipped: wanted.filter((w) => !has(w)) };
}

// kustomize build + kubeconform -strict. Returns { code, output, validated, skipped, manifests }.
export function validate({ dir = HERE, crdFile, workDir = WORK_DIR, log = () => {} } = {}) {
  const tools = ensureDevTools(['kustomize', 'kubeconform'], { log });
  const built = execFileSync(tools.kustomize, ['build', dir], {
    encoding: 'utf8',
    timeout: 60000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const schemaDir = join(workDir, 'schemas');
  const manifests = join(workDir, 'manifests.yaml');
  const docs = [built, ...EXTRA_FILES.map((f) => readFileSync(f, 'utf8'))]
    .flatMap((t) => YAML.parseAllDocuments(t).map((d) => d.toJS()))
    .filter(Boolean);
  const { validated, skipped } = writeSchemas(docs, { crdFile, dir: schemaDir });
  writeFileSync(manifests, built);
  // Only kinds with no schema at all are skipped, by name: a typo in a kind still fails.
  const skip = skipped.length ? ['-skip', skipped.map((s) => s.kind).join(',')] : [];
  const args = [
    '-strict',
    '-summary',
    '-output',
    'text',
    '-schema-location',
    schemaLocation(schemaDir),
    ...skip,
    manifests,
    ...EXTRA_FILES,
  ];
  let code = 0;
  let output;
  try {
    output = execFileSync(tools.kubeconform, args, {
      encoding: 'utf8',
      timeout: 60000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    code = err.status ?? 1;
    output = `${err.stdout || ''}${err.stderr || ''}`;
  }
  return { code, output: output.trim(), validated, skipped, manifests: built, kubernetes: KUBERNETES_API.version };
}

function main() {
  const { values } = parseArgs({ options: { crd: { type: 'string' }, dir: { type: 'string' } } });
  const r = validate({ dir: values.dir, crdFile: values.crd, log: (l) => console.error(l) });
  const names = (list) => list.map((k) => `${k.kind} (${k.apiVersion})`).join(', ');
  console.log(
    `kubeconform -strict, schemas from k8s.io/kubernetes ${r.kubernetes}${values.crd ? ` and ${values.crd}` : ''}:`,
  );
  console.log(r.output);
  console.log(`validated kinds: ${names(r.validated)}`);
  if (r.skipped.length) console.log(`NOT validated (no schema; pass --crd for TestRun): ${names(r.skipped)}`);
  return r.code;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = main();
  } catch (err) {
    console.error(`validate.js: ${String(err.message || err).split('\n')[0]}`);
    process.exitCode = 1;
  }
}
