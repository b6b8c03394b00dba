import { z } from 'zod';

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
    files: z.record(z.string(), z.string()).optional().describe('files to create in the work directory: relative path -> content'),
    output_dirs: z.array(z.string()).optional().describe('directories (relative to the work directory) copied to results/'),
    timeout_s: z.number().positive().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((task, ctx) => {
    for (const p of [...Object.keys(task.files ?? {}), ...(task.output_dirs ?? [])]) {
      if (p.startsWith('/') || p.split(/[\\/]/).includes('..')) {
        ctx.addIssue({ code: 'custom', path: task.files && p in task.files ? ['files', p] : ['output_dirs'], message: `path '${p}' must stay inside the work directory` });
      }
    }
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
