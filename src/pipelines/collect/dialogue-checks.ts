import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import stableStringify from 'fast-json-stable-stringify';
import { formatJsonPath } from '../../core/json-locate.js';
import { Actf } from '../../schemas/actf.js';
import { Call } from '../../schemas/call.js';
import { Conversation, UserSimulatorEvent, UserSimulatorInfo } from '../../schemas/dialogue.js';
import { SftRecord } from '../../schemas/sft.js';
import { checkValue } from '../../schemas/validate.js';
import type { z } from 'zod';
import { projectSft } from '../../transforms/sft/project.js';
import { USER_SIMULATOR_DIR } from './user-simulator-files.js';

/** A sample holds a dialogue's files (a user-simulator task), whatever its info.json says. */
export const holdsDialogue = (sampleDir: string): boolean => existsSync(join(sampleDir, 'conversation.json')) || existsSync(join(sampleDir, USER_SIMULATOR_DIR));

/**
 * The problems of a user-simulator sample's dialogue files (seeds/003 §7.4): conversation.json, the simulator's
 * info.json, raw events, calls, ACTF and — when it succeeded — an SFT equal to the projection of that ACTF; the
 * conversation's simulator messages are the answers its raw events hold. Each problem names its file.
 */
export async function dialogueProblems(sampleDir: string, options: { keepThinking: boolean }): Promise<string[]> {
  const problems: string[] = [];
  const sim = join(sampleDir, USER_SIMULATOR_DIR);
  const read = async <T>(rel: string, schema: z.ZodType): Promise<T | undefined> => {
    const file = join(sampleDir, rel);
    if (!existsSync(file)) return void problems.push(`${rel}: missing`);
    let value: unknown;
    try {
      value = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      return void problems.push(`${rel}: not JSON (${(err as Error).message})`);
    }
    const issues = checkValue(schema, value);
    for (const i of issues) problems.push(`${rel}: ${formatJsonPath(i.path)}: ${i.message}`);
    return issues.length === 0 ? (value as T) : undefined;
  };
  const readLines = async (rel: string, schema: z.ZodType): Promise<unknown[]> => {
    const file = join(sampleDir, rel);
    if (!existsSync(file)) return (problems.push(`${rel}: missing`), []);
    const values: unknown[] = [];
    for (const [n, line] of (await readFile(file, 'utf8')).split('\n').entries()) {
      if (line === '') continue;
      try {
        const value = JSON.parse(line) as unknown;
        for (const i of checkValue(schema, value)) problems.push(`${rel}:${n + 1}: ${formatJsonPath(i.path)}: ${i.message}`);
        values.push(value);
      } catch (err) {
        problems.push(`${rel}:${n + 1}: not JSON (${(err as Error).message})`);
      }
    }
    return values;
  };
  const conversation = await read<Conversation>('conversation.json', Conversation);
  const info = await read<UserSimulatorInfo>(`${USER_SIMULATOR_DIR}/info.json`, UserSimulatorInfo);
  const events = (await readLines(`${USER_SIMULATOR_DIR}/trace.jsonl`, UserSimulatorEvent)) as UserSimulatorEvent[];
  if (existsSync(join(sim, 'calls.jsonl'))) await readLines(`${USER_SIMULATOR_DIR}/calls.jsonl`, Call);
  const actf = await read<Actf>(`${USER_SIMULATOR_DIR}/trace_ACTF.json`, Actf);
  if (info?.status === 'ok') {
    const sft = await read<SftRecord>(`${USER_SIMULATOR_DIR}/trace_SFT.json`, SftRecord);
    const again = actf ? projectSft(actf, options) : undefined;
    if (sft && again && (again.status !== 'ok' || stableStringify(again.record) !== stableStringify(sft))) problems.push(`${USER_SIMULATOR_DIR}/trace_SFT.json: not the projection of its trace_ACTF.json`);
  }
  if (conversation && events.length > 0) {
    const answers = events.flatMap((e) => (e.type === 'response' && !e.error ? [String((e.body as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content ?? '').trim()] : []));
    for (const t of conversation.turns) {
      if (t.source === 'user_simulator' && !answers.includes(t.text)) problems.push(`conversation.json: the simulator message of turn ${t.turn} is not an answer its trace.jsonl holds`);
    }
  }
  return problems;
}
