import { z } from 'zod';

/** The simulated user of a dynamic task: its model, what it is told, and when the dialogue ends. */
export const UserSimulatorSpec = z
  .strictObject({
    model: z.string().min(1).describe('a --model id (scripted/… or one of --model-config) that plays the user'),
    instructions: z.string().min(1).describe('persona, goal and what the user knows: the simulator\'s system prompt'),
    max_turns: z.number().int().min(1).max(50).default(5).describe('Task Agent turns at most, the first prompt included'),
    stop: z.string().min(1).default('[[DONE]]').describe('the simulator ends the dialogue by answering with this marker'),
  })
  .describe('user_simulator: the dialogue ends when the simulator answers the stop marker, the Task Agent fails, or max_turns is reached');
export type UserSimulatorSpec = z.infer<typeof UserSimulatorSpec>;

/** What a Harbor task directory adds to a task (read from task.toml by roller, not written by hand). */
export const HarborTaskSpec = z.strictObject({
  dir: z.string().min(1).describe('the task directory, absolute'),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/).describe('every file of the directory: a changed task is a changed bundle'),
  environment_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/).describe('environment/ (the build context): the image is built once per digest'),
  docker_image: z.string().min(1).optional().describe("[environment] docker_image: used as it is when the engine has it (never pulled)"),
  cpus: z.number().positive().optional(),
  memory_bytes: z.number().int().positive().optional(),
  env: z.record(z.string(), z.string()).optional().describe('[environment.env]: variables the agent container gets'),
  build_network: z.literal('host').optional().describe('[environment] build_network = "host": its image builds on the host\'s network (absent: none)'),
});
export type HarborTaskSpec = z.infer<typeof HarborTaskSpec>;

/** One line of a tasks JSONL file. Strict: a misspelt key is an error before any harness runs. */
export const Task = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" and "-" (it names a directory)')
      .describe('stable task id'),
    prompt: z.string().min(1).describe('the first user message'),
    followups: z
      .array(z.string().min(1))
      .optional()
      .describe('further user messages, in order, each sent after the previous one finished, in the same session (Claude Code: --resume)'),
    user_simulator: UserSimulatorSpec.optional().describe('a dynamic task: a second model plays the user after the first prompt (seeds/003 §2.3)'),
    files: z.record(z.string(), z.string()).optional().describe('files to create in the work directory: relative path -> content'),
    output_dirs: z.array(z.string()).optional().describe('directories (relative to the work directory) copied to results/'),
    timeout_s: z.number().positive().optional().describe('the sample\'s time limit in seconds: every prompt\'s process together (default: --timeout)'),
    grader: z
      .strictObject({
        command: z.string().min(1).describe('a shell command (sh -c), run in the work directory after the last prompt'),
        timeout_s: z.number().positive().optional().describe("its own time limit (default: the task's)"),
        env: z.record(z.string(), z.string()).optional().describe('variables the grader gets (a Harbor task: [verifier.env])'),
      })
      .optional()
      .describe('bench scores: exit 0 passes; reward.txt (a number) or reward.json (an object of numbers) in $ROLLER_GRADER_DIR are the scores'),
    harbor: HarborTaskSpec.optional().describe('a Harbor task directory (roller collect --tasks DIR): its image, verifier and resources'),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((task, ctx) => {
    for (const p of [...Object.keys(task.files ?? {}), ...(task.output_dirs ?? [])]) {
      if (p.startsWith('/') || p.split(/[\\/]/).includes('..')) {
        ctx.addIssue({ code: 'custom', path: task.files && p in task.files ? ['files', p] : ['output_dirs'], message: `path '${p}' must stay inside the work directory` });
      }
    }
    if (task.user_simulator && task.followups?.length) ctx.addIssue({ code: 'custom', path: ['user_simulator'], message: 'a task has either followups (fixed) or a user_simulator (dynamic), not both' });
    // A prompt reaches the harness as a file or stdin, where a NUL would cut it short or be refused.
    for (const [i, text] of [task.prompt, ...(task.followups ?? [])].entries()) {
      if (text.includes('\0')) ctx.addIssue({ code: 'custom', path: i === 0 ? ['prompt'] : ['followups', i - 1], message: 'holds a NUL byte (\\u0000), which no harness can take in a prompt' });
    }
    const files = Object.keys(task.files ?? {});
    const asFiles = new Set(files.map((f) => f.replace(/\\/g, '/')));
    for (const f of files) {
      const path = f.replace(/\\/g, '/');
      if (path === '' || path.split('/').every((s) => s === '' || s === '.')) ctx.addIssue({ code: 'custom', path: ['files', f], message: 'an empty file name; name a file relative to the work directory' });
      else if (path.endsWith('/')) ctx.addIssue({ code: 'custom', path: ['files', f], message: `'${f}' ends with '/': a file, not a directory, is written there; drop the '/'` });
      else if (path.includes('\0')) ctx.addIssue({ code: 'custom', path: ['files', f], message: 'a file name with a NUL byte' });
      else {
        const segments = path.split('/');
        for (let k = 1; k < segments.length; k++) {
          const parent = segments.slice(0, k).join('/');
          if (asFiles.has(parent)) ctx.addIssue({ code: 'custom', path: ['files', f], message: `'${parent}' is also given as a file, so it cannot be the directory '${f}' is in` });
        }
      }
    }
  })
  .describe('a line of tasks.jsonl');
export type Task = z.infer<typeof Task>;
