// The radio's event log, as the link toxic lists it (tools/toxiproxy/radio_log.go: the
// uplink toxic's read-only `radio_log` attribute in GET /proxies/<name>/toxics), turned
// into the radio's time in each state over a window, and that time into energy with
// common/radio.js's powers. Pure: k6 (scenarios/lib/network.js fetches the log) and Node
// read it alike.
//
// A log: { radio: 'lte' | '3g', device, now (the server's clock, Unix ms), dropped (older
// events it no longer carries), events: [[atMs, kind, from, to], ...] }. The kinds
// (tools/toxiproxy/radio.go): promotion-start, promotion-end, tail-start (the last packet
// before a quiet gap), resume (the first packet after one, within the tail), demotion.
//
// The states are common/radio.js statePowers' labels, so the same powers price them:
//   LTE  promotion, active, tail-continuous, tail-short-drx, tail-long-drx, idle
//        (a tail is continuous reception for the DRX inactivity timer, then short DRX
//        cycles for the short cycle timer, then long ones: RADIOS.lte's timers)
//   3G   promotion (IDLE -> DCH), fach-promotion, active (DCH busy), dch-tail,
//        fach-active (FACH carrying a small packet), fach (FACH's tail), idle
import { lteTailSpans, RADIOS, statePowers } from './radio.js';

// The radio_log of a list of toxics (GET /proxies/<name>/toxics, or a proxy's `toxics`
// in GET /proxies), or of a GET /proxies answer (the first proxy that lists one): null
// when none does (no radio, or a Toxiproxy without the pack's radio_log).
export function radioLogOf(listed) {
  const lists = Array.isArray(listed) ? [listed] : Object.values(listed || {}).map((p) => (p && p.toxics) || []);
  for (const toxics of lists)
    for (const t of toxics) if (t && t.attributes && t.attributes.radio_log) return t.attributes.radio_log;
  return null;
}

const checkLog = (log) => {
  if (!log || !RADIOS[log.radio] || !Array.isArray(log.events))
    throw new Error('radio log: give the radio_log a link toxic lists ({ radio: "lte" | "3g", now, events: [...] })');
};

// The state an event ends: a promotion-end ends the promotion, a tail-start a busy
// stretch, a resume or a demotion a tail (LTE's mostly long DRX).
function stateBefore([, kind, from]) {
  if (kind === 'promotion-end') return 'promotion';
  if (kind === 'tail-start') return from === 'fach' ? 'fach-active' : 'active';
  if (from === 'idle') return 'idle';
  if (kind === 'promotion-start') return from === 'fach' ? 'fach' : 'idle';
  return from === 'connected' ? 'tail-long-drx' : from === 'dch' ? 'dch-tail' : 'fach';
}

// The log as spans [startMs, endMs, label] up to endMs (the log's now by default).
// label 'lte-tail' is split into its DRX parts by common/radio.js lteTailSpans().
function spansOf(log, endMs) {
  const spans = [];
  const first = log.events[0];
  // Before the first event: idle, or (a log that dropped its oldest) what that event ends.
  let label = first ? stateBefore(first) : 'idle';
  let since = -Infinity;
  const to = (at, next) => {
    if (at > since) spans.push([since, at, label]);
    if (at > since) since = at;
    label = next;
  };
  for (const [at, kind, from, state] of log.events) {
    if (at > endMs) break;
    switch (kind) {
      case 'promotion-start':
        to(at, log.radio === '3g' && from === 'fach' ? 'fach-promotion' : 'promotion');
        break;
      case 'promotion-end':
        to(at, 'active');
        break;
      case 'tail-start':
        to(at, state === 'connected' ? 'lte-tail' : state === 'dch' ? 'dch-tail' : 'fach');
        break;
      case 'resume':
        to(at, state === 'fach' ? 'fach-active' : 'active');
        break;
      case 'demotion':
        to(at, state === 'fach' ? 'fach' : 'idle');
        break;
      default:
        throw new Error(`radio log: unknown event kind "${kind}"`);
    }
  }
  if (endMs > since) spans.push([since, endMs, label]);
  return spans;
}

