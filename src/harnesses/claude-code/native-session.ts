import { readdir, readFile, stat } from '../../core/thread-fs.js';
import { basename, dirname, join, relative } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import type { Rejected } from '../../core/rejected.js';

/**
 * Claude Code's native session store (reference/harnesses/claude-code.md §6), verified against CLI 2.1.332:
 *   projects/<encoded-cwd>/<sessionId>.jsonl                              the main transcript
 *   projects/<encoded-cwd>/<sessionId>/subagents/agent-<agentId>.jsonl   one per sub-agent
 *   projects/<encoded-cwd>/<sessionId>/subagents/agent-<agentId>.meta.json
 */
export const CLAUDE_CODE_VERIFIED_VERSIONS = ['2.1.332'] as const;

type Json = Record<string, any>;

export interface NativeRecord {
  record: Json;
  /** Path relative to the directory the session was found in (for evidence references). */
  file: string;
  line: number;
}

export interface SubagentFile {
  agentId: string;
  records: NativeRecord[];
  /** agent-<id>.meta.json: toolUseId, spawnDepth, requestShape, finished, ... (null when missing). */
  meta: Json | null;
  metaFile: string | null;
}

export interface NativeSession {
  sessionId: string;
  root: string;
  main: NativeRecord[];
  mainFile: string;
  subagents: SubagentFile[];
  /** Lines that could not be read (truncated, not JSON): kept as data, reported in the conversion. */
  rejects: Rejected[];
}

/** Session files under a config dir, a project dir, or one session file. */
export async function findSessionFiles(path: string): Promise<string[]> {
  const info = await stat(path).catch((cause: unknown) => {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: not found (${(cause as Error).message})`, { cause });
  });
  if (info.isFile()) return [path];
  const projects = join(path, 'projects');
  const dirs = (await stat(projects).catch(() => undefined))?.isDirectory()
    ? (await readdir(projects, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(projects, d.name))
    : [path];
  const files: string[] = [];
  for (const dir of dirs) {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.jsonl')) files.push(join(dir, entry.name));
    }
  }
  if (files.length === 0) {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: no Claude Code session (*.jsonl) found; give a CLAUDE_CONFIG_DIR, a projects/<cwd> directory or a session file`);
  }
  return files.sort();
}

const KNOWN_TRANSCRIPT = new Set(['user', 'assistant', 'attachment', 'system']);

/** A known record type in a shape this reader does not know is an error, never a silent guess. */
function checkShape(rec: Json, file: string, line: number): void {
  const fail = (what: string) => {
    throw new RollerError(
      ErrorCode.NATIVE_SHAPE_UNKNOWN,
      `${file}:${line}: a '${rec.type}' record ${what}; this reader knows Claude Code ${CLAUDE_CODE_VERIFIED_VERSIONS.join(', ')} — update the adapter for this version`,
      { origin: { file, line } },
    );
  };
  if (rec.type === 'assistant') {
    const m = rec.message;
    if (typeof m !== 'object' || m === null) fail('has no message');
    if (typeof m.id !== 'string') fail('has no message.id');
    if (!Array.isArray(m.content)) fail('has a message.content that is not an array');
  } else if (rec.type === 'user') {
    const m = rec.message;
    if (typeof m !== 'object' || m === null) fail('has no message');
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) fail('has a message.content that is neither a string nor an array');
  }
  if (KNOWN_TRANSCRIPT.has(rec.type) && typeof rec.uuid !== 'string') fail('has no uuid');
}

async function readRecords(path: string, root: string, rejects: Rejected[]): Promise<NativeRecord[]> {
  const file = relative(root, path) || basename(path);
  const out: NativeRecord[] = [];
  const ctx = createStageContext({ onReject: (r) => rejects.push(r) });
  for await (const env of jsonlFileSource(path, { onBadLine: 'reject', name: file })(ctx)) {
    const rec = env.data as Json;
    if (typeof rec !== 'object' || rec === null || typeof rec.type !== 'string') {
      throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:${env.origin.line}: a line without a "type"; not a Claude Code session file`, { origin: env.origin });
    }
    checkShape(rec, file, env.origin.line!);
    out.push({ record: rec, file, line: env.origin.line! });
  }
  return out;
}

/** Read a main session file and every sub-agent file (and meta.json) next to it. */
export async function readNativeSession(sessionFile: string): Promise<NativeSession> {
  const root = dirname(dirname(sessionFile));
  const sessionId = basename(sessionFile, '.jsonl');
  const rejects: Rejected[] = [];
  const main = await readRecords(sessionFile, root, rejects);
  const subDir = join(dirname(sessionFile), sessionId, 'subagents');
  const subagents: SubagentFile[] = [];
  const entries = await readdir(subDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.filter((e) => e.isFile() && /^agent-.+\.jsonl$/.test(e.name)).sort((a, b) => a.name.localeCompare(b.name))) {
    const agentId = entry.name.slice('agent-'.length, -'.jsonl'.length);
    const metaPath = join(subDir, `agent-${agentId}.meta.json`);
    const metaText = await readFile(metaPath, 'utf8').catch(() => undefined);
    let meta: Json | null = null;
    if (metaText !== undefined) {
      try {
        meta = JSON.parse(metaText) as Json;
      } catch (cause) {
        throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${relative(root, metaPath)}: not valid JSON`, { cause });
      }
    }
    subagents.push({
      agentId,
      records: await readRecords(join(subDir, entry.name), root, rejects),
      meta,
      metaFile: metaText === undefined ? null : relative(root, metaPath),
    });
  }
  return { sessionId, root, main, mainFile: relative(root, sessionFile), subagents, rejects };
}
