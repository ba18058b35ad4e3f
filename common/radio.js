// A phone's radio for the model (issue 41): what a request after an idle gap pays
// (promotion, FACH, the DRX bound), the tail, and the energy the radio spends, state by
// state, for one operation every T seconds. Pure: k6 and Node load it alike.
//
// The timings are the link toxic's (tools/toxiproxy/radio_params.go, which says where each
// comes from; common/radio.test.js fails when the two disagree); the powers are the same
// papers' (below). Sources:
//   [H12]  Huang et al., "A Close Examination of Performance and Power Characteristics of
//          4G LTE Networks", MobiSys 2012: Table 3 (RRC and DRX timers), Table 4 (each
//          state's power and duration).
//   [Q10]  Qian et al., "Characterizing Radio Resource Allocation for 3G Networks", IMC
//          2010: carrier 1's state machine and the power of DCH and FACH.
//   [H13]  Huang et al., "An In-depth Study of LTE: Effect of Network Protocol and
//          Application Behavior on Performance", SIGCOMM 2013 (a later paper of the group).
//   [ARO]  AT&T Video Optimizer's defaults (ARO.Core lte.conf, ProfileFactoryImpl.java,
//          github.com/attdevsupport/VideoOptimizer), the authors' group's tool.
// Unverified: the papers' tables could not be read here; each value is the one commonly
// cited from them, and where [ARO] has one, whether it agrees is said beside it.
//
// Powers are the radio's, above the phone's base (screen off: 11.4 mW in [H12] Table 4,
// counted by neither).

// LTE: times in ms, powers in mW.
const LTE = {
  name: 'lte',
  promotionMs: 260, // [H12] Table 4: 260.1 ms; [ARO] 0.26 s
  tailMs: 11576, // [H12] Table 3: RRC inactivity timer; [ARO] about 10.12 s (0.1 + 0.02 + 10 s)
  drxInactivityMs: 100, // [H12] Table 3; [ARO] agrees
  shortTimerMs: 20, // [H12] Table 3; [ARO] agrees
  shortCycleMs: 20, // [H12] Table 3; [ARO] agrees
  longCycleMs: 40, // [H12] Table 3; [ARO] agrees
  onDurationMs: 1, // [H12] Table 3; [ARO] 2 ms (T_DRX_PING)
  idleCycleMs: 1280, // [H12] Table 3: the DRX cycle in RRC_IDLE; [ARO] agrees
  idleOnMs: 43.2, // [H12] Table 4: an idle on-duration; [ARO] 0.043 s
  mW: {
    promotion: 1210.7, // [H12] Table 4; [ARO] 1.21 W
    active: 1288.04, // [H12]'s power model, beta (the radio connected and sending); [ARO] 1.2 W
    tail: 1060.0, // [H12] Table 4: the tail's base; [ARO] 1.06 W
    drxOn: 1680.2, // [H12] Table 4: a DRX on-duration in RRC_CONNECTED (short 1680.2, long 1680.1); [ARO] 1.68 W
    idleOn: 594.3, // [H12] Table 4: an on-duration in RRC_IDLE; [ARO] 0.594 W
    idle: 0, // between idle on-durations; [ARO] 0
  },
};

// 3G (UMTS), carrier 1 of [Q10].
const UMTS = {
  name: '3g',
  promotionMs: 2000, // IDLE -> DCH; [ARO] 2.0 s; [H13] §4.2 cites [Q10]: about 2 s
  fachPromotionMs: 1500, // FACH -> DCH; [ARO] 1.5 s; [H13] §4.2 cites [Q10]: about 1.5 s
  // [ARO]'s hard-coded fallback has 5 s and 12 s; every 3G profile it ships, its default
  // "AT&T 3G" (i997.conf) too, has 4 s and 10 s.
  tailMs: 5000, // DCH -> FACH; [ARO] fallback 5 s, profiles 4 s
  fachTailMs: 12000, // FACH -> IDLE; [ARO] fallback 12 s, profiles 10 s
  rlcUp: 540, // bytes; [ARO] 543
  rlcDown: 475, // bytes; [ARO] agrees
  mW: {
    promotion: 530, // IDLE -> DCH: [ARO]'s fallback (i997.conf: 650), not found in [Q10]'s tables
    fachPromotion: 550, // FACH -> DCH: [ARO]'s fallback likewise (i997.conf: 800)
    dch: 800, // [Q10], not found in any source read here; [ARO] fallback 0.7 W, i997.conf 1.30 W
    fach: 460, // [Q10], likewise; [ARO] fallback 0.35 W, i997.conf 0.30 W
    idle: 0, // [Q10]; [ARO] 0
  },
};

export const RADIOS = { lte: LTE, '3g': UMTS };

const setOf = (radio) => {
  const set = RADIOS[radio];
  if (!set) throw new Error(`unknown radio "${radio}": give lte or 3g`);
  return set;
};

// FACH's time to carry n bytes of one direction ([Q10]'s fit; [ARO]'s coefficients).
export function fachMs(up, n) {
  return up ? 0.0014 * n * n + 1.6 * n + 20 : 0.1 * n + 10;
}

