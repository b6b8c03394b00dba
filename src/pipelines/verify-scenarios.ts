import { PI_SUBAGENT_PROFILE } from '../harnesses/pi/adapter.js';
import type { OpenClawAgent } from '../harnesses/openclaw/launch.js';

/**
 * seeds/000's common acceptance, per harness, as `roller verify` runs it: each scenario's scripted prompt and what
 * its run must show. A scenario a harness cannot express says why (not_applicable only where the seed says so).
 */

/** The harnesses with acceptance scenarios (SCENARIOS). */
export type VerifyHarness = 'claude-code' | 'codex' | 'opencode' | 'pi' | 'openclaw' | 'deepseek';
export type ScenarioStatus = 'pass' | 'fail' | 'not_applicable' | 'not_run';

export interface ScenarioResult {
  scenario: string;
  status: ScenarioStatus;
  reason: string;
  seconds: number;
}

export interface Scenario {
  name: string;
  /** The script tag that drives it; absent: not runnable here, with the reason. */
  prompt?: string;
  agents?: number;
  background?: boolean;
  /** The deepest sub-agent's depth, where the scenario is about nesting. */
  depth?: number;
  /** Files created in the work directory first (e.g. a project's custom agent definitions). */
  files?: Record<string, string>;
  /**
   * Children whose spawning call the native files cannot name (dsh: several foreground sub-agents of one parent):
   * their spawn relation must be unknown with its reason, never a guess; the others are checked as usual.
   */
  unboundSpawns?: number;
  /** The sub-agents' requests must carry tool lists of their own: different from each other's. */
  distinctTools?: boolean;
  extraArgs?: string[];
  /** Codex agent roles written to its config (see CodexLaunch.roles). */
  codexRoles?: Record<string, { description: string; config: string }>;
  /** Codex `[agents] max_depth`. */
  codexMaxDepth?: number;
  /** OpenClaw agents beside main, each with its own tool policy (see OpenClawAgent). */
  openclawAgents?: OpenClawAgent[];
  /** dsh: roller's read-only delegation tool `subagent_reader` beside `subagent` (see deepSeekPlan). */
  dshReaderTool?: boolean;
  /** A harness profile the runner applies (Pi's sub-agent example extension). */
  profile?: string;
  skip?: { status: 'not_applicable' | 'not_run'; reason: string };
}

/** The common acceptance of seeds/000, per harness. A scenario a harness cannot express is not_applicable. */
export const SCENARIOS: Record<VerifyHarness, Scenario[]> = {
  'claude-code': [
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
  codex: [
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
      codexRoles: { reader: { description: 'Reads and reports without a shell.', config: 'model = "scripted-reader"\n[features]\nshell_tool = false\n' } },
    },
    { name: 'nested sub-agents (root, child, grandchild)', prompt: '[MAIN:wait-nested] a sub-agent that delegates again', agents: 2, depth: 2, codexMaxDepth: 2 },
  ],
  opencode: [
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
  // OpenClaw through its Gateway (roller's default): sessions_spawn acknowledges at once and the child's completion
  // comes back as an announcement run, so every sub-agent here is a background one.
  openclaw: [
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
      openclawAgents: [{ id: 'reader', description: 'Reads files and reports their content. Read-only.', tools: { deny: ['exec', 'process', 'write', 'edit', 'apply_patch'] } }],
    },
  ],
  pi: [
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
  // dsh's headless profile (the seed's sdk-minimal profile, which has no delegation, does not install as published:
  // docs/harness-notes/deepseek.md). Its foreground sub-agents return their report as the tool result; a child's log
  // names its parent session but not the call that started it, so siblings of one parent stay unbound.
  deepseek: [
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
      dshReaderTool: true,
    },
  ],
};
