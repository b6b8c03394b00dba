#!/usr/bin/env node
// The screenshots in docs/view/: roller view over the README's demo run, in Debian's Chromium (playwright-core).
//   node scripts/view-screenshots.mjs out/runs/demo
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = process.argv[2] ?? 'out/runs/demo';
const info = JSON.parse(readFileSync(join(run, 'info.json'), 'utf8'));
const delegate = info.samples.find((s) => s.task_id === 'delegate');
if (!delegate) throw new Error(`${run}: no delegate sample (run the README's main command first)`);
const firstCall = JSON.parse(readFileSync(join(run, delegate.path, 'capture/attempt-0001/calls.jsonl'), 'utf8').split('\n')[0]).call_id;
const child = spawn(join(root, 'bin/roller'), ['view', run], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = (await new Promise((resolve) => child.stdout.once('data', (d) => resolve(d.toString().trim())))).replace(/#.*$/, '');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
for (const [name, route] of [['run', '#/'], ['sample', `#/sample/${delegate.index}`], ['call', `#/sample/${delegate.index}/call/${firstCall}`], ['trajectory', `#/sample/${delegate.index}/trajectory`]]) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  await page.goto(`${url}${route}`);
  await page.waitForFunction(() => document.body.dataset.ready && !document.getElementById('indexing'));
  await page.screenshot({ path: join(root, 'docs/view', `${name}.jpg`), type: 'jpeg', quality: 70 });
  await page.close();
}
await browser.close();
child.kill('SIGINT');