// A request's bytes stay on FACH when both directions keep within their buffers.
const fitsFach = (set, upBytes, downBytes) => upBytes <= set.rlcUp && downBytes <= set.rlcDown;

// The radio's whole tail: from the last packet to idle (ms).
export function tailMs(radio) {
  const set = setOf(radio);
  return set.tailMs + (set.fachTailMs || 0);
}

// What a request after an idle gap of gapS seconds (from the radio's last packet) pays
// before its bytes go: { state it finds, promotionMs, fachMs (FACH's slow carriage of a
// small request: its bytes up, then its answer's down) }. upBytes/downBytes decide FACH
// against its buffer thresholds (absent: large, so FACH promotes). In order, as the link
// toxic meets them (tools/toxiproxy/radio.go sendFACH): a request within the uplink's
// buffer goes up on FACH; an answer past the downlink's then promotes the radio to DCH
// (a request past its own promotes before it goes). from: where the last
// packet left the radio, 'up' (DCH or RRC_CONNECTED) or, in 3G, 'fach' (FACH carried it:
// the radio stays in FACH, and FACH's own tail counts from it).
export function wake(radio, gapS, { upBytes = Infinity, downBytes = Infinity, from = 'up' } = {}) {
  const set = setOf(radio);
  const gap = gapS * 1000;
  if (set === LTE) return gap >= set.tailMs ? idle(set.promotionMs) : up('connected');
  const onFach = from === 'fach';
  if (gap < set.tailMs && !onFach) return up('dch');
  if (gap >= (onFach ? 0 : set.tailMs) + set.fachTailMs) return idle(set.promotionMs);
  if (fitsFach(set, upBytes, downBytes))
    return { state: 'fach', promotionMs: 0, fachMs: fachMs(true, upBytes) + fachMs(false, downBytes) };
  const requestOnFach = upBytes <= set.rlcUp ? fachMs(true, upBytes) : 0;
  return { state: 'fach', promotionMs: set.fachPromotionMs, fachMs: requestOnFach };
}
const idle = (promotionMs) => ({ state: 'idle', promotionMs, fachMs: 0 });
const up = (state) => ({ state, promotionMs: 0, fachMs: 0 });

// What the operations of a rhythm pay, one by one: `count` of them, one every periodS
// seconds start to start (nothing else on the link), after one that left the radio up
// (scenarios/mobile.js paced: a warm operation straight after the first). Each one's gap
// is the period less the operation before: its time on the plain link (activeMs), what
// the radio added to it (its promotion, FACH), and its connection's packets after the
// answer (trailMs: gRPC's PING and ACK, a round trip). wake()'s results, each with the
// gap and the `from` it met. In 3G an operation FACH carries leaves the radio in FACH,
// whose 12 s tail then counts from it: at gaps from 5 to 12 s small operations stay on
// FACH, from 12 to 17 s they alternate with promotions from IDLE (the link toxic's state
// machine does the same: tools/toxiproxy/radio.go).
export function rhythmWakes(
  radio,
  { periodS, activeMs = 0, trailMs = 0, count = 8, upBytes = Infinity, downBytes = Infinity },
) {
  const set = setOf(radio);
  const out = [];
  let from = 'up';
  let added = 0;
  for (let k = 0; k < count; k++) {
    const gapS = Math.max(0, periodS * 1000 - activeMs - added - trailMs) / 1000;
    const w = wake(radio, gapS, { upBytes, downBytes, from });
    out.push({ ...w, from, gapS });
    added = w.promotionMs + w.fachMs;
    from = set === UMTS && w.state === 'fach' && w.promotionMs === 0 ? 'fach' : 'up';
  }
  return out;
}

// The most DRX adds to a downlink packet (a push) that comes gapS seconds after the
// radio's last packet: none within the inactivity timer, a short cycle within the short
// cycle timer after it, a long cycle for the rest of the tail; none once the radio is
// idle (it pays the promotion instead) and none in 3G.
export function drxBoundMs(radio, gapS) {
  const set = setOf(radio);
  const gap = gapS * 1000;
  if (set !== LTE || gap <= set.drxInactivityMs || gap >= set.tailMs) return 0;
  return gap <= set.drxInactivityMs + set.shortTimerMs ? set.shortCycleMs : set.longCycleMs;
}

// ---- energy ----

// The radio's mean power in each state it can spend time in (mW).
export function statePowers(radio) {
  const set = setOf(radio);
  const p = set.mW;
  if (set === UMTS)
    return {
      promotion: p.promotion,
      'fach-promotion': p.fachPromotion,
      active: p.dch,
      'dch-tail': p.dch,
      'fach-active': p.fach,
      fach: p.fach,
      idle: p.idle,
    };
  // A DRX cycle: one on-duration at drxOn, the rest at the tail's base.
  const drx = (cycle) => (set.onDurationMs * p.drxOn + (cycle - set.onDurationMs) * p.tail) / cycle;
  return {
    promotion: p.promotion,
    active: p.active,
    'tail-continuous': p.tail,
    'tail-short-drx': drx(set.shortCycleMs),
    'tail-long-drx': drx(set.longCycleMs),
    idle: (set.idleOnMs * p.idleOn + (set.idleCycleMs - set.idleOnMs) * p.idle) / set.idleCycleMs,
  };
}

