// Applying a profile to a running stack's proxies, and saying so: shared by
// `up`, `profile`, `status`, `run` and `run api`.
import { readState, writeState } from './runstate.js';
import { takeHold } from './hold.js';

// 'latency_up: latency upstream latency=150 jitter=0'; a trace as its size and
// period ('trace=[4926 over 15000 ms]'), not its thousands of timestamps; the radio's
// event log (the link toxic's read-only radio_log: common/radio-log.js) as its length.
const describeValue = (v) => {
  if (Array.isArray(v) || v === null) return v && v.length ? `[${v.length} over ${v[v.length - 1]} ms]` : '[]';
  if (typeof v !== 'object') return v;
  return Array.isArray(v.events) ? `[${v.events.length} events]` : JSON.stringify(v);
};

export function describeToxic(t) {
  const attrs = Object.entries(t.attributes || {}).map(([k, v]) => `${k}=${describeValue(v)}`);
  const toxicity = t.toxicity !== undefined && t.toxicity < 1 ? [`toxicity=${t.toxicity}`] : [];
  return `${t.name}: ${t.type} ${t.stream} ${[...attrs, ...toxicity].join(' ')}`.trim();
}

export function printProfile(out, profile) {
  if (!profile.toxics.length) {
    out(`profile ${profile.name}: no toxics (every proxy passes traffic through unchanged)`);
    return;
  }
  out(`profile ${profile.name}: on every proxy`);
  for (const t of profile.toxics) out(`  ${describeToxic(t)}`);
}

export function printTargets(out, targets) {
  out('endpoints (k6 reads them as -e NAME=value):');
  for (const [k, v] of Object.entries(targets)) out(`  ${k}=${v}`);
}

// When a timed profile's events and trace start (Toxiproxy.applyToxics' epoch).
export const epochLine = (profile, epochMs) =>
  epochMs
    ? `profile ${profile.name}: its ${[profile.network?.events ? 'events' : '', profile.network?.trace ? 'trace' : ''].filter(Boolean).join(' and ')} timed from ${new Date(epochMs).toISOString()} (epoch ${epochMs})`
    : null;

export async function applyProfile(toxiproxy, profile, runDir, out) {
  const { epochMs } = await toxiproxy.applyToxics(profile.toxics);
  printProfile(out, profile);
  const line = epochLine(profile, epochMs);
  if (line) out(line);
  const state = readState(runDir);
  if (state) writeState(runDir, { ...state, profile: profile.spec });
}

// Applies a profile under the stack's hold (refused, or waited for, while a run holds it).
export async function applyHeld(toxiproxy, profile, runDir, { wait }, ctx) {
  const hold = await takeHold(toxiproxy, { kind: 'k6pack profile', profile: profile.name, wait }, ctx);
  try {
    await applyProfile(toxiproxy, profile, runDir, ctx.out);
  } finally {
    await hold.release();
  }
}
