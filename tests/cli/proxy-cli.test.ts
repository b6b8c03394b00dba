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
      ['/v1/responses', { model: 'm', stream: true, tools: [{ type: 'function', name: 'exec_command', parameters: {} }], input: '[HELLO]' }],
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
    expect(wire.map((w) => [w.message_count, 'messages' in (w.params as object), w.system ?? null])).toEqual([
      [1, false, 'You are scripted.'],
      [1, false, null],
    ]);
    expect(wire[1]!.tools).toEqual([{ type: 'function', name: 'exec_command', parameters: {} }]);
    const tools = (await readFile(join(out, 'tools_capture.jsonl'), 'utf8')).trim().split('\n');
    expect(tools).toHaveLength(1);
    for (const f of ['calls.jsonl', 'wire_trace.jsonl', 'tools_capture.jsonl', 'raw/wire.frames']) {
      expect(await readFile(join(out, f), 'latin1')).not.toContain('sk-test-cli-SECRET');
    }
  });
});
