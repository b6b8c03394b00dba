/**
 * The default script's delegation scenarios: a root that spawns sub-agents ([MAIN:…]) and the sub-agents' own
 * replies ([SUB:…]), each spawn offered as every harness's delegation tool takes it. Kept in the order the script
 * had them: scenario matching depends on it.
 */
import { readNotes } from './tool-alternatives.js';

/** A sub-agent delegation, as each harness's spawn tool takes it. */
const delegate = (prompt: string, background = false, agentType = 'general-purpose') => [
  { name: 'Agent', input: { description: 'Read notes file', prompt, subagent_type: agentType }, input_if_property: { run_in_background: background } },
  { name: 'Task', input: { description: 'Read notes file', prompt, subagent_type: 'general-purpose' } },
  { name: 'task', input: { description: 'Read notes file', prompt, subagent_type: agentType === 'general-purpose' ? 'general' : agentType } }, // OpenCode
  // DeepSeek's dsh: background by default; a foreground child's report is the tool result. Its read-only delegation
  // tool (roller's verify profile) for the read-only agent of [MAIN:tools].
  ...(agentType === 'reader' ? [{ name: 'subagent_reader', input: { description: 'Read notes file', prompt } }] : []),
  { name: 'subagent', when_property: 'prompt', input: { description: 'Read notes file', prompt, run_in_background: background } },
  // Pi's example sub-agent extension: scout may run bash, planner only reads (the read-only agent of [MAIN:tools]).
  { name: 'subagent', input: { agent: agentType === 'reader' ? 'planner' : 'scout', task: prompt } },
  { name: 'sessions_spawn', input: { task: prompt, label: 'reader', ...(agentType === 'reader' ? { agentId: 'reader' } : {}) } }, // OpenClaw
  // Hermes: an orchestrator child may delegate again where its max_spawn_depth allows (else Hermes makes it a leaf); the
  // read-only agent of [MAIN:tools] a leaf, without the delegation tools an orchestrator has.
  { name: 'delegate_task', input: { goal: prompt, context: 'A file in the working directory.' }, input_if_property: { role: agentType === 'reader' ? 'leaf' : 'orchestrator' } },
  { name: 'multi_agent_v1/spawn_agent', input: { message: prompt } },
  // Codex multi_agent v2: namespaced from 0.150 (collaboration/spawn_agent), before that un-namespaced; a task_name.
  { name: 'collaboration/spawn_agent', input: { task_name: 'read_notes', message: prompt } },
  { name: 'spawn_agent', input: { message: prompt }, input_if_property: { task_name: 'read_notes' } },
];

/**
 * Codex's spawn returns at once with the child's id (an acknowledgement), and a root that answered then would abort
 * the child: it waits for the child's result first, as Codex delegations do (v1 by the id, v2 on its mailbox). Other
 * harnesses' spawn results are the child's report: the turn is skipped there.
 */
const codexWaitForChild = {
  if_offered: true,
  tool_calls: [
    [
      { name: 'multi_agent_v1/wait_agent', input: { targets: ['{{last_agent_id}}'] } },
      { name: 'collaboration/wait_agent', input: { timeout_ms: 60000 } },
      { name: 'wait_agent', input: { timeout_ms: 60000 } },
    ],
  ],
};

const spawnAgent = (message: string, extra: Record<string, unknown> = {}) => [{ name: 'multi_agent_v1/spawn_agent', input: { message, ...extra } }];
/** Codex multi-agent v1: a turn that spawns one child (extra: e.g. its agent_type). */
const codexSpawn = (message: string, extra: Record<string, unknown> = {}) => ({ tool_calls: [spawnAgent(message, extra)] });
/** Codex multi-agent v1: a turn that spawns several children in one response. */
const codexSpawnAtOnce = (...messages: string[]) => ({ tool_calls: messages.map((m) => spawnAgent(m)) });
/**
 * Codex multi-agent v1: a turn that waits for one child, by id ('{{last_agent_id}}', '{{agent_id_N}}'). One
 * wait per child: a wait on several returns at the first completion, and a second one on the same ids returns
 * at once (one is final already) — a root that answered then would abort the other child.
 */
const codexWait = (target: string) => ({ tool_calls: [[{ name: 'multi_agent_v1/wait_agent', input: { targets: [target] } }]] });

