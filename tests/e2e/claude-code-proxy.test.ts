/**
 * The real Claude Code CLI (2.1.332, installed from npm by roller's pinned installer) runs headless through
 * `roller proxy` against `roller scripted-model`, delegating to a sub-agent. Every recorded call's response
 * id must be an assistant message.id in the CLI's own session files (main session and subagents/).
 * If the CLI cannot be installed this test fails, saying so: it never passes without running the CLI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeEnv } from '../../src/harnesses/claude-code/env.js';
import { installHarness, type InstalledHarness } from '../../src/harnesses/installer.js';
import { Call as CallSchema, checkValue, type Call } from '../../src/schemas/index.js';
import { rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('e2e-cc');
const children: ChildProcess[] = [];
let claude: InstalledHarness;

beforeAll(async () => {
  try {
    claude = await installHarness('claude-code');
  } catch (err) {
    throw new Error(`Claude Code 2.1.332 could not be installed, so the e2e cannot run: ${(err as Error).message}`);
  }
}, 15 * 60_000);
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

async function startRoller(...args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, url };
}

async function nativeAssistantIds(configDir: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const entry of await readdir(join(configDir, 'projects'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
    for (const line of (await readFile(join(entry.parentPath, entry.name), 'utf8')).split('\n')) {
      if (!line.trim()) continue;
      const rec = JSON.parse(line) as { type?: string; message?: { id?: string } };
      if (rec.type === 'assistant' && rec.message?.id) ids.add(rec.message.id);
    }
  }
  return ids;
}

describe('Claude Code through roller proxy (e2e)', () => {
  it('records every model call of a delegating session, each joined to a native assistant message', async () => {
    const home = join(tmp.path, 'home');
    const work = join(tmp.path, 'demo');
    const capture = join(tmp.path, 'capture');
    await mkdir(join(home, '.claude'), { recursive: true });
    await mkdir(join(home, 'tmp'), { recursive: true, mode: 0o700 });
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'notes.txt'), 'The secret word is BLUEBIRD.\nSecond line of notes.\n');

    const model = await startRoller('scripted-model');
    const proxy = await startRoller('proxy', '--upstream', model.url, '--out', capture);
    const apiKey = 'sk-ant-test-E2E-DUMMY-KEY-000111';
    const cli = spawn(
      claude.bin,
      ['-p', '[MAIN:single] Please delegate: have a sub-agent read notes.txt and tell me its first line.', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'],
      { cwd: work, env: claudeCodeEnv({ home, baseUrl: proxy.url, apiKey }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(cli);
    let stdout = '';
    let stderr = '';
    cli.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => cli.kill('SIGKILL'), 240_000);
    const [code] = (await once(cli, 'exit')) as [number | null];
    clearTimeout(timer);
    expect(code, `claude exited ${code}; stderr: ${stderr.slice(0, 2000)}`).toBe(0);

    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    model.child.kill('SIGTERM');

    const calls = (await readFile(join(capture, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    const modelCalls = calls.filter((c) => c.protocol === 'anthropic-messages');
    // main (delegates) -> sub-agent (Read) -> sub-agent (answer) -> main (summary), at least.
    expect(modelCalls.length).toBeGreaterThanOrEqual(4);
    for (const c of calls) expect(checkValue(CallSchema, c)).toEqual([]);
    for (const c of modelCalls) expect(c).toMatchObject({ execution_status: 'completed', response_capture_status: 'complete', capture_status: 'complete' });
    // Sub-agent calls carry the agent id header; the main session's do not.
    expect(modelCalls.some((c) => c.native_identity.agent_id)).toBe(true);
    expect(new Set(modelCalls.map((c) => c.native_identity.session_id)).size).toBe(1);

    const native = await nativeAssistantIds(join(home, '.claude'));
    for (const c of modelCalls) expect(native, `response ${c.response_id} of call ${c.seq} is not a native assistant message.id`).toContain(c.response_id);

    const result = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; subtype?: string; result?: string }).find((e) => e.type === 'result');
    expect(result?.subtype).toBe('success');
    expect(result?.result, result?.result).toContain('BLUEBIRD');
    const written = await readFile(join(capture, 'calls.jsonl'), 'latin1');
    expect(written).not.toContain(apiKey);
  }, 300_000);
});
