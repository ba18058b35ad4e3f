// One run at a time on a stack: the hold.
//
// Whoever is about to shape a stack's network for a while (`k6pack run`, `gate`,
// `profile`, or a scenario's setup() under plain `k6 run`) takes the stack's hold
// first, and gives it back when done; anyone else finds it taken and does not touch
// the toxics. The hold lives in the stack's own Toxiproxy, which k6 and the CLI
// both reach: a proxy named HOLD_PROXY, created disabled (it never listens or
// carries traffic), whose `upstream` field carries the holder as JSON. Creating a
// proxy whose name exists answers 409, so taking the hold is atomic.
//
// A holder that dies must not block for ever: every holder beats (rewrites its
// record with the time) every BEAT_SECONDS, and a hold whose last beat is older
// than STALE_SECONDS is stale: the next command takes it over and says so.
//
// Plain ES module with no imports: scenarios/lib/hold.js (k6) and lib/hold.js (Node)
// send the requests.

export const HOLD_PROXY = 'k6pack_hold';
const PREFIX = 'k6pack-hold:';
export const BEAT_SECONDS = 5;
export const STALE_SECONDS = 30;

// { kind: 'k6 run' | 'k6pack run' | 'k6pack gate' | 'k6pack profile', what, profile,
//   pid, host, startedAt, beatAt, token } -> the marker proxy to create.
export function holdProxy(record) {
  return { name: HOLD_PROXY, listen: '127.0.0.1:0', upstream: PREFIX + JSON.stringify(record), enabled: false };
}

// The holder from GET /proxies' answer, or null when the stack is free. A marker whose
// text cannot be read is reported as held by "an unknown holder" (never ignored).
export function holderOf(proxies) {
  const p = proxies && proxies[HOLD_PROXY];
  if (!p) return null;
  const text = String(p.upstream || '');
  if (!text.startsWith(PREFIX)) return { kind: 'unknown holder', token: null, beatAt: null };
  try {
    return JSON.parse(text.slice(PREFIX.length));
  } catch (_) {
    return { kind: 'unknown holder', token: null, beatAt: null };
  }
}

// Seconds since the holder's last beat (Infinity when unknown).
export const silentSeconds = (holder, now = Date.now()) => {
  const t = holder && Date.parse(holder.beatAt);
  return Number.isFinite(t) ? Math.max(0, (now - t) / 1000) : Infinity;
};

export const isStale = (holder, now = Date.now(), staleSeconds = STALE_SECONDS) =>
  silentSeconds(holder, now) > staleSeconds;

const hhmmss = (iso) => (iso ? String(iso).slice(11, 19) : '?');

// 'k6 run ws-vs-http under 3g (pid 4242 on vm, since 10:52:13 UTC)'
export function describeHolder(h) {
  if (!h) return 'nobody';
  const what = [h.kind, h.what, h.profile ? `under ${h.profile}` : null].filter(Boolean).join(' ');
  const who = [h.pid ? `pid ${h.pid}` : null, h.host ? `on ${h.host}` : null].filter(Boolean).join(' ');
  return `${what} (${[who, `since ${hhmmss(h.startedAt)} UTC`].filter(Boolean).join(', ')})`;
}

// The one line a refused command prints.
export function refusal(h, { waitFlag = true } = {}) {
  return (
    `the stack is in use by ${describeHolder(h)}: its network is left as it is. Wait for it to end` +
    (waitFlag ? ' (or add --wait)' : '') +
    ', or start a second stack on other ports (set the port variables, e.g. PROXY_GRAPHQL_PORT, TOXIPROXY_PORT: see docs/stack.md)'
  );
}

// A random token that tells a holder's own hold from anyone else's.
export const newToken = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
