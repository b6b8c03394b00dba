/// <reference lib="dom" />
import { chromium, type Browser, type Page } from 'playwright-core';
import { join } from 'node:path';
import { repoRoot } from './paths.js';
import { sh } from './sh.js';

/**
 * Debian's Chromium under playwright-core (scripts/chromium.sh installs it when missing and apt is there, as root);
 * a machine where it cannot be had skips, saying why.
 */
export function chromiumPath(): string | { reason: string } {
  const r = sh([join(repoRoot, 'scripts', 'chromium.sh'), 'install']);
  return r.code === 0 ? r.stdout.trim().split('\n').at(-1)! : { reason: r.stderr.trim() };
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--no-sandbox'], headless: true });
}

/** A page that records its console errors, page errors and every request it makes (nothing may leave loopback). */
export async function watchedPage(browser: Browser): Promise<{ page: Page; problems: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  return { page, problems, requests };
}

/** Waits until the page finished rendering its route (app.js sets body[data-ready] after each render). */
export async function rendered(page: Page, route: string): Promise<void> {
  const before = await page.evaluate(() => document.body.dataset.ready ?? '');
  await page.evaluate((r) => {
    location.hash = r;
  }, route);
  await page.waitForFunction((b) => (document.body.dataset.ready ?? '') !== b, before);
}