export const DELEGATION_SCENARIOS = [
    {
      name: 'delegate-single',
      match: '[MAIN:single]',
      turns: [
        { thinking: 'The user wants me to delegate. I will spawn a sub-agent.', text: 'I will delegate this to a sub-agent.', tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.')] },
        codexWaitForChild,
        { thinking: 'The sub-agent reported back. I will summarise.', text: 'Done. Sub-agent report: {{last_report}}' },
      ],
    },
    {
      // A root that answers from the spawn's acknowledgement without waiting (Codex: the child is cut off).
      name: 'delegate-no-wait',
      match: '[MAIN:no-wait]',
      turns: [
        { text: 'I will delegate this to a sub-agent.', tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.')] },
        { text: 'Answered at once: {{last_tool_result}}' },
      ],
    },
    {
      // Claude Code: the Agent result is only a launch acknowledgement; the report arrives later as a
      // <task-notification> user turn, which the third turn answers.
      name: 'delegate-background',
      match: '[MAIN:background]',
      turns: [
        { thinking: 'I will run the sub-agent in the background.', text: 'Starting a background sub-agent.', tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.', true)] },
        { text: 'The sub-agent is running; I will wait for its report.' },
        { thinking: 'The background sub-agent finished.', text: 'Done. Background report: {{last_user_text}}' },
      ],
    },
    {
      // Codex multi-agent: spawn, wait for the child (v1: by the agent_id spawn returned; v2: the mailbox),
      // then answer from what came back.
      name: 'delegate-and-wait',
      match: '[MAIN:wait]',
      turns: [
        {
          thinking: 'I will spawn a sub-agent for this.',
          tool_calls: [
            [
              { name: 'multi_agent_v1/spawn_agent', input: { message: '[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.' } },
              { name: 'collaboration/spawn_agent', input: { task_name: 'read_notes', message: '[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.' } },
              ...delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'),
            ],
          ],
        },
        {
          thinking: 'Now I wait for it.',
          tool_calls: [
            [
              { name: 'multi_agent_v1/wait_agent', input: { targets: ['{{last_agent_id}}'] } },
              { name: 'collaboration/wait_agent', input: { timeout_ms: 60000 } },
            ],
          ],
        },
        { text: 'ROOT-DONE: {{last_user_text}} {{last_tool_result}}' },
      ],
    },
    {
      // Two sub-agents with the very same prompt: only evidence (ids), never text, tells them apart.
      name: 'delegate-identical',
      match: '[MAIN:identical]',
      turns: [
        {
          text: 'Two identical sub-agents.',
          tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'), delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.')],
        },
        { text: 'Done. Reports: {{last_tool_result}}' },
      ],
    },
    {
      name: 'delegate-tool-error',
      match: '[MAIN:tool-error]',
      turns: [
        { text: 'Delegating a task whose tool call fails.', tool_calls: [delegate('[SUB:E] Show the file missing.txt in {{cwd}}.')] },
        { text: 'Done. Sub-agent report: {{last_tool_result}}' },
      ],
    },
    {
      // A child whose model call never answers: the parent's turn ends, the child never does (OpenClaw's drain fails).
      name: 'delegate-hung-child',
      match: '[MAIN:hung-child]',
      turns: [
        { text: 'I will delegate this to a sub-agent.', tool_calls: [delegate('[SUB:H] Read the file notes.txt in {{cwd}}.')] },
        { text: 'Done. Sub-agent report: {{last_tool_result}}' },
      ],
    },
    {
      name: 'sub-agent-hung',
      match: '[SUB:H]',
      stall_first: 1000,
      turns: [{ text: 'never sent' }],
    },
    {
      name: 'sub-agent-error',
      match: '[SUB:E]',
      turns: [
        {
          thinking: 'This file does not exist; the tool will fail.',
          tool_calls: [
            [
              { name: 'Read', input: { file_path: '{{cwd}}/missing.txt' } },
              { name: 'read', when_property: 'file_path', input: { file_path: '{{cwd}}/missing.txt' } }, // DeepSeek
              { name: 'read', input: { filePath: '{{cwd}}/missing.txt' } },
              { name: 'Bash', input: { command: 'cat missing.txt', description: 'Show missing.txt' } },
              { name: 'exec_command', input: { cmd: 'cat missing.txt' } },
            ],
          ],
        },
        { text: 'Sub-agent E: the tool failed: {{last_tool_result}}' },
      ],
    },
    {
      // Codex: two children at once, then a wait for each (their ids from the spawn outputs).
      name: 'codex-parallel',
      match: '[MAIN:wait-parallel]',
      turns: [
        codexSpawnAtOnce('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.', '[SUB:B] List the files in {{cwd}}.'),
        codexWait('{{agent_id_0}}'),
        codexWait('{{agent_id_1}}'),
        { text: 'ROOT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      name: 'codex-identical',
      match: '[MAIN:wait-identical]',
      turns: [
        codexSpawnAtOnce('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.', '[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'),
        codexWait('{{agent_id_0}}'),
        codexWait('{{agent_id_1}}'),
        { text: 'ROOT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      name: 'codex-tool-error',
      match: '[MAIN:wait-error]',
      turns: [
        codexSpawn('[SUB:E] Show the file missing.txt in {{cwd}}.'),
        codexWait('{{last_agent_id}}'),
        { text: 'ROOT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      // Two sub-agents one after the other on the same file: the first writes it, the second reads it.
      name: 'delegate-shared-file',
      match: '[MAIN:shared]',
      turns: [
        { text: 'First a writer.', tool_calls: [delegate('[SUB:W] Write the word HANDOFF into shared.txt in {{cwd}}.')] },
        { text: 'Then a reader.', tool_calls: [delegate('[SUB:R] Read shared.txt in {{cwd}} and report it.')] },
        { text: 'Done. Reader said: {{last_tool_result}}' },
      ],
    },
    {
      name: 'sub-agent-writer',
      match: '[SUB:W]',
      turns: [
        {
          tool_calls: [
            [
              { name: 'Write', input: { file_path: '{{cwd}}/shared.txt', content: 'HANDOFF\n' } },
              { name: 'write', when_property: 'file_path', input: { file_path: '{{cwd}}/shared.txt', content: 'HANDOFF\n' } }, // DeepSeek
              { name: 'Bash', input: { command: "printf 'HANDOFF\\n' > shared.txt", description: 'Write shared.txt' } },
              { name: 'exec_command', input: { cmd: "printf 'HANDOFF\\n' > shared.txt" } },
            ],
          ],
        },
        { text: 'Sub-agent W wrote shared.txt.' },
      ],
    },
    {
      name: 'sub-agent-reader',
      match: '[SUB:R]',
      turns: [
        {
          tool_calls: [
            [
              { name: 'Read', input: { file_path: '{{cwd}}/shared.txt' } },
              { name: 'read', when_property: 'file_path', input: { file_path: '{{cwd}}/shared.txt' } }, // DeepSeek
              { name: 'Bash', input: { command: 'cat shared.txt', description: 'Show shared.txt' } },
              { name: 'exec_command', input: { cmd: 'cat shared.txt' } },
            ],
          ],
        },
        { text: 'Sub-agent R read: {{last_tool_result}}' },
      ],
    },
    {
      // A spawn the harness refuses (an agent type it does not have): no sub-agent runs, the call is listed.
      name: 'delegate-refused',
      match: '[MAIN:refused]',
      turns: [
        { text: 'Delegating to an agent type that does not exist.', tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.', false, 'no-such-agent')] },
        { text: 'The spawn was refused: {{last_tool_result}}' },
      ],
    },
    {
      // root -> child -> grandchild: the child delegates in turn.
      name: 'delegate-nested',
      match: '[MAIN:nested]',
      turns: [
        { text: 'Delegating to a sub-agent that delegates again.', tool_calls: [delegate('[SUB:N] Delegate to a sub-agent: [SUB:A] read notes.txt in {{cwd}}.')] },
        { text: 'Done. Nested report: {{last_tool_result}}' },
      ],
    },
    {
      // Claude Code: a finished child resumed by a second delegation, SendMessage (a deferred tool loaded first
      // through ToolSearch) to the agent id the first delegation's result named.
      name: 'delegate-resume',
      match: '[MAIN:resume]',
      turns: [
        { text: 'Delegating to a sub-agent.', tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.')] },
        { tool_calls: [[{ name: 'ToolSearch', input: { query: 'select:SendMessage' } }]] },
        { text: 'Asking the same sub-agent again.', tool_calls: [[{ name: 'SendMessage', input: { to: '{{last_agent_id}}', summary: 'Read notes again', message: '[SUB:A] Read the file notes.txt in {{cwd}} once more and report its first line.' } }]] },
        { text: 'Done. Resumed report: {{last_tool_result}}' },
      ],
    },
    {
      // A child that calls a delegation tool it was not given (OpenCode's children have no `task`): the harness
      // refuses the grandchild, which must stay a refused tool call, never a participant.
      name: 'delegate-beyond-depth',
      match: '[MAIN:beyond-depth]',
      turns: [
        { text: 'Delegating to a sub-agent that tries to delegate again.', tool_calls: [delegate('[SUB:G] Delegate again: [SUB:A] read notes.txt in {{cwd}}.')] },
        { text: 'Done. Report: {{last_tool_result}}' },
      ],
    },
    {
      name: 'sub-agent-beyond-depth',
      match: '[SUB:G]',
      turns: [
        // OpenCode's task even where the child is not offered it (a model naming a tool it was not given).
        { tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.').map((a) => (a.name === 'task' ? { ...a, even_if_absent: true } : a))] },
        { text: 'Sub-agent G got: {{last_tool_result}}' },
      ],
    },
    {
      name: 'sub-agent-nesting',
      match: '[SUB:N]',
      turns: [
        { tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.')] },
        { text: 'Sub-agent N relays: {{last_tool_result}}' },
      ],
    },
    {
      name: 'codex-shared-file',
      match: '[MAIN:wait-shared]',
      turns: [
        codexSpawn('[SUB:W] Write the word HANDOFF into shared.txt in {{cwd}}.'),
        codexWait('{{last_agent_id}}'),
        codexSpawn('[SUB:R] Read shared.txt in {{cwd}} and report it.'),
        codexWait('{{last_agent_id}}'),
        { text: 'ROOT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      // Codex: a default child and one of the user-defined role "reader" (config.toml [agents.reader], whose
      // role file turns the shell tool off): the two are offered different tools. One after the other.
      name: 'codex-tool-configs',
      match: '[MAIN:wait-tools]',
      turns: [
        codexSpawn('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'),
        codexWait('{{last_agent_id}}'),
        codexSpawn('[SUB:T] Answer from what you know, without tools.', { agent_type: 'reader' }),
        codexWait('{{last_agent_id}}'),
        { text: 'ROOT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      // Codex root -> child -> grandchild ([agents] max_depth = 2): the child spawns and waits in turn.
      name: 'codex-nested',
      match: '[MAIN:wait-nested]',
      turns: [
        codexSpawn('[SUB:CN] Delegate to a sub-agent: [SUB:A] read notes.txt in {{cwd}}.'),
        codexWait('{{last_agent_id}}'),
        { text: 'ROOT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      name: 'codex-sub-agent-nesting',
      match: '[SUB:CN]',
      turns: [
        codexSpawn('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'),
        codexWait('{{last_agent_id}}'),
        { text: 'Sub-agent CN relays: {{last_tool_result}}' },
      ],
    },
    {
      name: 'sub-agent-no-tools',
      match: '[SUB:T]',
      turns: [{ text: 'Sub-agent T: answered without tools.' }],
    },
    {
      // Two sub-agents of different types: a general-purpose one and a read-only custom agent ("reader",
      // defined by the project). Each must keep its own tools, not the parent's.
      name: 'delegate-tool-configs',
      match: '[MAIN:tools]',
      turns: [
        {
          text: 'Two sub-agents with different tools.',
          tool_calls: [delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'), delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.', false, 'reader')],
        },
        { text: 'Done. Reports: {{last_tool_result}}' },
      ],
    },
    {
      name: 'delegate-parallel',
      match: '[MAIN:parallel]',
      turns: [
        {
          thinking: 'Two independent tasks: I will delegate both at once.',
          text: 'I will delegate two tasks in parallel.',
          tool_calls: [
            delegate('[SUB:A] Read the file notes.txt in {{cwd}} and report its first line.'),
            delegate('[SUB:B] List the files in {{cwd}} and report how many there are.'),
          ],
        },
        { thinking: 'Both sub-agents reported back.', text: 'Done. Sub-agent reports: {{last_tool_result}}' },
      ],
    },
    {
      name: 'sub-agent-b',
      match: '[SUB:B]',
      turns: [
        {
          thinking: 'Sub-agent B: list the directory.',
          tool_calls: [
            [
              { name: 'Bash', input: { command: 'ls -la', description: 'List files' } },
              { name: 'bash', input: { command: 'ls -la', description: 'List files' } },
              { name: 'exec_command', input: { cmd: 'ls -la' } },
              { name: 'shell', input: { command: ['bash', '-lc', 'ls -la'] } },
            ],
          ],
        },
        { text: 'Sub-agent B result: {{last_tool_result}}' },
      ],
    },
    {
      // Codex multi-agent v2: the child's task is an agent_message whose payload is encrypted; its plain
      // header is what identifies it.
      name: 'sub-agent-v2',
      match: 'Message Type: NEW_TASK\nTask name: /root/read_notes',
      turns: [{ thinking: 'Child: read the notes.', tool_calls: [readNotes] }, { text: 'Sub-agent result: {{last_tool_result}}' }],
    },
    {
      name: 'sub-agent-a',
      match: '[SUB:A]',
      turns: [{ thinking: 'Sub-agent A: I need to use a tool first.', tool_calls: [readNotes] }, { text: 'Sub-agent A result: {{last_tool_result}}' }],
    },
];
