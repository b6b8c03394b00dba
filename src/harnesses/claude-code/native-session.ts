import { readdir, readFile, stat } from '../../core/thread-fs.js';
import { basename, dirname, join, relative } from 'node:path';
import { createStageContext } from '../../core/context.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { jsonlFileSource } from '../../core/jsonl-source.js';
import type { Rejected } from '../../core/rejected.js';

/**
 * Claude Code's native session store (reference/harnesses/claude-code.md §6), in the three layouts the version
 * matrix shows (docs/VERSIONS.md):
 *   projects/<encoded-cwd>/<sessionId>.jsonl                              the main transcript (every version)
 *   — before 2.0.30: sub-agent turns inline in it (isSidechain: true), one chain of records per sub-agent
 *   — 2.0.30 to 2.1.x: projects/<encoded-cwd>/agent-<agentId>.jsonl beside it, naming the session in sessionId
 *   — later: projects/<encoded-cwd>/<sessionId>/subagents/agent-<agentId>.jsonl (and .meta.json from 2.1.3xx)
 */
export const CLAUDE_CODE_VERIFIED_VERSIONS = ['2.0.0 to 2.1.332 (docs/VERSIONS.md)'] as const;

/** A sub-agent file of the 2.0.30+ layouts: never a session of its own. */
const AGENT_FILE = /^agent-.+\.jsonl$/;

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
  /** The agent file, relative to the session's root. */
  file: string;
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
      if (entry.isFile() && entry.name.endsWith('.jsonl') && !AGENT_FILE.test(entry.name)) files.push(join(dir, entry.name));
    }
  }
  if (files.length === 0) {
    throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${path}: no Claude Code session (*.jsonl) found; give a CLAUDE_CONFIG_DIR, a projects/<cwd> directory or a session file`);
  }
  return files.sort();
}

const KNOWN_TRANSCRIPT = new Set(['user', 'assistant', 'attachment', 'system']);

/**
 * Every record type the releases of the version matrix (docs/VERSIONS.md) wrote in its runs and the pinned one in
 * the e2e runs, and those interactive sessions write that the public schemas of Claude Code's session files document
 * (summary, file-history-snapshot); any other is refused, loudly: it may carry what this reader would otherwise miss.
 */
const KNOWN_TYPES = new Set([
  ...KNOWN_TRANSCRIPT,
  'progress',
  'queue-operation',
  'last-prompt',
  'cost-state',
  'api-request',
  'api-request-blob',
  'api-request-shape',
  'atis-latch',
  'tools-used',
  // a resumed session (--resume, the follow-up prompts of collect) records its permission mode
  'mode',
  'summary',
  'file-history-snapshot',
]);

/** A record's producer: Claude Code writes its version on every transcript record (a resumed session can mix them). */
const producer = (rec: Json, last: string | undefined) => (typeof rec.version === 'string' ? rec.version : (last ?? 'unknown (no version on the records before this line)'));

/** A record type or shape this reader does not know is an error, never a silent guess. */
function checkShape(rec: Json, file: string, line: number, version: string): void {
  const fail = (what: string) => {
    throw new RollerError(
      ErrorCode.NATIVE_SHAPE_UNKNOWN,
      `${file}:${line}: a '${rec.type}' record ${what} (written by Claude Code ${version}); roller reads the session files of Claude Code ${CLAUDE_CODE_VERIFIED_VERSIONS.join(', ')} and no release among them wrote this shape: run \`roller verify --harness claude-code --versions ${/^\d/.test(version) ? version : '<version>'} --record\` and teach the adapter, or report it with this file`,
      { origin: { file, line } },
    );
  };
  if (!KNOWN_TYPES.has(rec.type)) fail('of a type no verified release wrote');
  if (rec.type === 'assistant') {
    const m = rec.message;
    if (typeof m !== 'object' || m === null) fail('has no message');
    if (typeof m.id !== 'string') fail('has no message.id');
    if (!Array.isArray(m.content)) fail('has a message.content that is not an array');
    if (m.usage != null && (typeof m.usage !== 'object' || (m.usage.input_tokens !== undefined && typeof m.usage.input_tokens !== 'number'))) fail('has a message.usage of another shape');
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
  let version: string | undefined;
  for await (const env of jsonlFileSource(path, { onBadLine: 'reject', name: file })(ctx)) {
    const rec = env.data as Json;
    if (typeof rec !== 'object' || rec === null || typeof rec.type !== 'string') {
      throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:${env.origin.line}: a line without a "type" (after records of Claude Code ${version ?? 'unknown'}); not a Claude Code session file`, { origin: env.origin });
    }
    version = producer(rec, version);
    checkShape(rec, file, env.origin.line!, version);
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
  const nested = (await readdir(subDir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isFile() && AGENT_FILE.test(e.name)).map((e) => join(subDir, e.name));
  // 2.0.30 to 2.1.x: agent files beside the session files of the same project, each naming its session.
  const beside = (await readdir(dirname(sessionFile), { withFileTypes: true }).catch(() => [])).filter((e) => e.isFile() && AGENT_FILE.test(e.name)).map((e) => join(dirname(sessionFile), e.name));
  for (const path of [...nested, ...beside].sort((a, b) => basename(a).localeCompare(basename(b)))) {
    const agentId = basename(path).slice('agent-'.length, -'.jsonl'.length);
    const fileRejects: Rejected[] = [];
    const records = await readRecords(path, root, fileRejects);
    if (path.startsWith(`${subDir}/`) === false && !records.some((r) => r.record.sessionId === sessionId)) continue; // another session's
    rejects.push(...fileRejects);
    const metaPath = join(dirname(path), `agent-${agentId}.meta.json`);
    const metaText = await readFile(metaPath, 'utf8').catch(() => undefined);
    let meta: Json | null = null;
    if (metaText !== undefined) {
      try {
        meta = JSON.parse(metaText) as Json;
      } catch (cause) {
        throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${relative(root, metaPath)}: not valid JSON`, { cause });
      }
    }
    subagents.push({ agentId, records, meta, metaFile: metaText === undefined ? null : relative(root, metaPath), file: relative(root, path) });
  }
  return { sessionId, root, main, mainFile: relative(root, sessionFile), subagents, rejects };
}
