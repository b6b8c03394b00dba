import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { ParticipantUsage } from '../schemas/participant-usage.js';

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

/** The session files under `root` (the converter's native directory for this harness; HarnessAdapter.sessionFiles), sorted. */
export function nativeArchive(sessionFiles: RegExp, root: string): NativeArchive {
  if (!existsSync(root)) return { root, files: [] };
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => sessionFiles.test(relative(root, f).split('\\').join('/')))
    .sort();
  return { root, files };
}

/**
 * Participants whose status_source names a native file by absolute path, with that path made relative to
 * the native root: the root is a run's temporary HOME (gone after the run) or an archive's raw/native/, so
 * only the relative path means something, and it is the same live and reprocessed.
 */
export function relativeStatusSources<T extends Pick<ParticipantUsage, 'status_source'> & Partial<Pick<ParticipantUsage, 'resumed_by' | 'spawn_status'>>>(participants: T[], root: string): T[] {
  const prefix = resolve(root) + sep;
  const relative = <S extends { status_source: string | null }>(x: S): S => (x.status_source?.includes(prefix) ? { ...x, status_source: x.status_source.split(prefix).join('') } : x);
  return participants.map((p) => {
    const own = relative(p);
    return p.resumed_by ? { ...own, resumed_by: p.resumed_by.map(relative), ...(p.spawn_status ? { spawn_status: relative(p.spawn_status) } : {}) } : own;
  });
}
