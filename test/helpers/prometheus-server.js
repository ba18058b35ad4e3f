// Debian's Prometheus for the live-metrics test: prometheusBinary() finds it or installs
// it with apt-get (root, as here and in CI), as chromium() does; startPrometheus() runs
// it on a free loopback port with its remote-write receiver and native histograms on.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { freePortMap } from '../../dev/test-stack.js';
import { aptInstall } from './apt.js';

const BIN = '/usr/bin/prometheus';
export const PROMTOOL = '/usr/bin/promtool';

// -> { bin } or { skip: why } when it cannot be installed (not root, no package).
export async function prometheusBinary() {
  if (existsSync(BIN)) return { bin: BIN };
  const why = await aptInstall('prometheus');
  return existsSync(BIN) ? { bin: BIN } : { skip: why || 'apt-get installed prometheus, yet no /usr/bin/prometheus' };
}

const ready = (url) =>
  fetch(`${url}/-/ready`).then(
    (r) => r.ok,
    () => false,
  );

// -> { url (the HTTP API), write (the remote-write URL), query(promql), stop() }. A port
// another test took meanwhile: again on another one.
export async function startPrometheus(bin) {
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'k6pack-prometheus-'));
    writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 15s\n');
    const { PROMETHEUS_PORT: port } = await freePortMap(['PROMETHEUS_PORT']);
    const child = execa(
      bin,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        '--web.enable-remote-write-receiver',
        '--enable-feature=native-histograms',
      ],
      { reject: false, stdin: 'ignore', timeout: 900000 },
    );
    const url = `http://127.0.0.1:${port}`;
    const stop = async () => {
      child.kill('SIGTERM');
      const r = await child;
      rmSync(dir, { recursive: true, force: true });
      return r;
    };
    for (let i = 0; i < 150 && child.exitCode === null && !(await ready(url)); i++) await sleep(100);
    if (!(await ready(url))) {
      const r = await stop();
      if (attempt < 3 && /address already in use/.test(String(r.stderr))) continue;
      throw new Error(`prometheus did not get ready on ${url}: ${String(r.stderr).slice(-500)}`);
    }
    const query = async (promql) => {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = await res.json();
      if (body.status !== 'success') throw new Error(`${promql}: ${body.error}`);
      return body.data.result;
    };
    return { url, write: `${url}/api/v1/write`, query, stop };
  }
}
