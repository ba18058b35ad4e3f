// BURN_US: every request of an example server burns this much CPU time first, a known
// cost for the tests of --server-pid (process.cpuUsage: CPU time, not wall time, so
// what else runs on the machine does not change it).
const BURN_US = Number(process.env.BURN_US || 0);

export function burn() {
  if (!BURN_US) return;
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= BURN_US) return;
  }
}
