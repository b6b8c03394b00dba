import type { HarnessVerify } from '../verify-scenario.js';

// Hermes's one-shot mode (hermes -z): delegate_task children run synchronously in its process, their reports the tool
// result. A child's session names its parent session, not the call that spawned it: one delegate_task call binds its
// child; several children of one parent stay unbound (recorded unknown, never guessed).
export const HERMES_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    { name: 'a single sub-agent', prompt: '[MAIN:single] Use a sub-agent to read notes.txt.', agents: 1 },
    { name: 'parallel sub-agents (spawns unbound: recorded unknown)', prompt: '[MAIN:parallel] delegate two tasks', agents: 2, unboundSpawns: 2 },
    {
      name: 'two sub-agents with identical prompts',
      skip: { status: 'not_applicable', reason: 'Hermes keeps the first of identical tool calls in one response and drops the rest (run_agent._deduplicate_tool_calls): two identical delegate_task calls run one child' },
    },
    { name: 'a tool error inside a sub-agent', prompt: '[MAIN:tool-error] delegate a failing read', agents: 1 },
    { name: 'sub-agents sharing a file (spawns unbound: recorded unknown)', prompt: '[MAIN:shared] a writer, then a reader', agents: 2, unboundSpawns: 2 },
    // Hermes nests only past its default depth of one: max_spawn_depth 2, and the child spawned as an orchestrator.
    { name: 'nested sub-agents (root, child, grandchild)', prompt: '[MAIN:nested] Delegate to a sub-agent that delegates again.', agents: 2, depth: 2, harnessOptions: { maxSpawnDepth: 2 } },
    {
      name: 'a background sub-agent',
      skip: { status: 'not_applicable', reason: "Hermes's one-shot mode (hermes -z, how roller runs it) runs every delegation synchronously: its tool result says background=true is not available there" },
    },
    {
      // The model names no toolsets for a child (Hermes's children inherit the parent's); its role does: an orchestrator
      // keeps the delegation tools, a leaf has none. Both are spawned by one response: unbound.
      name: 'sub-agents with different tool configurations (spawns unbound: recorded unknown)',
      prompt: '[MAIN:tools] a default and a read-only sub-agent',
      agents: 2,
      unboundSpawns: 2,
      distinctTools: true,
      harnessOptions: { maxSpawnDepth: 2 },
    },
  ],
  matrix: ['a tool call', 'a single sub-agent'],
};
