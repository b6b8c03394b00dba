import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { ParticipantUsage } from '../../src/harnesses/claude-code/participants.js';
import type { Call } from '../../src/schemas/index.js';
import { callsJsonlBodies } from '../../src/sources/archive/calls-bodies.js';
import { projectCalls, readRawResponse, readWireFrames, WIRE_LOG_FILE } from '../../src/sources/proxy/index.js';
import { startScriptedModel, type ScriptedModelServer } from '../../src/sources/scripted-model/index.js';
import { validateCapture } from '../../src/pipelines/capture/validate.js';
import { finalizeAttributed } from '../support/finalize.js';
import { collect } from '../support/http.js';
import { startCapture } from '../support/capture.js';
import { useTempDir } from '../support/temp-dir.js';

const tmp = useTempDir('published-wire');
let model: ScriptedModelServer | undefined;
afterEach(async () => model?.close());

const root = (ids: string[]): ParticipantUsage => ({
  participant: 'root', role: 'root', native_id: 'root', parent: null, spawn_tool_call_id: null, depth: 0,
  tokens: { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 }, messages: ids.length, message_ids: ids,
  status: 'completed', status_source: 'test', cost_usd: null, cost_note: null, reason: null,
});

describe('the wire log in a published capture', () => {
  it('holds body_refs into calls.jsonl instead of request bodies, and re-projects to the same calls', async () => {
    model = await startScriptedModel();
    const capture = await startCapture(tmp.path, model.url);
    const marker = 'DISTINCTIVE-PROMPT-TEXT-7f3a';
    for (let turn = 1; turn <= 3; turn++) {
      const body = JSON.stringify({ model: 'm', stream: true, messages: Array.from({ length: turn }, (_, i) => ({ role: 'user', content: `[HELLO] ${marker} turn ${i}` })) });
      // The last request goes gzip-encoded: its body_ref is to the decoded JSON.
      const res = await request(`${capture.proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-claude-code-session-id': 'sess', ...(turn === 3 ? { 'content-encoding': 'gzip' } : {}) },
        body: turn === 3 ? gzipSync(body) : body,
      });
      await res.body.text();
    }
    const calls = await capture.finish();
    expect(calls).toHaveLength(3);
    const dir = join(tmp.path, 'attempt-0001');
    const manifest = await finalizeAttributed({
      dir, calls, participants: [root(calls.map((c) => c.response_id!))], harness: { name: 'claude-code', version: 'test' },
      capabilities: { native_output_coverage: 'per_id', delegation: 'not_available_in_bundled_profile', background: false }, attempt: 1, scope: 's',
      debugRetention: 'full', wireLog: join(capture.outDir, WIRE_LOG_FILE),
    });
    expect(manifest.files['raw/wire.frames']).toBeDefined();
    expect(await validateCapture(dir)).toEqual([]);

    const published = join(dir, 'raw', 'wire.frames');
    expect((await readFile(published, 'utf8')).includes(marker)).toBe(false); // no request body a second time
    expect((await readFile(join(dir, 'calls.jsonl'), 'utf8')).includes(marker)).toBe(true);

    const again = await collect(projectCalls(readWireFrames(published, { bodies: callsJsonlBodies(join(dir, 'calls.jsonl')) }), { responsePath: WIRE_LOG_FILE }));
    const key = (c: Call) => [c.call_id, c.response_id, c.execution_status, c.capture_status, c.context, c.output];
    expect(again.map(key)).toEqual(calls.map(key));
    for (const c of calls) {
      const original = Buffer.concat(await collect(readRawResponse(join(capture.outDir, WIRE_LOG_FILE), c.call_id)));
      expect(Buffer.concat(await collect(readRawResponse(published, c.call_id))).equals(original)).toBe(true);
    }
    // Without the calls.jsonl resolver the reader says where the bodies are instead of inventing them.
    const blind = await collect(projectCalls(readWireFrames(published), { responsePath: WIRE_LOG_FILE }));
    expect(blind.every((c) => c.context === null && c.capture_status === 'partial')).toBe(true);
  });
});
