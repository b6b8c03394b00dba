/** Tool calls as each harness's tools take them: one alternative list per call (the first one a request offers is called). */

/**
 * A shell command, as Claude Code (Bash), Codex (exec_command), DeepSeek's dsh (bash, with timeoutMs), Hermes
 * (terminal), and Pi's and OpenCode's bash (a description where the schema takes one) take it: one alternative list.
 */
export const shell = (command: string, description: string) => [
  { name: 'Bash', input: { command, description } },
  { name: 'exec_command', input: { cmd: command } },
  { name: 'bash', when_property: 'timeoutMs', input: { command, description } },
  { name: 'terminal', input: { command } }, // Hermes
  { name: 'bash', input: { command }, input_if_property: { description } },
];

export const readNotes = [
  { name: 'Read', input: { file_path: '{{cwd}}/notes.txt' } },
  // OpenCode's read takes filePath, OpenClaw's path, DeepSeek's file_path: whichever the offered schema has.
  { name: 'read', input: {}, input_if_property: { filePath: '{{cwd}}/notes.txt', path: '{{cwd}}/notes.txt', file_path: '{{cwd}}/notes.txt' } },
  { name: 'read_file', input: { path: '{{cwd}}/notes.txt' } }, // Hermes
  { name: 'Bash', input: { command: 'head -n 1 notes.txt', description: 'Show the first line' } },
  { name: 'bash', input: { command: 'head -n 1 notes.txt', description: 'Show the first line' } },
  { name: 'exec_command', input: { cmd: 'head -n 1 notes.txt' } },
  { name: 'shell', input: { command: ['bash', '-lc', 'head -n 1 notes.txt'] } },
];
