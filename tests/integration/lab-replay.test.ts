/**
 * Golden reassembly against the lab: the OpenCode lab's requests (shared/lab/opencode/requests.jsonl, from the
 * real opencode CLI) are replayed in order through roller's proxy to the lab's own scripted Chat Completions
 * server (shared/lab/chat-server.mjs, stateless by design), and each recorded call must hold exactly the
 * decision the lab logged for that request: the text, or the tool call with its id, name and arguments.
 * Needs ../shared beside the checkout (as CI and every developer machine have it).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createStageContext } from '../../src/core/index.js';
import { startRecordingProxy } from '../../src/pipelines/proxy.js';
import { collect } from '../support/http.js';
import { sharedDir } from '../support/paths.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('lab-replay');
const lab = join(sharedDir, 'lab');
const hasLab = existsSync(join(lab, 'chat-server.mjs'));
if (!hasLab) console.warn(`lab replay skipped: ${lab} is missing (it sits beside the checkout in CI and on developer machines)`);

type Json = Record<string, any>;

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  return port;
}

describe.skipIf(!hasLab)('golden: lab OpenCode requests replayed to the lab chat server', () => {
  it('every reassembled call holds the decision the lab logged', async () => {
    const logged = readFileSync(join(lab, 'opencode/requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const chat = logged.filter((r) => r.method === 'POST' && r.response?.decision);
    expect(chat.length).toBeGreaterThanOrEqual(5);

    const port = await freePort();
    const server = spawn(process.execPath, [join(lab, 'chat-server.mjs'), '--port', String(port), '--log', join(tmp.path, 'lab-log.jsonl')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await once(createInterface({ input: server.stdout! }), 'line');
      const proxy = await startRecordingProxy({ upstream: `http://127.0.0.1:${port}`, outDir: join(tmp.path, 'capture') });
      const calls = collect(proxy.calls(createStageContext()));
      for (const r of logged.filter((x) => x.method === 'POST')) {
        const res = await request(`${proxy.url}${r.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(r.body) });
        await res.body.text();
      }
      await proxy.close();
      const recorded = await calls;
      expect(recorded).toHaveLength(chat.length);
      for (const [i, r] of chat.entries()) {
        const call = recorded[i]!;
        const d = r.response.decision as Json;
        const message = (call.output as Json).choices[0].message as Json;
        expect(call.execution_status).toBe('completed');
        expect(call.response_capture_status).toBe('complete');
        if (d.text !== undefined) {
          expect(message.content).toBe(d.text);
          expect(call.tool_refs).toEqual([]);
        } else {
          expect(message.tool_calls).toEqual([{ id: d.call_id, type: 'function', function: { name: d.tool, arguments: JSON.stringify(d.args) } }]);
          expect(call.tool_refs).toEqual([{ id: d.call_id, name: d.tool }]);
        }
        if (r.body.stream_options?.include_usage) {
          expect(call.usage.reported).toMatchObject({ prompt_tokens: Math.max(1, Math.round(JSON.stringify(r.body.messages).length / 4)) });
        }
      }
    } finally {
      server.kill('SIGTERM');
    }
  });
});
