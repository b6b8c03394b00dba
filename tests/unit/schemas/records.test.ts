import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { checkValue, recordTypes, type RecordTypeName } from '../../../src/schemas/index.js';
import { recordExamples } from '../../support/record-examples.js';

const names = Object.keys(recordTypes) as RecordTypeName[];

describe('record schemas', () => {
  it.each(names)('%s: the example record is valid', (name) => {
    expect(checkValue(recordTypes[name].schema, recordExamples[name])).toEqual([]);
  });

  it.each(names)('%s: an unknown top-level field is an error at its path (typos do not pass)', (name) => {
    const typo = { ...(recordExamples[name] as object), statsu: 'ok' };
    expect(checkValue(recordTypes[name].schema, typo)).toContainEqual({ path: ['statsu'], message: expect.stringContaining('unexpected field') });
  });

  it.each(names)('%s: generates a JSON Schema', (name) => {
    const schema = z.toJSONSchema(recordTypes[name].schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output' });
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.type === 'object' || schema.$ref !== undefined || schema.anyOf !== undefined || schema.oneOf !== undefined).toBe(true); // event schemas are unions by type
  });

  it('call: a missing status is reported with its path', () => {
    const { export_status: _, ...call } = recordExamples.call as Record<string, unknown>;
    expect(checkValue(recordTypes.call.schema, call)).toEqual([{ path: ['export_status'], message: expect.any(String) }]);
  });

  it('relation: an established *_in_context relation needs in_call_id; an unknown one needs a reason', () => {
    const rel = recordExamples.relation as Record<string, unknown>;
    expect(checkValue(recordTypes.relation.schema, { ...rel, in_call_id: null }).map((i) => i.path)).toEqual([['in_call_id']]);
    expect(checkValue(recordTypes.relation.schema, { ...rel, status: 'unknown' }).map((i) => i.path)).toEqual([['reason']]);
  });

  it('manifest: duplicate participants, dangling parents and a complete capture with pending lifecycle are errors', () => {
    const m = recordExamples.manifest as { participants: Record<string, unknown>[] } & Record<string, unknown>;
    const child = { ...m.participants[0], participant_id: 'p-child', role: 'child', parent_participant_id: 'p-missing', depth: 1 };
    const bad = { ...m, participants: [m.participants[0], m.participants[0], child], lifecycle: { status: 'pending', pending_participant_ids: ['p-child'] } };
    expect(checkValue(recordTypes.manifest.schema, bad).map((i) => i.path)).toEqual([
      ['participants', 1, 'participant_id'],
      ['participants', 2, 'parent_participant_id'],
      ['capture_status'],
    ]);
  });

  it('sft: tool calls must be answered exactly once, and assistants keep all four fields', () => {
    const sft = recordExamples.sft as { messages: Record<string, unknown>[] };
    const unanswered = { ...sft, messages: sft.messages.filter((m) => m.role !== 'tool') };
    expect(checkValue(recordTypes.sft.schema, unanswered)).toContainEqual({ path: ['messages', 2], message: "tool call 'toolu_1' has no tool result" });
    const { reasoning_content: _, ...stripped } = sft.messages[4]!;
    const missing = { ...sft, messages: [...sft.messages.slice(0, 4), stripped] };
    expect(checkValue(recordTypes.sft.schema, missing).map((i) => i.path)).toContainEqual(['messages', 4, 'reasoning_content']);
  });

  it('sft-segment: target_start_index must point at an assistant message', () => {
    const seg = { ...(recordExamples['sft-segment'] as object), target_start_index: 0 };
    expect(checkValue(recordTypes['sft-segment'].schema, seg).map((i) => i.path)).toEqual([['target_start_index']]);
  });

  it('actf: steps are contiguous from 1', () => {
    const actf = recordExamples.actf as { steps: Record<string, unknown>[] };
    const bad = { ...actf, steps: [{ ...actf.steps[0], step_id: 2 }] };
    expect(checkValue(recordTypes.actf.schema, bad)).toEqual([{ path: ['steps', 0, 'step_id'], message: 'expected 1 (contiguous from 1), got 2' }]);
  });

  it('task: paths must stay inside the work directory', () => {
    expect(checkValue(recordTypes.task.schema, { id: 't', prompt: 'p', output_dirs: ['../escape'] }).map((i) => i.path)).toEqual([['output_dirs']]);
    expect(checkValue(recordTypes.task.schema, { id: '../t', prompt: 'p' }).map((i) => i.path)).toEqual([['id']]);
  });
});
