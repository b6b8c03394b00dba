import { readdirSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { basename, join } from 'node:path';
import { LineSplitter } from '../../core/line-splitter.js';
import { readFileChunks } from '../../core/jsonl-source.js';
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
 * Every *.jsonl below root. Listed synchronously: the async recursive readdir makes one thread-pool round
 * trip per directory (a session has two), and the scan sat idle for 30% of its time waiting on them.
 */
export function sessionFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * Per-participant usage over a whole CLAUDE_CONFIG_DIR (or projects/ tree), streamed file by file in
 * constant memory per file. Same rules as participantUsage (seeds/004): one count per message.id +
 * requestId, the last record of a message wins, input apart from cache reads and writes, each sub-agent
 * file its own participant. Lines without the assistant marker are never parsed — that is what makes it
 * run at close to read speed.
 */
export async function scanUsage(root: string, options: { workers?: number } = {}): Promise<UsageScan> {
  const files = sessionFiles(root);
  const workers = Math.max(1, Math.min(options.workers ?? 1, files.length));
  // Worker threads run the compiled module; from TypeScript sources (tests) the scan stays in this thread.
  if (workers === 1 || !import.meta.url.endsWith('.js')) return scanFiles(files);
  const sizes = files.map((f) => statSync(f).size);
  const shares: string[][] = Array.from({ length: workers }, () => []);
  const load = new Array<number>(workers).fill(0);
  for (const i of files.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!)) {
    const w = load.indexOf(Math.min(...load)); // largest first onto the least loaded: balanced by bytes
    shares[w]!.push(files[i]!);
    load[w]! += sizes[i]!;
  }
  const parts = await Promise.all(
    shares.map(
      (share) =>
        new Promise<UsageScan>((resolve, reject) => {
          const worker = new Worker(new URL('./usage-scan-worker.js', import.meta.url), { workerData: { files: share } });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
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
  let files = 0;
  let bytes = 0;
  let badLines = 0;
  const readBuffer = Buffer.allocUnsafe(1 << 20); // one for all files: most session files are far smaller
  for (const file of list) {
    files++;
    const name = basename(file, '.jsonl');
    const participant = name.startsWith('agent-') ? `agent:${name.slice(6)}` : `session:${name}`;
    const last = new Map<string, Record<string, any>>();
    const splitter = new LineSplitter(64 << 20);
    const take = (buf: Buffer, start: number, end: number) => {
      try {
        const rec = JSON.parse(buf.toString('utf8', start, end)) as Record<string, any>;
        if (rec.type === 'assistant' && rec.message?.usage) last.set(`${rec.message.id}\u0000${rec.requestId ?? ''}`, rec.message.usage);
      } catch {
        badLines++;
      }
    };
    for await (const chunk of readFileChunks(file, readBuffer.length, 'sync', readBuffer)) {
      bytes += chunk.length;
      // Marker positions of this chunk, walked alongside the lines (each line is checked in O(1)).
      const marks: number[] = [];
      for (let i = chunk.indexOf(MARKER); i !== -1; i = chunk.indexOf(MARKER, i + 1)) marks.push(i);
      let m = 0;
      splitter.push(chunk, {
        line(buf, start, end) {
          if (buf !== chunk) {
            if (buf.subarray(start, end).indexOf(MARKER) !== -1) take(buf, start, end); // a line joined across chunks
            return;
          }
          while (m < marks.length && marks[m]! < start) m++;
          if (m < marks.length && marks[m]! < end) take(buf, start, end);
        },
        oversize() {
          badLines++;
        },
      });
    }
    const tail = splitter.finish();
    if (tail && tail.buf.indexOf(MARKER) !== -1) take(tail.buf, 0, tail.buf.length);
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
  return { participants, files, bytes, badLines };
}
