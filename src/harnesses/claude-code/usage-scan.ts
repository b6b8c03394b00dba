import { closeSync, openSync, readdirSync, readSync, statSync, type Dirent } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { usageTokens, zeroTokens, type TokensByKind } from './participants.js';
import { startWorker } from '../../core/worker-exec-argv.js';
import { addTo } from '../../core/multimap.js';

/** Only assistant records carry usage; Claude Code writes compact JSON, so this marker is in each of them. */
const MARKER = Buffer.from('"type":"assistant"');
/** A sub-agent is named by its agentId: in a parent's tool_result (toolUseResult.agentId), and on its own lines. */
const AGENT_MARKER = Buffer.from('"agentId":"');
/** Releases before 2.0.30 wrote sub-agent turns inline in the main file: every such line carries this. */
const SIDE_MARKER = Buffer.from('"isSidechain":true');

export interface ScannedParticipant {
  /** `session:<id>` for a main transcript, `agent:<id>` for a sub-agent file. */
  participant: string;
  /** A sub-agent file's session (`session:<id>`, from its <session>/subagents/ directory); null for a session. */
  parent: string | null;
  /** Its file; for a missing sub-agent, where its file should be. */
  file: string;
  tokens: TokensByKind;
  messages: number;
  /** A sub-agent another file names (its agentId) whose file is not there: its tokens are unknown, not zero. */
  missing?: { referenced_by: string };
  /**
   * Messages whose records hold only the stream-start usage snapshot (no stop_reason; Claude Code 2.1.20 to
   * 2.1.50): their output count is unknown, and so the participant's tokens are (convert --wire counts them).
   */
  tokens_unknown?: { messages: number; reason: string };
}

export interface UsageScan {
  participants: ScannedParticipant[];
  files: number;
  bytes: number;
  /** Lines that held the marker but were not valid JSON (counted, never fatal). */
  badLines: number;
  /**
   * Files and directories that could not be read, with the system's reason: left out of the participants and the
   * totals, never silently. ENOENT is a file that went away between listing and reading (a live config dir).
   */
  unreadable: UnreadablePath[];
  /** agentIds named in the files scanned, with a file naming each (a missing sub-agent file shows against these). */
  referenced: Map<string, string>;
}

export interface UnreadablePath {
  path: string;
  code: string;
  message: string;
}

function unreadable(path: string, err: unknown): UnreadablePath {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code !== 'string') throw err; // not an I/O error: a bug, not a file to skip
  return { path, code: e.code, message: e.message };
}

/** A config dir keeps its sessions under projects/; other .jsonl files beside it (history.jsonl) are not transcripts. */
function transcriptRoot(root: string): string {
  const projects = join(root, 'projects');
  return statSync(projects, { throwIfNoEntry: false })?.isDirectory() ? projects : root;
}

/** Deeper than this below a unit is a link loop, not a session layout. */
const MAX_DEPTH = 16;

/**
 * What a directory entry is, following a symbolic link: a linked project or session file is read like any other.
 * Throws the link's error (ENOENT when it dangles, ELOOP).
 */
function kindOf(path: string, e: Dirent): EntryKind {
  if (e.isDirectory()) return 'dir';
  if (e.isFile()) return 'file';
  if (!e.isSymbolicLink()) return 'other';
  const s = statSync(path);
  return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
}

type EntryKind = 'dir' | 'file' | 'other';

/**
 * Visits each entry of dir with its kind (links followed). Listed synchronously, one readdir per directory:
 * the async recursive readdir makes a thread-pool round trip per directory (a session has two) and the scan sat
 * idle for 30% of its time waiting on them. A directory that cannot be listed (unless `strict`: then its error
 * is thrown), or a link that cannot be followed, goes to `failed`.
 */
function eachEntry(dir: string, failed: UnreadablePath[], visit: (path: string, kind: EntryKind, name: string) => void, strict = false): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (strict) throw err;
    failed.push(unreadable(dir, err));
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    let kind: EntryKind;
    try {
      kind = kindOf(path, e);
    } catch (err) {
      failed.push(unreadable(path, err));
      continue;
    }
    visit(path, kind, e.name);
  }
}

const isTranscript = (kind: EntryKind, name: string): boolean => kind === 'file' && name.endsWith('.jsonl');

