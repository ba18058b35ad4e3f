// Network profiles -> Toxiproxy toxics.
//
// Plain ES module with no I/O (its imports are pure modules of this folder), so k6
// (scenarios/lib/network.js, which reads the files with open()) and Node
// (lib/profiles.js, which reads them with fs) share the parsing, validation and toxic
// arithmetic. A profile spec is a network profile plus any modifiers and fault
// profiles, and at most one trace: '3g', '3g+flaky', 'lte+loss1+flaky', '3g+ideal',
// 'lte+handover', 'lte+trace=walk-lte', 'lte+trace=./down.trace:./up.trace', and at most
// one NAT timeout: 'lte+rrc+nat=60' (common/mobile-modifiers.js).
//
// Three kinds of profile file:
//   network   (profiles/network/)   a link: rttMs, jitterMs, downKbps, upKbps, and
//             optionally how TCP behaves on it: slowStart (default true),
//             initialWindow (bytes, default 14600), loss ({ rate, burst }), sharedBandwidth
//   modifiers (profiles/modifiers/) change the network's own fields: +ideal (no slow
//             start), +loss1, +loss3, +burst (segment loss TCP repairs), +shared
//             (one bandwidth for every connection of a proxy), the events of an
//             unstable link: +handover, +move, +move-reset, +dip (`events`, below), and
//             the phone's radio states: +rrc (`radio`, common/mobile-modifiers.js)
//   faults    (profiles/faults/)    toxics of their own: resets, stalls, jitter, ...
// and a trace (profiles/traces/, or a file of the user's own: common/trace.js), which
// replaces the bandwidth with Mahimahi's delivery opportunities.
//
// A network profile with a round trip or a bandwidth gets one `link` toxic per
// direction (tools/toxiproxy/link.go; what TCP does there: tools/toxiproxy/tcp.go),
// with every attribute set, so switching between network profiles (3g -> lte,
// 3g -> 3g+loss3) updates the same two toxics in place (common/toxics.js):
//   handshake  upstream R (the client may send once the SYN-ACK is back), downstream
//              1.5 R (a server-first byte, like an HTTP/2 server's SETTINGS that gRPC
//              clients wait for, reaches the client at 2 R, as on a real link)
//   latency    R/2 each way (whole ms that add up to R), jitter likewise
//   rtt        R (acknowledgements, the window's rounds and the retransmission timeout)
//   bitrate    kbit/s x 1000 (0: no limit); shared 1 when the proxy's connections share it
//   iw, mss    TCP's initial window (0: slow start off) and segment size
//   rto_min    200 ms (Linux's TCP_RTO_MIN)
//   loss, burst_p, burst_r, burst_loss  in parts per million (Gilbert-Elliott as netem)
//   epoch      Unix ms the events and the trace are timed from: 0 in a resolved
//              profile; set when the profile is applied (withEpoch), for a profile with
//              events or a trace only, so an untimed profile's toxics never change
//   event      0 none, 1 blackout, 2 move with a silent death, 3 move announced by a
//              reset, 4 dip; event_offset, event_period, event_length in ms;
//              dip_share in parts per million of the bitrate
//   trace      the direction's Mahimahi trace (ms), [] for none
//   radio, radio_device  the radio's states (0 none, 1 LTE, 2 3G) and the device whose
//              radio every proxy's toxics share (tools/toxiproxy/radio.go); uplink 1 on
//              the upstream toxic (the phone's packets), 0 downstream
//   nat_idle   a carrier NAT's idle timeout in ms, 0 for none (tools/toxiproxy/nat.go)
// A network with events or a trace gets its link toxics even when it is otherwise
// lan-like (no round trip, no rate), and so does one with a radio or a NAT timeout.
// Fault toxics follow the link toxic in each direction.

import {
  checkMobileFields,
  hasMobileShaping,
  MOBILE_FIELDS,
  mobileAttributes,
  NAT_EXTRA,
  natWithoutValue,
  parseNat,
  resolveRadio,
  unknownParameter,
} from './mobile-modifiers.js';
import { ProfileError } from './profile-error.js';
import { MAX_TRACE_BYTES, parseTrace } from './trace.js';

export const PROFILE_DIR = 'profiles';
export const INDEX_FILE = `${PROFILE_DIR}/index.json`;
export const KINDS = { network: 'network', modifiers: 'modifiers', faults: 'faults' };

