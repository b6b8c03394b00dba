import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startProxyPipeline } from '../../src/pipelines/proxy.js';
import type { Call } from '../../src/schemas/index.js';
import { startScriptedModel, type ScriptedModelServer } from '../../src/sources/scripted-model/index.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('proxy-pipeline');
let model: ScriptedModelServer | undefined;
afterEach(async () => model?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('proxy pipeline (calls projected from the wire log as it is written)', () => {
  it('projects every call, across idle periods', async () => {
    model = await startScriptedModel();
    const outDir = join(tmp.path, 'idle');
    const { proxy, done } = await startProxyPipeline({ upstream: model.url, outDir, wireTrace: 'full' });
    await sleep(300);
    for (const text of ['[HELLO] one', '[HELLO] two']) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', headers: { 'x-claude-code-session-id': 'sess-1' }, body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: text }] }) });
      await res.body.text();
      await sleep(200);
    }
    await proxy.close();
    const report = await done;
    expect(report.sinks[0]!.written).toBe(2);
    const calls = (await readFile(join(outDir, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Call);
    expect(calls.map((c) => [c.seq, c.native_identity.session_id, c.execution_status, c.response_path])).toEqual([
      [0, 'sess-1', 'completed', 'raw/wire.frames'],
      [1, 'sess-1', 'completed', 'raw/wire.frames'],
    ]);
    expect((calls[1]!.context as { messages: { content: string }[] }).messages[0]!.content).toBe('[HELLO] two');
    expect((await readFile(join(outDir, 'wire_trace.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('writes each call to calls.jsonl as it ends, while other exchanges are still open, and all of it by close', async () => {
    model = await startScriptedModel();
    const outDir = join(tmp.path, 'busy');
    const { proxy, done } = await startProxyPipeline({ upstream: model.url, outDir, wireTrace: 'off' });
    // Keep one exchange open the whole time: a request whose body is still being sent.
    const { PassThrough } = await import('node:stream');
    const slowBody = new PassThrough();
    const slow = request(`${proxy.url}/v1/messages`, { method: 'POST', body: slowBody });
    slowBody.write('{"model":"m","stream":true,');
    for (let i = 0; i < 3; i++) {
      const res = await request(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: `[HELLO] ${i}` }] }) });
      await res.body.text();
    }
    const lines = async () => (await readFile(join(outDir, 'calls.jsonl'), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    for (let i = 0; i < 100 && (await lines()) < 3; i++) await sleep(50);
    expect(await lines()).toBe(3);
    slowBody.end('"messages":[{"role":"user","content":"[HELLO] slow"}]}');
    await (await slow).body.text();
    await proxy.close();
    expect((await done).sinks[0]!.written).toBe(4);
  });
});
