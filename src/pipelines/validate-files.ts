import { readFile, stat } from 'node:fs/promises';
import { access } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createStageContext } from '../core/context.js';
import { ErrorCode, RollerError } from '../core/errors.js';
import { formatJsonPath, locateJsonPaths, pathKey, type JsonPath } from '../core/json-locate.js';
import { jsonlEnvelopes, readFileChunks } from '../core/jsonl-source.js';
import { recordTypes, type RecordTypeName } from '../schemas/registry.js';
import { checkValue } from '../schemas/validate.js';

export interface FileIssue {
  file: string;
  line: number | null;
  path: string | null;
  message: string;
}

export interface FileResult {
  file: string;
  records: number;
  issues: number;
}

export interface ValidateFilesOptions {
  /** JSON documents larger than this are refused (validate them as JSONL, or raise it). Default 1 GiB. */
  maxDocumentBytes?: number;
  onIssue(issue: FileIssue): void;
  signal?: AbortSignal;
}

const isJsonl = (file: string) => /\.jsonl$/i.test(file);

/**
 * Validates each file against a record type: `.jsonl` files record by record (streamed, bad lines
 * reported and skipped), other files as one JSON document. Every issue names file, line and JSON path.
 */
export async function validateFile(name: RecordTypeName, file: string, options: ValidateFilesOptions): Promise<FileResult> {
  const { schema } = recordTypes[name];
  let issues = 0;
  const report = (issue: Omit<FileIssue, 'file'>) => {
    issues++;
    options.onIssue({ file, ...issue });
  };

  const info = await stat(file).catch((cause: unknown) => {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${file}: cannot read (${(cause as Error).message})`, { cause });
  });

  if (isJsonl(file)) {
    let records = 0;
    const ctx = createStageContext({
      ...(options.signal ? { signal: options.signal } : {}),
      onReject: (r) => report({ line: r.origin.line ?? null, path: null, message: r.reason.replace(/^.*?:\d+: /, '') }),
    });
    for await (const env of jsonlEnvelopes(readFileChunks(file), ctx, { name: file, onBadLine: 'reject' })) {
      records++;
      for (const issue of checkValue(schema, env.data)) {
        report({ line: env.origin.line ?? null, path: formatJsonPath(issue.path), message: issue.message });
      }
    }
    return { file, records, issues };
  }

  const limit = options.maxDocumentBytes ?? 1 << 30;
  if (info.size > limit) {
    throw new RollerError(ErrorCode.JSON_DOCUMENT_TOO_LARGE, `${file}: ${info.size} bytes is over the ${limit}-byte limit for one JSON document`);
  }
  const text = await readFile(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    report({ line: null, path: null, message: `not valid JSON (${(err as Error).message})` });
    return { file, records: 0, issues };
  }
  const found = checkValue(schema, value);
  if (name === 'atif') found.push(...(await missingImages(value, dirname(file))));
  const lines = found.length > 0 ? locateJsonPaths(text, found.map((i) => i.path)) : new Map<string, number>();
  for (const issue of found) {
    report({ line: lines.get(pathKey(issue.path)) ?? null, path: formatJsonPath(issue.path), message: issue.message });
  }
  return { file, records: 1, issues };
}

/** ATIF: relative image paths must exist next to the trajectory file (URLs are not checked). */
async function missingImages(doc: unknown, baseDir: string): Promise<{ path: JsonPath; message: string }[]> {
  const out: { path: JsonPath; message: string }[] = [];
  const walk = async (node: unknown, path: (string | number)[]): Promise<void> => {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) await walk(node[i], [...path, i]);
    } else if (node !== null && typeof node === 'object') {
      const obj = node as Record<string, unknown>;
      const source = obj.source as { path?: unknown } | undefined;
      if (obj.type === 'image' && typeof source?.path === 'string' && !source.path.includes('://')) {
        const p = isAbsolute(source.path) ? source.path : resolve(baseDir, source.path);
        const exists = await access(p).then(() => true, () => false);
        if (!exists) out.push({ path: [...path, 'source', 'path'], message: `image file not found: ${source.path}` });
      }
      for (const [k, v] of Object.entries(obj)) if (v !== null && typeof v === 'object') await walk(v, [...path, k]);
    }
  };
  await walk(doc, []);
  return out;
}
