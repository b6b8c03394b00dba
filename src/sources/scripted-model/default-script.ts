import { Script } from './script.js';
import { DELEGATION_SCENARIOS } from './delegation-scenarios.js';
import { DIALOGUE_SCENARIOS } from './dialogue-scenarios.js';
import { shell } from './tool-alternatives.js';

/**
 * The embedded script: the default model of `roller collect` and `roller scripted-model`. Each scenario
 * offers its tool calls as alternatives per harness (the first one a request offers is called), so one
 * script drives every harness; tags in the prompt ([MAIN:…], [SUB:…]) pick the scenario.
 */
export const DEFAULT_SCRIPT: Script = Script.parse({
  max_requests: 200,
  scenarios: [
    {
      // A turn that takes its time in a tool (a long build): timeouts across a sample's prompts.
      name: 'sleep',
      match: '[SLEEP]',
      turns: [{ text: 'Waiting.', tool_calls: [shell('sleep 10', 'Wait ten seconds')] }, { text: 'Waited.' }],
    },
    {
      // A task's own probe.sh, run as the agent's tool: what an agent can reach (environment, /proc, config files).
      name: 'probe',
      match: '[PROBE]',
      turns: [{ text: 'Running probe.sh.', tool_calls: [[...shell('sh probe.sh 2>&1', 'Run probe.sh'), { name: 'bash', input: { command: 'sh probe.sh 2>&1', description: 'Run probe.sh' } }]] }, { text: 'Probe done: {{last_tool_result}}' }],
    },
    { name: 'stall-once', match: '[STALL-ONCE]', stall_first: 1, turns: [{ text: 'This time the model answered.' }] },
    {
      name: 'symlink',
      match: '[SYMLINK]',
      turns: [
        {
          text: 'Writing a file and a link.',
          tool_calls: [shell("mkdir -p out && printf 'safe\\n' > out/safe.txt && ln -sf /etc/hostname out/link", 'Write a file and a link')],
        },
        { text: 'Done.' },
      ],
    },
    {
      // An output directory reached through a link to a place outside the work directory (a sibling of it).
      name: 'symlink-dir',
      match: '[SYMLINK-DIR]',
      turns: [
        {
          text: 'Linking a directory from outside.',
          tool_calls: [shell("mkdir -p ../outside/sub && printf 'outside\\n' > ../outside/sub/secret.txt && ln -sfn ../outside link", 'Link a directory from outside')],
        },
        { text: 'Done.' },
      ],
    },
    {
      // A long task that the harness compacts part-way (its context window made small by the model config):
      // four tool turns, then an answer. The compaction call is answered by 'compact-summary', whose summary
      // carries the tag that 'compact-after' continues from.
      name: 'compact',
      match: '[COMPACT]',
      turns: [
        { thinking: 'First the first line.', text: 'Step one.', tool_calls: [shell('head -n 1 notes.txt', 'Show the first line')] },
        { thinking: 'Then the last line.', text: 'Step two.', tool_calls: [shell('tail -n 1 notes.txt', 'Show the last line')] },
        { text: 'Step three.', tool_calls: [shell('wc -l notes.txt', 'Count the lines')] },
        { text: 'All steps done.' },
      ],
    },
    {
      // Claude Code's compaction request (its summary prompt is the latest user text).
      name: 'compact-summary',
      match: 'Your task is to create a detailed summary',
      turns: [{ text: '<summary>[COMPACT:after] The user asked for notes.txt to be checked in several steps; the first lines were shown.</summary>' }],
    },
    {
      // After compaction the harness keeps the latest turns verbatim after the summary: one more tool turn at most.
      name: 'compact-after',
      match: '[COMPACT:after]',
      turns: [
        { text: 'Continuing after the summary.', tool_calls: [shell('wc -c notes.txt', 'Count the bytes')] },
        { text: 'COMPACT-DONE: {{last_tool_result}}' },
      ],
    },
    {
      // A long session (benchmarks: large, realistic archives): 40 tool turns each reading the same file, so
      // every request carries all earlier results and request bodies grow turn by turn, as in real work.
      name: 'long',
      match: '[LONG]',
      turns: [
        ...Array.from({ length: 40 }, (_, i) => ({
          text: `Reading big.txt, pass ${i + 1}.`,
          tool_calls: [shell('cat big.txt', `Show big.txt (pass ${i + 1})`)],
        })),
        { text: 'Long session done.' },
      ],
    },
    {
      // OpenClaw (Gateway): a sub-agent's completion comes back to the parent as a user turn of its own.
      name: 'openclaw-completion',
      match: 'A background task completed.',
      turns: [{ text: 'Done. Background report: {{last_user_text}}' }],
    },
    ...DIALOGUE_SCENARIOS,
    // A provider failing, as the tests of upstream failures need it (every request of the conversation fails the same way).
    { name: 'upstream-429', match: '[UPSTREAM-429]', fail: { status: 429, message: 'scripted model: rate limit reached for requests', retry_after_s: 1 }, turns: [{ text: 'never sent' }] },
    { name: 'upstream-500', match: '[UPSTREAM-500]', fail: { status: 500, message: 'scripted model: the server had an error while processing your request', retry_after_s: 0 }, turns: [{ text: 'never sent' }] },
    { name: 'upstream-echo-key', match: '[UPSTREAM-ECHO-KEY]', echo_key: true, turns: [{ text: '{KEY} is the key you sent.' }] },
    { name: 'upstream-cut', match: '[UPSTREAM-CUT]', cut_stream: true, turns: [{ text: 'This answer is cut half-way through by a connection reset, so the harness never sees its end.' }] },
    // The final answer cut at the output-token limit (a trajectory that must not become training data).
    { name: 'cut-answer', match: '[CUT-ANSWER]', turns: [{ text: 'The answer to your question is that the', at_limit: true }] },
    // Reasoning the provider redacted (Messages redacted_thinking): opaque data a trainer must never see as text.
    {
      name: 'redacted-thinking',
      match: '[REDACTED-THINKING]',
      turns: [{ redacted_thinking: 'RVRPUEFRVUUtUkVEQUNURUQtVEhJTktJTkctREFUQQ==', thinking: 'The visible part of the reasoning.', text: 'Done, with part of my reasoning redacted.' }],
    },
    { name: 'hello', match: '[HELLO]', turns: [{ thinking: 'A greeting is all that is asked.', text: 'Hello from the scripted model.' }] },
    {
      name: 'write-file',
      match: '[WRITE]',
      turns: [
        {
          thinking: 'I will write the file.',
          text: 'Writing hello.txt.',
          tool_calls: [
            [
              { name: 'Write', input: { file_path: '{{cwd}}/hello.txt', content: 'hi\n' } },
              // OpenCode's write takes filePath, Pi's path, DeepSeek's file_path.
              { name: 'write', input: { content: 'hi\n' }, input_if_property: { filePath: '{{cwd}}/hello.txt', path: '{{cwd}}/hello.txt', file_path: '{{cwd}}/hello.txt' } },
              { name: 'write_file', input: { path: '{{cwd}}/hello.txt', content: 'hi\n' } }, // Hermes
              { name: 'Bash', input: { command: "printf 'hi\\n' > hello.txt", description: 'Write hello.txt' } },
              { name: 'bash', input: { command: "printf 'hi\\n' > hello.txt", description: 'Write hello.txt' } },
              { name: 'exec_command', input: { cmd: "printf 'hi\\n' > hello.txt" } },
              { name: 'shell', input: { command: ['bash', '-lc', "printf 'hi\\n' > hello.txt"] } },
            ],
          ],
        },
        { text: 'Done: hello.txt written.' },
      ],
    },
    ...DELEGATION_SCENARIOS,
  ],
  fallback: { text: 'Scripted reply.' },
});
