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
  })
  .describe('a line of tasks.jsonl');
export type Task = z.infer<typeof Task>;
