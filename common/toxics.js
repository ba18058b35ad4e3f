// Changing a proxy's toxics to a profile's, with as little disturbance as possible.
//
// Plain ES module with no imports: k6's setup()/teardown() (scenarios/lib/network.js,
// over k6/http) and the CLI (lib/toxiproxy.js, over fetch) plan the same changes and
// only send them differently.
//
// Why not POST /reset and add everything again: a reset removes every toxic from every
// live connection and adds them back one by one, so connections in flight spend that
// window unshaped, and every removal and addition on a closing connection is a chance
// to hit Toxiproxy's link race (tools/toxiproxy/patches). So:
//   - a proxy that already carries the wanted toxics is not touched at all;
//   - when only attributes or toxicity differ (3g -> lte: the same toxics, other
//     numbers), each changed toxic is updated in place: live connections keep their
//     chain and their state (a connection past its handshake stays past it);
//   - otherwise (a fault added or removed, another order) the proxy's toxics are
//     deleted and the wanted ones added in order.

const STREAMS = ['upstream', 'downstream'];

// Toxiproxy lists a proxy's toxics stream by stream, each in chain order: the same grouping
// for a wanted list given in add order.
export const byStream = (toxics) => STREAMS.flatMap((s) => toxics.filter((t) => t.stream === s));

// One attribute's wanted and reported values: numbers as they are; arrays (a link
// toxic's trace) element by element, where Toxiproxy reports an empty Go slice as null.
function sameValue(want, have) {
  if (Array.isArray(want) || Array.isArray(have) || want === null || have === null) {
    const a = want ?? [];
    const b = have ?? [];
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);
  }
  return want === have;
}

// Does a toxic Toxiproxy reports carry what the wanted one sets? (Toxiproxy fills in
// every attribute of a type with its default, so only the wanted ones are compared.)
export function sameSettings(want, have) {
  return (
    Boolean(have) &&
    want.toxicity === have.toxicity &&
    Object.entries(want.attributes || {}).every(([k, v]) => have.attributes && sameValue(v, have.attributes[k]))
  );
}

const sameSlot = (want, have) =>
  have && want.name === have.name && want.type === have.type && want.stream === have.stream;

// The changes that turn one proxy's `current` toxics (as GET /proxies lists them)
// into `wanted` (a profile's toxics, in add order): [] when nothing differs, else
// [{ op: 'update', toxic }...] or [{ op: 'delete', name }..., { op: 'add', toxic }...].
export function toxicChanges(current, wanted) {
  const want = byStream(wanted);
  const have = byStream(current || []);
  if (want.length === have.length && want.every((w, i) => sameSlot(w, have[i]))) {
    return want.filter((w, i) => !sameSettings(w, have[i])).map((toxic) => ({ op: 'update', toxic }));
  }
  return [...have.map((t) => ({ op: 'delete', name: t.name })), ...wanted.map((toxic) => ({ op: 'add', toxic }))];
}

// Does every named proxy carry exactly the wanted toxics? proxies: GET /proxies' answer.
export const carries = (proxies, names, wanted) =>
  names.every((p) => proxies[p] && toxicChanges(proxies[p].toxics, wanted).length === 0);

// The request for one change, as [method, path, body]: the same for both HTTP clients.
export function changeRequest(proxy, change) {
  const base = `/proxies/${encodeURIComponent(proxy)}/toxics`;
  switch (change.op) {
    case 'update':
      return [
        'POST',
        `${base}/${encodeURIComponent(change.toxic.name)}`,
        { attributes: change.toxic.attributes, toxicity: change.toxic.toxicity },
      ];
    case 'delete':
      return ['DELETE', `${base}/${encodeURIComponent(change.name)}`, undefined];
    default:
      return ['POST', base, change.toxic];
  }
}

// The toxics of every named proxy, to put back later: { proxy: [toxic...] } in add order
// (stream by stream, which is how they were added: the order within a stream is what counts).
export const snapshotOf = (proxies, names) =>
  Object.fromEntries(names.filter((p) => proxies[p]).map((p) => [p, byStream(proxies[p].toxics).map(strip)]));

// Attributes a toxic reports but takes no part in setting: the link toxic's radio_log
// (tools/toxiproxy/radio_log.go), which a snapshot leaves out.
export const READ_ONLY_ATTRIBUTES = new Set(['radio_log']);

const strip = (t) => ({
  name: t.name,
  type: t.type,
  stream: t.stream,
  toxicity: t.toxicity,
  attributes: Object.fromEntries(
    Object.entries(t.attributes || {})
      .filter(([k]) => !READ_ONLY_ATTRIBUTES.has(k))
      .map(([k, v]) => [k, Array.isArray(v) ? [...v] : v]),
  ),
});
