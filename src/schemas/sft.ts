import { z } from 'zod';
import { FunctionToolDefinition, NativeToolDefinition } from './actf.js';

/**
 * SFT records (seeds/003 §4.3): only what training needs. An assistant always has role,
 * reasoning_content, content and tool_calls; a tool message only role, tool_call_id and string content.
 */
export const SftToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.enum(['function', 'custom']),
  function: z.strictObject({
    name: z.string().min(1),
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).describe('a JSON object; Codex custom input stays a string'),
  }),
});

export const SftMessage = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content: z.string() }),
  z.strictObject({ role: z.literal('user'), content: z.string() }),
  z.strictObject({
    role: z.literal('assistant'),
    reasoning_content: z.string(),
    content: z.string(),
    tool_calls: z.array(SftToolCall),
  }),
  z.strictObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: z.string() }),
]);
export type SftMessage = z.infer<typeof SftMessage>;

const IMAGE_DATA_URI = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

const sftShape = {
  messages: z.array(SftMessage).min(1),
  tools: z.array(z.union([FunctionToolDefinition, NativeToolDefinition])),
  images: z.array(z.string().regex(IMAGE_DATA_URI, 'expected a base64 image data URI')).optional(),
};

type SftLike = { messages: SftMessage[]; images?: string[] | undefined };

/** Rules every SFT record obeys: tool ids unique and answered once, image placeholders aligned. */
function checkSft(rec: SftLike, ctx: z.RefinementCtx): void {
  const called = new Map<string, number>();
  const answered = new Set<string>();
  rec.messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      m.tool_calls.forEach((c, j) => {
        if (called.has(c.id)) ctx.addIssue({ code: 'custom', path: ['messages', i, 'tool_calls', j, 'id'], message: `tool call id '${c.id}' is not unique` });
        called.set(c.id, i);
      });
    } else if (m.role === 'tool') {
      if (!called.has(m.tool_call_id)) {
        ctx.addIssue({ code: 'custom', path: ['messages', i, 'tool_call_id'], message: `no earlier assistant tool call has id '${m.tool_call_id}'` });
      } else if (answered.has(m.tool_call_id)) {
        ctx.addIssue({ code: 'custom', path: ['messages', i, 'tool_call_id'], message: `tool call '${m.tool_call_id}' has more than one result` });
      }
      answered.add(m.tool_call_id);
    }
  });
  for (const [id, i] of called) {
    if (!answered.has(id)) ctx.addIssue({ code: 'custom', path: ['messages', i], message: `tool call '${id}' has no tool result` });
  }
  const placeholders = rec.messages.reduce((n, m) => n + (m.content.match(/<image>/g)?.length ?? 0), 0);
  const images = rec.images?.length ?? 0;
  if (placeholders !== images) {
    ctx.addIssue({ code: 'custom', path: ['images'], message: `${placeholders} <image> placeholders but ${images} images` });
  }
}

export const SftRecord = z
  .strictObject(sftShape)
  .superRefine(checkSft)
  .describe('trace_SFT.json and each line of run-level sft.jsonl: one linear training record');
export type SftRecord = z.infer<typeof SftRecord>;

export const SftSegment = z
  .strictObject({
    ...sftShape,
    target_start_index: z.number().int().nonnegative().describe('index of the first supervised assistant message'),
  })
  .superRefine((seg, ctx) => {
    checkSft(seg, ctx);
    const target = seg.messages[seg.target_start_index];
    if (!target || target.role !== 'assistant') {
      ctx.addIssue({ code: 'custom', path: ['target_start_index'], message: 'must point at an assistant message' });
    }
  })
  .describe('sft_segments/NNNN.json and each line of sft_segments.jsonl: a compaction segment with a target mask');
export type SftSegment = z.infer<typeof SftSegment>;

/** Where a sub-agent's record comes from: its sample, itself in the agent tree, and the call that spawned it. */
export const SftSubagentSource = z.strictObject({
  sample: z.string().min(1).describe("the sample's directory, relative to the run"),
  task_id: z.string(),
  index: z.number().int().nonnegative(),
  participant_id: z.string().min(1),
  parent_participant_id: z.string().min(1),
  spawn_tool_call_id: z.string().min(1).describe("the parent's tool call that spawned it"),
  depth: z.number().int().positive(),
});

export const SftSubagentRecord = z
  .strictObject({ ...sftShape, subagent: SftSubagentSource })
  .superRefine(checkSft)
  .describe('each line of run-level sft_subagents.jsonl: one completed sub-agent as a linear training record (its own system prompt, tools and messages), and where it comes from');
export type SftSubagentRecord = z.infer<typeof SftSubagentRecord>;