// Toxic types Toxiproxy v2.5.0 knows, plus the pack's own `link` and `handshake`.
export const TOXIC_TYPES = [
  'latency',
  'bandwidth',
  'slow_close',
  'timeout',
  'reset_peer',
  'slicer',
  'limit_data',
  'link',
  'handshake',
];
const STREAMS = ['upstream', 'downstream'];
const NAME_RE = /^[a-z0-9][a-z0-9-]*$/;
const TOXIC_NAME_RE = /^[A-Za-z0-9_.-]+$/;

export { ProfileError };

export const profileFile = (kind, name) => `${PROFILE_DIR}/${kind}/${name}.json`;

// A network part that names a file of the user's own (./my-network.json) rather than
// a built-in profile: it has a slash or ends in .json.
export const isProfileFile = (part) => /[/\\]/.test(part) || /\.json$/i.test(part);

// '3g+loss1+flaky' -> { network: '3g', file: false, extras: ['loss1', 'flaky'] } (each
// extra a modifier or a fault, which resolveProfile tells apart by the catalogue);
// './my-network.json+flaky' -> { network: './my-network.json', file: true, extras: ['flaky'] };
// 'lte+trace=walk-lte' -> { network: 'lte', file: false, extras: [], trace: { down: 'walk-lte',
// up: 'walk-lte' } } (a shipped trace's name or a file of the user's own for both
// directions, or DOWN:UP, one for each); 'lte+rrc+nat=60' -> { ..., extras: ['rrc'], nat: 60 }.
// The extras with an = are the rows of PARAMETERISED below.
export const TRACE_EXTRA = 'trace=';
const TRACE_HELP =
  'give +trace=FILE (a Mahimahi trace for both directions), +trace=DOWN:UP (one file each) or +trace=NAME (a shipped trace: `npx k6pack list`)';

// A trace= part -> { down, up }.
function parseTraceRefs(spec, part) {
  const refs = part.slice(TRACE_EXTRA.length).split(':');
  if (refs.length > 2 || refs.some((r) => r.trim() === ''))
    throw new ProfileError(`profile spec "${spec}": "${part}" is not a trace: ${TRACE_HELP}`);
  const [down, up = down] = refs.map((r) => r.trim());
  return { down, up };
}

// The extras that take a parameter (NAME=VALUE): the key parseSpec returns it under, its
// parser (spec, part) -> value, and the sentence for one named twice. A new one is a row here.
const PARAMETERISED = [
  { prefix: TRACE_EXTRA, key: 'trace', parse: parseTraceRefs, twice: 'names a trace twice: give one +trace=' },
  { prefix: NAT_EXTRA, key: 'nat', parse: parseNat, twice: 'names a NAT timeout twice: give one +nat=' },
];
const parameterised = (part) => PARAMETERISED.find((x) => part.startsWith(x.prefix));

export function parseSpec(spec) {
  if (typeof spec !== 'string' || spec.trim() === '') {
    throw new ProfileError(
      'profile spec is empty: give a network profile, optionally with modifiers and faults, e.g. "3g", "3g+loss1" or "3g+flaky"',
    );
  }
  const parts = spec
    .trim()
    .split('+')
    .map((p) => p.trim());
  const values = {};
  const extras = [];
  parts.forEach((p, i) => {
    if (i === 0 && isProfileFile(p)) return;
    const param = i > 0 && parameterised(p);
    if (param) {
      if (param.key in values) throw new ProfileError(`profile spec "${spec}" ${param.twice}`);
      values[param.key] = param.parse(spec, p);
      return;
    }
    if (i > 0 && p === 'nat') throw natWithoutValue(spec);
    if (i > 0 && p.includes('=')) throw unknownParameter(spec, p);
    if (!NAME_RE.test(p)) {
      throw new ProfileError(
        `profile spec "${spec}" is malformed: expected NETWORK[+MODIFIER or FAULT...][+trace=FILE] of lower-case names (or a file of your own, ./my-network.json), e.g. "3g+flaky"`,
      );
    }
    if (i > 0) extras.push(p);
  });
  const dup = extras.find((f, i) => extras.indexOf(f) !== i);
  if (dup) throw new ProfileError(`profile spec "${spec}" names "${dup}" twice`);
  return { network: parts[0], file: isProfileFile(parts[0]), extras, ...values };
}

const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const isText = (v) => typeof v === 'string' && v.trim() !== '';

function checkFields(obj, file, allowed) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new ProfileError(`${file}: must be a JSON object`);
  }
  const extra = Object.keys(obj).find((k) => !allowed.includes(k));
  if (extra !== undefined) {
    throw new ProfileError(`${file}: unknown field "${extra}" (allowed: ${allowed.join(', ')})`);
  }
}