/** Every *.jsonl below dir (Node's own recursive listing is ~15% slower than this walk, and follows no links). */
function walk(dir: string, out: string[], failed: UnreadablePath[], depth = 0): string[] {
  eachEntry(dir, failed, (path, kind, name) => {
    if (isTranscript(kind, name)) out.push(path);
    else if (kind === 'dir') {
      if (depth < MAX_DEPTH) walk(path, out, failed, depth + 1);
      else failed.push({ path, code: 'ELOOP', message: `more than ${MAX_DEPTH} directories deep: a link loop? not read` });
    }
  });
  return out;
}

/**
 * The units of work of a scan: each entry two levels down (a project's session file, or a session's
 * directory with its sub-agents, walked by whichever thread takes it; deeper levels are walked too), and
 * any .jsonl file above that. Two readdirs per project here; the thousands of session directories are
 * listed in parallel by the threads. The root itself must be listable (its error is the caller's).
 */
export function scanUnits(root: string): { units: string[]; unreadable: UnreadablePath[] } {
  const units: string[] = [];
  const failed: UnreadablePath[] = [];
  const top = transcriptRoot(root);
  const project = (path: string, kind: EntryKind, name: string): void => {
    if (isTranscript(kind, name)) units.push(path);
    else if (kind === 'dir') {
      eachEntry(path, failed, (inner, innerKind, innerName) => {
        // A directory unit ends with '/': the thread that takes it walks it, without a stat to tell.
        if (innerKind === 'dir') units.push(`${inner}/`);
        else if (isTranscript(innerKind, innerName)) units.push(inner);
      });
    }
  };
  eachEntry(top, failed, project, true);
  return { units: units.sort(), unreadable: failed };
}

/** What a worker thread is given: the units and the shared counter of the next unit to take. */
export interface ScanShare {
  units: string[];
  next: Int32Array;
}

/**
 * Takes units until none is left (Atomics.add on the shared counter: a thread that is done early takes
 * more, so one large project does not leave the other thread idle) and scans them.
 */
export function scanShare({ units, next }: ScanShare): UsageScan {
  const scan: UsageScan = { participants: [], files: 0, bytes: 0, badLines: 0, unreadable: [], referenced: new Map() };
  for (let i = Atomics.add(next, 0, 1); i < units.length; i = Atomics.add(next, 0, 1)) {
    const unit = units[i]!;
    const files = unit.endsWith('/') ? walk(unit.slice(0, -1), [], scan.unreadable) : [unit];
    const part = scanFiles(files);
    for (const u of part.unreadable) scan.unreadable.push(u);
    for (const p of part.participants) scan.participants.push(p);
    scan.files += part.files;
    scan.bytes += part.bytes;
    scan.badLines += part.badLines;
    for (const [id, file] of part.referenced) scan.referenced.set(id, file);
  }
  return scan;
}

const byFile = (a: ScannedParticipant, b: ScannedParticipant): number => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);

/**
 * Per-participant usage over a whole CLAUDE_CONFIG_DIR (or projects/ tree), streamed file by file in
 * constant memory per file. Same rules as participantUsage (seeds/004): one count per message.id +
 * requestId, the last record of a message wins, input apart from cache reads and writes, each sub-agent
 * file its own participant. Lines without the assistant marker are never parsed — that is what makes it
 * run at close to read speed. Participants come sorted by file, whatever the number of threads.
 */
