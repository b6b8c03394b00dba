import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { formatJsonPath } from '../../core/json-locate.js';

/** A tool the script wants to call: the first alternative the request offers is used. */
const ToolChoice = z.strictObject({
  name: z.string().min(1).describe('tool name as offered; "namespace/name" for a Responses namespace tool'),
  input: z.union([z.record(z.string(), z.unknown()), z.string()]).describe('arguments; a string for custom (freeform) tools; {{cwd}}, {{last_tool_result}}, {{last_report}} (the last tool result or another agent\'s message), {{last_user_text}}, {{last_agent_id}} and {{agent_id_N}} (the N-th spawned agent, from 0) are filled in; "{{agent_ids}}" alone becomes the list'),
  input_if_property: z.record(z.string(), z.unknown()).optional().describe('added to input only when the tool schema has that property'),
  when_property: z.string().min(1).optional().describe('this alternative only when the offered schema has that property (two harnesses\' tools of one name that take different arguments)'),
  even_if_absent: z.boolean().optional().describe('called when the request does not offer it either (a model naming a tool it was not given), as the last resort'),
});

const Turn = z.strictObject({
  thinking: z.string().optional(),
  redacted_thinking: z.string().optional().describe("Messages only: a redacted_thinking block with this opaque data before the answer (what Anthropic sends when a model's reasoning is flagged)"),
  text: z.string().optional(),
  tool_calls: z.array(z.array(ToolChoice).min(1)).optional().describe('each entry: alternatives, the first offered one is called'),
  if_offered: z.boolean().optional().describe("this turn only where the request offers one of its tools; elsewhere the scenario goes on as if it were not there (Codex's wait after a spawn, which other harnesses' spawns do not need)"),
  at_limit: z.boolean().optional().describe("the answer ends at the output-token limit (Messages stop_reason max_tokens, Chat finish_reason length, Responses status incomplete): a cut-off answer, as a real model's is"),
});
export type ScriptTurn = z.infer<typeof Turn>;

const Scenario = z.strictObject({
  name: z.string().min(1),
  match: z.string().min(1).describe('a tag looked for in user messages; the latest user message holding any tag picks the scenario'),
  match_in: z
    .enum(['user', 'system'])
    .default('user')
    .describe("system: the tag is looked for in the system prompt, and such a scenario wins over any user message's (a user simulator: its instructions name the scenario, the dialogue it reads may quote anything); turn k answers the k-th call of the whole conversation"),
  turns: z.array(Turn).min(1).describe('turn k answers the k-th model call after that user message'),
  stall_first: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('the first N requests of this scenario, counted per server, get no answer at all (a hung model call: the harness waits until roller times the sample out; for retry tests)'),
  fail: z
    .strictObject({
      status: z.number().int().min(400).max(599),
      message: z.string().optional(),
      retry_after_s: z.number().int().nonnegative().optional().describe('sent as retry-after'),
    })
    .optional()
    .describe("every request of this scenario is answered with this HTTP error in the protocol's error shape (a provider's 429, 500, …)"),
  cut_stream: z.boolean().optional().describe('every streamed answer of this scenario stops half-way and the connection is reset (an upstream cut mid-answer)'),
  echo_key: z
    .boolean()
    .optional()
    .describe("the answer's text echoes the key the request carried (a careless upstream): JSON-\\u-escaped on the wire, URL-encoded, in base64, and its last 16 characters; {KEY} at the start of the turn's text marks where (a streamed text goes in pieces of 24 characters: it must not be cut)"),
});

export const Script = z
  .strictObject({
    max_requests: z.number().int().positive().default(200).describe('requests answered before the server refuses with 429 (runaway guard)'),
    scenarios: z.array(Scenario),
    fallback: Turn.describe('the reply to anything no scenario matches (titles, probes, ...)'),
  })
  .describe('a scripted model: replies decided from the conversation itself');
export type Script = z.infer<typeof Script>;

export async function loadScript(path: string): Promise<Script> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (cause) {
    throw new RollerError(ErrorCode.SCRIPT_INVALID, `${path}: cannot read the script (${(cause as Error).message})`, { cause });
  }
  const result = Script.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${formatJsonPath(i.path as (string | number)[])}: ${i.message}`).join('; ');
    throw new RollerError(ErrorCode.SCRIPT_INVALID, `${path}: not a valid script: ${issues}`);
  }
  return result.data;
}