function checkHeader(obj, file, name) {
  if (obj.name !== name) throw new ProfileError(`${file}: name must be "${name}" (the file's name)`);
  if (!isText(obj.description)) throw new ProfileError(`${file}: description must be a non-empty string`);
}

// A network of the user's own (user: true) has the same fields; it needs the numbers
// and where they come from, and its name is the file's (my-network.json -> my-network)
// unless it gives one. SHAPE_FIELDS (how TCP behaves, and the link's events) are
// optional in any network file and are what a modifier sets.
const TCP_FIELDS = ['slowStart', 'initialWindow', 'loss', 'sharedBandwidth'];
const SHAPE_FIELDS = [...TCP_FIELDS, 'events', ...MOBILE_FIELDS];
const NETWORK_FIELDS = ['name', 'description', 'source', 'rttMs', 'jitterMs', 'downKbps', 'upKbps', ...SHAPE_FIELDS];
// Toxiproxy's bandwidth rate is a whole number of KB/s, so 8 kbit/s is the least it can express.
const MIN_KBPS = 8;
// A segment's size, and so the least initial window (RFC 6928 allows 10 of them).
export const MSS = 1460;
// More loss than this and TCP barely moves: a profile's loss is a stress, not an outage.
const MAX_LOSS = 0.5;

const PPM = 1e6;
const ppm = (x) => Math.round((x || 0) * PPM);
const isProb = (v, max = 1) => isNumber(v) && v >= 0 && v <= max;

// Checks the TCP fields and the events present in obj (a network file, or a modifier's `network`).
function checkTcpFields(obj, file) {
  if ('slowStart' in obj && typeof obj.slowStart !== 'boolean')
    throw new ProfileError(`${file}: slowStart must be true or false`);
  if ('sharedBandwidth' in obj && typeof obj.sharedBandwidth !== 'boolean')
    throw new ProfileError(`${file}: sharedBandwidth must be true or false`);
  if (
    'initialWindow' in obj &&
    !(Number.isInteger(obj.initialWindow) && obj.initialWindow >= MSS && obj.initialWindow <= 1000 * MSS)
  ) {
    throw new ProfileError(
      `${file}: initialWindow must be whole bytes from ${MSS} (one segment) to ${1000 * MSS} (RFC 6928's is 14600)`,
    );
  }
  if ('loss' in obj) {
    const l = obj.loss;
    const where = `${file}: loss`;
    if (l === null || typeof l !== 'object' || Array.isArray(l))
      throw new ProfileError(
        `${where} must be an object { rate, burst? } (rate: the share of segments lost, e.g. 0.01)`,
      );
    const extra = Object.keys(l).find((k) => !['rate', 'burst'].includes(k));
    if (extra) throw new ProfileError(`${where}: unknown field "${extra}" (allowed: rate, burst)`);
    if (!isProb(l.rate, MAX_LOSS))
      throw new ProfileError(
        `${where}.rate must be a number from 0 to ${MAX_LOSS} (the share of segments lost, e.g. 0.01; with burst: outside bursts)`,
      );
    if (l.burst !== undefined) {
      const b = l.burst;
      if (b === null || typeof b !== 'object' || Array.isArray(b))
        throw new ProfileError(
          `${where}.burst must be an object { p, r, rate } (Gilbert-Elliott: good -> bad, bad -> good, loss in the bad state)`,
        );
      const bx = Object.keys(b).find((k) => !['p', 'r', 'rate'].includes(k));
      if (bx) throw new ProfileError(`${where}.burst: unknown field "${bx}" (allowed: p, r, rate)`);
      if (!isProb(b.p))
        throw new ProfileError(`${where}.burst.p must be a number from 0 to 1 (the chance a segment starts a burst)`);
      if (!isProb(b.r) || b.r === 0)
        throw new ProfileError(
          `${where}.burst.r must be a number above 0, up to 1 (the chance a burst ends after a segment)`,
        );
      if (!isProb(b.rate))
        throw new ProfileError(
          `${where}.burst.rate must be a number from 0 to 1 (the share of segments lost in a burst)`,
        );
      if (lossRate(l) > MAX_LOSS)
        throw new ProfileError(
          `${where}: the bursts lose ${(lossRate(l) * 100).toFixed(1)} % of segments in all, over ${MAX_LOSS * 100} %`,
        );
    }
  }
  if ('events' in obj) checkEvents(obj.events, file);
  checkMobileFields(obj, file);
}

