// The stack's ports on 127.0.0.1: whether one can be bound, what holds one that
// cannot (Linux: /proc/net/tcp{,6} and /proc/*/fd), waiting a bounded time for
// ports to come free, and stopping processes until the ports they held are free.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_HOST } from '../common/defaults.js';
import { commandLine, groupMembers, isAlive, processIds, stopPid } from './processes.js';

// How long a start waits for a port in use to come free (a process still exiting,
// e.g. from a `down` just before), and how long a stop waits for the ports of the
// processes it stopped: polled every PORT_POLL_MS.
export const PORT_WAIT_MS = 5000;
const PORT_POLL_MS = 100;

// null if free, else the listen error code (EADDRINUSE, EACCES).
export function portIsFree(port, host = DEFAULT_HOST) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err) => resolve(err.code || 'ERROR'));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

// Waits until every port can be bound, or waitMs has passed; resolves the ones
// that still cannot: [{ name, port, problem }] (problem: EADDRINUSE, EACCES, ...).
// ports: [{ name, port }] (name may be null). Only a port in use is waited for:
// any other problem is returned at once.
export async function waitPortsFree(ports, { waitMs = PORT_WAIT_MS, host = DEFAULT_HOST } = {}) {
  const deadline = Date.now() + waitMs;
  let pending = ports;
  for (;;) {
    const busy = [];
    for (const p of pending) {
      const problem = await portIsFree(p.port, host);
      if (problem) busy.push({ ...p, problem });
    }
    if (!busy.length || busy.some((b) => b.problem !== 'EADDRINUSE') || Date.now() >= deadline) return busy;
    pending = busy.map(({ problem, ...p }) => p);
    await sleep(Math.min(PORT_POLL_MS, Math.max(0, deadline - Date.now())));
  }
}

// ---- who holds a port (Linux /proc) ----

const TCP_STATES = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

// A /proc/net/tcp address: little-endian 32-bit words of hex.
function decodeAddress(hex) {
  const bytes = (word) => word.match(/../g).reverse();
  const words = hex.match(/.{8}/g).map(bytes);
  if (words.length === 1) return words[0].map((b) => parseInt(b, 16)).join('.');
  const flat = words.flat();
  if (flat.slice(0, 10).every((b) => b === '00') && flat[10] === 'FF' && flat[11] === 'FF')
    return `::ffff:${flat
      .slice(12)
      .map((b) => parseInt(b, 16))
      .join('.')}`;
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(parseInt(flat[i] + flat[i + 1], 16).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

// Every TCP socket of this network namespace: [{ local, port, remote, state, inode }].
function tcpSockets() {
  const rows = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const [localHex, localPort] = f[1].split(':');
      const [remoteHex, remotePort] = f[2].split(':');
      rows.push({
        local: decodeAddress(localHex),
        port: parseInt(localPort, 16),
        remote: `${decodeAddress(remoteHex)}:${parseInt(remotePort, 16)}`,
        state: TCP_STATES[f[3]] || f[3],
        inode: Number(f[9]),
      });
    }
  }
  return rows;
}

// The socket inodes a process has open.
function socketInodes(pid) {
  const inodes = new Set();
  let fds;
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes; // gone, or not ours to read
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(Number(m[1]));
    } catch {
      // closed while we looked
    }
  }
  return inodes;
}

// The TCP ports the processes `pids` listen on (/proc; none where there is none).
export function listeningPorts(pids) {
  const inodes = new Set(pids.flatMap((pid) => [...socketInodes(pid)]));
  if (!inodes.size) return [];
  const ports = tcpSockets()
    .filter((s) => s.state === 'LISTEN' && inodes.has(s.inode))
    .map((s) => s.port);
  return [...new Set(ports)];
}

// Local addresses whose sockets keep 127.0.0.1:port from being bound.
const BLOCKS_LOOPBACK = new Set(['127.0.0.1', '0.0.0.0', '::', '::ffff:127.0.0.1', '::ffff:0.0.0.0']);

// The processes that have socket `inode` open (every /proc/<pid>/fd this user can read).
function pidsWithSocket(inode) {
  return (processIds() ?? []).filter((pid) => isAlive(pid) && socketInodes(pid).has(inode));
}

// What holds 127.0.0.1:port, in words: 'held by pid 123 (node servers/grpc/server.js,
// listening)', a connection in TIME_WAIT that no process owns, or '' when /proc does
// not tell (not Linux). A listener first, then any socket a process owns.

