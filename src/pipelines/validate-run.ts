import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { RecordTypeName } from '../schemas/registry.js';
import type { RunInfo, SampleInfo } from '../schemas/run-info.js';
import { validateCapture } from './capture/validate.js';
import { validateFile } from './validate-files.js';
import { runStateProblems } from './run-state.js';
import { dialogueProblems, holdsDialogue } from './collect/dialogue-checks.js';
import type { Lock } from '../schemas/lock.js';

/**
 * `roller validate-run RUN_DIR`: a collect run as a whole — info.json, lock.json and sft.jsonl against their
 * schemas (and sft_segments.jsonl), every sample's info.json, trace_ACTF.json, trace_SFT.json and sft_segments/, every published capture (hashes,
 * attribution, references), a dialogue's files (conversation.json, user_simulator/), and the run's rows against the samples on disk. Each problem names its file.
 */
export async function validateRun(runDir: string): Promise<string[]> {
  const problems: string[] = await runStateProblems(runDir);
  const check = async (name: RecordTypeName, file: string) => {
    if (!existsSync(file)) return problems.push(`${relative(runDir, file)}: missing`);
    await validateFile(name, file, {
      onIssue: (i) => problems.push(`${relative(runDir, i.file)}${i.line === null ? '' : `:${i.line}`}: ${i.path ?? ''}${i.path ? ': ' : ''}${i.message}`),
    });
  };
  await check('run-info', join(runDir, 'info.json'));
  await check('lock', join(runDir, 'lock.json'));
  await check('sft', join(runDir, 'sft.jsonl'));
  if (existsSync(join(runDir, 'sft_segments.jsonl'))) await check('sft-segment', join(runDir, 'sft_segments.jsonl'));
  if (existsSync(join(runDir, 'sft_subagents.jsonl'))) await check('sft-subagent', join(runDir, 'sft_subagents.jsonl'));
  if (problems.length > 0) return problems;
  const info = JSON.parse(await readFile(join(runDir, 'info.json'), 'utf8')) as RunInfo;
  const lock = JSON.parse(await readFile(join(runDir, 'lock.json'), 'utf8')) as Lock;
  for (const row of info.samples) {
    const dir = join(runDir, row.path);
    const sampleFile = join(dir, 'info.json');
    if (!existsSync(dir) && row.error) {
      problems.push(`${row.path}: no sample directory; the run records it as ${row.status} (${row.error.code}: ${row.error.message})`);
      continue;
    }
    await check('sample-info', sampleFile);
    if (!existsSync(sampleFile)) continue;
    const sample = JSON.parse(await readFile(sampleFile, 'utf8')) as SampleInfo;
    const expected = row.status === 'skipped' ? ['ok', 'skipped'] : [row.status];
    if (!expected.includes(sample.status)) problems.push(`${row.path}/info.json: status ${sample.status}, but info.json of the run says ${row.status}`);
    if (sample.trajectory.actf) await check('actf', join(dir, sample.trajectory.actf));
    if (sample.trajectory.sft) await check('sft', join(dir, sample.trajectory.sft));
    for (const seg of sample.trajectory.sft_segments ?? []) await check('sft-segment', join(dir, seg.path));
    const captures = existsSync(join(dir, 'capture')) ? (await readdir(join(dir, 'capture'))).filter((d) => d.startsWith('attempt-')).sort() : [];
    for (const attempt of captures) for (const p of await validateCapture(join(dir, 'capture', attempt))) problems.push(`${row.path}/capture/${attempt}/${p}`);
    // A user-simulator sample: conversation.json and the simulator's own files (seeds/003 §7.4).
    if (sample.runtime.user_simulator || holdsDialogue(dir)) {
      for (const p of await dialogueProblems(dir, { keepThinking: lock.options.keep_thinking })) problems.push(`${row.path}/${p}`);
    }
  }
  return problems;
}
