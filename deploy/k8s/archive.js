#!/usr/bin/env node
// Builds what deploy/k8s/kustomization.yaml turns into ConfigMaps:
//   generated/archive.tar   `k6 archive` of one scenario under one profile and load level
//   generated/proxies.json  profiles/proxies.compose.json, the runners' Toxiproxy proxies
//
//   node deploy/k8s/archive.js ws-vs-http --profile lte --load ci
//   node deploy/k8s/archive.js soak --profile 3g -e SOAK_DURATION=15m
//
// Why an archive: the operator mounts one ConfigMap at /test, whose keys cannot
// hold a '/', but the scenarios import ./lib/*.js and open ../../profiles/...,
// ../../thresholds.json and ../../servers/proto/books.proto. `k6 archive` packs
// exactly the files the script loads, in their layout, with the -e values, and
// k6 (and the operator's initializer) run the .tar as they would the script.
// The archive holds only the profile it was built with: build one per profile.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { profileOrUsage, resolveScenario, UsageError } from '../../lib/cli-support.js';
import { requireK6 } from '../../lib/k6.js';
import { ROOT } from '../../lib/tools.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_OUTPUT = join(HERE, 'generated');
export const PROXIES_FILE = join(ROOT, 'profiles', 'proxies.compose.json');
// A ConfigMap holds at most 1 MiB.
const CONFIGMAP_LIMIT = 1024 * 1024;

const USAGE =
  'usage: node deploy/k8s/archive.js <scenario> [--profile NAME[+FAULT]] [--load LEVEL] [-e NAME=VALUE]... [--output DIR]';

// Writes archive.tar and proxies.json into `output`; returns their paths.
export function buildArchive({ scenario, profile, load, env = [], output = DEFAULT_OUTPUT }) {
  if (!scenario) throw new UsageError(`give a scenario: ${USAGE}`);
  const script = resolveScenario(scenario);
  if (profile) profileOrUsage(profile);
  for (const e of env) if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(e)) throw new UsageError(`-e ${e}: expected NAME=VALUE`);
  const k6 = requireK6();
  mkdirSync(output, { recursive: true });
  const archive = join(output, 'archive.tar');
  const vars = [...(profile ? [`PROFILE=${profile}`] : []), ...(load ? [`LOAD=${load}`] : []), ...env];
  try {
    execFileSync(k6, ['archive', '--quiet', ...vars.flatMap((v) => ['-e', v]), '-O', archive, script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60000,
    });
  } catch (err) {
    // k6 runs the init code to archive: a bad LOAD or profile file fails here, with k6's sentence.
    const said = String(err.stderr || err.message)
      .trim()
      .split('\n')
      .pop()
      .replace(/^.*msg="([^"]*)".*$/, '$1') // k6's log line -> its message
      .split('\\n')[0] // the message without the JS stack k6 appends
      .replace(/^(Go)?Error: /, '');
    throw new Error(`k6 archive ${relative(ROOT, script)} failed: ${said}`, { cause: err });
  }
  const size = statSync(archive).size;
  if (size > CONFIGMAP_LIMIT) throw new Error(`${archive} is ${size} bytes: a ConfigMap holds at most 1 MiB`);
  const proxies = join(output, 'proxies.json');
  copyFileSync(PROXIES_FILE, proxies);
  return { archive, proxies, size };
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      profile: { type: 'string', short: 'p' },
      load: { type: 'string', short: 'l' },
      env: { type: 'string', short: 'e', multiple: true },
      output: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`one scenario at a time: ${USAGE}`);
  const out = buildArchive({
    scenario: positionals[0],
    profile: values.profile,
    load: values.load,
    env: values.env,
    output: values.output,
  });
  console.log(
    `wrote ${relative(process.cwd(), out.archive)} (${out.size} bytes) and ${relative(process.cwd(), out.proxies)}`,
  );
  console.log('next: kubectl apply -k deploy/k8s (see the header of deploy/k8s/kustomization.yaml)');
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = main();
  } catch (err) {
    console.error(`archive.js: ${String(err.message || err).split('\n')[0]}`);
    process.exitCode = err instanceof UsageError || err.code?.startsWith?.('ERR_PARSE_ARGS') ? 2 : 1;
  }
}