// ---- events: an unstable link (issue 26) ----
//
// `events` (a network field, set by +handover, +move, +move-reset and +dip, or by a
// network file of the user's own): one kind of event, repeated.
//   kind      "blackout": nothing passes either way for lengthMs; connections stay
//             open and their bytes wait for TCP's backed-off retransmission.
//             "move": the same blackout, then every connection opened before the
//             event's end is dead; with death "silent" nothing ever passes on it
//             again, with death "reset" the proxy resets it at the event's end.
//             "dip": the bandwidth falls to `share` of the network's for lengthMs.
//   lengthMs  how long each event lasts (whole ms, 1 .. 600000)
//   periodS   seconds from one event's start to the next (0 or absent: only one),
//             longer than lengthMs
//   offsetS   seconds from the moment the profile is applied (the epoch) to the first
//             event's start (absent: 0)
//   death     "silent" or "reset" (move only)
//   share     above 0 and below 1 (dip only)
export const EVENT_KINDS = {
  blackout: ['kind', 'lengthMs', 'periodS', 'offsetS'],
  move: ['kind', 'death', 'lengthMs', 'periodS', 'offsetS'],
  dip: ['kind', 'share', 'lengthMs', 'periodS', 'offsetS'],
};
// The link toxic's `event` codes: written here once; tools/toxiproxy/events.go declares
// them as the iota constants eventBlackout, eventMoveSilent, eventMoveReset, eventDip in
// this order, and common/profiles.test.js fails when the two disagree.
export const EVENT_CODES = { blackout: 1, 'move-silent': 2, 'move-reset': 3, dip: 4 };
const MAX_EVENT_MS = 600000;
const MAX_EVENT_S = 86400;
const EVENTS_SHAPE =
  'an object { kind, lengthMs, periodS?, offsetS? } (kind: blackout, move with death, or dip with share), e.g. { "kind": "blackout", "lengthMs": 1500, "periodS": 20, "offsetS": 8 }';

function checkEvents(e, file) {
  const where = `${file}: events`;
  if (e === null || typeof e !== 'object' || Array.isArray(e))
    throw new ProfileError(`${where} must be ${EVENTS_SHAPE}`);
  if (!Object.keys(EVENT_KINDS).includes(e.kind))
    throw new ProfileError(
      `${where}.kind must be "blackout" (nothing passes for lengthMs), "move" (a blackout, then the connections are dead) or "dip" (the bandwidth falls to share)`,
    );
  const allowed = EVENT_KINDS[e.kind];
  const extra = Object.keys(e).find((k) => !allowed.includes(k));
  if (extra !== undefined)
    throw new ProfileError(`${where}: unknown field "${extra}" for a ${e.kind} (allowed: ${allowed.join(', ')})`);
  if (!(Number.isInteger(e.lengthMs) && e.lengthMs >= 1 && e.lengthMs <= MAX_EVENT_MS))
    throw new ProfileError(
      `${where}.lengthMs must be whole milliseconds from 1 to ${MAX_EVENT_MS} (how long each event lasts, e.g. 1500)`,
    );
  if (
    e.periodS !== undefined &&
    !(
      isNumber(e.periodS) &&
      e.periodS >= 0 &&
      e.periodS <= MAX_EVENT_S &&
      (e.periodS === 0 || secondsMs(e.periodS) > e.lengthMs)
    )
  )
    throw new ProfileError(
      `${where}.periodS must be 0 (one event) or the seconds from one event's start to the next, up to ${MAX_EVENT_S} and longer than lengthMs (${e.lengthMs} ms)`,
    );
  if (e.offsetS !== undefined && !(isNumber(e.offsetS) && e.offsetS >= 0 && e.offsetS <= MAX_EVENT_S))
    throw new ProfileError(
      `${where}.offsetS must be seconds from 0 to ${MAX_EVENT_S} (when the first event starts, counted from the moment the profile is applied)`,
    );
  if (e.kind === 'move' && !['silent', 'reset'].includes(e.death))
    throw new ProfileError(
      `${where}.death must be "silent" (the connections never pass anything again) or "reset" (the proxy resets them at the event's end)`,
    );
  if (e.kind === 'dip' && !(isNumber(e.share) && e.share > 0 && e.share < 1 && ppm(e.share) >= 1))
    throw new ProfileError(
      `${where}.share must be a number above 0 and below 1 (the share of the bandwidth left during a dip, e.g. 0.1)`,
    );
}

const secondsMs = (s) => Math.round((s || 0) * 1000);

