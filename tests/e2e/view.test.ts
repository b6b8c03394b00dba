/// <reference lib="dom" />
/**
 * `roller view` in a real Chromium (Debian's, under playwright-core) over runs the real CLIs made here: Claude Code
 * with parallel and background sub-agents, the README demo's delegation, a dialogue and graded tasks; Codex multi_agent v2 (a warm fork); OpenClaw
 * nested (root, child, grandchild). The tree shows what `roller usage` prints, a call shows its request and response,
 * relations lead to the calls they name, the table filters and sorts, trajectories page; no console error, no request
 * off loopback; the static export opens from file:// with the same pages; the run's files are never changed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUMMY_KEY, collectRuns, filesUnder, readJson, roller } from '../support/collect-run.js';
import { chromiumPath, launchChromium, rendered, watchedPage } from '../support/browser.js';
import { filesHolding } from '../support/files-holding.js';
import { repoRoot, rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';
import type { RunInfo } from '../../src/schemas/index.js';

type Json = Record<string, any>;

const chromium = chromiumPath();
const NOTES = { 'notes.txt': 'The secret word is BLUEBIRD.\nSecond line of notes.\n' };
const exampleTask = (file: string, id: string) => readFileSync(join(repoRoot, 'examples/tasks', file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json).find((t) => t.id === id)!;

/** `roller view DIR` until stopped; its URL from its stdout. */
async function serve(dir: string, args: string[] = []): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(rollerBin, ['view', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`roller view exited ${code}: ${err}`)));
  });
  return { url, child, stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGINT')))) };
}

const digestOf = (dir: string) => Object.fromEntries(filesUnder(dir).map((f) => [relative(dir, f), createHash('sha256').update(readFileSync(f)).digest('hex')]));

/** The participants' tokens as `roller usage --json` prints them, by participant id. */
async function usageTokens(run: string): Promise<Map<string, Map<string, Json>>> {
  const r = await roller(['usage', run, '--json']);
  expect(r.code, r.stderr).toBe(0);
  const out = new Map<string, Map<string, Json>>();
  const walk = (nodes: Json[], into: Map<string, Json>) => nodes.forEach((n) => (into.set(n.participant, n.tokens), walk(n.children ?? [], into)));
  for (const s of JSON.parse(r.stdout).samples as Json[]) {
    const m = new Map<string, Json>();
    walk(s.tree, m);
    out.set(s.path, m);
  }
  return out;
}

const tokensText = (t: Json) => `in ${t.input.toLocaleString('en-US')} · cache write ${t.cache_creation.toLocaleString('en-US')} · cache read ${t.cache_read.toLocaleString('en-US')} · out ${t.output.toLocaleString('en-US')}`;

