// `k6pack list` (also `scenarios`, `profiles`): the scenarios and profiles, one line each;
// `--env`: every environment variable the pack reads (common/settings.js).
import { NAT_DESCRIPTION } from '../../common/mobile-modifiers.js';
import { describeSettings } from '../../common/settings.js';
import { action, scenarioDescription, scenarioNames } from '../cli-support.js';
import { listProfiles, loadProfile } from '../profiles.js';
import { traceStats } from '../../common/trace.js';

export function register(program, ctx) {
  program
    .command('list')
    .alias('scenarios')
    .alias('profiles')
    .description('list the scenarios and the profiles with one-line descriptions; --env: every setting')
    .option('--env', 'every environment variable the pack reads: default, bounds, who reads it, what it does')
    .action(action((opts) => (opts.env ? listEnv(ctx) : list(opts, ctx))));
}

// The settings, one line each: NAME  default  bounds  readers  doc (docs/settings.md is the same list).
export function listEnv({ out }) {
  const rows = describeSettings();
  const w = (key) => Math.max(...rows.map((r) => r[key].length));
  const [name, dflt, bounds, readers] = [w('name'), w('default'), w('bounds'), w('readers')];
  out(
    `${'name'.padEnd(name)}  ${'default'.padEnd(dflt)}  ${'values'.padEnd(bounds)}  ${'read by'.padEnd(readers)}  what`,
  );
  for (const r of rows)
    out(
      `${r.name.padEnd(name)}  ${r.default.padEnd(dflt)}  ${r.bounds.padEnd(bounds)}  ${r.readers.padEnd(readers)}  ${r.doc}`,
    );
  return 0;
}

// 'walk-lte' -> 'down 5.9 Mbit/s, up 6.1 Mbit/s on average, repeating every 15 s'
function describeTrace(name) {
  try {
    const { network } = loadProfile(`lan+trace=${name}`);
    const [down, up] = [network.trace.down, network.trace.up].map(traceStats);
    const mbit = (s) => `${(s.meanKbps / 1000).toFixed(1)} Mbit/s`;
    return `down ${mbit(down)}, up ${mbit(up)} on average, repeating every ${down.periodMs / 1000} s (down) and ${up.periodMs / 1000} s (up)`;
  } catch (err) {
    return err.message;
  }
}

export async function list(_opts, { out }) {
  out('scenarios (npx k6pack run NAME):');
  const names = scenarioNames();
  if (!names.length) out('  (none yet in scenarios/)');
  for (const name of names) out(`  ${name.padEnd(24)} ${scenarioDescription(name)}`);
  const { network, modifiers, faults, traces } = listProfiles();
  const describe = (name) => {
    // A modifier or a fault alone is not a profile: describe it through lan+name (+rrc,
    // which lan refuses, through lte+rrc).
    for (const spec of [name, `lan+${name}`, `lte+${name}`]) {
      try {
        const p = loadProfile(spec);
        const text = spec === name ? p.network?.description : [...p.modifiers, ...p.faults].at(-1)?.description;
        return (p.description || text || '').split(/(?<=\.)\s/)[0];
      } catch {
        // try the next form
      }
    }
    return '';
  };
  out('network profiles (--profile NAME):');
  for (const name of network) out(`  ${name.padEnd(24)} ${describe(name)}`);
  out("modifiers (change how the network's TCP behaves, or its events: --profile 3g+loss1, lte+handover):");
  for (const name of modifiers) out(`  ${name.padEnd(24)} ${describe(name)}`);
  out(`  ${'nat=SECONDS'.padEnd(24)} ${NAT_DESCRIPTION.split(/(?<=\.)\s/)[0]}`);
  out('fault profiles (combine with a network profile: --profile 3g+flaky):');
  for (const name of faults) out(`  ${name.padEnd(24)} ${describe(name)}`);
  out('traces (the bandwidth as Mahimahi delivery opportunities: --profile lte+trace=NAME, or +trace=./my.trace):');
  for (const name of traces) out(`  ${name.padEnd(24)} ${describeTrace(name)}`);
  return 0;
}