// The link toxic's event attributes for a network's events (all 0 without).
export function eventAttributes(events) {
  if (!events) return { event: 0, event_offset: 0, event_period: 0, event_length: 0, dip_share: 0 };
  const code = events.kind === 'move' ? EVENT_CODES[`move-${events.death}`] : EVENT_CODES[events.kind];
  return {
    event: code,
    event_offset: secondsMs(events.offsetS),
    event_period: secondsMs(events.periodS),
    event_length: events.lengthMs,
    dip_share: events.kind === 'dip' ? ppm(events.share) : 0,
  };
}

// The share of segments a loss setting loses in the long run: Gilbert-Elliott's
// stationary mix of its two states (p / (p + r) of the time in bursts).
export function lossRate(loss) {
  if (!loss) return 0;
  if (!loss.burst || !loss.burst.p) return loss.rate || 0;
  const bad = loss.burst.p / (loss.burst.p + loss.burst.r);
  return (1 - bad) * (loss.rate || 0) + bad * loss.burst.rate;
}

export function validateNetworkProfile(obj, name, file = profileFile(KINDS.network, name), { user = false } = {}) {
  checkFields(obj, file, NETWORK_FIELDS);
  if (user) {
    if (obj.name !== undefined && (typeof obj.name !== 'string' || !NAME_RE.test(obj.name)))
      throw new ProfileError(
        `${file}: name must be lower-case letters, digits and dashes (or leave it out: the file's name is used)`,
      );
    if (obj.description !== undefined && !isText(obj.description))
      throw new ProfileError(`${file}: description must be a non-empty string (or leave it out)`);
    for (const f of ['rttMs', 'jitterMs', 'downKbps', 'upKbps', 'source'])
      if (!(f in obj))
        throw new ProfileError(
          `${file}: ${f} is missing (a network file needs rttMs, jitterMs, downKbps, upKbps and source)`,
        );
  } else checkHeader(obj, file, name);
  if (!isText(obj.source))
    throw new ProfileError(`${file}: source must be a non-empty string saying where the numbers come from`);
  if (!isNumber(obj.rttMs) || obj.rttMs < 0) throw new ProfileError(`${file}: rttMs must be a number >= 0`);
  if (!isNumber(obj.jitterMs) || obj.jitterMs < 0 || obj.jitterMs > obj.rttMs) {
    throw new ProfileError(`${file}: jitterMs must be a number between 0 and rttMs (${obj.rttMs})`);
  }
  for (const f of ['downKbps', 'upKbps']) {
    if (obj[f] !== null && (!isNumber(obj[f]) || obj[f] < MIN_KBPS)) {
      throw new ProfileError(`${file}: ${f} must be null (no limit) or a number >= ${MIN_KBPS}`);
    }
  }
  checkTcpFields(obj, file);
  return obj;
}

// A modifier: { name, description, source, network: { SHAPE_FIELDS } }.
const MODIFIER_FIELDS = ['name', 'description', 'source', 'network'];

export function validateModifier(obj, name, file = profileFile(KINDS.modifiers, name)) {
  checkFields(obj, file, MODIFIER_FIELDS);
  checkHeader(obj, file, name);
  if (!isText(obj.source))
    throw new ProfileError(`${file}: source must be a non-empty string saying where the numbers come from`);
  const at = `${file}: network`;
  checkFields(obj.network, at, SHAPE_FIELDS);
  if (!Object.keys(obj.network).length)
    throw new ProfileError(`${at} must set at least one of ${SHAPE_FIELDS.join(', ')}`);
  checkTcpFields(obj.network, at);
  return obj;
}

// The network with the modifiers applied; two that set the same field clash.
export function applyModifiers(network, modifiers) {
  const out = { ...network };
  const setBy = {};
  for (const m of modifiers) {
    for (const [k, v] of Object.entries(m.network)) {
      if (setBy[k]) throw new ProfileError(`modifiers "${setBy[k]}" and "${m.name}" both set ${k}: use one of them`);
      setBy[k] = m.name;
      out[k] = v;
    }
  }
  return out;
}

const FAULT_FIELDS = ['name', 'description', 'toxics'];
const TOXIC_FIELDS = ['name', 'type', 'stream', 'toxicity', 'attributes'];

