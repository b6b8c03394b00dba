import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Call, checkValue } from '../../src/schemas/index.js';
import { rollerBin } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-cli');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** Start `roller ...` and wait for the URL it prints on its first stdout line. */
async function startRoller(...args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout! });
  const [url] = (await once(lines, 'line')) as [string];
  return { child, url, stderr: () => stderr };
}

describe('roller proxy and roller scripted-model', () => {
  it('records every call and closes with complete files on SIGTERM', async () => {
    const model = await startRoller('scripted-model');
    const out = join(tmp.path, 'capture');
    const proxy = await startRoller('proxy', '--upstream', model.url, '--out', out, '--wire-trace', 'actf');
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const [path, body] of [
      ['/v1/messages', { model: 'm', stream: true, system: 'You are scripted.', messages: [{ role: 'user', content: '[HELLO]' }] }],
      ['/v1/responses', { model: 'm', stream: true, tools: [{ type: 'function', name: 'exec_command', parameters: {} }], input: [{ role: 'user', content: [{ type: 'input_text', text: '[HELLO] the conversation itself' }] }] }],
    ] as const) {
      const res = await request(`${proxy.url}${path}`, { method: 'POST', headers: { 'x-api-key': 'sk-test-cli-SECRET' }, body: JSON.stringify(body) });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    proxy.child.kill('SIGTERM');
    const [code] = (await once(proxy.child, 'exit')) as [number];
    expect(code).toBe(0);
    expect(proxy.stderr()).toContain('2 calls recorded');
    model.child.kill('SIGINT');
    await once(model.child, 'exit');

    const calls = (await readFile(join(out, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(calls).toHaveLength(2);
    for (const c of calls) expect(checkValue(Call, c)).toEqual([]);
    const wire = (await readFile(join(out, 'wire_trace.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // actf mode: no conversation content, the first system prompt and the first tools only.
    expect(wire.map((w) => [w.message_count, w.system ?? null])).toEqual([
      [1, 'You are scripted.'],
      [1, null],
    ]);
    // Neither the Messages conversation nor the Responses one is kept in params (B13.1): parameters only.
    expect(wire.map((w) => Object.keys(w.params as object).sort())).toEqual([['model', 'stream'], ['model', 'stream']]);
    expect(await readFile(join(out, 'wire_trace.jsonl'), 'utf8')).not.toContain('[HELLO]');
    expect(wire[1]!.tools).toEqual([{ type: 'function', name: 'exec_command', parameters: {} }]);
    const tools = (await readFile(join(out, 'tools_capture.jsonl'), 'utf8')).trim().split('\n');
    expect(tools).toHaveLength(1);
    for (const f of ['calls.jsonl', 'wire_trace.jsonl', 'tools_capture.jsonl', 'raw/wire.frames']) {
      expect(await readFile(join(out, f), 'latin1')).not.toContain('sk-test-cli-SECRET');
    }
  });
});

/** The child processes of `pid` (roller proxy's projection), from /proc. */
async function childPids(pid: number): Promise<number[]> {
  const { readdir } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const tid of await readdir(`/proc/${pid}/task`)) pids.push(...(await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean).map(Number));
  return pids;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('roller proxy: its projection runs in a process of its own', () => {
  it('--log: one line per request as it ends (number, method, path without its query, protocol, status, time), never a credential', async () => {
    const model = await startRoller('scripted-model');
    const proxy = await startRoller('proxy', '--upstream', model.url, '--out', join(tmp.path, 'logged'), '--log');
    const ok = await request(`${proxy.url}/v1/messages?key=sk-in-the-query-SECRET`, { method: 'POST', headers: { 'x-api-key': 'sk-test-cli-SECRET' }, body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: '[HELLO]' }] }) });
    await ok.body.text();
    const refused = await request(`${proxy.url}/v1/chat/completions`, { method: 'GET' });
    await refused.body.text();
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    model.child.kill('SIGINT');
    const lines = proxy.stderr().split('\n').filter((l) => /^roller proxy: #\d/.test(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^roller proxy: #0 POST \/v1\/messages anthropic-messages 200 \d+ ms$/);
    expect(lines[1]).toMatch(/^roller proxy: #1 GET \/v1\/chat\/completions openai-chat-completions (\d{3}|-) \d+ ms/);
    expect(proxy.stderr()).not.toContain('SECRET');
  });

  it('the proxy killed with SIGKILL: the projection finishes every call the wire log holds, then exits', async () => {
    const model = await startRoller('scripted-model');
    const out = join(tmp.path, 'killed');
    const proxy = await startRoller('proxy', '--upstream', model.url, '--out', out, '--wire-trace', 'full');
    const [projection] = await childPids(proxy.child.pid!);
    expect(projection).toBeGreaterThan(0);
    for (const text of ['[HELLO] one', '[HELLO] two', '[HELLO] three']) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: text }] }) });
      await res.body.text();
    }
    proxy.child.kill('SIGKILL');
    await once(proxy.child, 'exit');
    for (let i = 0; i < 100 && alive(projection!); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(projection!)).toBe(false);
    model.child.kill('SIGINT');
    const calls = (await readFile(join(out, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    // The last exchange's end frame may not have reached the disk before the kill: then it is recorded as cut, not lost.
    expect(calls.map((c) => c.seq)).toEqual([0, 1, 2]);
    expect(calls.slice(0, 2).map((c) => c.execution_status)).toEqual(['completed', 'completed']);
    const last = calls[2]!;
    if (last.execution_status !== 'completed') expect([last.execution_status, last.status_reasons.execution_status]).toEqual(['interrupted', expect.stringContaining('the capture ended before this exchange did')]);
    expect((await readFile(join(out, 'wire_trace.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
  });

  it('a projection that cannot write its files: the proxy goes on forwarding and recording, says what failed and how to project the wire log again, exit 1', async () => {
    const model = await startRoller('scripted-model');
    const out = join(tmp.path, 'unwritable');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(out, 'calls.jsonl'), { recursive: true }); // a directory where the file goes
    const proxy = await startRoller('proxy', '--upstream', model.url, '--out', out);
    while (!proxy.stderr().includes('still forwarding')) await new Promise((r) => setTimeout(r, 50));
    // Forwarding goes on: the model still answers through it, and the wire log keeps the call.
    const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: '[HELLO] still there?' }] }) });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    proxy.child.kill('SIGTERM');
    const [code] = (await once(proxy.child, 'exit')) as [number];
    model.child.kill('SIGINT');
    expect(code).toBe(1);
    expect(proxy.stderr()).toContain(join(out, 'calls.jsonl'));
    expect(proxy.stderr()).toContain(`roller project-wire ${out}`);
    expect(proxy.stderr()).not.toMatch(/\n\s+at /); // no stack trace
    expect((await readFile(join(out, 'raw', 'wire.frames'), 'latin1'))).toContain('still there?');
  });

  it('roller project-wire projects a capture again from its wire log, the same calls as live', async () => {
    const model = await startRoller('scripted-model');
    const out = join(tmp.path, 'again');
    const proxy = await startRoller('proxy', '--upstream', model.url, '--out', out, '--wire-trace', 'full');
    for (const text of ['[HELLO] one', '[HELLO] two']) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: text }] }) });
      await res.body.text();
    }
    proxy.child.kill('SIGTERM');
    await once(proxy.child, 'exit');
    model.child.kill('SIGINT');
    const live = await readFile(join(out, 'calls.jsonl'), 'utf8');
    const { rm } = await import('node:fs/promises');
    await rm(join(out, 'calls.jsonl'));
    const again = spawn(rollerBin, ['project-wire', out, '--wire-trace', 'full'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    again.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    expect((await once(again, 'exit'))[0]).toBe(0);
    expect(stderr).toContain('2 calls projected');
    expect(await readFile(join(out, 'calls.jsonl'), 'utf8')).toBe(live);
    const missing = spawn(rollerBin, ['project-wire', join(tmp.path, 'nothing-here')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    missing.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    expect((await once(missing, 'exit'))[0]).toBe(2);
    expect(said).toContain('raw/wire.frames not found');
  });
});