export async function scanUsage(root: string, options: { workers?: number } = {}): Promise<UsageScan> {
  // Worker threads run the compiled module; from TypeScript sources (tests) the scan stays in this thread.
  const threads = import.meta.url.endsWith('.js') ? Math.max(1, options.workers ?? defaultScanWorkers()) : 1;
  // The workers start first, so their start-up (a fresh isolate, the module) overlaps the listing and this
  // thread's first units.
  const started = Array.from({ length: threads - 1 }, () => startWorker(new URL('./usage-scan-worker.js', import.meta.url)));
  let parts: UsageScan[];
  try {
    const listed = scanUnits(root);
    const share: ScanShare = { units: listed.units, next: new Int32Array(new SharedArrayBuffer(4)) };
    const others = started.map(
      (worker) =>
        new Promise<UsageScan>((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
          worker.postMessage(share);
        }),
    );
    parts = [scanShare(share), ...(await Promise.all(others))];
    parts[0]!.unreadable.push(...listed.unreadable);
  } finally {
    for (const w of started) void w.terminate();
  }
  const present = new Set(parts.flatMap((p) => p.participants.map((x) => x.participant)));
  const missing: ScannedParticipant[] = [];
  for (const part of parts) {
    for (const [id, by] of part.referenced) {
      if (present.has(`agent:${id}`)) continue;
      present.add(`agent:${id}`);
      // Named by a session file or by a sub-agent file of a session: the sub-agent's file belongs to that session.
      const session = basename(dirname(by)) === 'subagents' ? basename(dirname(dirname(by))) : basename(by, '.jsonl');
      const sessionDir = basename(dirname(by)) === 'subagents' ? dirname(dirname(by)) : join(dirname(by), session);
      missing.push({ participant: `agent:${id}`, parent: `session:${session}`, file: join(sessionDir, 'subagents', `agent-${id}.jsonl`), tokens: zeroTokens(), messages: 0, missing: { referenced_by: by } });
    }
  }
  return {
    participants: [...parts.flatMap((p) => p.participants), ...missing].sort(byFile),
    files: parts.reduce((a, p) => a + p.files, 0),
    bytes: parts.reduce((a, p) => a + p.bytes, 0),
    badLines: parts.reduce((a, p) => a + p.badLines, 0),
    unreadable: parts.flatMap((p) => p.unreadable).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    referenced: new Map(parts.flatMap((p) => [...p.referenced])),
  };
}

/**
 * Two threads where there are two cores: the scan is bound by reading and opening files, and a second
 * thread overlaps those. More threads gained nothing on the machines measured.
 */
export function defaultScanWorkers(): number {
  return Math.min(2, availableParallelism());
}

/**
 * The read buffer of this thread, reused by every file and unit: most session files are far smaller, and a
 * megabyte allocated per unit (thousands of them) cost more than the scan.
 */
const threadReadBuffer = Buffer.allocUnsafe(1 << 20);

