import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { ParticipantUsage } from '../schemas/participant-usage.js';
import type { ConvertibleHarness } from './launch.js';

/**
 * The native files a harness wrote for one run, and the directory they are relative to — the directory the
 * converter reads (`roller convert --native`). A capture keeps them under raw/native/ at the same relative
 * paths, so `roller reprocess` converts them again exactly as collect did (same paths, same evidence
 * references) without the harness's HOME.
 */
export interface NativeArchive {
  root: string;
  files: string[];
}

/** Which files under the converter's root are the harness's session data (never settings, caches or credentials). */
const SESSION_FILES: Record<ConvertibleHarness, RegExp> = {
  // projects/<cwd>/<session>.jsonl, <session>/subagents/agent-<id>.jsonl and .meta.json
  'claude-code': /^projects\//,
  codex: /(^|\/)rollout-[^/]*\.jsonl$/,
  // SQLite in WAL mode: the database with its journal files, as the CLI left them
  opencode: /(^|\/)opencode\.db(-wal|-shm)?$/,
  pi: /^\.pi\/agent\/sessions\/.*\.jsonl$/,
  openclaw: /(^|\/)openclaw-agent\.sqlite(-wal|-shm)?$/,
};

/** The session files under `root` (the converter's native directory for this harness), sorted. */
export function nativeArchive(harness: ConvertibleHarness, root: string): NativeArchive {
  if (!existsSync(root)) return { root, files: [] };
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => SESSION_FILES[harness].test(relative(root, f).split('\\').join('/')))
    .sort();
  return { root, files };
}

/**
 * Participants whose status_source names a native file by absolute path, with that path made relative to
 * the native root: the root is a run's temporary HOME (gone after the run) or an archive's raw/native/, so
 * only the relative path means something, and it is the same live and reprocessed.
 */
export function relativeStatusSources<T extends Pick<ParticipantUsage, 'status_source'>>(participants: T[], root: string): T[] {
  const prefix = resolve(root) + sep;
  return participants.map((p) => (p.status_source?.includes(prefix) ? { ...p, status_source: p.status_source.split(prefix).join('') } : p));
}
