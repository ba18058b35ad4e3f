// The gate lint's noise model (common/gate-lint.js): how much one operation's time
// spreads on unchanged code, per lane family and profile class, and from it the spread
// a percentile of n operations is expected to show. Data, fitted on recorded runs by
// dev/fit-noise.js (each row's (p95 - p50) / 1.645, medians per group); refit it when a
// lane family joins or the machine's kind changes. Plain ES module (k6 and Node).
//
// σ of one operation = max(absMs, rel x its model's time), ms:
//   absMs: the rows whose p50 is under 5 ms (lan: the spread is the CPU's, not the time's)
//   rel:   the others, relative to their p50 (shaped links: the spread grows with the time)
import { TRANSPORTS } from './lanes/catalogue.js';
import { RPC_WEB_PROTOCOLS } from './lanes/rpc-web.js';

export const NOISE = {
  $fitted:
    'dev/fit-noise.js over one gate (lan, lte; 10 run folders; 2026-11-28, 2 cores, CPU x1.27 of the reference, other tests running beside it: an upper bound)',
  lan: {
    grpc: { absMs: 1.22, rel: 0.517 },
    http: { absMs: 1.11, rel: 0.584 },
    'rpc-web': { absMs: 10.36, rel: 0.954 },
    ws: { absMs: 0.32, rel: 0.954 },
  },
  shaped: {
    grpc: { absMs: 1, rel: 0.017 },
    'rpc-web': { absMs: 1, rel: 0.048 },
    ws: { absMs: 1, rel: 0.011 },
  },
};
// A group the runs did not cover (no row of it held 20 operations with one operation
// at its p50 and p95: http and poll under shaped links, poll under lan) takes its
// class's widest fitted value.
const FALLBACK = {
  lan: { absMs: 10.36, rel: 0.954 },
  shaped: { absMs: 1, rel: 0.048 },
};

// A lane family (the catalogue's, common/lanes/): how its client and protocol spread,
// whatever the lane's variant. The browser's RPC rides HTTP's transports under a protocol
// of its own (the lane's variant); a poll loop, an HTTP lane, spreads by its poll (a
// group of its own here).
export function familyOf({ transport = '', variant = '' }) {
  if (Object.prototype.hasOwnProperty.call(RPC_WEB_PROTOCOLS, variant || '')) return 'rpc-web';
  if (transport === 'http-poll') return 'poll';
  return (TRANSPORTS[transport] && TRANSPORTS[transport].family) || 'http';
}
// lan: a link with no delay; shaped: every other.
export const classOf = (profile) => (profile.network?.rttMs ? 'shaped' : 'lan');

// The standard error of a sample's p50 and p95 over n normal draws, in σs x sqrt(n):
// sqrt(p (1 - p)) / φ(z_p): 1.2533 at the median, 2.113 at the 95th percentile.
const QUANTILE_SE = { p50: 1.2533, p95: 2.113 };

// The spread (one standard error) of a percentile of n operations whose model time is modelMs.
export function expectedSpreadMs(family, profile, which, modelMs, n) {
  if (!(n > 0) || n === Infinity) return 0;
  const cls = classOf(profile);
  const g = NOISE[cls][family] || FALLBACK[cls];
  const sigma = Math.max(g.absMs, g.rel * modelMs);
  return (QUANTILE_SE[which] * sigma) / Math.sqrt(n);
}
