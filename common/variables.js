// Changing data for your own API (k6pack run api): an operation's variables, and the
// gRPC request, are one set or an array of sets, cycled per call with each VU starting at
// its own offset; and their string values may hold templates unique per call, in the
// manner of ghz's call templates:
//   {{vu}}    the VU (k6's exec.vu.idInTest, from 1; 0 during the CLI's discovery)
//   {{iter}}  the VU's count of calls of this operation, from 0, over the whole run
//   {{uuid}}  a random version-4 UUID
// A string that is exactly "{{vu}}" or "{{iter}}" becomes the number (for an Int
// variable); anywhere else a template is text: "review-{{vu}}-{{iter}}". So
// "{{vu}}-{{iter}}" never repeats within a run, and discovery's calls (vu 0) never
// collide with the run's.
// Plain ES module with no k6 or Node imports.

const TEMPLATE = /\{\{\s*(vu|iter|uuid)\s*\}\}/g;
const WHOLE = /^\{\{\s*(vu|iter)\s*\}\}$/;
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The sets of a value given as one set or an array of them.
export const setsOf = (value) => (Array.isArray(value) ? value : [value || {}]);

// Does any string within `value` hold a template?
export function hasTemplates(value) {
  if (typeof value === 'string') return value.search(TEMPLATE) >= 0;
  if (Array.isArray(value)) return value.some(hasTemplates);
  if (isObject(value)) return Object.values(value).some(hasTemplates);
  return false;
}

// A version-4 UUID (RFC 9562) from `random` (Math.random: k6 and Node both have it).
export function uuid4(random = Math.random) {
  let hex = '';
  for (let i = 0; i < 32; i++) {
    let d = Math.floor(random() * 16);
    if (i === 12) d = 4; // the version
    if (i === 16) d = 8 + (d % 4); // the variant, 10xx
    hex += d.toString(16);
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// `value` with its templates filled from ctx: { vu, iter, uuid() }.
export function fill(value, ctx) {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return ctx[whole[1]];
    return value.replace(TEMPLATE, (_, name) => String(name === 'uuid' ? ctx.uuid() : ctx[name]));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, ctx));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, ctx)]));
  return value;
}

// The VU discovery's calls fill {{vu}} with: the run's count from 1.
export const DISCOVERY_VU = 0;

// What a template gives before the run, to check each set against the schema or message
// type: VU 1's first call.
export const SAMPLE = Object.freeze({ vu: 1, iter: 0, uuid: () => '00000000-0000-4000-8000-000000000000' });

// One operation's source of variables: next(vu) -> the set for this call. Its count is
// the caller's: in k6 each VU runs its own copy of the module, so it counts that VU's
// calls; in the CLI, discovery's.
export function variableSource(value) {
  const sets = setsOf(value);
  const templated = sets.map(hasTemplates);
  let calls = 0;
  return (vu) => {
    const iter = calls++;
    const at = (vu + iter) % sets.length;
    return templated[at] ? fill(sets[at], { vu, iter, uuid: uuid4 }) : sets[at];
  };
}