// A holder's command line as one short line: each path shown by its last part (a
// clone's or temp folder's path would otherwise push the script's name past the cut),
// at most 80 characters.
export function shortCommand(cmd) {
  const short = cmd
    .split(' ')
    .map((w) => (w.includes('/') && !w.endsWith('/') ? w.slice(w.lastIndexOf('/') + 1) : w))
    .join(' ');
  return short.length > 80 ? `${short.slice(0, 77)}...` : short;
}

export function describeHolder(port) {
  let sockets;
  try {
    sockets = tcpSockets().filter((s) => s.port === port && BLOCKS_LOOPBACK.has(s.local));
  } catch {
    return '';
  }
  const rank = (s) => (s.state === 'LISTEN' ? 0 : s.inode ? 1 : 2);
  sockets.sort((a, b) => rank(a) - rank(b));
  for (const s of sockets.filter((x) => x.inode)) {
    const pids = pidsWithSocket(s.inode);
    const what = s.state === 'LISTEN' ? 'listening' : `a connection to ${s.remote}, ${s.state}`;
    if (pids.length) {
      const cmd = commandLine(pids[0]);
      const more = pids.length > 1 ? ` and ${pids.length - 1} other process${pids.length > 2 ? 'es' : ''}` : '';
      const shown = cmd && shortCommand(cmd);
      return `held by pid ${pids[0]}${shown ? ` (${shown}, ${what})` : ` (${what})`}${more}`;
    }
    if (s.state === 'LISTEN') return `held by a process this user cannot see (${what})`;
  }
  const orphan = sockets.find((s) => !s.inode);
  if (orphan)
    return `held by a closed connection to ${orphan.remote} in ${orphan.state} that no process owns (the kernel frees it within a minute)`;
  return '';
}

// One line for a port in use: 'port 50052 (GRPC_TLS_PORT) is already in use (waited 5 s;
// held by pid 123 (...)): stop what holds it or set GRPC_TLS_PORT to a free port'.
export function portInUseMessage(name, port, { waitedMs = 0 } = {}) {
  const notes = [waitedMs >= 1000 ? `waited ${Math.round(waitedMs / 1000)} s` : '', describeHolder(port)].filter(
    Boolean,
  );
  return `port ${port} (${name}) is already in use${notes.length ? ` (${notes.join('; ')})` : ''}: stop what holds it or set ${name} to a free port`;
}

// ---- stopping processes until their ports are free ----

// Stops each process (processes.js stopPid: its process group too) and waits, up to
// waitMs after the last is gone, until every port it listened on can be bound again.
// procs: [{ pid, label, ports: [{ name, port }] }]: the ports it was started with;
// any other it listens on (e.g. a proxy added later) is found in /proc before it is
// signalled. Resolves [{ name, port, label, pid, holder }] for each port still not
// free (holder: describeHolder's words, or the survivor's pid), [] when all are.
export async function stopReleasing(procs, { waitMs = PORT_WAIT_MS } = {}) {
  const owned = [];
  for (const p of procs) {
    const mine = [...p.ports];
    const group = groupMembers(p.pid);
    for (const port of listeningPorts(group.includes(p.pid) ? group : [p.pid]))
      if (!mine.some((m) => m.port === port)) mine.push({ name: null, port });
    owned.push(...mine.map((m) => ({ ...m, label: p.label, pid: p.pid })));
  }
  const survivors = (await Promise.all(procs.map(async (p) => ((await stopPid(p.pid)) ? null : p.pid)))).filter(
    Boolean,
  );
  const held = await waitPortsFree(owned, { waitMs });
  return held.map((h) => ({
    ...h,
    holder:
      describeHolder(h.port) ||
      (survivors.includes(h.pid) ? `held by pid ${h.pid} (the ${h.label}, still running after SIGKILL)` : ''),
  }));
}

// One line for the ports a stop left held: 'port 50052 (GRPC_TLS_PORT) is still in use
// 5 s after the gRPC server stopped: held by pid 123 (...)' (and how many more).
export function stillHeldMessage(held, { waitMs = PORT_WAIT_MS } = {}) {
  const [first, ...rest] = held;
  const name = first.name ? ` (${first.name})` : '';
  const others = rest.length ? `; also ${rest.map((h) => h.port).join(', ')}` : '';
  return `port ${first.port}${name} is still in use ${Math.round(waitMs / 1000)} s after the ${first.label} (pid ${first.pid}) stopped: ${first.holder || 'held by something /proc does not show'}${others}`;
}
