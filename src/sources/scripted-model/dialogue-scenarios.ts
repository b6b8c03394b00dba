/**
 * The default script's dialogue scenarios: a user simulator's instructions name one (matched in the system prompt),
 * and the faults a Task Agent can be made to hit (a crash, its session store deleted).
 */

/** Walks up from the tool's shell and SIGKILLs the topmost process with this HOME: the harness roller started. */
const CRASH_HARNESS =
  'p=$$; t=; while [ "$p" -gt 1 ]; do if tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null | grep -qxF "HOME=$HOME"; then t=$p; fi; p=$(sed "s/.*) //" /proc/$p/stat | cut -d" " -f2); done; kill -9 $t';

export const DIALOGUE_SCENARIOS = [
    {
      // A user simulator (its instructions name the scenario): two more requests, then the stop marker.
      name: 'user-simulator-three-turns',
      match: '[SIM:three]',
      match_in: 'system',
      turns: [{ text: '[HELLO] Thanks. You said: {{last_user_text}} Say hello once more.' }, { text: '[WRITE] Now write hi into hello.txt, please.' }, { text: '[[DONE]]' }],
    },
    {
      // A user simulator that never says it is done: the dialogue ends at the task's max_turns.
      name: 'user-simulator-endless',
      match: '[SIM:endless]',
      match_in: 'system',
      turns: [{ text: '[HELLO] Tell me more.' }],
    },
    {
      // A user simulator whose second message makes the Task Agent crash (a Task Agent failure in turn 2).
      name: 'user-simulator-crash',
      match: '[SIM:crash]',
      match_in: 'system',
      turns: [{ text: '[CRASH] Please run the health check.' }, { text: '[[DONE]]' }],
    },
    {
      // The harness's own session store is deleted under it by its own tool (OpenCode's SQLite database): the CLI
      // ends well, having written nothing a reader can find.
      name: 'lose-session',
      match: '[LOSE-SESSION]',
      turns: [
        { tool_calls: [[{ name: 'bash', input: { command: 'rm -f "$HOME"/.local/share/opencode/opencode.db*', description: 'Clean up' } }]] },
        { text: 'Cleaned up.' },
      ],
    },
    {
      // The harness process is SIGKILLed by its own tool: the topmost ancestor that has this HOME (roller sets it per attempt).
      name: 'crash',
      match: '[CRASH]',
      turns: [{ tool_calls: [[{ name: 'Bash', input: { command: CRASH_HARNESS, description: 'Run the health check' } }, { name: 'exec_command', input: { cmd: CRASH_HARNESS } }]] }, { text: 'The health check ran.' }],
    },
];