// The radio's time in each state over [fromMs, toMs) (Unix ms; default: the whole log up
// to its now): { radio, seconds: { state: s }, windowS, promotions: [{ atMs, ms, from }]
// (the promotions that start in the window), partial: true when the window reaches past
// the log's now or before events it dropped }.
export function timeInStates(log, { fromMs = -Infinity, toMs = Infinity } = {}) {
  checkLog(log);
  const end = Math.min(toMs, log.now ?? Infinity);
  const firstAt = log.events.length ? log.events[0][0] : end;
  const from = fromMs === -Infinity ? Math.min(firstAt, end) : fromMs;
  const seconds = {};
  const spans = spansOf(log, end).flatMap((sp) => (sp[2] === 'lte-tail' ? lteTailSpans(sp[0], sp[1]) : [sp]));
  for (const [s, e, label] of spans) {
    const d = Math.min(e, end) - Math.max(s, from);
    if (d > 0) seconds[label] = (seconds[label] || 0) + d / 1000;
  }
  const promotions = [];
  log.events.forEach(([at, kind, fromState], i) => {
    if (kind !== 'promotion-start' || at < from || at >= end) return;
    const done = log.events.slice(i + 1).find((e) => e[1] === 'promotion-end');
    promotions.push({ atMs: at, ms: done ? done[0] - at : null, from: fromState });
  });
  return {
    radio: log.radio,
    seconds,
    windowS: Math.max(0, end - from) / 1000,
    promotions,
    partial: toMs > (log.now ?? Infinity) || Boolean(log.dropped && from < firstAt),
  };
}

// Energy of a time in states (timeInStates' seconds) by common/radio.js's powers: { mj,
// mjByState }.
export function energyOfStates(radio, seconds) {
  const power = statePowers(radio);
  const mjByState = {};
  for (const [state, s] of Object.entries(seconds)) {
    if (power[state] === undefined) throw new Error(`radio log: no power for state "${state}" of ${radio}`);
    mjByState[state] = s * power[state];
  }
  return { mj: Object.values(mjByState).reduce((a, b) => a + b, 0), mjByState };
}

// Per hour: each state's seconds scaled from the window to 3600 s.
export const perHour = (seconds, windowS) =>
  Object.fromEntries(Object.entries(seconds).map(([s, t]) => [s, windowS > 0 ? (t * 3600) / windowS : 0]));

// The radio's timers as a log shows them, beside the parameters they stand for (the
// papers' values in common/radio.js RADIOS): promotion (IDLE -> connected or DCH),
// fach-promotion (3G, FACH -> DCH), tail (LTE: the last packet to idle), dch-tail (3G: the
// last packet in DCH to FACH) and fach-tail (3G: FACH's entry or last packet to idle).
export function timerParams(radio) {
  const set = RADIOS[radio];
  if (!set) throw new Error(`radio log: unknown radio "${radio}": give lte or 3g`);
  return radio === 'lte'
    ? { promotion: set.promotionMs, tail: set.tailMs }
    : {
        promotion: set.promotionMs,
        'fach-promotion': set.fachPromotionMs,
        'dch-tail': set.tailMs,
        'fach-tail': set.fachTailMs,
      };
}

// Each timer that ran its course in the log from fromMs on, in the order they started:
// [{ timer, ms, atMs }]. A promotion from its start to its end (timeInStates' promotions);
// a tail from its tail-start (or, for FACH's, the demotion into FACH) to the demotion that
// ends it, when no packet came between (a resume or a promotion cuts it short: not counted).
export function timersOf(log, { fromMs = -Infinity } = {}) {
  const promotions = timeInStates(log, { fromMs })
    .promotions.filter((p) => p.ms !== null)
    .map((p) => ({
      timer: log.radio === '3g' && p.from === 'fach' ? 'fach-promotion' : 'promotion',
      ms: p.ms,
      atMs: p.atMs,
    }));
  const tails = [];
  const tailName = (state) => (state === 'connected' ? 'tail' : state === 'dch' ? 'dch-tail' : 'fach-tail');
  let tail = null; // { at, state }: a tail under way
  for (const [at, kind, from, to] of log.events) {
    if (kind === 'demotion' && tail && tail.state === from && tail.at >= fromMs)
      tails.push({ timer: tailName(from), ms: at - tail.at, atMs: tail.at });
    // What starts a tail: a tail-start, or a demotion into FACH (its tail counts from there).
    if (kind === 'tail-start') tail = { at, state: to };
    else if (kind === 'demotion' && to === 'fach') tail = { at, state: 'fach' };
    else tail = null;
  }
  return [...promotions, ...tails].sort((a, b) => a.atMs - b.atMs);
}
