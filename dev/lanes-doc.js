#!/usr/bin/env node
// docs/lanes.md from the lane catalogue (common/lanes/) and the scenarios' specs: every
// lane with what the model and the clients know of it, and every scenario's lanes.
// test/lanes-doc.test.js checks it is current; this rewrites it:
//   node dev/lanes-doc.js --write
import { join } from 'node:path';
import { LANES, TRANSPORTS, framingOf, requestCpuMsOf } from '../common/lanes/catalogue.js';
import { scenarioNames } from '../lib/cli-support.js';
import { buildSpec } from '../lib/specs.js';
import { ROOT } from '../lib/tools.js';
import { checkOrWrite } from './generated-file.js';

export const LANES_DOC = join(ROOT, 'docs', 'lanes.md');

const quiet = { out: () => {} };
const code = (s) => `\`${s}\``;
// A lane's framing, request / answer; a later call's after it where the transport has its own.
const framingText = (l) => {
  const [first, later] = [false, true].map((warm) => framingOf(l.transport, l.protocol, warm));
  const text = (f) => `${f.req} / ${f.res}`;
  return later === first ? text(first) : `${text(first)}, then ${text(later)}`;
};
const tlsOf = (l) => (l.tls || TRANSPORTS[l.transport].tls === 'always' ? 'yes' : 'no');

// A scenario's lanes as its spec declares them (at LOAD=ci under lan: the lanes do not
// depend on the profile), each with its transport and TLS as the run tags them.
async function scenarioLanes(scenario) {
  const { built } = await buildSpec(scenario, { profile: 'lan', load: 'ci' }, quiet, {});
  return built.lanes.map((l) => ({ name: l.name, transport: l.tags.transport, tls: l.tags.tls === 'true' }));
}

export async function lanesDoc() {
  const byScenario = [];
  for (const scenario of scenarioNames()) byScenario.push([scenario, await scenarioLanes(scenario)]);
  const runs = (lane) =>
    byScenario
      .filter(([, lanes]) => lanes.some((l) => l.name === lane))
      .map(([s]) => s)
      .join(', ');
  const catalogue = LANES.map((l) =>
    [
      code(l.name),
      l.family,
      code(l.transport),
      tlsOf(l),
      [...new Set([l.protocol, l.variant].filter(Boolean))].join(', '),
      l.phases.join(' + '),
      framingText(l),
      requestCpuMsOf(l.transport) || '',
      l.policy ? code(l.policy) : '',
      l.api || '',
      runs(l.name),
    ].join(' | '),
  ).map((row) => `| ${row} |`);
  const scenarios = byScenario.map(
    ([scenario, lanes]) =>
      `| ${code(scenario)} | ${lanes.map((l) => `${code(l.name)}${l.transport ? ` (${l.transport}${l.tls ? ', TLS' : ''})` : ''}`).join(', ')} |`,
  );
  return [
    '# Lanes',
    '',
    "A lane is one way of carrying a scenario's operation: a transport, TLS or not, a protocol. This page is",
    "generated from the lane catalogue (`common/lanes/`, one file per family) and the scenarios' specs",
    '(`scenarios/specs/`) by `node dev/lanes-doc.js --write`; [extending](extending.md#a-lane-in-an-existing-family)',
    'says how to add one.',
    '',
    '## The catalogue',
    '',
    'set-up: the round trips a new connection pays before its first operation (the model,',
    "[model](model.md)). framing: the bytes the transport adds around a request / a response (then, where HPACK makes them fewer, a later call's on the same connection). CPU: what a",
    "request costs the box beyond an HTTP/1.1 keep-alive one (ms; bench/scale.js's knees). policy: its",
    "client's recovery policy (`common/policies.js`). run api: the endpoint `npx k6pack run api` needs for",
    'it ([your API](your-api.md)). A kept HTTP/1.1 lane over `TLS=true` becomes HTTP/2 where the server',
    'offers h2; `https_keepalive` keeps HTTP/1.1 over TLS against an endpoint that offers no h2.',
    '',
    '| lane | family | transport | TLS | protocol | set-up | framing (B) | CPU (ms) | policy | run api | scenarios |',
    '|---|---|---|---|---|---|--:|--:|---|---|---|',
    ...catalogue,
    '',
    "## Every scenario's lanes",
    '',
    'As its spec declares them (under lan at `LOAD=ci`; `TLS=true` moves the lanes that follow it), each',
    "with its transport as the run tags it. A study's own lanes (a variant of a catalogue lane) appear",
    'here only.',
    '',
    '| scenario | lanes |',
    '|---|---|',
    ...scenarios,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) checkOrWrite(LANES_DOC, await lanesDoc(), 'node dev/lanes-doc.js');
