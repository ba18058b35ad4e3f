// The profile side of a phone's radio and its carrier's NAT (issue 41): the +rrc
// modifier and the +nat=SECONDS parameter, their network fields, their checks and the
// link toxic's attributes (tools/toxiproxy/radio.go, nat.go). Pure; common/profiles.js
// composes them with the rest of a profile.
//
//   radio      "lte" or "3g": the radio states the link toxic gives the device (the
//              parameter sets: tools/toxiproxy/radio_params.go), or "auto" (what +rrc
//              sets): the set the network's name calls for, LTE for lte/4g/5g-like
//              networks and 3G for 3g-like ones. A network file of your own may set
//              "lte" or "3g" itself.
//   natIdleS   a carrier NAT's idle timeout in whole seconds (+nat=SECONDS): a
//              connection idle both ways longer than that is dropped silently.

import { ProfileError } from './profile-error.js';

// The link toxic's `radio` codes, written once here; tools/toxiproxy/radio_params.go
// declares them as the iota constants radioLTE, radioUMTS in this order (radioNone 0),
// and common/profiles.test.js fails when the two disagree.
export const RADIO_CODES = { lte: 1, '3g': 2 };
export const RADIO_AUTO = 'auto';
// The device every proxy's link toxics name, so that they share one radio (the
// phone's): one stack drives one phone at a time.
export const RADIO_DEVICE = 1;

// Which parameter set a network's name calls for (null: none, e.g. lan, dsl, 2g).
export function radioForName(name) {
  const n = String(name || '').toLowerCase();
  if (/(^|-)(lte|4g|5g)(-|$)/.test(n)) return 'lte';
  if (/(^|-)3g(-|$)/.test(n)) return '3g';
  return null;
}

export const NAT_EXTRA = 'nat=';
export const NAT_MIN_S = 10;
export const NAT_MAX_S = 7200;
const NAT_HELP = `give +nat=SECONDS, whole seconds from ${NAT_MIN_S} to ${NAT_MAX_S} (a carrier NAT's idle timeout), e.g. lte+nat=60`;

// What `k6pack list` says of +nat=SECONDS.
export const NAT_DESCRIPTION =
  "A carrier NAT's idle timeout: a connection that carries nothing either way for longer than SECONDS is dropped silently, no FIN and no reset, and its client finds out only when it next sends and hears nothing.";

// '+nat=60' -> 60; anything else a one-line ProfileError naming the part.
export function parseNat(spec, part) {
  const value = part.slice(NAT_EXTRA.length).trim();
  const s = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(s >= NAT_MIN_S && s <= NAT_MAX_S))
    throw new ProfileError(`profile spec "${spec}": "${part}" is not a NAT idle timeout: ${NAT_HELP}`);
  return s;
}

// The plain word "nat" in a spec: it needs its timeout.
export const natWithoutValue = (spec) =>
  new ProfileError(`profile spec "${spec}": +nat needs its timeout: ${NAT_HELP}`);

// An extra with an = that no modifier takes.
export const unknownParameter = (spec, part) =>
  new ProfileError(
    `profile spec "${spec}": unknown parameter "${part.split('=')[0]}" in "${part}": the extras that take one are +nat=SECONDS and +trace=FILE`,
  );

export const MOBILE_FIELDS = ['radio', 'natIdleS'];

// Checks the radio and NAT fields present in obj (a network file, or a modifier's `network`).
export function checkMobileFields(obj, file) {
  if ('radio' in obj && ![RADIO_AUTO, ...Object.keys(RADIO_CODES)].includes(obj.radio))
    throw new ProfileError(
      `${file}: radio must be "lte" (RRC_IDLE and RRC_CONNECTED with DRX), "3g" (IDLE, FACH, DCH) or "auto" (the set the network's name calls for)`,
    );
  if ('natIdleS' in obj && !(Number.isInteger(obj.natIdleS) && obj.natIdleS >= NAT_MIN_S && obj.natIdleS <= NAT_MAX_S))
    throw new ProfileError(
      `${file}: natIdleS must be whole seconds from ${NAT_MIN_S} to ${NAT_MAX_S} (a carrier NAT's idle timeout)`,
    );
}

// The network with its radio resolved: "auto" becomes the set its own radio field or
// its name calls for; a network with none is refused in one line naming it.
export function resolveRadio(shaped, network) {
  if (shaped.radio !== RADIO_AUTO) return shaped;
  const own = network.radio && network.radio !== RADIO_AUTO ? network.radio : null;
  const radio = own || radioForName(network.name);
  if (!radio)
    throw new ProfileError(
      `+rrc needs a mobile network: "${network.name}" has no radio states (LTE's for lte, 4g and 5g-like networks, 3G's for 3g-like ones; a network file of your own may set "radio": "lte" or "3g")`,
    );
  return { ...shaped, radio };
}

// The link toxic's radio and NAT attributes for a network (all 0 without).
export function mobileAttributes(profile) {
  if (profile.radio === RADIO_AUTO)
    throw new ProfileError('the network\'s radio is "auto": resolve it first (resolveRadio)');
  const radio = RADIO_CODES[profile.radio] || 0;
  return {
    radio,
    radio_device: radio ? RADIO_DEVICE : 0,
    nat_idle: profile.natIdleS ? profile.natIdleS * 1000 : 0,
  };
}

// Does the network need the link toxic for its radio or its NAT?
export const hasMobileShaping = (profile) => Boolean(RADIO_CODES[profile.radio] || profile.natIdleS);
