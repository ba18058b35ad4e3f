// One core kept busy, as a loaded CI runner's neighbour would: a child process
// spinning in a loop until the returned stop() (or its own bound, `maxMs`, so it
// never outlives a bench that died without stopping it).
import { execa } from 'execa';

export const BUSY_MAX_MS = 3 * 3600 * 1000;

export function busyCore(maxMs = BUSY_MAX_MS) {
  const child = execa(process.execPath, ['-e', `const end = Date.now() + ${maxMs}; while (Date.now() < end);`], {
    reject: false,
    stdin: 'ignore',
  });
  return () => child.kill('SIGKILL');
}
