import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { DuckDBConnection } from '@duckdb/node-api';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { RunInfo } from '../../schemas/run-info.js';
import { readChecked } from '../run-reader.js';
import { SAMPLE_FILE } from '../sample-layout.js';

/** One sample's files, as the views read them (null: the sample has none of that kind). */
export interface SampleFiles {
  run: string;
  sample: string;
  info: string;
  /** The sample's info.json as read (the views take it from here: DuckDB opening 10,000 small files was 4 s). */
  infoText: string;
  calls: string | null;
  relations: string | null;
  actf: string | null;
}

/**
 * The files of each run's samples, from the run's info.json and each sample's (its published capture, its ACTF):
 * the views read exactly these, never a glob that could pick up a retry's leftovers.
 */
export async function sampleFilesOf(runDirs: string[]): Promise<SampleFiles[]> {
  const files: SampleFiles[] = [];
  const names = new Map<string, string>();
  for (const given of runDirs) {
    const dir = resolve(given);
    if (!existsSync(join(dir, SAMPLE_FILE.info))) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${given}: no info.json; pass run directories (<output>/<run-name>)`);
    const info = await readChecked(RunInfo, join(dir, SAMPLE_FILE.info), "run's info.json");
    // Runs are told apart by name; two runs of one name by their directory.
    const run = names.has(info.run_name) && names.get(info.run_name) !== dir ? dir : info.run_name;
    names.set(info.run_name, dir);
    // Listed but not written (an interrupted run): nothing to read.
    const rows = info.samples.filter((row) => existsSync(join(dir, row.path, SAMPLE_FILE.info)));
    files.push(...(await mapLimited(rows, 16, (row) => sampleFiles(run, dir, row.path))));
  }
  return files;
}

async function sampleFiles(run: string, dir: string, path: string): Promise<SampleFiles> {
  const sampleDir = join(dir, path);
  const infoPath = join(sampleDir, SAMPLE_FILE.info);
  const text = await readFile(infoPath, 'utf8');
  // Only the two paths are needed here (DuckDB reads the rest): a schema check of 10,000 sample files was 5 s.
  const s = samplePathsOf(infoPath, text);
  const capture = s.runtime.capture?.path ? inside(sampleDir, s.runtime.capture.path) : null;
  const inCapture = (f: string) => (capture && existsSync(join(capture, f)) ? join(capture, f) : null);
  const actf = s.trajectory.actf ? inside(sampleDir, s.trajectory.actf) : null;
  return { run, sample: path, info: infoPath, infoText: text, calls: inCapture('calls.jsonl'), relations: inCapture('relations.jsonl'), actf: actf && existsSync(actf) ? actf : null };
}

/** `fn` over the items, `limit` at a time, results in order. */
async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The two paths of a sample's info.json the views need; a file without them is an error naming it. */
const SamplePaths = z.looseObject({
  runtime: z.looseObject({ capture: z.looseObject({ path: z.string() }).nullable().optional() }),
  trajectory: z.looseObject({ actf: z.string().nullable() }),
});

function samplePathsOf(path: string, text: string): z.infer<typeof SamplePaths> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RollerError(ErrorCode.JSON_INVALID, `${path}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = SamplePaths.safeParse(value);
  if (!parsed.success) throw new RollerError(ErrorCode.JSON_INVALID, `${path}: not a sample info.json (${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})`);
  return parsed.data;
}

/** A path a run's file names, kept inside the sample directory. */
function inside(dir: string, path: string): string {
  const full = resolve(dir, path);
  if (relative(dir, full).startsWith('..')) throw new RollerError(ErrorCode.LINK_REFUSED, `${join(dir, SAMPLE_FILE.info)} names ${path}, outside the sample directory`);
  return full;
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
const list = (paths: string[]) => `[${paths.map(quote).join(', ')}]`;
/** A line of calls.jsonl can hold a request body of hundreds of MB. */
const MAX_OBJECT = 1 << 30;
const BIG = (t: string) => `(${t})::BIGINT`;

/** What each view holds (docs/commands/query.md lists them with their columns). */
export const VIEW_NAMES = ['runs', 'samples', 'participants', 'calls', 'relations', 'steps'] as const;

/**
 * Defines the views over the runs' own files (nothing is copied or converted first): `runs`, `samples`,
 * `participants` (the agent tree), `calls` (without request bodies), `relations`, `steps` (ACTF). A kind of file no
 * sample has gives an empty view with the same columns.
 */
export async function defineRunViews(db: DuckDBConnection, runDirs: string[], files: SampleFiles[]): Promise<void> {
  await db.run('CREATE TABLE files (run VARCHAR, sample VARCHAR, info VARCHAR, calls VARCHAR, relations VARCHAR, actf VARCHAR)');
  await db.run('CREATE TABLE sample_text (run VARCHAR, sample VARCHAR, text VARCHAR)');
  const appender = await db.createAppender('files');
  const texts = await db.createAppender('sample_text');
  for (const f of files) {
    appender.appendVarchar(f.run);
    appender.appendVarchar(f.sample);
    appender.appendVarchar(f.info);
    for (const v of [f.calls, f.relations, f.actf]) v === null ? appender.appendNull() : appender.appendVarchar(v);
    appender.endRow();
    texts.appendVarchar(f.run);
    texts.appendVarchar(f.sample);
    texts.appendVarchar(f.infoText);
    texts.endRow();
  }
  appender.closeSync();
  texts.closeSync();

  const runInfos = runDirs.map((d) => join(resolve(d), SAMPLE_FILE.info));
  await db.run(`CREATE VIEW runs AS
    SELECT json->>'run_name' AS run, regexp_replace(filename, '/info\\.json$', '') AS dir, json->>'state' AS state, json->'config'->>'harness' AS harness,
      ${BIG("json->'progress'->>'total'")} AS samples, ${BIG("json->'summary'->>'ok'")} AS ok, ${BIG("json->'summary'->>'failed'")} AS failed,
      ${BIG("json->'usage'->>'input'")} AS input, ${BIG("json->'usage'->>'cache_creation'")} AS cache_creation, ${BIG("json->'usage'->>'cached_input'")} AS cache_read,
      ${BIG("json->'usage'->>'output'")} AS output, (json->'usage'->>'cost_usd')::DOUBLE AS cost_usd, ${BIG("json->'usage'->>'requests'")} AS requests
    FROM read_json_objects(${list(runInfos)}, format = 'auto', filename = true)`);

  // A view: a statement that reads only calls never parses the samples' info.json.
  await db.run('CREATE VIEW sample_json AS SELECT run, sample, text::JSON AS json FROM sample_text');
  await db.run(`CREATE VIEW samples AS
    SELECT run, sample, json->>'task_id' AS task_id, (json->>'index')::INTEGER AS "index", json->>'model' AS model,
      json->'harness'->>'name' AS harness, json->'harness'->>'version' AS harness_version, json->>'status' AS status, json->'error'->>'message' AS error,
      ${BIG("json->>'elapsed_ms'")} AS elapsed_ms, ${BIG("json->'usage'->>'input'")} AS input, ${BIG("json->'usage'->>'cache_creation'")} AS cache_creation,
      ${BIG("json->'usage'->>'cached_input'")} AS cache_read, ${BIG("json->'usage'->>'output'")} AS output, ${BIG("json->'usage'->>'reasoning'")} AS reasoning,
      (json->'usage'->>'cost_usd')::DOUBLE AS cost_usd, (json->'usage'->>'priced_cost_usd')::DOUBLE AS priced_cost_usd, json->'usage'->>'cost_source' AS cost_source,
      ${BIG("json->'usage'->>'requests'")} AS requests,
      (json->'runtime'->'sft_eligibility'->>'eligible')::BOOLEAN AS sft_eligible, json->'runtime'->'sft_eligibility'->>'reason' AS sft_reason,
      json->'grade'->>'status' AS grade, json->'grade'->'scores' AS scores,
      json_array_length(json->'runtime'->'participants') - 1 AS subagents
    FROM sample_json`);
  await db.run(`CREATE VIEW participants AS
    SELECT run, sample, json->>'task_id' AS task_id, json->>'model' AS model, p->>'participant' AS participant, p->>'role' AS role, p->>'parent' AS parent,
      (p->>'depth')::INTEGER AS depth, p->>'spawn_tool_call_id' AS spawn_tool_call_id, ${BIG("p->>'messages'")} AS messages,
      ${BIG("p->'tokens'->>'input'")} AS input, ${BIG("p->'tokens'->>'cache_creation'")} AS cache_creation, ${BIG("p->'tokens'->>'cache_read'")} AS cache_read,
      ${BIG("p->'tokens'->>'output'")} AS output, ${BIG("p->'tokens'->>'reasoning'")} AS reasoning, (p->>'cost_usd')::DOUBLE AS cost_usd,
      (p->>'priced_cost_usd')::DOUBLE AS priced_cost_usd, p->>'cost_source' AS cost_source, p->>'status' AS status, p->>'reason' AS reason
    FROM sample_json, unnest(coalesce(json_extract(json, '$.runtime.participants[*]'), []::JSON[])) AS t(p)`);

  await defineFileViews(db, files);
}

/** The views over the files samples name: `calls` (without request bodies), `relations`, `steps` (ACTF). */
async function defineFileViews(db: DuckDBConnection, files: SampleFiles[]): Promise<void> {
  const calls = files.flatMap((f) => (f.calls ? [f.calls] : []));
  const callColumns = `{call_id: 'VARCHAR', seq: 'BIGINT', protocol: 'VARCHAR', participant_id: 'VARCHAR', request_model: 'VARCHAR', response_model: 'VARCHAR',
    started_at: 'VARCHAR', first_byte_at: 'VARCHAR', ended_at: 'VARCHAR', http_status: 'INTEGER', usage: 'JSON', tool_refs: 'JSON', execution_status: 'VARCHAR',
    response_capture_status: 'VARCHAR', identity_status: 'VARCHAR', capture_status: 'VARCHAR', export_status: 'VARCHAR', errors: 'JSON'}`;
  const callsSource = calls.length
    ? `read_json(${list(calls)}, format = 'newline_delimited', columns = ${callColumns}, filename = true, maximum_object_size = ${MAX_OBJECT}) c JOIN files f ON c.filename = f.calls`
    : `(SELECT NULL::VARCHAR AS call_id, NULL::BIGINT AS seq, NULL::VARCHAR AS protocol, NULL::VARCHAR AS participant_id, NULL::VARCHAR AS request_model, NULL::VARCHAR AS response_model, NULL::VARCHAR AS started_at, NULL::VARCHAR AS first_byte_at, NULL::VARCHAR AS ended_at, NULL::INTEGER AS http_status, NULL::JSON AS usage, NULL::JSON AS tool_refs, NULL::VARCHAR AS execution_status, NULL::VARCHAR AS response_capture_status, NULL::VARCHAR AS identity_status, NULL::VARCHAR AS capture_status, NULL::VARCHAR AS export_status, NULL::JSON AS errors) c, files f WHERE false`;
  await db.run(`CREATE VIEW calls AS
    SELECT f.run, f.sample, c.call_id, c.seq, c.protocol, c.participant_id, coalesce(c.response_model, c.request_model) AS model, c.http_status,
      c.started_at::TIMESTAMPTZ AS started_at, c.ended_at::TIMESTAMPTZ AS ended_at,
      epoch_ms(c.first_byte_at::TIMESTAMPTZ) - epoch_ms(c.started_at::TIMESTAMPTZ) AS ttfb_ms, epoch_ms(c.ended_at::TIMESTAMPTZ) - epoch_ms(c.started_at::TIMESTAMPTZ) AS duration_ms,
      ${BIG("c.usage->'normalized'->>'input'")} AS input, ${BIG("c.usage->'normalized'->>'cache_creation'")} AS cache_creation, ${BIG("c.usage->'normalized'->>'cached_input'")} AS cache_read,
      ${BIG("c.usage->'normalized'->>'output'")} AS output, ${BIG("c.usage->'normalized'->>'reasoning'")} AS reasoning,
      CAST(json_extract_string(c.tool_refs, '$[*].name') AS VARCHAR[]) AS tools, CAST(json_extract_string(c.tool_refs, '$[*].id') AS VARCHAR[]) AS tool_call_ids,
      c.execution_status, c.response_capture_status, c.identity_status, c.capture_status, c.export_status, json_array_length(c.errors) AS errors
    FROM ${callsSource}`);

  const relations = files.flatMap((f) => (f.relations ? [f.relations] : []));
  const relationColumns = ['relation_id', 'type', 'status', 'parent_participant_id', 'child_participant_id', 'tool_call_id', 'parent_call_id', 'in_call_id', 'reason'];
  await db.run(`CREATE VIEW relations AS
    SELECT f.run, f.sample, ${relationColumns.map((c) => `r.${c}`).join(', ')}
    FROM ${relations.length ? `read_json(${list(relations)}, format = 'newline_delimited', columns = {${relationColumns.map((c) => `${c}: 'VARCHAR'`).join(', ')}}, filename = true) r JOIN files f ON r.filename = f.relations` : `(SELECT ${relationColumns.map((c) => `NULL::VARCHAR AS ${c}`).join(', ')}) r, files f WHERE false`}`);

  const actfs = files.flatMap((f) => (f.actf ? [f.actf] : []));
  await db.run(`CREATE VIEW steps AS
    SELECT f.run, f.sample, (s->>'step_id')::INTEGER AS step_id, s->>'user_content' AS user_content, s->'assistant_content'->>'content' AS content,
      s->'assistant_content'->>'reasoning_content' AS reasoning_content, CAST(json_extract_string(s, '$.assistant_content.tool_calls[*].name') AS VARCHAR[]) AS tools,
      json_array_length(s->'observation') AS observations, ${BIG("s->'metric'->>'prompt_tokens_len'")} AS prompt_tokens, ${BIG("s->'metric'->>'completion_tokens_len'")} AS completion_tokens,
      ${BIG("s->'metric'->>'cache_read_tokens_len'")} AS cache_read, ${BIG("s->'metric'->>'cache_creation_tokens_len'")} AS cache_creation, s->'metric'->>'model' AS model,
      s->>'stop_reason' AS stop_reason, (s->>'started_at')::TIMESTAMPTZ AS started_at, (s->>'finished_at')::TIMESTAMPTZ AS finished_at
    FROM ${actfs.length ? `read_json_objects(${list(actfs)}, format = 'auto', filename = true, maximum_object_size = ${MAX_OBJECT}) a JOIN files f ON a.filename = f.actf` : `(SELECT NULL::JSON AS json) a, files f WHERE false`},
      unnest(coalesce(json_extract(a.json, '$.steps[*]'), []::JSON[])) AS t(s)`);
}
