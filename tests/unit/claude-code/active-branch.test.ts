import { describe, expect, it } from 'vitest';
import { activeBranch } from '../../../src/harnesses/claude-code/active-branch.js';
import type { NativeRecord } from '../../../src/harnesses/claude-code/native-session.js';

const rec = (uuid: string, parentUuid: string | null, type: 'user' | 'assistant', content: unknown): NativeRecord => ({
  record: { type, uuid, parentUuid, message: type === 'assistant' ? { id: `msg_${uuid}`, content: content as unknown[] } : { role: 'user', content } },
  file: 'f.jsonl',
  line: 0,
});
const ids = (rs: readonly NativeRecord[]) => rs.map((r) => r.record.uuid as string);

describe('active branch of a Claude Code transcript', () => {
  it('keeps both results of parallel tool calls (a fork that is not a rewind)', () => {
    const records = [
      rec('u1', null, 'user', 'go'),
      rec('a1', 'u1', 'assistant', [{ type: 'tool_use', id: 'tA' }]),
      rec('a2', 'a1', 'assistant', [{ type: 'tool_use', id: 'tB' }]),
      rec('rA', 'a1', 'user', [{ type: 'tool_result', tool_use_id: 'tA' }]),
      rec('rB', 'a2', 'user', [{ type: 'tool_result', tool_use_id: 'tB' }]),
      rec('a3', 'rB', 'assistant', [{ type: 'text', text: 'done' }]),
    ];
    expect(ids(activeBranch(records))).toEqual(ids(records));
  });

  it('drops the branch a rewind abandoned, subtree and all', () => {
    const records = [
      rec('u1', null, 'user', 'start'),
      rec('a1', 'u1', 'assistant', [{ type: 'text', text: 'ok' }]),
      rec('b1u', 'a1', 'user', 'first try'),
      rec('b1a', 'b1u', 'assistant', [{ type: 'text', text: 'x' }]),
      rec('b2u', 'a1', 'user', 'second try'),
      rec('b2a', 'b2u', 'assistant', [{ type: 'text', text: 'y' }]),
    ];
    expect(ids(activeBranch(records))).toEqual(['u1', 'a1', 'b2u', 'b2a']);
  });
});
