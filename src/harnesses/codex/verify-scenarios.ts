import type { HarnessVerify } from '../verify-scenario.js';

export const CODEX_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    { name: 'a single sub-agent (multi_agent v1)', prompt: '[MAIN:wait] use a sub-agent to read notes.txt', agents: 1 },
    { name: 'a single sub-agent (multi_agent v2 warm fork)', prompt: '[MAIN:wait] use a sub-agent to read notes.txt', agents: 1, extraArgs: ['--enable', 'multi_agent_v2'] },
    { name: 'a background sub-agent', skip: { status: 'not_applicable', reason: 'Codex has no background sub-agents: spawn acknowledges and wait_agent returns the result' } },
    { name: 'parallel sub-agents', prompt: '[MAIN:wait-parallel] two sub-agents at once', agents: 2 },
    { name: 'two sub-agents with identical prompts', prompt: '[MAIN:wait-identical] the same task twice', agents: 2 },
    { name: 'a tool error inside a sub-agent', prompt: '[MAIN:wait-error] a failing read', agents: 1 },
    { name: 'sub-agents sharing a file', prompt: '[MAIN:wait-shared] a writer, then a reader', agents: 2 },
    {
      // A user-defined agent role (config.toml [agents.reader] + reader.toml, layered on the child's config):
      // spawn_agent then offers agent_type, and the reader's role turns the shell tool off (and names another
      // model) — its requests offer other tools than the default child's. (web_search, [tools] view_image and
      // [features] goals in a role file change nothing in 0.171.0: measured.)
      name: 'sub-agents with different tool configurations',
      prompt: '[MAIN:wait-tools] a default and a reader sub-agent',
      agents: 2,
      distinctTools: true,
      harnessOptions: { roles: { reader: { description: 'Reads and reports without a shell.', config: 'model = "scripted-reader"\n[features]\nshell_tool = false\n' } } },
    },
    { name: 'nested sub-agents (root, child, grandchild)', prompt: '[MAIN:wait-nested] a sub-agent that delegates again', agents: 2, depth: 2, harnessOptions: { agentsMaxDepth: 2 } },
  ],
  matrix: ['a tool call', 'a single sub-agent (multi_agent v1)', 'a single sub-agent (multi_agent v2 warm fork)', 'parallel sub-agents'],
};
