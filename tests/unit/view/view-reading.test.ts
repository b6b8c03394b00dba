import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { indexCalls, readCallAt } from '../../../src/pipelines/view/calls-index.js';
import { readableRequest, readableResponse, type ReadablePart } from '../../../src/transforms/protocols/readable.js';
import { repoRoot } from '../../support/paths.js';
import { useTempDir } from '../../support/temp-dir.js';

type Json = Record<string, any>;

/** Captures the real CLIs made (tests/fixtures): Claude Code (Anthropic Messages), OpenClaw (Chat Completions), Codex (Responses). */
const CAPTURES = ['claude-code/resume-2.1.332', 'openclaw/gateway-nested', 'codex/v2-run', 'dialogue/claude-code-2.1.332/user_simulator'].map((d) => join(repoRoot, 'tests/fixtures', d, 'calls.jsonl'));
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim());

describe('the view reads a calls.jsonl by line ranges: the same calls as parsing every line whole', () => {
  const tmp = useTempDir('view-reading');

  it.each(CAPTURES)('%s', async (path) => {
    const calls = await indexCalls(path);
    const whole = linesOf(path).map((l) => JSON.parse(l) as Json);
    expect(calls.map((c) => c.call_id)).toEqual(whole.map((c) => c.call_id));
    for (const [i, c] of calls.entries()) {
      const w = whole[i]!;
      expect([c.seq, c.participant_id, c.usage, c.tool_refs.map((t) => t.id), c.statuses.execution_status, c.at.line]).toEqual([w.seq, w.participant_id, w.usage.normalized, w.tool_refs.map((t: Json) => t.id), w.execution_status, i + 1]);
      expect(await readCallAt(path, c.at)).toEqual(w);
    }
  });

  it('a line cut short is an error naming file and line; a last line without a newline is read', async () => {
    const lines = linesOf(CAPTURES[0]!);
    const cut = join(tmp.path, 'cut.jsonl');
    writeFileSync(cut, `${lines[0]}\n${lines[1]!.slice(0, 200)}\n${lines[2]}\n`);
    await expect(indexCalls(cut)).rejects.toThrow(`${cut}:2: not a call record`);
    const open = join(tmp.path, 'open.jsonl');
    writeFileSync(open, `${lines[0]}\n${lines[1]}`);
    const calls = await indexCalls(open);
    expect(calls.length).toBe(2);
    expect(await readCallAt(open, calls[1]!.at)).toEqual(JSON.parse(lines[1]!));
  });
});

describe('readable requests and responses of real captures, every protocol', () => {
  it.each(CAPTURES)('%s: every block known, tool results answer calls made before them, response tool calls are the call\'s tool_refs', (path) => {
    for (const line of linesOf(path)) {
      const call = JSON.parse(line) as Json;
      const req = readableRequest(call.protocol, call.context);
      const res = readableResponse(call.protocol, call.output);
      const parts: ReadablePart[] = [...req.turns.flatMap((t) => t.parts), ...res.parts];
      expect(parts.filter((p) => p.kind === 'other'), `${call.call_id}: blocks the view does not know`).toEqual([]);
      const made = new Set<string>();
      for (const p of req.turns.flatMap((t) => t.parts)) {
        if (p.kind === 'tool_call') made.add(p.id);
        if (p.kind === 'tool_result') expect(made.has(p.id), `${call.call_id}: result for ${p.id}`).toBe(true);
      }
      expect(res.parts.filter((p) => p.kind === 'tool_call').map((p) => (p as { id: string }).id)).toEqual(call.tool_refs.map((t: Json) => t.id));
      expect(req.params).not.toHaveProperty('messages');
    }
  });
});