export function validateFaultProfile(obj, name, file = profileFile(KINDS.faults, name)) {
  checkFields(obj, file, FAULT_FIELDS);
  checkHeader(obj, file, name);
  if (!Array.isArray(obj.toxics) || obj.toxics.length === 0) {
    throw new ProfileError(
      `${file}: toxics must be a non-empty array of Toxiproxy toxics {name, type, stream, toxicity, attributes}`,
    );
  }
  obj.toxics.forEach((t, i) => {
    const at = `${file}: toxics[${i}]`;
    checkFields(t, at, TOXIC_FIELDS);
    if (typeof t.name !== 'string' || !TOXIC_NAME_RE.test(t.name))
      throw new ProfileError(`${at}.name must be a string of letters, digits, _ . -`);
    if (obj.toxics.findIndex((o) => o.name === t.name) !== i)
      throw new ProfileError(`${at}.name "${t.name}" is used twice`);
    if (!TOXIC_TYPES.includes(t.type)) throw new ProfileError(`${at}.type must be one of ${TOXIC_TYPES.join(', ')}`);
    if (!STREAMS.includes(t.stream)) throw new ProfileError(`${at}.stream must be "upstream" or "downstream"`);
    if (!isNumber(t.toxicity) || t.toxicity < 0 || t.toxicity > 1)
      throw new ProfileError(`${at}.toxicity must be a number between 0 and 1`);
    if (t.attributes === null || typeof t.attributes !== 'object' || Array.isArray(t.attributes)) {
      throw new ProfileError(`${at}.attributes must be an object of the toxic's settings`);
    }
    for (const [k, v] of Object.entries(t.attributes)) {
      // Toxiproxy decodes every attribute into an int64.
      if (!Number.isInteger(v) || v < 0) throw new ProfileError(`${at}.attributes.${k} must be a whole number >= 0`);
    }
  });
  return obj;
}

// Whole milliseconds split across the two directions (Toxiproxy takes integers).
function split(ms) {
  const total = Math.round(ms);
  const up = Math.floor(total / 2);
  return [up, total - up];
}

const toxic = (name, type, stream, attributes) => ({ name, type, stream, toxicity: 1, attributes });
// TCP as link.go takes it: Linux's minimum retransmission timeout.
export const RTO_MIN_MS = 200;
export const INITIAL_WINDOW = 14600; // RFC 6928: 10 segments of 1460 bytes

// The two link toxics that make a proxy behave like the network profile (pure;
// none for lan). Every attribute is set, so an update in place sets them all.
// epochMs: when the events and the trace start (Unix ms; withEpoch sets it at apply
// time); it is set only for a network with events or a trace, 0 otherwise.
export function networkToxics(profile, { epochMs = 0 } = {}) {
  const [upMs, downMs] = split(profile.rttMs);
  const [upJitter, downJitter] = split(profile.jitterMs);
  const rtt = upMs + downMs;
  const loss = profile.loss || {};
  const trace = profile.trace || null;
  const timed = Boolean(profile.events || trace);
  if (
    rtt === 0 &&
    profile.upKbps === null &&
    profile.downKbps === null &&
    !lossRate(loss) &&
    !timed &&
    !hasMobileShaping(profile)
  )
    return [];
  const common = {
    rtt,
    shared: profile.sharedBandwidth ? 1 : 0,
    iw: profile.slowStart === false || rtt === 0 ? 0 : (profile.initialWindow ?? INITIAL_WINDOW),
    mss: MSS,
    rto_min: RTO_MIN_MS,
    loss: ppm(loss.rate),
    burst_p: ppm(loss.burst && loss.burst.p),
    burst_r: ppm(loss.burst && loss.burst.r),
    burst_loss: ppm(loss.burst && loss.burst.rate),
    epoch: timed ? Math.round(epochMs) : 0,
    ...eventAttributes(profile.events),
    ...mobileAttributes(profile),
  };
  const bitrate = (kbps) => (kbps === null ? 0 : Math.round(kbps * 1000));
  return [
    toxic('link_upstream', 'link', 'upstream', {
      handshake: rtt,
      latency: upMs,
      jitter: upJitter,
      bitrate: bitrate(profile.upKbps),
      ...common,
      uplink: 1,
      trace: trace ? [...trace.up] : [],
    }),
    toxic('link_downstream', 'link', 'downstream', {
      handshake: rtt + upMs,
      latency: downMs,
      jitter: downJitter,
      bitrate: bitrate(profile.downKbps),
      ...common,
      uplink: 0,
      trace: trace ? [...trace.down] : [],
    }),
  ];
}

// Does a toxic run on the clock of an epoch (a link toxic with an event or a trace)?
export const isTimedToxic = (t) =>
  t.type === 'link' &&
  Boolean(t.attributes) &&
  (t.attributes.event > 0 || (Array.isArray(t.attributes.trace) && t.attributes.trace.length > 0));

