import type { HarnessVerify } from '../verify-scenario.js';
import { PI_SUBAGENT_PROFILE } from './profile.js';

export const PI_VERIFY: HarnessVerify = {
  scenarios: [
    { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
    { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
    // seeds/000: Pi's bundled profile has no delegation tool (not_available_in_bundled_profile), so its sub-agent tests are
    // not_applicable; roller's opt-in profile with Pi's example sub-agent extension runs those the extension can express.
    { name: 'a single sub-agent (example extension)', prompt: '[MAIN:single] Use the subagent tool to read notes.txt.', agents: 1, profile: PI_SUBAGENT_PROFILE },
    { name: 'parallel sub-agents (example extension)', prompt: '[MAIN:parallel] delegate two tasks', agents: 2, profile: PI_SUBAGENT_PROFILE },
    { name: 'two sub-agents with identical prompts (example extension)', prompt: '[MAIN:identical] delegate twice', agents: 2, profile: PI_SUBAGENT_PROFILE },
    { name: 'a tool error inside a sub-agent (example extension)', prompt: '[MAIN:tool-error] delegate a failing read', agents: 1, profile: PI_SUBAGENT_PROFILE },
    { name: 'sub-agents sharing a file (example extension)', prompt: '[MAIN:shared] a writer, then a reader', agents: 2, profile: PI_SUBAGENT_PROFILE },
    { name: 'sub-agents with different tool configurations (example extension: scout, read-only planner)', prompt: '[MAIN:tools] a scout and a read-only planner', agents: 2, distinctTools: true, profile: PI_SUBAGENT_PROFILE },
    ...['a background sub-agent', 'nested sub-agents'].map((name) => ({
      name,
      skip: { status: 'not_applicable' as const, reason: "seeds/000: Pi's bundled profile has no delegation tool (not_available_in_bundled_profile), and the example extension runs each sub-agent in the foreground with no subagent tool of its own" },
    })),
  ],
  matrix: ['a tool call', 'a single sub-agent (example extension)'],
};
