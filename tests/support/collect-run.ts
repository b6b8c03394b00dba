import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunInfo, SampleInfo } from '../../src/schemas/index.js';
import { rollerBin } from './paths.js';

type Json = Record<string, any>;

/** What roller hands a harness as its key for the scripted model: no file may hold it. */
export const DUMMY_KEY = 'roller-dummy-key-7f3a9c2e5b1d4f60a8c3';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** bin/roller as a user runs it; `onStderr` sees the stderr so far (to signal the process at a moment); `env` replaces the environment. */
export function roller(args: string[], options: { onStderr?: (text: string, child: ReturnType<typeof spawn>) => void; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  const child = spawn(rollerBin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    options.onStderr?.(stderr, child);
  });
  return once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
}

export const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
export const readJsonl = (path: string): Json[] => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
export const info = (run: string) => readJson<RunInfo>(join(run, 'info.json'));
export const sample = (run: string, row: RunInfo['samples'][number]) => readJson<SampleInfo>(join(run, row.path, 'info.json'));

export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Helpers bound to a test file's temp dir: task files, and a collect run that must succeed and validate. */
export function collectRuns(tmp: { readonly path: string }) {
  const tasksFile = async (name: string, tasks: object[]): Promise<string> => {
    const path = join(tmp.path, name);
    await writeFile(path, tasks.map((t) => JSON.stringify(t)).join('\n'));
    return path;
  };
  const collectValidRun = async (runName: string, tasks: object[], options: string[]): Promise<string> => {
    const out = join(tmp.path, 'runs');
    const r = await roller(['collect', '--capture-calls', '--tasks', await tasksFile(`${runName}.jsonl`, tasks), '--output', out, '--run-name', runName, ...options]);
    expect(r.code, r.stderr).toBe(0);
    const run = join(out, runName);
    expect((await roller(['validate-run', run])).code).toBe(0);
    expectSubagentRecords(run);
    return run;
  };
  return { tasksFile, collectValidRun };
}

/**
 * sft_subagents.jsonl holds exactly the sub-agents each sample's runtime.subagent_sft says are ok, samples in request
 * order, each naming its participant, parent, spawning call and depth as the agent tree does; every sub-agent of an ok
 * sample has a finding. Returns the records.
 */
export function expectSubagentRecords(run: string): Record<string, any>[] {
  const file = join(run, 'sft_subagents.jsonl');
  const records = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>) : [];
  const expected: Record<string, unknown>[] = [];
  for (const row of info(run).samples) {
    const s = sample(run, row);
    const children = ((s.runtime.participants ?? []) as Record<string, any>[]).filter((p) => p.role === 'child');
    const findings = (s.runtime.subagent_sft ?? []) as { participant: string; status: string }[];
    if (row.status === 'ok' && children.length > 0) expect(findings.map((f) => f.participant).sort(), row.path).toEqual(children.map((c) => c.participant).sort());
    for (const f of findings.filter((x) => x.status === 'ok')) {
      const c = children.find((p) => p.participant === f.participant)!;
      expected.push({ sample: row.path, task_id: row.task_id, index: row.index, participant_id: c.participant, parent_participant_id: c.parent, spawn_tool_call_id: c.spawn_tool_call_id, depth: c.depth });
    }
  }
  expect(records.map((r) => r.subagent)).toEqual(expected);
  expect(existsSync(file)).toBe(expected.length > 0);
  return records;
}