// Does a profile (resolveProfile's result) have events or a trace?
export const isTimed = (profile) => (profile.toxics || []).some(isTimedToxic);

// The toxics with the epoch set to epochMs on every timed link toxic (copies; the
// others as they are): what the CLI and k6's setup() apply, with epochMs = Date.now().
export const withEpoch = (toxics, epochMs) =>
  toxics.map((t) => (isTimedToxic(t) ? { ...t, attributes: { ...t.attributes, epoch: Math.round(epochMs) } } : t));

// The epoch the toxics carry (0: none timed).
export function epochOf(toxics) {
  const t = (toxics || []).find(isTimedToxic);
  return t ? t.attributes.epoch || 0 : 0;
}

const RANK = { link: 0, handshake: 0, latency: 1, bandwidth: 2 };
const rank = (t) => RANK[t.type] ?? 3;

// Every toxic of a network profile and its faults, in the order they must be added.
export function profileToxics(network, faults = [], { epochMs = 0 } = {}) {
  const all = [...networkToxics(network, { epochMs })];
  for (const f of faults) {
    for (const t of f.toxics) {
      const clash = all.find((o) => o.name === t.name);
      if (clash)
        throw new ProfileError(
          `fault "${f.name}" defines toxic "${t.name}", which another part of the profile already uses: rename it`,
        );
      all.push({ ...t, attributes: { ...t.attributes } });
    }
  }
  // Stable sort: within a rank the profile's own order is kept.
  return all
    .map((t, i) => [t, i])
    .sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1])
    .map(([t]) => t);
}

export function validateIndex(obj, file = INDEX_FILE) {
  for (const kind of [KINDS.network, KINDS.modifiers, KINDS.faults]) {
    if (!obj || !Array.isArray(obj[kind]) || !obj[kind].every((n) => typeof n === 'string' && NAME_RE.test(n))) {
      throw new ProfileError(`${file}: ${kind} must be an array of profile names`);
    }
  }
  const both = obj.modifiers.find((n) => obj.faults.includes(n));
  if (both) throw new ProfileError(`${file}: "${both}" is both a modifier and a fault: a name may be only one`);
  if (
    obj.traces !== undefined &&
    !(Array.isArray(obj.traces) && obj.traces.every((n) => typeof n === 'string' && NAME_RE.test(n)))
  )
    throw new ProfileError(`${file}: traces must be an array of trace names (profiles/traces/NAME.down and NAME.up)`);
  return obj;
}

function unknownMessage(kind, name, index) {
  const what = kind === KINDS.network ? 'network profile' : 'modifier or fault profile';
  const traces = (index.traces || []).length
    ? `; traces (+trace=NAME, or a file: +trace=./my.trace) are ${index.traces.join(', ')}`
    : '';
  return `unknown ${what} "${name}": network profiles are ${index.network.join(', ')}; modifiers (add with +, e.g. 3g+loss1) are ${index.modifiers.join(', ')}, and +nat=SECONDS; fault profiles (e.g. 3g+flaky) are ${index.faults.join(', ')}${traces}`;
}

function parseJson(text, file) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ProfileError(`${file}: not valid JSON (${String(err.message).split('\n')[0]})`);
  }
}

// `readText(path)` returns the text of a file under the repository root
// ('profiles/network/3g.json') or throws.

// The catalogue of known names, profiles/index.json (k6 cannot list a directory).
export const readIndex = (readText) => validateIndex(parseJson(readText(INDEX_FILE), INDEX_FILE));

// ---- traces (profiles/traces/NAME.down and NAME.up, or files of the user's own) ----

export const TRACE_DIR = `${PROFILE_DIR}/traces`;
export const traceFile = (name, direction) => `${TRACE_DIR}/${name}.${direction}`;
// What a reader of the user's files says when it cannot read one.
export const NETWORK_FILE_HINT = 'give the path of a JSON file with rttMs, jitterMs, downKbps, upKbps and source';
export const TRACE_FILE_HINT =
  'give the path of a Mahimahi trace (one whole number of milliseconds a line), or a shipped trace';

