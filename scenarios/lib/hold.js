// The stack's hold from a scenario's setup() and teardown() (common/hold.js says
// what a hold is). Under `k6pack run` / `gate` the CLI holds the stack and passes
// its token as K6PACK_HOLD, so the run proceeds under that hold; under plain
// `k6 run` setup() takes the hold itself, before it touches the network, and
// teardown() gives it back. A stack held by anyone else stops setup() with one
// line naming the holder, and the toxics are left exactly as they are.
import { HOLD_PROXY, holderOf, holdProxy, newToken, refusal } from '../../common/hold.js';
import { call } from './network.js';
import { rawSetting } from '../../common/settings.js';

// k6 cannot see its own pid; /etc/hostname tells the CLI whether the holder runs on its machine.
let HOST = null;
try {
  HOST = open('/etc/hostname').trim() || null;
} catch (_) {
  HOST = null;
}

function holder(url) {
  const res = call('GET', url, '/proxies');
  return res.status === 200 ? holderOf(res.json()) : null;
}

// k6 can only tell that a holder is gone by the end its plan gave it (the CLI also
// checks processes: `npx k6pack status` releases a hold whose process is gone).
const pastItsEnd = (h) => h && h.endsBy && Date.now() > Date.parse(h.endsBy);

// For setup(), before the network changes. info: { what (the scenario), profile,
// script (its file name), seconds (the plan's length) }. Returns { token, own }:
// own is true when this run took the hold (teardown gives it back).
export function takeHold(url, info, fatal) {
  const given = rawSetting(__ENV, 'K6PACK_HOLD');
  const now = new Date();
  const record = {
    kind: 'k6 run',
    what: info.what,
    profile: info.profile,
    pid: null,
    host: HOST,
    script: info.script,
    startedAt: now.toISOString(),
    // setup, the steps, and teardown's 30 s: a hold nobody gives back is free after this.
    endsBy: new Date(now.getTime() + (info.seconds + 120) * 1000).toISOString(),
    token: newToken(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const h = holder(url);
    if (h && given && h.token === given) return { token: given, own: false };
    if (h && !pastItsEnd(h)) return fatal(refusal(h, { waitFlag: false }));
    if (h) {
      console.warn(`the stack's hold was left by a run that should have ended by ${h.endsBy}: taking it over`);
      call('DELETE', url, `/proxies/${HOLD_PROXY}`);
    }
    const res = call('POST', url, '/proxies', holdProxy(record));
    if (res.status === 201 || res.status === 200) return { token: record.token, own: true };
    if (res.status !== 409)
      return fatal(`Toxiproxy at ${url} refused the stack's hold: ${res.status} ${String(res.body || '').trim()}`);
  }
  return fatal(`could not take the stack's hold at ${url}: another run keeps taking it`);
}

// For teardown(): gives back a hold this run took (only if it is still this run's).
// Never throws: with Toxiproxy gone the hold is gone too.
export function releaseHold(url, hold) {
  if (!hold || !hold.own) return;
  try {
    const h = holder(url);
    if (h && h.token === hold.token) call('DELETE', url, `/proxies/${HOLD_PROXY}`);
  } catch (err) {
    console.warn(`could not give the stack's hold back: ${err.message || err}`);
  }
}
