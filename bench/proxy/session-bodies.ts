/**
 * Realistic requests: every client connection is an agent session whose conversation grows by a turn per
 * request (each turn unique), with the cache breakpoint moved to the newest message as Claude Code does,
 * and the system prompt and tools after the messages. Sessions restart after TURNS turns; bodies average
 * about 20 KB. Every target gets the same bodies in the same order.
 */
export const TURNS = 24;
const TOOLS = Array.from({ length: 8 }, (_, i) => ({ name: `tool_${i}`, description: 'A tool the agent can call. '.repeat(6), input_schema: { type: 'object', properties: { arg: { type: 'string' } } } }));

/** The TURNS request bodies of one session. */
export function sessionBodies(session: number): Buffer[] {
  return Array.from({ length: TURNS }, (_, turn) => {
    const messages = Array.from({ length: turn + 1 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: [{ type: 'text', text: `Session ${session} turn ${i}: ${'file contents and tool output '.repeat(50)}`, ...(i === turn ? { cache_control: { type: 'ephemeral' } } : {}) }],
    }));
    return Buffer.from(JSON.stringify({ model: 'bench', messages, system: 'You are a coding agent. '.repeat(40), tools: TOOLS, max_tokens: 4096, stream: true }));
  });
}