// One direction's trace: a shipped trace's name (a plain name) or a file of the user's
// own (anything else). -> { label, path (absolute, or the shipped name), trace: [ms] }
function loadTrace(ref, direction, index, readText, readUser) {
  const shipped = index.traces || [];
  if (NAME_RE.test(ref)) {
    if (!shipped.includes(ref))
      throw new ProfileError(
        `unknown trace "${ref}": the shipped traces are ${shipped.join(', ') || 'none'}; for a file of your own give its path (./${ref}.trace)`,
      );
    const file = traceFile(ref, direction);
    return { label: ref, path: ref, trace: parseTrace(readText(file), file) };
  }
  if (!readUser) throw new ProfileError(`trace file ${ref}: files of your own are read by k6 and the CLI, not here`);
  const { text, path } = readUser(ref, { what: 'trace file', hint: TRACE_FILE_HINT, maxBytes: MAX_TRACE_BYTES });
  return { label: labelOf(path, /\.(trace|down|up|txt)$/i, 'trace'), path, trace: parseTrace(text, ref) };
}

// A file's name as a profile name: './My Net.json' -> 'my-net'.
const labelOf = (path, ext, fallback) =>
  String(path)
    .split(/[/\\]/)
    .pop()
    .replace(ext, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '') || fallback;

// A spec's trace= -> { label, spec (the paths absolute: k6 may run from another
// directory), down, up } with the two directions' timestamps. One file of the user's
// own serves both directions; a shipped name gives its .down and its .up.
function loadTraces(ref, index, readText, readUser) {
  const down = loadTrace(ref.down, 'down', index, readText, readUser);
  const same = ref.up === ref.down;
  const up = same && down.path !== ref.down ? down : loadTrace(ref.up, 'up', index, readText, readUser);
  return {
    label: same ? down.label : `${down.label}:${up.label}`,
    spec: same ? down.path : `${down.path}:${up.path}`,
    down: down.trace,
    up: up.trace,
  };
}

// Resolves a spec to { name, spec, network (with its modifiers applied, and its trace),
// modifiers, faults, toxics }. readUser(path, { what, hint, maxBytes }) reads a file of
// the user's own, a network file or a trace (k6: open() from where k6 was started;
// Node: fs from the working directory), and returns { text, path (absolute) }; what
// and hint make its one line when it cannot (default: a network file's), and it may
// refuse a file over maxBytes without reading it.
// The toxics' epoch is 0: withEpoch sets it when they are applied.
export function resolveProfile(spec, readText, readUser) {
  const index = readIndex(readText);
  const parsed = parseSpec(spec);
  const load = (kind, name, validate) => {
    const file = profileFile(kind, name);
    return validate(parseJson(readText(file), file), name, file);
  };
  let network;
  let specOut = spec.trim();
  let networkPart = parsed.network;
  if (parsed.file) {
    if (!readUser)
      throw new ProfileError(`profile file ${parsed.network}: files of your own are read by k6 and the CLI, not here`);
    const { text, path } = readUser(parsed.network);
    const obj = validateNetworkProfile(parseJson(text, parsed.network), null, parsed.network, { user: true });
    const base = labelOf(path, /\.json$/i, 'custom');
    network = {
      ...obj,
      name: obj.name || base,
      description: obj.description || `your own network (${parsed.network})`,
      file: path,
    };
    // k6 gets the absolute path: it may run from another directory than the CLI.
    networkPart = path;
    specOut = [path, ...parsed.extras].join('+');
  } else {
    if (!index.network.includes(parsed.network))
      throw new ProfileError(unknownMessage(KINDS.network, parsed.network, index));
    network = load(KINDS.network, parsed.network, validateNetworkProfile);
  }
  const modifiers = [];
  const faults = [];
  for (const name of parsed.extras) {
    if (index.modifiers.includes(name)) modifiers.push(load(KINDS.modifiers, name, validateModifier));
    else if (index.faults.includes(name)) faults.push(load(KINDS.faults, name, validateFaultProfile));
    else throw new ProfileError(unknownMessage(KINDS.faults, name, index));
  }
  const shaped = resolveRadio(applyModifiers(network, modifiers), network);
  const natPart = parsed.nat !== undefined ? [`${NAT_EXTRA}${parsed.nat}`] : [];
  if (parsed.nat !== undefined) shaped.natIdleS = parsed.nat;
  let name = [network.name, ...parsed.extras, ...natPart].join('+');
  if (natPart.length) specOut = [networkPart, ...parsed.extras, ...natPart].join('+');
  if (parsed.trace) {
    const t = loadTraces(parsed.trace, index, readText, readUser);
    shaped.trace = { label: t.label, down: t.down, up: t.up };
    name += `+${TRACE_EXTRA}${t.label}`;
    specOut = [networkPart, ...parsed.extras, ...natPart, `${TRACE_EXTRA}${t.spec}`].join('+');
  }
  return {
    name,
    spec: specOut,
    network: shaped,
    modifiers,
    faults,
    toxics: profileToxics(shaped, faults),
  };
}
