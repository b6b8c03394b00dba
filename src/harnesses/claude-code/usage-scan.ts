import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { basename, join } from 'node:path';
import type { TokensByKind } from './participants.js';

/** Only assistant records carry usage; Claude Code writes compact JSON, so this marker is in each of them. */
const MARKER = Buffer.from('"type":"assistant"');

export interface ScannedParticipant {
  /** `session:<id>` for a main transcript, `agent:<id>` for a sub-agent file. */
  participant: string;
  file: string;
  tokens: TokensByKind;
  messages: number;
}

export interface UsageScan {
  participants: ScannedParticipant[];
  files: number;
  bytes: number;
  /** Lines that held the marker but were not valid JSON (counted, never fatal). */
  badLines: number;
}

/**
 * Every *.jsonl below root, sorted. Listed synchronously, one readdir per directory: the async recursive
 * readdir makes a thread-pool round trip per directory (a session has two) and the scan sat idle for 30%
 * of its time waiting on them; Node's own recursive listing is ~15% slower than this walk.
 */
export function sessionFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.isFile() && e.name.endsWith('.jsonl')) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

/**
 * Per-participant usage over a whole CLAUDE_CONFIG_DIR (or projects/ tree), streamed file by file in
 * constant memory per file. Same rules as participantUsage (seeds/004): one count per message.id +
 * requestId, the last record of a message wins, input apart from cache reads and writes, each sub-agent
 * file its own participant. Lines without the assistant marker are never parsed — that is what makes it
 * run at close to read speed.
 */
export async function scanUsage(root: string, options: { workers?: number } = {}): Promise<UsageScan> {
  const wanted = Math.max(1, options.workers ?? 1);
  // Worker threads run the compiled module; from TypeScript sources (tests) the scan stays in this thread.
  if (wanted === 1 || !import.meta.url.endsWith('.js')) return scanFiles(sessionFiles(root));
  // The workers start before the listing, so their start-up (a fresh isolate, the module) overlaps it;
  // each gets its share by message. This thread scans a share too instead of waiting.
  const started = Array.from({ length: wanted - 1 }, () => new Worker(new URL('./usage-scan-worker.js', import.meta.url)));
  const files = sessionFiles(root);
  // Round robin over the sorted list: sessions of all sizes end up in every share, no stat() per file.
  const shares: string[][] = Array.from({ length: wanted }, (_, w) => files.filter((_, i) => i % wanted === w));
  const parts = await Promise.all([
    ...started.map(
      (worker, w) =>
        new Promise<UsageScan>((resolve, reject) => {
          worker.once('message', (m: UsageScan) => {
            resolve(m);
            void worker.terminate();
          });
          worker.once('error', reject);
          worker.postMessage(shares[w + 1]);
        }),
    ),
    scanFiles(shares[0]!),
  ]);
  return {
    participants: parts.flatMap((p) => p.participants).sort((a, b) => a.file.localeCompare(b.file)),
    files: parts.reduce((a, p) => a + p.files, 0),
    bytes: parts.reduce((a, p) => a + p.bytes, 0),
    badLines: parts.reduce((a, p) => a + p.badLines, 0),
  };
}

/** The scan of a list of session files, in this thread. */
export async function scanFiles(list: readonly string[]): Promise<UsageScan> {
  const participants: ScannedParticipant[] = [];
  let bytes = 0;
  let badLines = 0;
  let readBuffer = Buffer.allocUnsafe(1 << 20); // one for all files: most session files are far smaller
  for (const file of list) {
    const name = basename(file, '.jsonl');
    const participant = name.startsWith('agent-') ? `agent:${name.slice(6)}` : `session:${name}`;
    const last = new Map<string, Record<string, any>>();
    const take = (buf: Buffer, start: number, end: number) => {
      try {
        const rec = JSON.parse(buf.toString('utf8', start, end)) as Record<string, any>;
        if (rec.type === 'assistant' && rec.message?.usage) last.set(`${rec.message.id}\u0000${rec.requestId ?? ''}`, rec.message.usage);
      } catch {
        badLines++;
      }
    };
    // Marker first, lines second: only the lines that hold the marker are ever delimited (two newline
    // searches around each hit); the rest of the file is passed over by one memmem per read. The bytes
    // after the last newline of a read move to the front for the next one (a line, or a marker, may
    // straddle the boundary).
    const fd = openSync(file, 'r');
    try {
      let carry = 0;
      let atEnd = false;
      for (;;) {
        if (carry === readBuffer.length) {
          // One line longer than the buffer: grow it (bounded by the line, which must be held to be parsed).
          const bigger = Buffer.allocUnsafe(readBuffer.length * 2);
          readBuffer.copy(bigger, 0, 0, carry);
          readBuffer = bigger;
        }
        const want = readBuffer.length - carry;
        const n = readSync(fd, readBuffer, carry, want, null);
        // A short read of a regular file is its end: no second read to be told so (one syscall per
        // file fewer; a file still being appended is read as it was).
        atEnd = n < want;
        bytes += n;
        const end = carry + n;
        const data = readBuffer.subarray(0, end); // never search the stale bytes after `end`
        // Complete lines end at the last newline; at end of file the rest is the last line.
        const complete = atEnd ? end : data.lastIndexOf(10, end - 1) + 1;
        let from = 0;
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
    } finally {
      closeSync(fd);
    }
    const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
    const n = (x: unknown) => (typeof x === 'number' && x >= 0 ? x : 0);
    for (const u of last.values()) {
      tokens.input += n(u.input_tokens);
      tokens.cache_creation += n(u.cache_creation_input_tokens);
      tokens.cache_read += n(u.cache_read_input_tokens);
      tokens.output += n(u.output_tokens);
      tokens.reasoning += n(u.output_tokens_details?.thinking_tokens);
    }
    participants.push({ participant, file, tokens, messages: last.size });
  }
  return { participants, files: list.length, bytes, badLines };
}
