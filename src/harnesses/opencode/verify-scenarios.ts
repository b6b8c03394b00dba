import type { HarnessVerify } from '../verify-scenario.js';

export const OPENCODE_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    { name: 'a single sub-agent', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', agents: 1 },
    { name: 'parallel sub-agents', prompt: '[MAIN:parallel] delegate two tasks', agents: 2 },
    { name: 'two sub-agents with identical prompts', prompt: '[MAIN:identical] delegate twice', agents: 2 },
    { name: 'a tool error inside a sub-agent', prompt: '[MAIN:tool-error] delegate a failing read', agents: 1 },
    { name: 'a background sub-agent', skip: { status: 'not_applicable', reason: "seeds/000: the pinned OpenCode's task tool has no background parameter" } },
    { name: 'sub-agents sharing a file', prompt: '[MAIN:shared] a writer, then a reader', agents: 2 },
    {
      // A project agent (opencode.json `agent`) that may not write, edit or run commands: its requests offer fewer tools.
      name: 'sub-agents with different tool configurations',
      prompt: '[MAIN:tools] a general and a read-only sub-agent',
      agents: 2,
      distinctTools: true,
      files: { 'opencode.json': `${JSON.stringify({ agent: { reader: { mode: 'subagent', description: 'Reads files and reports their content. Read-only.', tools: { bash: false, write: false, edit: false } } } })}\n` },
    },
    // seeds/000: OpenCode's subagent_depth defaults to 1, so a grandchild is refused; the refusal is kept, no grandchild made up.
    { name: 'nested sub-agents (the grandchild refused by the depth limit)', prompt: '[MAIN:beyond-depth] a sub-agent that tries to delegate again', agents: 1, depth: 1 },
  ],
  matrix: ['a tool call', 'a single sub-agent'],
};