describe.skipIf(typeof chromium !== 'string')(`roller view in Chromium${typeof chromium === 'string' ? '' : ` (skipped: ${(chromium as { reason: string }).reason})`}`, () => {
  const tmp = useTempDir('view');
  const { collectValidRun } = collectRuns(tmp);
  let browser: Browser;
  const runs: Record<'claude' | 'codex' | 'openclaw' | 'compact' | 'plain' | 'tokens', string> = { claude: '', codex: '', openclaw: '', compact: '', plain: '', tokens: '' };
  let before: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    browser = await launchChromium(chromium as string);
    [runs.claude, runs.codex] = await Promise.all([
      collectValidRun('claude', [
        { id: 'parallel', prompt: '[MAIN:parallel] Use two sub-agents at once to read notes.txt.', files: NOTES },
        { id: 'background', prompt: '[MAIN:background] Use a background sub-agent to read notes.txt.', files: NOTES },
        exampleTask('dialogue.jsonl', 'dialogue'),
        ...['write-file', 'hello-only'].map((id) => exampleTask('graded.jsonl', id)),
        exampleTask('demo.jsonl', 'delegate'), // the README demo's delegation
      ], ['--harness', 'claude-code', '--model', 'scripted/default', '--concurrency', '2']),
      collectValidRun('codex-v2', [{ id: 'fork', prompt: '[MAIN:wait] use a sub-agent to read notes.txt', files: NOTES }], ['--harness', 'codex', '--codex-multi-agent', 'v2']),
    ]);
    // A real compaction (Claude Code, its window made small): SFT segments, each with where its targets start.
    const models = join(tmp.path, 'compact-models.json');
    writeFileSync(models, JSON.stringify({ models: { 'scripted/default': { context_window: 100000, auto_compact_percent: 12 } } }));
    runs.compact = await collectValidRun('compact', [{ id: 'compact', prompt: '[COMPACT] Check notes.txt in several steps.', files: NOTES }], ['--harness', 'claude-code', '--model', 'scripted/default', '--model-config', models]);
    // collect's default: no --capture-calls, so no capture/ — the tree and trajectories come from the native files.
    const plain = await roller(['collect', '--tasks', join(repoRoot, 'examples/tasks/demo.jsonl'), '--harness', 'claude-code', '--model', 'scripted/default', '--output', join(tmp.path, 'runs'), '--run-name', 'plain']);
    expect(plain.code, plain.stderr).toBe(0);
    runs.plain = join(tmp.path, 'runs', 'plain');
    // Token ids (the scripted model in vLLM's shape, through Pi): the sample page says whether prompts continued.
    const tokenModels = join(tmp.path, 'token-models.json');
    writeFileSync(tokenModels, JSON.stringify({ models: { 'scripted/default': { token_ids: true } } }));
    runs.tokens = await collectValidRun('tokens', [exampleTask('demo.jsonl', 'write-file')], ['--harness', 'pi', '--model', 'scripted/default', '--model-config', tokenModels]);
    runs.openclaw = await collectValidRun('openclaw-nested', [{ id: 'nested', prompt: '[MAIN:nested] Delegate to a sub-agent that delegates again.', files: NOTES }], ['--harness', 'openclaw']);
    before = Object.fromEntries(Object.values(runs).map((r) => [r, digestOf(r)]));
  }, 10 * 60_000);

  afterAll(async () => {
    await browser?.close();
    // Viewing changed nothing: every file of every run has the bytes it had.
    for (const [run, digest] of Object.entries(before)) expect(digestOf(run)).toEqual(digest);
  });

  /** `roller view RUN` and a watched page on it, its first page rendered; both closed after `fn`. */
  async function onView(run: string, fn: (v: { page: Page; problems: string[]; requests: string[]; url: string }) => Promise<void>): Promise<void> {
    const view = await serve(run);
    const watched = await watchedPage(browser);
    try {
      await watched.page.goto(view.url);
      await watched.page.waitForFunction(() => document.body.dataset.ready);
      await fn({ ...watched, url: view.url });
    } finally {
      await watched.page.close();
      await view.stop();
    }
  }

  /** Every participant's tokens on the sample page are those `roller usage` prints; returns the tree's ids. */
  async function checkTree(page: Page, run: string, row: RunInfo['samples'][number], expected: Map<string, Map<string, Json>>): Promise<string[]> {
    await rendered(page, `#/sample/${row.index}`);
    const shown = await page.$$eval('#agent-tree .participant', (els) => els.map((e) => ({ id: (e as HTMLElement).dataset.participant!, tokens: e.querySelector('.tokens')!.textContent })));
    const want = expected.get(row.path)!;
    expect(shown.map((s) => s.id).sort()).toEqual([...want.keys()].sort());
    for (const s of shown) expect(s.tokens, `${run} ${row.path} ${s.id}`).toBe(tokensText(want.get(s.id)!));
    return shown.map((s) => s.id);
  }

  it('the run page lists every sample; filtering, status and sorting by tokens work; the delegation trees show the tokens roller usage prints', async () => {
    await onView(runs.claude, async ({ page, problems, requests, url }) => {
      await page.waitForFunction(() => document.body.dataset.ready && !document.getElementById('indexing'));
      const info = readJson<RunInfo>(join(runs.claude, 'info.json'));
      const tasks = async () => page.$$eval('#samples tbody tr td:nth-child(2)', (tds) => tds.map((t) => t.textContent));
      expect((await tasks()).sort()).toEqual(info.samples.map((s) => s.task_id).sort());

      await page.fill('#filter', 'background');
      await page.press('#filter', 'Enter');
      await page.waitForFunction(() => document.querySelectorAll('#samples tbody tr').length === 1);
      expect(await tasks()).toEqual(['background']);

      await rendered(page, '#/?sort=tokens&desc=1');
      const byTokens = [...info.samples].sort((a, b) => (b.usage!.input + b.usage!.cached_input + b.usage!.cache_creation + b.usage!.output) - (a.usage!.input + a.usage!.cached_input + a.usage!.cache_creation + a.usage!.output) || a.index - b.index);
      expect(await tasks()).toEqual(byTokens.map((s) => s.task_id));
      await rendered(page, '#/?status=error');
      expect(await page.$$eval('#samples tbody tr', (r) => r.length)).toBe(info.samples.filter((s) => s.status === 'error').length);

      // The graded samples: their verdict and score in the table.
      await rendered(page, '#/?sort=grade');
      const grades = await page.$$eval('#samples tbody tr', (rows) => rows.map((r) => [r.children[1]!.textContent, r.children[5]!.textContent, r.children[6]!.textContent]));
      expect(grades.filter((g) => g[1] !== '–').sort()).toEqual([['hello-only', 'failed', '0'], ['write-file', 'passed', '1']]);

      const usage = await usageTokens(runs.claude);
      for (const [task, agents] of [['parallel', 3], ['background', 2], ['delegate', 2]] as const) {
        const row = info.samples.find((s) => s.task_id === task)!;
        const ids = await checkTree(page, runs.claude, row, usage);
        expect(ids.length, `${task}: root and its sub-agents`).toBe(agents);
        expect(await page.$$eval('#timeline rect.call', (r) => r.length)).toBe(readJson<Json>(join(runs.claude, row.path, 'info.json')).usage.requests);
        expect(await page.$$eval('#timeline line.rel.spawn', (r) => r.length)).toBe(ids.length - 1);
      }

      // The dialogue: its turns on the sample page.
      const dialogue = info.samples.find((s) => s.task_id === 'dialogue')!;
      await rendered(page, `#/sample/${dialogue.index}`);
      expect(await page.$$eval('#dialogue .turn', (t) => t.length)).toBeGreaterThanOrEqual(3);
      expect(problems).toEqual([]);
      expect(requests.filter((u) => !u.startsWith(url.replace(/\/$/, '')))).toEqual([]);
    });
  });

  it('a call shows its request and response; a relation leads to the call it names; the trajectory pages ACTF beside SFT', async () => {
    await onView(runs.claude, async ({ page, problems, requests, url }) => {
      const info = readJson<RunInfo>(join(runs.claude, 'info.json'));
      const row = info.samples.find((s) => s.task_id === 'parallel')!;
      await rendered(page, `#/sample/${row.index}`);
      // Clicking the first bar of the timeline opens that call.
      const first = await page.$eval('#timeline a[data-call]', (a) => (a as HTMLElement).dataset.call!);
      const ready = await page.evaluate(() => document.body.dataset.ready);
      await page.click(`#timeline a[data-call="${first}"] rect`);
      await page.waitForFunction((b) => document.body.dataset.ready !== b, ready);
      const calls = readFileSync(join(runs.claude, row.path, 'capture/attempt-0001/calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
      const call = calls.find((c) => c.call_id === first)!;
      expect(await page.textContent('h1')).toContain(first);
      expect(await page.$$eval('#request .turn', (t) => t.length)).toBe(call.context.messages.length);
      const lastUser = call.context.messages.at(-1).content;
      expect(await page.textContent('#request')).toContain(typeof lastUser === 'string' ? lastUser : lastUser.find((b: Json) => b.type === 'text').text.slice(0, 60));
      // The response's tool calls: the two Agent spawns.
      const spawns = call.output.content.filter((b: Json) => b.type === 'tool_use');
      expect(spawns.length).toBe(2);
      for (const s of spawns) expect(await page.textContent('#response')).toContain(s.id);
      expect(await page.textContent('#call-tokens')).toBe(tokensText({ ...call.usage.normalized, cache_read: call.usage.normalized.cached_input }));
      // "this call's tool results entered …": each link opens the call whose input holds them.
      const relations = readFileSync(join(runs.claude, row.path, 'capture/attempt-0001/relations.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
      const entered = relations.filter((r) => r.parent_call_id === first && r.type === 'result_in_context' && r.status === 'established').map((r) => r.in_call_id as string);
      expect(entered.length).toBeGreaterThan(0);
      const links = await page.$$eval('#entered a', (as) => as.map((a) => a.textContent));
      expect([...new Set(links)].sort()).toEqual([...new Set(entered)].sort());
      const before = await page.evaluate(() => document.body.dataset.ready);
      await page.click('#entered a');
      await page.waitForFunction((b) => document.body.dataset.ready !== b, before);
      expect(await page.textContent('h1')).toContain(entered[0]);
      expect(await page.$$eval('#call-relations li', (l) => l.map((x) => x.textContent).join('\n'))).toContain('result_in_context');

      // Trajectory: the ACTF steps beside the SFT record, assistant messages marked as targets.
      await rendered(page, `#/sample/${row.index}/trajectory`);
      const actf = readJson<Json>(join(runs.claude, row.path, 'trace_ACTF.json'));
      const sft = readJson<Json>(join(runs.claude, row.path, 'trace_SFT.json'));
      expect(await page.$$eval('#actf .turn', (t) => t.length)).toBe(Math.min(actf.steps.length, 50));
      expect(await page.$$eval('#sft [data-target="true"]', (t) => t.length)).toBe(sft.messages.slice(0, 50).filter((m: Json) => m.role === 'assistant').length);
      expect(problems).toEqual([]);
      expect(requests.filter((u) => !u.startsWith(url.replace(/\/$/, '')))).toEqual([]);
    });
  });

  it("token ids: the sample page says how many of its prompts continued their agent's previous call", async () => {
    await onView(runs.tokens, async ({ page, problems }) => {
      const row = readJson<RunInfo>(join(runs.tokens, 'info.json')).samples[0]!;
      await rendered(page, `#/sample/${row.index}`);
      expect(await page.textContent('#token-continuity')).toContain('1 of 1 continued');
      expect(problems).toEqual([]);
    });
  });

  it('a compacted sample: each SFT segment beside the ACTF, its context messages apart from its targets', async () => {
    await onView(runs.compact, async ({ page, problems }) => {
      const row = readJson<RunInfo>(join(runs.compact, 'info.json')).samples[0]!;
      const metas = readJson<Json>(join(runs.compact, row.path, 'info.json')).trajectory.sft_segments as Json[];
      expect(metas.length).toBe(2);
      for (const meta of metas) {
        await rendered(page, `#/sample/${row.index}/trajectory?view=segment-${meta.order}`);
        const seg = readJson<Json>(join(runs.compact, row.path, meta.path));
        const shown = seg.messages.slice(0, 50) as Json[];
        const marks = await page.$$eval('#sft [data-target]', (els) => els.map((e) => (e as HTMLElement).dataset.target));
        expect(marks, `segment ${meta.order}`).toEqual(shown.filter((m) => m.role !== 'system').map((m) => String(m.role === 'assistant' && shown.indexOf(m) >= seg.target_start_index)));
        expect(await page.textContent('#sft')).toContain(`messages before ${seg.target_start_index} are context`);
      }
      expect(problems).toEqual([]);
    });
  });

  it("a run collected without --capture-calls (collect's default): the tree from the native files, no calls, the trajectory", async () => {
    await onView(runs.plain, async ({ page, problems }) => {
      await page.waitForFunction(() => document.body.dataset.ready && !document.getElementById('indexing'));
      const info = readJson<RunInfo>(join(runs.plain, 'info.json'));
      const row = info.samples.find((s) => s.task_id === 'delegate')!;
      expect((await checkTree(page, runs.plain, row, await usageTokens(runs.plain))).length).toBe(2);
      expect(await page.textContent('#calls-section')).toContain('no capture (collect with --capture-calls');
      await rendered(page, `#/sample/${row.index}/trajectory`);
      expect(await page.$$eval('#actf .turn', (t) => t.length)).toBe(readJson<Json>(join(runs.plain, row.path, 'trace_ACTF.json')).steps.length);
      expect(problems).toEqual([]);
    });
  });

  it('Codex v2 (a warm fork) and OpenClaw nested (root, child, grandchild): each tree with the tokens roller usage prints, every relation linking its calls', async () => {
    // multi_agent v2 it is: the lock says so, and the parent's messages to its child are agent_message items.
    expect(readJson<Json>(join(runs.codex, 'lock.json')).harness_profile).toBe('codex-multi-agent-v2');
    const codexSample = readJson<RunInfo>(join(runs.codex, 'info.json')).samples[0]!;
    expect(readFileSync(join(runs.codex, codexSample.path, 'capture/attempt-0001/calls.jsonl'), 'utf8')).toContain('"type":"agent_message"');
    for (const [run, depth] of [[runs.codex, 2], [runs.openclaw, 3]] as const) {
      await onView(run, async ({ page, problems }) => {
        const info = readJson<RunInfo>(join(run, 'info.json'));
        const ids = await checkTree(page, run, info.samples[0]!, await usageTokens(run));
        expect(ids.length, run).toBe(depth);
        expect(await page.$$eval('#agent-tree ul.tree ul.tree .participant', (p) => p.length), 'grandchildren').toBe(depth - 2);
        // Every established relation's calls are links to existing calls.
        const hrefs = await page.$$eval('#relations a', (as) => as.map((a) => (a as HTMLAnchorElement).getAttribute('href')!));
        expect(hrefs.length).toBeGreaterThan(0);
        for (const href of new Set(hrefs)) {
          await rendered(page, href);
          expect(await page.$('#error')).toBeNull();
          expect(await page.$$eval('#request .turn', (t) => t.length)).toBeGreaterThan(0);
        }
        expect(problems).toEqual([]);
      });
    }
  });

  it('the static export opens from file:// with the same pages, holds no credential, and a sample directory views alone', async () => {
    const out = join(tmp.path, 'static-claude');
    const r = await roller(['view', runs.claude, '--static', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(filesHolding(DUMMY_KEY, [out])).toEqual([]);
    const { page, problems, requests } = await watchedPage(browser);
    try {
      await page.goto(`file://${out}/index.html`);
      await page.waitForFunction(() => document.body.dataset.ready);
      const info = readJson<RunInfo>(join(runs.claude, 'info.json'));
      expect(await page.$$eval('#samples tbody tr', (r) => r.length)).toBe(info.samples.length);
      await rendered(page, '#/?q=parallel');
      expect(await page.$$eval('#samples tbody tr td:nth-child(2)', (t) => t.map((x) => x.textContent))).toEqual(['parallel']);
      // The page's own sort and filter (a static export holds the table whole) order rows as the server does.
      const server = await serve(runs.claude);
      try {
        const base = server.url.replace(/#.*$/, '');
        await fetchUntilIndexed(base);
        for (const query of ['sort=tokens&desc=1', 'sort=duration', 'q=hello', 'status=ok&sort=cost&desc=1', 'sort=subagents&desc=1', 'sort=sft']) {
          await rendered(page, `#/?${query}`);
          const shown = await page.$$eval('#samples tbody tr', (rows) => rows.map((r) => Number((r as HTMLElement).dataset.index)));
          expect(shown, query).toEqual((await fetchJson(`${base}api/samples?${query}`)).rows.map((r: Json) => r.index));
        }
      } finally {
        await server.stop();
      }
      const row = info.samples.find((s) => s.task_id === 'parallel')!;
      await checkTree(page, runs.claude, row, await usageTokens(runs.claude));
      const first = await page.$eval('#calls a', (a) => a.textContent!);
      await rendered(page, `#/sample/${row.index}/call/${first}`);
      expect(await page.$('#error')).toBeNull();
      expect(await page.$$eval('#request .turn', (t) => t.length)).toBeGreaterThan(0);
      await rendered(page, `#/sample/${row.index}/trajectory`);
      expect(await page.$$eval('#actf .turn', (t) => t.length)).toBeGreaterThan(0);
      expect(problems).toEqual([]);
      expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
    } finally {
      await page.close();
    }
    // Served over HTTP (a static host): the same page reads its data files as JSON; a page of another site that includes
    // them as scripts gets nothing.
    const host = createServer((req, res) => {
      if (req.url === '/blank') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>');
      const path = join(out, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/$/, '/index.html'));
      if (!path.startsWith(out)) return void res.writeHead(404).end();
      try {
        const body = readFileSync(path);
        res.writeHead(200, { 'content-type': path.endsWith('.html') ? 'text/html' : path.endsWith('.css') ? 'text/css' : 'text/javascript' }).end(body);
      } catch {
        res.writeHead(404).end();
      }
    });
    host.listen(0, '127.0.0.1');
    await once(host, 'listening');
    const hosted = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const { page: web, problems: webProblems } = await watchedPage(browser);
    try {
      await web.goto(`${hosted}/index.html`);
      await web.waitForFunction(() => document.body.dataset.ready);
      expect(await web.$$eval('#samples tbody tr', (r) => r.length)).toBe(readJson<RunInfo>(join(runs.claude, 'info.json')).samples.length);
      expect(webProblems).toEqual([]);
      // Another site (another origin: localhost, not 127.0.0.1) includes the run's data as scripts.
      await web.goto(`http://localhost:${(host.address() as AddressInfo).port}/blank`);
      const stolen = await web.evaluate(async (src) => {
        const got: unknown[] = [];
        (window as unknown as { rollerData: (k: string, v: unknown) => void }).rollerData = (k, v) => void got.push([k, v]);
        await new Promise<void>((resolve) => {
          const s = document.createElement('script');
          s.src = src;
          s.onload = s.onerror = () => resolve();
          document.head.appendChild(s);
        });
        return got;
      }, `${hosted}/data/run.js`);
      expect(stolen).toEqual([]);
    } finally {
      await web.close();
      host.close();
    }
    // One sample: the view opens on it, and its run page lists only it.
    const row = readJson<RunInfo>(join(runs.claude, 'info.json')).samples.find((s) => s.task_id === 'background')!;
    const view = await serve(join(runs.claude, row.path));
    try {
      expect(view.url).toMatch(new RegExp(`#/sample/${row.index}$`));
      const samples = await fetchJson(`${view.url.replace(/#.*$/, '')}api/samples`);
      expect(samples.rows.map((s: Json) => s.task_id)).toEqual(['background']);
    } finally {
      await view.stop();
    }
  });

  it('a damaged run: a sample without info.json is a row that says so, a cut calls.jsonl line an error naming file and line; the rest shows', async () => {
    const damaged = join(tmp.path, 'damaged');
    cpSync(runs.claude, damaged, { recursive: true });
    const info = readJson<RunInfo>(join(damaged, 'info.json'));
    const gone = info.samples.find((s) => s.task_id === 'hello-only')!;
    rmSync(join(damaged, gone.path, 'info.json'));
    const cut = info.samples.find((s) => s.task_id === 'parallel')!;
    const callsPath = join(damaged, cut.path, 'capture/attempt-0001/calls.jsonl');
    const lines = readFileSync(callsPath, 'utf8').split('\n');
    lines[1] = lines[1]!.slice(0, 100);
    writeFileSync(callsPath, lines.join('\n'));
    await onView(damaged, async ({ page, problems }) => {
      await page.waitForFunction(() => document.body.dataset.ready && !document.getElementById('indexing'));
      expect(await page.getAttribute(`#samples tr[data-index="${gone.index}"] td:nth-child(5)`, 'title')).toBe(`${join(gone.path, 'info.json')}: ENOENT`);
      expect(await page.$$eval('#samples tbody tr', (r) => r.length)).toBe(info.samples.length);
      await rendered(page, `#/sample/${cut.index}`);
      expect(await page.textContent('#error')).toContain(`${callsPath}:2: not a call record`);
      expect(await page.$$eval('#agent-tree .participant', (p) => p.length), 'the tree still shows').toBe(3);
      await rendered(page, `#/sample/${gone.index}`);
      expect(await page.textContent('#error')).toContain(join(damaged, gone.path, 'info.json'));
      const fine = info.samples.find((s) => s.task_id === 'background')!;
      await rendered(page, `#/sample/${fine.index}`);
      expect(await page.$('#error')).toBeNull();
      // The failed API answers are the only console errors (the browser logs each 4xx).
      expect(problems.filter((p) => !/status of 40[04]/.test(p))).toEqual([]);
    });
  });

  it('refuses a Host that is not loopback, any method but GET, a path outside the API; a missing run and a non-empty --static are clear errors', async () => {
    const view = await serve(runs.codex);
    try {
      const { port } = new URL(view.url);
      const ask = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          });
          req.on('error', reject);
          req.end();
        });
      expect((await ask('/api/run', { host: `rebind.example:${port}` })).status).toBe(403);
      expect((await ask('/api/run', {}, 'POST')).status).toBe(405);
      const missing = await ask('/api/sample/99');
      expect([missing.status, JSON.parse(missing.body).error.message]).toEqual([404, 'no sample 99 in this run']);
      expect((await ask('/api/../../etc/passwd')).status).toBe(404);
      const page = await ask('/');
      expect(page.body).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
      // The port taken: a clear error, no stack trace.
      const taken = await roller(['view', runs.codex, '--port', port]);
      expect(taken.code).toBe(2);
      expect(taken.stderr).toContain(`cannot serve on 127.0.0.1:${port} (EADDRINUSE): pass another --port`);
      expect(taken.stderr).not.toContain('    at ');
    } finally {
      await view.stop();
    }
    // Every bind holds: an IPv4-mapped loopback keeps the Host check; all interfaces need the token it prints.
    const raw = (port: string, path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; cookie: string | undefined }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, cookie: res.headers['set-cookie']?.[0] }));
        })
          .on('error', reject)
          .end();
      });
    const mapped = await serve(runs.codex, ['--host', '::ffff:127.0.0.1']);
    try {
      const { port } = new URL(mapped.url);
      expect((await raw(port, '/api/run', { host: `rebind.example:${port}` })).status).toBe(403);
      expect((await raw(port, '/api/run', { host: `[::ffff:127.0.0.1]:${port}` })).status).toBe(200);
    } finally {
      await mapped.stop();
    }
    const wide = await serve(runs.codex, ['--host', '0.0.0.0']);
    try {
      const url = new URL(wide.url);
      const token = url.searchParams.get('token')!;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const host = { host: `rebind.example:${url.port}` };
      expect((await raw(url.port, '/api/run', host)).status).toBe(403);
      expect((await raw(url.port, '/', host)).status).toBe(403);
      expect((await raw(url.port, `/api/run?token=${token.slice(1)}x`, host)).status).toBe(403);
      const first = await raw(url.port, `/?token=${token}`, host);
      expect(first.status).toBe(200);
      expect(first.cookie).toBe(`roller_view_token=${token}; HttpOnly; SameSite=Strict; Path=/`);
      expect((await raw(url.port, '/api/run', { ...host, cookie: `roller_view_token=${token}` })).status).toBe(200);
    } finally {
      await wide.stop();
    }
    // A run that changes while it is viewed (a collect still running): the run and its table are read again.
    const live = join(tmp.path, 'live');
    cpSync(runs.codex, live, { recursive: true });
    const liveView = await serve(live);
    try {
      const base = liveView.url.replace(/#.*$/, '');
      expect((await fetchJson(`${base}api/run`)).info.state).toBe('finished');
      const info = readJson<Json>(join(live, 'info.json'));
      writeFileSync(join(live, 'info.json.next'), JSON.stringify({ ...info, state: 'running', samples: [...info.samples, { ...info.samples[0], index: 1, task_id: 'later' }] }));
      renameSync(join(live, 'info.json.next'), join(live, 'info.json'));
      expect((await fetchJson(`${base}api/run`)).info.state).toBe('running');
      expect((await fetchJson(`${base}api/samples`)).rows.map((r: Json) => r.task_id)).toEqual(['fork', 'later']);
      // A file info.json names but the sample no longer holds: a 404 naming it, not a server error.
      rmSync(join(live, info.samples[0].path, 'trace_ACTF.json'));
      const gone = await fetch(`${base}api/sample/${info.samples[0].index}/actf/0`);
      expect([gone.status, ((await gone.json()) as Json).error.message]).toEqual([404, `${info.samples[0].path}/trace_ACTF.json is not there (the sample's info.json names it)`]);
    } finally {
      await liveView.stop();
    }
    const none = await roller(['view', join(tmp.path, 'no-such-run')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('neither a run, a sample nor a capture directory');
    expect(none.stderr).not.toContain('    at ');
    writeFileSync(join(tmp.path, 'marker'), '');
    const again = await roller(['view', runs.codex, '--static', tmp.path]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${tmp.path} is not empty`);
  });
});

/** Until the server has read every sample's info.json (its table's sample columns are known). */
async function fetchUntilIndexed(base: string): Promise<void> {
  for (;;) {
    const page = await fetchJson(`${base}api/samples?limit=1`);
    if (page.indexed === page.total) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function fetchJson(url: string): Promise<Json> {
  return fetch(url).then((r) => r.json() as Promise<Json>);
}
