import type { HarnessVerify } from '../verify-scenario.js';

export const CLAUDE_CODE_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    { name: 'a single sub-agent', prompt: '[MAIN:single] delegate: read notes.txt', agents: 1 },
    { name: 'parallel sub-agents', prompt: '[MAIN:parallel] delegate two tasks', agents: 2 },
    { name: 'two sub-agents with identical prompts', prompt: '[MAIN:identical] delegate twice', agents: 2 },
    { name: 'a tool error inside a sub-agent', prompt: '[MAIN:tool-error] delegate a failing read', agents: 1 },
    { name: 'a background sub-agent', prompt: '[MAIN:background] delegate in the background', agents: 1, background: true },
    { name: 'sub-agents sharing a file', prompt: '[MAIN:shared] a writer, then a reader', agents: 2 },
    {
      name: 'sub-agents with different tool configurations',
      prompt: '[MAIN:tools] a general-purpose and a read-only sub-agent',
      agents: 2,
      distinctTools: true,
      files: {
        '.claude/agents/reader.md': '---\nname: reader\ndescription: Reads files and reports their content. Read-only.\ntools: Read\n---\nYou read the file you are asked about and report its first line. You never change anything.\n',
      },
    },
    { name: 'nested sub-agents (root, child, grandchild)', prompt: '[MAIN:nested] delegate to a delegating sub-agent', agents: 2, depth: 2 },
  ],
  matrix: ['a tool call', 'a single sub-agent', 'parallel sub-agents', 'a background sub-agent'],
};
