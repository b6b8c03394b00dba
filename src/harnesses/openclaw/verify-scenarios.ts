import type { HarnessVerify } from '../verify-scenario.js';

// OpenClaw through its Gateway (roller's default): sessions_spawn acknowledges at once and the child's completion
// comes back as an announcement run, so every sub-agent here is a background one.
export const OPENCLAW_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    { name: 'a single sub-agent', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', agents: 1, background: true },
    { name: 'parallel sub-agents', prompt: '[MAIN:parallel] delegate two tasks', agents: 2, background: true },
    { name: 'two sub-agents with identical prompts', prompt: '[MAIN:identical] delegate twice', agents: 2, background: true },
    { name: 'a tool error inside a sub-agent', prompt: '[MAIN:tool-error] delegate a failing read', agents: 1, background: true },
    { name: 'sub-agents sharing a file', prompt: '[MAIN:shared] a writer, then a reader', agents: 2, background: true },
    { name: 'nested sub-agents (root, child, grandchild)', prompt: '[MAIN:nested] Delegate to a sub-agent that delegates again.', agents: 2, depth: 2, background: true },
    {
      // A second agent, "reader", that may not run commands or change files; main spawns it by agentId, and a
      // default child of its own: the reader's requests offer fewer tools.
      name: 'sub-agents with different tool configurations',
      prompt: '[MAIN:tools] a default and a read-only sub-agent',
      agents: 2,
      distinctTools: true,
      background: true,
      harnessOptions: { agents: [{ id: 'reader', description: 'Reads files and reports their content. Read-only.', tools: { deny: ['exec', 'process', 'write', 'edit', 'apply_patch'] } }] },
    },
  ],
  matrix: ['a tool call', 'a single sub-agent'],
};
