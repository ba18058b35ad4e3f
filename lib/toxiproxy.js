// A small client for Toxiproxy's HTTP API (v2.5.0): the calls the stack, the
// CLI and tests need. Proxies use Toxiproxy's populate format and toxics its
// API shape {name, type, stream, toxicity, attributes} (STYLE.md item 8).
import { TARGET_DEFAULTS } from '../common/defaults.js';

export class ToxiproxyError extends Error {}

export const UNREACHABLE_HINT = 'start the stack with `npx k6pack up`';

export class Toxiproxy {
  constructor(url = process.env.TOXIPROXY_URL || TARGET_DEFAULTS.TOXIPROXY_URL, { timeoutMs = 5000 } = {}) {
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
      throw new ToxiproxyError(`Toxiproxy ${method} ${path} failed: ${res.status} ${detail}`);
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

  // Removes every toxic and re-enables every proxy.
  async reset() {
    await this.request('POST', '/reset');
  }

  // { name: { name, listen, upstream, enabled, toxics: [...] } }
  async proxies() {
    return this.request('GET', '/proxies');
  }

  async addToxic(proxy, toxic) {
    return this.request('POST', `/proxies/${encodeURIComponent(proxy)}/toxics`, toxic);
  }

  // The toxics of one profile on every proxy, replacing whatever was there.
  // Returns { proxyName: [toxic names] }.
  async applyToxics(toxics) {
    await this.reset();
    const applied = {};
    for (const name of Object.keys(await this.proxies()).sort()) {
      applied[name] = [];
      for (const toxic of toxics) {
        await this.addToxic(name, toxic);
        applied[name].push(toxic.name);
      }
    }
    return applied;
  }
}
