import type { Columns } from '../../core/parquet/columns.js';
import type { SftMessage, SftRecord, SftSegment } from '../../schemas/sft.js';

/**
 * The SFT record as Parquet columns, and back. `messages` is a list of one struct for every role (a field a role
 * does not have is null); a tool call's `arguments` is the JSON text of its object, as OpenAI's chat format and the
 * Hub's chat templates take it (a custom tool's input stays its own string); `tools` is the JSON text of the tools'
 * definitions (JSON Schemas differ per tool: no one Parquet type holds them). Nothing is lost: sftRecordOfRow gives
 * the record back, equal to its line in sft.jsonl.
 */
export const MESSAGE_COLUMNS: Columns = [
  ['role', 'string'],
  ['content', 'string'],
  ['reasoning_content', 'string'],
  ['tool_calls', { list: { struct: [['id', 'string'], ['type', 'string'], ['function', { struct: [['name', 'string'], ['arguments', 'string']] }]] } }],
  ['tool_call_id', 'string'],
];

export const TRAINING_COLUMNS: Columns = [
  ['messages', { list: { struct: MESSAGE_COLUMNS } }],
  ['tools', 'string'],
  ['images', { list: 'string' }],
];

export const SEGMENT_COLUMNS: Columns = [...TRAINING_COLUMNS, ['target_start_index', 'int64']];

export interface MessageRow {
  role: string;
  content: string;
  reasoning_content: string | null;
  tool_calls: { id: string; type: string; function: { name: string; arguments: string } }[] | null;
  tool_call_id: string | null;
}

export interface TrainingRow {
  messages: MessageRow[];
  tools: string;
  images: string[] | null;
  target_start_index?: number;
}

/** A record's training columns; a call whose arguments do not fit its type (which the SFT schema forbids) throws. */
export function sftRow(record: SftRecord | SftSegment): TrainingRow {
  const row: TrainingRow = { messages: record.messages.map(messageRow), tools: JSON.stringify(record.tools), images: record.images ?? null };
  if ('target_start_index' in record) row.target_start_index = record.target_start_index;
  return row;
}

function messageRow(m: SftMessage): MessageRow {
  const row: MessageRow = { role: m.role, content: m.content, reasoning_content: null, tool_calls: null, tool_call_id: null };
  if (m.role === 'assistant') {
    row.reasoning_content = m.reasoning_content;
    row.tool_calls = m.tool_calls.map((c) => {
      const text = typeof c.function.arguments === 'string';
      if (text !== (c.type === 'custom')) throw new Error(`tool call '${c.id}': ${c.type} arguments as a ${text ? 'string' : 'JSON object'}, which an SFT record does not hold`);
      return { id: c.id, type: c.type, function: { name: c.function.name, arguments: text ? (c.function.arguments as string) : JSON.stringify(c.function.arguments) } };
    });
  }
  if (m.role === 'tool') row.tool_call_id = m.tool_call_id;
  return row;
}

/** The record a row holds (its training columns), as sft.jsonl has it. */
export function sftRecordOfRow(row: TrainingRow): SftRecord | SftSegment {
  const messages = row.messages.map((m): SftMessage => {
    switch (m.role) {
      case 'assistant':
        return {
          role: 'assistant',
          reasoning_content: m.reasoning_content ?? '',
          content: m.content,
          tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, type: c.type as 'function' | 'custom', function: { name: c.function.name, arguments: c.type === 'custom' ? c.function.arguments : (JSON.parse(c.function.arguments) as Record<string, unknown>) } })),
        };
      case 'tool':
        return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content };
      default:
        return { role: m.role as 'system' | 'user', content: m.content };
    }
  });
  const record: Record<string, unknown> = { messages, tools: JSON.parse(row.tools) as unknown };
  if (row.images !== null && row.images !== undefined) record.images = row.images;
  if (row.target_start_index !== undefined && row.target_start_index !== null) record.target_start_index = Number(row.target_start_index);
  return record as unknown as SftRecord | SftSegment;
}