/** The scan of a list of session files, in this thread. */
export function scanFiles(list: readonly string[]): UsageScan {
  const participants: ScannedParticipant[] = [];
  let bytes = 0;
  let badLines = 0;
  const failed: UnreadablePath[] = [];
  /** agentId -> a file that names it (the parent's tool_result): checked against the sub-agent files present. */
  const referenced = new Map<string, string>();
  let readBuffer = threadReadBuffer;
  for (const file of list) {
    const name = basename(file, '.jsonl');
    const agent = name.startsWith('agent-');
    const participant = agent ? `agent:${name.slice(6)}` : `session:${name}`;
    const subagents = dirname(file);
    const parent = agent && basename(subagents) === 'subagents' ? `session:${basename(dirname(subagents))}` : null;
    const last = new Map<string, Record<string, any>>();
    const final = new Set<string>();
    // Inline sidechains (main files of releases before 2.0.30): their messages and the uuid chain that groups them.
    const sideMessages = new Map<string, { uuid: string | null; agentId: string | null }>();
    const sideParent = new Map<string, string | null>();
    const ownAgent = agent ? name.slice(6) : null;
    const take = (buf: Buffer, start: number, end: number) => {
      try {
        const rec = JSON.parse(buf.toString('utf8', start, end)) as Record<string, any>;
        if (rec.type === 'assistant' && rec.message?.usage) {
          const key = `${rec.message.id}\u0000${rec.requestId ?? ''}`;
          last.set(key, rec.message.usage);
          if (rec.message.stop_reason != null) final.add(key);
          if (!agent && rec.isSidechain === true) sideMessages.set(key, { uuid: typeof rec.uuid === 'string' ? rec.uuid : null, agentId: typeof rec.agentId === 'string' ? rec.agentId : null });
        }
      } catch {
        badLines++;
      }
    };
    const takeSide = (buf: Buffer, start: number, end: number) => {
      try {
        const rec = JSON.parse(buf.toString('utf8', start, end)) as Record<string, any>;
        if (typeof rec.uuid === 'string') sideParent.set(rec.uuid, typeof rec.parentUuid === 'string' ? rec.parentUuid : null);
      } catch {
        // counted by the assistant pass where it matters
      }
    };
    // Marker first, lines second: only the lines that hold the marker are ever delimited (two newline
    // searches around each hit); the rest of the file is passed over by one memmem per read. The bytes
    // after the last newline of a read move to the front for the next one (a line, or a marker, may
    // straddle the boundary).
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      failed.push(unreadable(file, err));
      continue;
    }
    try {
      let carry = 0;
      let atEnd = false;
      for (;;) {
        if (carry === readBuffer.length) {
          // One line longer than the buffer: grow it (bounded by the line, which must be held to be parsed).
          const bigger = Buffer.allocUnsafe(readBuffer.length * 2);
          readBuffer.copy(bigger, 0, 0, carry);
          readBuffer = bigger; // for this file only: the next one starts with the 1 MB buffer again
        }
        const want = readBuffer.length - carry;
        const n = readSync(fd, readBuffer, carry, want, null); // an error here leaves the whole file out (below)
        // A short read of a regular file is its end: no second read to be told so (one syscall per
        // file fewer; a file still being appended is read as it was).
        atEnd = n < want;
        bytes += n;
        const end = carry + n;
        const data = readBuffer.subarray(0, end); // never search the stale bytes after `end`
        // Complete lines end at the last newline; at end of file the rest is the last line.
        const complete = atEnd ? end : data.lastIndexOf(10, end - 1) + 1;
        let from = 0;
        for (let i = data.indexOf(AGENT_MARKER, 0); i !== -1 && i < complete; i = data.indexOf(AGENT_MARKER, i + AGENT_MARKER.length)) {
          const start = i + AGENT_MARKER.length;
          const close = data.indexOf(34, start);
          if (close === -1 || close - start > 200) continue;
          const id = data.toString('latin1', start, close);
          if (id !== ownAgent) referenced.set(id, file);
        }
        if (!agent) {
          for (let i = data.indexOf(SIDE_MARKER, 0), after = 0; i !== -1 && i < complete; i = data.indexOf(SIDE_MARKER, after)) {
            const lineStart = data.lastIndexOf(10, i) + 1;
            let lineEnd = data.indexOf(10, i);
            if (lineEnd === -1) lineEnd = end;
            takeSide(data, lineStart, lineEnd);
            after = lineEnd + 1;
            if (after >= complete) break;
          }
        }
        for (let i = data.indexOf(MARKER, 0); i !== -1 && i < complete; i = data.indexOf(MARKER, from)) {
          const lineStart = data.lastIndexOf(10, i) + 1;
          let lineEnd = data.indexOf(10, i);
          if (lineEnd === -1) lineEnd = end;
          if (lineStart >= from) take(data, lineStart, lineEnd);
          from = lineEnd + 1;
          if (from >= complete) break;
        }
        if (atEnd) break;
        carry = end - complete;
        if (carry > 0) readBuffer.copy(readBuffer, 0, complete, end);
      }
    } catch (err) {
      // A read that fails part-way (EIO, EISDIR): the file's counts so far would be a guess, so none are kept.
      failed.push(unreadable(file, err));
      continue;
    } finally {
      closeSync(fd);
    }
    // Each inline chain its own participant (as convert groups them: by agentId, else by the chain's first uuid).
    const chains = new Map<string, string[]>();
    for (const [key, m] of sideMessages) {
      let root = m.uuid;
      for (let up = root, hops = 0; up !== null && hops < 100_000; hops++) {
        root = up;
        up = sideParent.get(up) ?? null;
      }
      const chain = m.agentId !== null ? `agent:${m.agentId}` : `sidechain:${root ?? file}`;
      addTo(chains, chain, key);
    }
    const counted = (keys: readonly string[]): Pick<ScannedParticipant, 'tokens' | 'messages' | 'tokens_unknown'> => {
      const snapshots = keys.filter((k) => !final.has(k)).length;
      return {
        tokens: usageTokens(keys.map((k) => last.get(k)!)),
        messages: keys.length,
        ...(snapshots > 0 ? { tokens_unknown: { messages: snapshots, reason: `${snapshots} message(s) hold only the stream-start usage snapshot (no stop_reason): output unknown, not zero; roller convert --wire counts them from the capture` } } : {}),
      };
    };
    participants.push({ participant, parent, file, ...counted([...last.keys()].filter((k) => !sideMessages.has(k))) });
    for (const [chain, keys] of chains) participants.push({ participant: chain, parent: null, file, ...counted(keys) });
  }
  return { participants, files: list.length - failed.length, bytes, badLines, unreadable: failed, referenced };
}
