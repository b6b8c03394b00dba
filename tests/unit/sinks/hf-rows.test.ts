/**
 * The SFT record as dataset columns and back (sinks/hf-dataset/rows.ts): every field of every role survives, a custom
 * tool's input stays its own string, a function call's arguments are their JSON text; a record the SFT schema forbids
 * (a function call with string arguments) is refused, never written differently. The columns' DuckDB types and Hub
 * features come from one declaration.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duckdbType, hfFeature } from '../../../src/core/parquet/columns.js';
import { SftRecord, SftSegment } from '../../../src/schemas/sft.js';
import { sftRecordOfRow, sftRow } from '../../../src/sinks/hf-dataset/rows.js';

const record = {
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'look at <image>' },
    {
      role: 'assistant',
      reasoning_content: 'thinking',
      content: '',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'Read', arguments: { path: 'a.txt', opts: { lines: [1, 2], deep: null } } } },
        { id: 'c2', type: 'custom', function: { name: 'apply_patch', arguments: '*** Begin Patch\n*** End Patch' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'hi' },
    { role: 'tool', tool_call_id: 'c2', content: 'done' },
    { role: 'assistant', reasoning_content: '', content: 'ok', tool_calls: [] },
  ],
  tools: [{ type: 'function', function: { name: 'Read', description: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }, { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } }],
  images: ['data:image/png;base64,iVBORw0KGgo='],
};

describe('SFT records as dataset rows', () => {
  it('round-trips a record with every role, a function call, a custom tool input and an image', () => {
    const row = sftRow(record as never);
    expect(row.messages[2]!.tool_calls![0]!.function.arguments).toBe(JSON.stringify(record.messages[2]!.tool_calls![0]!.function.arguments));
    expect(row.messages[2]!.tool_calls![1]!.function.arguments).toBe('*** Begin Patch\n*** End Patch');
    expect(row.messages[0]).toEqual({ role: 'system', content: 'sys', reasoning_content: null, tool_calls: null, tool_call_id: null });
    // Through JSON, as the staging file carries it to DuckDB.
    expect(sftRecordOfRow(JSON.parse(JSON.stringify(row)))).toEqual(record);
  });

  it('a segment keeps target_start_index; a record without images has none', () => {
    const { images: _i, ...text } = record;
    const seg = { ...text, messages: text.messages.map((m) => ({ ...m, content: m.content.replace('<image>', '') })), target_start_index: 2 };
    expect(SftSegment.safeParse(seg).success).toBe(true);
    const back = sftRecordOfRow(JSON.parse(JSON.stringify(sftRow(seg as never))));
    expect(back).toEqual(seg);
    expect('images' in back).toBe(false);
  });

  it('any valid plain-text record round-trips (property)', () => {
    const text = fc.string({ maxLength: 40 }).filter((s) => !s.includes('<image>'));
    let checked = 0;
    const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text, text, args), { minLength: 1, maxLength: 4 }), (turns) => {
        const messages: unknown[] = [{ role: 'user', content: 'go' }];
        turns.forEach(([reasoning, content, result, a], i) => {
          messages.push({ role: 'assistant', reasoning_content: reasoning, content, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'T', arguments: a } }] });
          messages.push({ role: 'tool', tool_call_id: `c${i}`, content: result });
        });
        messages.push({ role: 'assistant', reasoning_content: '', content: 'end', tool_calls: [] });
        const rec = { messages, tools: [{ type: 'function', function: { name: 'T', parameters: { type: 'object' } } }] };
        const parsed = SftRecord.safeParse(rec);
        if (!parsed.success) return;
        expect(sftRecordOfRow(JSON.parse(JSON.stringify(sftRow(parsed.data))))).toEqual(JSON.parse(JSON.stringify(parsed.data)));
        checked++;
      }),
      { numRuns: 200 },
    );
    expect(checked).toBeGreaterThan(150);
  });

  it('refuses a function call whose arguments are a string (the schema forbids it; it would come back different)', () => {
    const bad = { ...record, images: undefined, messages: [{ role: 'user', content: 'u' }, { role: 'assistant', reasoning_content: '', content: '', tool_calls: [{ id: 'x', type: 'function', function: { name: 'Read', arguments: '{}' } }] }] };
    expect(() => sftRow(bad as never)).toThrow(/function arguments as a string/);
  });

  it('one declaration gives the DuckDB type and the Hub feature of a column', () => {
    const type = { list: { struct: [['role', 'string'], ['calls', { list: { struct: [['n', 'int64']] } }], ['tags', { list: 'string' }]] } } as const;
    expect(duckdbType(type as never)).toBe('STRUCT("role" VARCHAR, "calls" STRUCT("n" BIGINT)[], "tags" VARCHAR[])[]');
    expect(hfFeature('m', type as never)).toEqual({ name: 'm', list: [{ name: 'role', dtype: 'string' }, { name: 'calls', list: [{ name: 'n', dtype: 'int64' }] }, { name: 'tags', sequence: 'string' }] });
  });
});
