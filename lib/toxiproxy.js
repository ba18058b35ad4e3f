// A small client for Toxiproxy's HTTP API (v2.5.0): the calls the stack, the
// CLI and tests need. Proxies use Toxiproxy's populate format and toxics its
// API shape {name, type, stream, toxicity, attributes} (STYLE.md item 8).
import { ALL_PROXY_NAMES, TARGET_DEFAULTS } from '../common/defaults.js';
import { HOLD_PROXY, holdProxy, holderOf } from '../common/hold.js';
import { isTimedToxic, withEpoch } from '../common/profiles.js';
import { changeRequest, snapshotOf, toxicChanges } from '../common/toxics.js';
import { rawSetting } from '../common/settings.js';

export class ToxiproxyError extends Error {}

export const UNREACHABLE_HINT = 'start the stack with `npx k6pack up`';

export class Toxiproxy {
  constructor(
    url = rawSetting(process.env, 'TOXIPROXY_URL') || TARGET_DEFAULTS.TOXIPROXY_URL,
    { timeoutMs = 5000 } = {},
  ) {
    this.url = url.replace(/\/+$/, '');
    this.timeoutMs = timeoutMs;
  }

  // One API call; JSON in and out. Unreachable or timed out -> ToxiproxyError saying what to start.
  async request(method, path, body) {
    let res;
    try {
      res = await fetch(this.url + path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const why = err.name === 'TimeoutError' ? ` (no answer within ${this.timeoutMs} ms)` : '';
      throw new ToxiproxyError(`Toxiproxy is not reachable at ${this.url}${why}: ${UNREACHABLE_HINT}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let detail = text.trim();
      try {
        detail = JSON.parse(text).error || detail;
      } catch {
        // not JSON: keep the raw text
      }
      throw Object.assign(new ToxiproxyError(`Toxiproxy ${method} ${path} failed: ${res.status} ${detail}`), {
        status: res.status,
      });
    }
    if (!text) return null;
    try {
      return JSON.parse(text);
    } catch {
      return text.trim();
    }
  }

  // 'v2.5.0'
  async version() {
    return String(await this.request('GET', '/version'));
  }

  async isReachable() {
    try {
      await this.version();
      return true;
    } catch {
      return false;
    }
  }

  // Creates or updates the proxies (idempotent); returns them.
  async populate(proxies) {
    const res = await this.request('POST', '/populate', proxies);
    return res.proxies;
  }

  // Removes every toxic and re-enables every proxy (tests only: the pack itself
  // changes toxics with applyToxics, which leaves unchanged ones alone).
  async reset() {
    await this.request('POST', '/reset');
  }

  // { name: { name, listen, upstream, enabled, toxics: [...] } }
  async proxies() {
    return this.request('GET', '/proxies');
  }

  async deleteProxy(name) {
    try {
      await this.request('DELETE', `/proxies/${encodeURIComponent(name)}`);
    } catch (err) {
      if (err.status !== 404) throw err;
    }
  }

  async addToxic(proxy, toxic) {
    return this.request('POST', `/proxies/${encodeURIComponent(proxy)}/toxics`, toxic);
  }

  // Gives each proxy the toxics `wantedFor(name)` returns, changing only what
  // differs (common/toxics.js): every pack proxy there is (the reference servers' and
  // those in front of a team's own API). Returns { proxyName: number of changes }.
  async setToxics(wantedFor, names = ALL_PROXY_NAMES) {
    const proxies = await this.proxies();
    const changed = {};
    for (const name of names.filter((n) => proxies[n]).sort()) {
      const changes = toxicChanges(proxies[name].toxics, wantedFor(name));
      for (const change of changes) await this.request(...changeRequest(name, change));
      changed[name] = changes.length;
    }
    return changed;
  }

  // The toxics of one profile on every pack proxy, replacing whatever was there. A
  // profile with events or a trace is timed from now: its link toxics get epoch =
  // epochMs (Date.now() unless given; common/profiles.js withEpoch). Returns
  // { proxyName: number of changes } and, as `epochMs`, the epoch set (0: untimed).
  async applyToxics(toxics, { epochMs = Date.now() } = {}) {
    const timed = toxics.some(isTimedToxic);
    const wanted = withEpoch(toxics, epochMs);
    const changed = await this.setToxics(() => wanted);
    Object.defineProperty(changed, 'epochMs', { value: timed ? Math.round(epochMs) : 0 });
    return changed;
  }

  // { proxy: [toxic...] } now, to put back with restore().
  async snapshot() {
    return snapshotOf(await this.proxies(), ALL_PROXY_NAMES);
  }

  restore(snapshot) {
    return this.setToxics((name) => snapshot[name] || []);
  }

  // ---- the stack's hold (common/hold.js) ----

  // The holder, or null when the stack is free.
  async holder() {
    return holderOf(await this.proxies());
  }

  // Creates the hold; false when someone holds it already.
  async createHold(record) {
    try {
      await this.request('POST', '/proxies', holdProxy(record));
      return true;
    } catch (err) {
      if (err.status === 409) return false;
      throw err;
    }
  }

  // Rewrites the hold's record (a beat); it stays disabled.
  async updateHold(record) {
    const { upstream } = holdProxy(record);
    await this.request('POST', `/proxies/${HOLD_PROXY}`, { upstream, enabled: false });
  }

  async deleteHold() {
    try {
      await this.request('DELETE', `/proxies/${HOLD_PROXY}`);
    } catch (err) {
      if (err.status !== 404) throw err;
    }
  }
}
