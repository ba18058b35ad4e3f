// CPU time a process has used so far (all its threads: user + system), from
// /proc/<pid>/stat, in milliseconds. Linux only; the resolution is one clock
// tick (10 ms at the usual 100 Hz), so measure over seconds, not requests.
import { readFileSync } from 'node:fs';
import { execaSync } from 'execa';

let ticksPerSecond = null;
function clockTicks() {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execaSync('getconf', ['CLK_TCK']).stdout.trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

export function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm) ": state is field 3, utime 14 and stime 15 (proc(5)).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
}

// Resident memory of a process now, in bytes (VmRSS in /proc/<pid>/status).
export function processRssBytes(pid) {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : null;
}
