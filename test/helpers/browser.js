// Debian's chromium driven by playwright-core, for tests that look at pages as
// a person would. chromium() finds the browser or installs it with apt-get
// (root, as here and in CI); without either it fails loudly: no silent skip.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium as playwright } from 'playwright-core';
import { aptInstall } from './apt.js';

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

// The chromium binary, installed from Debian's packages if missing (CHROMIUM_PATH: another).
export async function chromium() {
  if (found()) return found();
  const why = await aptInstall('chromium');
  if (!found()) throw new Error(why || 'apt-get installed chromium, yet no chromium binary is there');
  return found();
}

// One page of the browser, opened on a file: { page, errors (console errors and page
// exceptions), requests (every URL it asked for) }, once `readyFlag` is true on window.
export async function openPage(browser, file, readyFlag = 'k6packReportReady') {
  const page = await browser.context.newPage();
  const errors = [];
  const requests = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (req) => requests.push(req.url()));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction((flag) => globalThis[flag] === true, readyFlag, { timeout: 30000 });
  return { page, errors, requests };
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
