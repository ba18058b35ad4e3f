// `go test` in a toxiproxy build directory prepared as `k6pack tools` prepares it
// (lib/tools.js prepareToxiproxyBuild: sources, go mod vendor, patches applied), for
// test/toxiproxy-go.test.js (timed: the toxics' timers) and
// test/toxiproxy-patches.test.js (the patches, no timing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { prepareToxiproxyBuild } from '../../lib/tools.js';

// go test -v in a prepared build directory; the directory is removed afterwards.
export async function goTest(t, { patchesDir, run } = {}) {
  const dir = prepareToxiproxyBuild({ dir: mkdtempSync(join(tmpdir(), 'k6pack-toxiproxy-go-')), patchesDir });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const args = [
    'test',
    '-mod=vendor',
    '-trimpath',
    '-count=1',
    '-timeout=120s',
    '-v',
    ...(run ? ['-run', run] : []),
    './...',
  ];
  return execa('go', args, { cwd: dir, reject: false, all: true, timeout: 180000, env: { CGO_ENABLED: '0' } });
}
