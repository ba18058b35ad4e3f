// Debian's chromium driven by playwright-core, for tests that look at pages as
// a person would. chromium() finds the browser or installs it with apt-get
// (root, as here and in CI); without either it fails loudly: no silent skip.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { chromium as playwright } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean);
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const found = () => CANDIDATES.find((p) => existsSync(p));

// The chromium binary, installed from Debian's packages if missing.
export async function chromium() {
  if (found()) return found();
  if (process.getuid?.() !== 0) {
    throw new Error(
      'chromium is not installed and this user cannot install it: run `sudo apt-get install -y chromium` (or set CHROMIUM_PATH) and test again',
    );
  }
  const apt = (args) =>
    execa('apt-get', args, {
      env: { DEBIAN_FRONTEND: 'noninteractive' },
      reject: false,
      timeout: 600000,
      stdin: 'ignore',
    });
  let r = await apt(['install', '-y', '--no-install-recommends', 'chromium']);
  if (r.exitCode !== 0) {
    await apt(['update']);
    r = await apt(['install', '-y', '--no-install-recommends', 'chromium']);
  }
  if (!found())
    throw new Error(`apt-get install chromium failed (${r.exitCode}): ${r.stderr.split('\n').slice(-3).join(' ')}`);
  return found();
}

// A headless browser with a fresh profile; close() removes it.
export async function launch(executablePath) {
  const profile = mkdtempSync(join(tmpdir(), 'k6pack-chromium-'));
  const context = await playwright.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
    timeout: 60000,
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
