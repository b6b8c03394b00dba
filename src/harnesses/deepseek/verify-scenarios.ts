import type { HarnessVerify } from '../verify-scenario.js';

// dsh's headless profile (the seed's sdk-minimal profile, which has no delegation, does not install as published:
// docs/harness-notes/deepseek.md). Its foreground sub-agents return their report as the tool result; a child's log
// names its parent session but not the call that started it, so siblings of one parent stay unbound.
export const DEEPSEEK_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    { name: 'a single sub-agent', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', agents: 1 },
    { name: 'parallel sub-agents (spawns unbound: recorded unknown)', prompt: '[MAIN:parallel] delegate two tasks', agents: 2, unboundSpawns: 2 },
    { name: 'two sub-agents with identical prompts (spawns unbound: recorded unknown)', prompt: '[MAIN:identical] delegate twice', agents: 2, unboundSpawns: 2 },
    { name: 'a tool error inside a sub-agent', prompt: '[MAIN:tool-error] delegate a failing read', agents: 1 },
    { name: 'sub-agents sharing a file (spawns unbound: recorded unknown)', prompt: '[MAIN:shared] a writer, then a reader', agents: 2, unboundSpawns: 2 },
    { name: 'nested sub-agents (root, child, grandchild)', prompt: '[MAIN:nested] Delegate to a sub-agent that delegates again.', agents: 2, depth: 2 },
    // run_in_background: its start names the child ("started subagent <id>"); roller's driver lets it settle and the
    // root answer dsh's notice, whose text names the child too.
    { name: 'a background sub-agent', prompt: '[MAIN:background] delegate in the background', agents: 1, background: true },
    {
      // dsh's subagent tool gives a child the parent's tools: a second tool row of dsh's own dsh-tool-subagent, with a
      // toolFilter (no shell, no writes), spawns the read-only child. Both are foreground spawns of one parent: unbound.
      name: 'sub-agents with different tool configurations (spawns unbound: recorded unknown)',
      prompt: '[MAIN:tools] a default and a read-only sub-agent',
      agents: 2,
      unboundSpawns: 2,
      distinctTools: true,
      harnessOptions: { readerTool: true },
    },
  ],
  matrix: ['a tool call', 'a single sub-agent'],
};
