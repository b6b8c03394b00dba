import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { ErrorCode, RollerError } from '../core/errors.js';
import { arrayMemberElements, readArrayPage } from '../core/json-array-page.js';
import { formatJsonPath } from '../core/json-locate.js';
import { Lock } from '../schemas/lock.js';
import { RunInfo, RunSampleRow, SAMPLE_INFO_SCHEMA, SampleInfo, type RuntimeParticipant } from '../schemas/run-info.js';
import { SftRecord } from '../schemas/sft.js';
import { checkValue } from '../schemas/validate.js';
import { finishedSample, type FinishedSample } from './finished-sample.js';
import { SAMPLE_FILE } from './sample-layout.js';

/** One sample of an opened run: its row in the run's info.json, its own info.json, and its files on demand. */
export interface RunSample extends FinishedSample {
  row: SampleRow;
  /** The agent tree (info.json runtime.participants): each participant's own tokens, status and where it was read. */
  participants: RuntimeParticipant[];
  /** Its trace_SFT.json, when it has one. */
  sft(): Promise<SftRecord | null>;
}

/** A run's info.json but its sample rows (a run of 100,000 samples lists 35 MB of them: they are streamed). */
export type RunHead = Omit<RunInfo, 'samples'>;
export type SampleRow = RunInfo['samples'][number];

export interface OpenedRun {
  dir: string;
  info: RunHead;
  /** How many sample rows its info.json lists. */
  sampleCount: number;
  /** Its lock.json (null in a run tree that has none, e.g. one a partial reprocess wrote before it). */
  lock: Lock | null;
  /** The sample rows of its info.json in request order, each checked against its schema as it is read. */
  rows(): AsyncIterable<SampleRow>;
  /** One sample of the run, by its row: its info.json read and checked now. */
  sample(row: SampleRow): Promise<RunSample>;
  /**
   * The samples in request order, each read when reached (its info.json checked against its schema), so a run of
   * any size streams: nothing of one sample is held once the next is asked for.
   */
  samples(): AsyncIterable<RunSample>;
}

/**
 * A run directory as scripts read it (the library's run reader; `roller export`, `roller usage` and validate-run read
 * runs the same way): the run's info.json and lock.json checked against their schemas, then its samples.
 */
export async function openRun(dir: string): Promise<OpenedRun> {
  const infoPath = join(dir, SAMPLE_FILE.info);
  if (!existsSync(infoPath)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${dir}: no info.json; pass a run directory written by roller collect (<output>/<run-name>)`);
  const { info, sampleCount } = await readRunHead(dir, infoPath);
  const lock = existsSync(join(dir, 'lock.json')) ? await readChecked(Lock, join(dir, 'lock.json'), 'run lock.json') : null;
  const sample = (row: SampleRow) => openSample(join(dir, row.path), row);
  const rows = () => checkedRows(infoPath);
  return {
    dir,
    info,
    sampleCount,
    lock,
    rows,
    sample,
    async *samples() {
      for await (const row of rows()) yield await sample(row);
    },
  };
}

/** The run's info.json read as tokens, its rows counted but not kept; the rest checked against the run schema. */
async function readRunHead(dir: string, infoPath: string): Promise<{ info: RunHead; sampleCount: number }> {
  const page = await readArrayPage(infoPath, 'samples', 0, 0, { toEnd: true });
  if (page.head.schema === SAMPLE_INFO_SCHEMA) throw new RollerError(ErrorCode.INVALID_OPTIONS, `${dir} is a sample directory (its info.json is a sample's): pass the run directory it is in, ${join(dir, '..', '..', '..')}`);
  // Checked with no rows in place of its rows (each row is checked when read); a missing list is the schema's to say.
  const issues = checkValue(RunInfo, page.found ? { ...page.head, samples: [] } : page.head);
  if (issues.length > 0) throw invalid(infoPath, 'run info.json', issues);
  return { info: page.head as RunHead, sampleCount: page.total ?? 0 }; // readArrayPage left the rows out of its head
}

async function* checkedRows(infoPath: string): AsyncGenerator<SampleRow> {
  let i = 0;
  for await (const value of arrayMemberElements(infoPath, 'samples')) {
    const issues = checkValue(RunSampleRow, value);
    if (issues.length > 0) throw invalid(infoPath, 'run info.json', issues.map((issue) => ({ ...issue, path: ['samples', i, ...issue.path] })));
    i++;
    yield value as SampleRow;
  }
}

async function openSample(dir: string, row: SampleRow): Promise<RunSample> {
  const path = join(dir, SAMPLE_FILE.info);
  if (!existsSync(path)) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path} is missing, though the run's info.json lists the sample`);
  const info = await readChecked(SampleInfo, path, 'sample info.json');
  return {
    ...finishedSample(dir, info),
    row,
    participants: info.runtime.participants ?? [],
    sft: async () => (info.trajectory.sft ? readChecked(SftRecord, join(dir, info.trajectory.sft), 'trace_SFT.json') : null),
  };
}

/** A JSON file parsed and checked against its schema: a typed error naming the file and each problem, never a cast. */
export async function readChecked<S extends z.ZodType>(schema: S, path: string, what: string, refuse?: (value: unknown) => RollerError | undefined): Promise<z.infer<S>> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new RollerError(err.code === 'ENOENT' ? ErrorCode.FILE_NOT_FOUND : ErrorCode.JSON_INVALID, `${path}: the ${what} cannot be read (${err.code ?? err.message})`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RollerError(ErrorCode.JSON_INVALID, `${path} is not valid JSON (${(err as Error).message}); the file is damaged (cut short or edited): restore it, or collect or reprocess that run again`);
  }
  const refused = refuse?.(value);
  if (refused) throw refused;
  const issues = checkValue(schema, value);
  if (issues.length > 0) throw invalid(path, what, issues);
  return value as z.infer<S>;
}

function invalid(path: string, what: string, issues: ReturnType<typeof checkValue>): RollerError {
  const listed = issues.slice(0, 5).map((i) => `${formatJsonPath(i.path)}: ${i.message}`).join('; ');
  return new RollerError(ErrorCode.JSON_INVALID, `${path} is not a valid ${what} (${listed}${issues.length > 5 ? `; ${issues.length - 5} more` : ''}); roller validate-run names every problem`);
}