// An LTE tail [from, to) in ms, as [start, end, state] spans: continuous reception for the
// DRX inactivity timer, short DRX for its timer, then long DRX (the link toxic's states;
// common/radio-log.js splits a logged tail the same way).
export function lteTailSpans(from, to) {
  const spans = [];
  let t = from;
  for (const [label, len] of [
    ['tail-continuous', LTE.drxInactivityMs],
    ['tail-short-drx', LTE.shortTimerMs],
    ['tail-long-drx', Infinity],
  ]) {
    const stop = Math.min(to, t + len);
    if (stop > t) spans.push([t, stop, label]);
    t = stop;
  }
  return spans;
}

// The radio's time in each state (seconds) over one period of a steady rhythm: one
// operation every periodS seconds, each keeping the radio busy for activeS (its bytes
// on the air; a small one on 3G's FACH takes FACH's own time instead), after the radio
// has settled into the rhythm. It walks the same state machine as the link toxic
// (tools/toxiproxy/radio.go), one operation at a time.
export function rhythm(radio, { periodS, activeS = 0, upBytes = Infinity, downBytes = Infinity }) {
  const set = setOf(radio);
  if (!(periodS > 0) || !(activeS >= 0) || activeS >= periodS)
    throw new Error(`a rhythm needs 0 <= activeS (${activeS}) < periodS (${periodS})`);
  const T = periodS * 1000;
  const a = activeS * 1000;
  const spans = []; // [start, end, state] in ms
  let state = 'idle';
  let last = -Infinity; // the end of the radio's last activity
  const tailOf = (from, to) => {
    // The states between an activity's end and the next operation (or the end of time).
    if (set === LTE) {
      const end = Math.min(to, from + set.tailMs);
      spans.push(...lteTailSpans(from, end));
      if (to > end) spans.push([end, to, 'idle']);
      return to >= from + set.tailMs ? 'idle' : 'connected';
    }
    if (state === 'dch') {
      const fachAt = from + set.tailMs;
      spans.push([from, Math.min(to, fachAt), 'dch-tail']);
      if (to <= fachAt) return 'dch';
      from = fachAt;
    }
    const idleAt = from + set.fachTailMs;
    spans.push([from, Math.min(to, idleAt), 'fach']);
    if (to <= idleAt) return 'fach';
    spans.push([idleAt, to, 'idle']);
    return 'idle';
  };
  const cycles = 8; // the rhythm settles within two; the last one is the steady one
  for (let k = 0; k < cycles; k++) {
    const t = k * T;
    if (last > -Infinity) state = tailOf(last, t);
    else if (t > 0) spans.push([0, t, 'idle']);
    let at = t;
    if (state === 'idle' || (state === 'fach' && !fitsFach(set, upBytes, downBytes))) {
      const fromFach = state === 'fach';
      const d = fromFach ? set.fachPromotionMs : set.promotionMs;
      spans.push([at, at + d, fromFach ? 'fach-promotion' : 'promotion']);
      at += d;
      state = set === LTE ? 'connected' : 'dch';
    }
    if (state === 'fach') {
      const d = fachMs(true, upBytes) + fachMs(false, downBytes);
      spans.push([at, at + d, 'fach-active']);
      last = at + d;
    } else {
      spans.push([at, at + a, 'active']);
      last = at + a;
    }
  }
  tailOf(last, cycles * T + T); // the last period's end
  // The last period, [ (cycles-1) T, cycles T ).
  const from = (cycles - 1) * T;
  const to = cycles * T;
  const seconds = {};
  for (const [s, e, label] of spans) {
    const d = Math.min(e, to) - Math.max(s, from);
    if (d > 0) seconds[label] = (seconds[label] || 0) + d / 1000;
  }
  return seconds;
}

// The radio's energy for one operation every periodS seconds: per operation (mJ), per
// hour (mJ), the time in each state per hour (s), and the part of each.
export function energy(radio, opts) {
  const seconds = rhythm(radio, opts);
  const power = statePowers(radio);
  const byState = Object.fromEntries(Object.entries(seconds).map(([s, t]) => [s, t * power[s]]));
  const perOpMj = Object.values(byState).reduce((x, y) => x + y, 0);
  const perHour = 3600 / opts.periodS;
  return {
    perOpMj,
    perHourMj: perOpMj * perHour,
    secondsPerHour: Object.fromEntries(Object.entries(seconds).map(([s, t]) => [s, t * perHour])),
    mjPerOpByState: byState,
  };
}

// A battery's energy (mJ) from its capacity (mAh) and nominal voltage (V), and the share
// of it an amount of energy is.
export const batteryMj = (mAh, volts = 3.85) => mAh * 3.6 * volts * 1000;
export const batteryShare = (mj, mAh, volts = 3.85) => mj / batteryMj(mAh, volts);
