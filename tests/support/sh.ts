import { spawnSync } from 'node:child_process';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command run to its end (at most 10 minutes): its exit code and output, a failure to start in stderr. */
export function sh(args: string[], env: NodeJS.ProcessEnv = process.env): Ran {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', env, timeout: 10 * 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}
