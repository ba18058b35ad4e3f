// What `k6pack gate` runs when told nothing, and the files it writes: its profiles and
// load, the scenarios whose declarations say the gate runs them, and its file names. Here
// rather than in the command (lib/commands/k6pack-gate.js), so that the benches that
// measure the gate and the tests read the same facts without importing a command.
import { FILES } from '../common/results.js';
import { scenarioNames, UsageError } from './cli-support.js';
import { specGate } from './specs.js';

// The gate's load: LOAD=gate, every lane at 4 VUs, each step as long as its gates need (common/schedule.js).
export const GATE_DEFAULTS = { profile: 'lan,lte', load: 'gate' };
// The PR gate's wall-time target (issue 38: at most 4 minutes; bench/gate-trust.js).
export const GATE_TARGET_SECONDS = 240;
export const GATE_FILES = {
  report: FILES.report,
  junit: FILES.junit,
  markdown: 'gate.md',
  comment: 'comment.md',
  record: 'gate.json',
};

// The gate's scenarios: those whose declaration says the gate runs them (GATE in
// scenarios/specs/<name>.js: all but mobile, soak, unstable and api, each with its reason), or
// the --scenarios list (checked).
export async function gateScenarios(list) {
  const known = scenarioNames();
  if (list === undefined) {
    const gates = await Promise.all(known.map(specGate));
    return known.filter((_, i) => gates[i].runs);
  }
  const names = [
    ...new Set(
      String(list)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (!names.length) throw new UsageError('--scenarios needs at least one scenario name');
  for (const n of names)
    if (!known.includes(n))
      throw new UsageError(`unknown scenario '${n}' in --scenarios: choose from ${known.join(', ')}`);
  if (names.includes('api'))
    throw new UsageError(
      'api in --scenarios: the api scenario needs your API: gate it with `npx k6pack run api … --load ci` (exit 99 when a threshold fails)',
    );
  return names;
}
