// Is an address on this machine's loopback? Pure (no imports), so k6 scripts
// (scenarios/lib/config.js refuses remote targets) and Node (lib/stack.js
// refuses a remote HOST / TOXIPROXY_URL for k6pack) check it the same way.

const LOOPBACK_HOST = /^(127(\.\d{1,3}){3}|localhost|\[?::1\]?)$/i;

// A bare host: '127.0.0.1', 'localhost', '::1', '[::1]'.
export function isLoopbackHost(host) {
  return LOOPBACK_HOST.test(String(host));
}

// 'http://127.0.0.1:14000/graphql' -> '127.0.0.1'; '127.0.0.1:15051' -> '127.0.0.1'.
// The host is what follows the last '@' of the authority, as Go's url.Parse (k6)
// reads it: 'http://127.0.0.1:1@10.0.0.1/graphql' goes to 10.0.0.1.
export function hostOf(target) {
  const authority = /^(?:[a-z][a-z0-9+.-]*:\/\/)?([^/?#]*)/i.exec(String(target))[1];
  return /^(\[[^\]]*\]|[^:]*)/.exec(authority.slice(authority.lastIndexOf('@') + 1))[1];
}

// A URL or host:port.
export function isLoopback(target) {
  return isLoopbackHost(hostOf(target));
}
