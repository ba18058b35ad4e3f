// A soak's latency drift against the run's own start (scenarios/soak.js, and
// scenarios/api.js at LOAD=soak): every operation is tagged part:first|middle|last
// (quarters of its step), and each last-quarter operation adds its duration over the
// median of its VU's own first-quarter durations of the same kind to op_drift, so
// op_drift p50 > 1 means the run got slower. Per VU: no sample crosses VUs.
import { quantileSorted } from '../../common/quantiles.js';
import { opDrift } from './metrics.js';
import { progress } from './load.js';

// The quarter of its step this operation runs in.
export function partNow() {
  const p = progress();
  return p < 0.25 ? 'first' : p >= 0.75 ? 'last' : 'middle';
}

// First-quarter durations kept per kind (bounded), then each late operation's drift.
const FIRST_KEPT = 500;
const firstPart = {};

// kind: what an operation is compared with (a lane, or a lane and operation); tags:
// its row's ({ part }, and op where a lane has several); r: a client's result { ok, ms }.
export function recordDrift(kind, tags, r) {
  const { part } = tags;
  if (!r || !r.ok || !r.ms) return;
  const list = (firstPart[kind] = firstPart[kind] || []);
  if (part === 'first' && list.length < FIRST_KEPT) list.push(r.ms);
  if (part === 'last' && list.length >= 3) {
    if (!list.sorted) {
      list.sort((a, b) => a - b);
      list.sorted = true;
    }
    const median = quantileSorted(list, 0.5);
    if (median > 0) opDrift.add(r.ms / median, tags);
  }
}
