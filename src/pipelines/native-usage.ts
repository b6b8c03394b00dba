import { stat } from 'node:fs/promises';
import { ErrorCode, RollerError } from '../core/errors.js';
import { addTokens, zeroTokens, type TokensByKind } from '../schemas/participant-usage.js';
import { scanUsage, type ScannedParticipant, type UnreadablePath } from '../harnesses/claude-code/usage-scan.js';

export interface NativeUsageReport {
  schema: 'roller.native-usage/v1';
  harness: 'claude-code';
  root: string;
  files: number;
  bytes: number;
  /** Lines that held the assistant marker but were not JSON (a line cut by a crash): counted, not fatal. */
  bad_lines: number;
  /** Files and directories that could not be read (code and message): not in the participants or the totals. */
  unreadable: UnreadablePath[];
  /** Each participant's own tokens summed once: a sub-agent's are never also its session's. */
  totals: TokensByKind & { messages: number };
  /** Set when a sub-agent some file names has no file: the totals leave its tokens out (unknown, not zero). */
  partial: { missing: number; tokens_unknown?: number; reason: string } | null;
  participants: ScannedParticipant[];
}

/**
 * Per-participant usage of every Claude Code session under a CLAUDE_CONFIG_DIR (or any directory below
 * it): each main transcript and each sub-agent file is its own participant, a message counted once per
 * message.id + requestId (seeds/004). Reads the native files only; nothing is written.
 */
export async function nativeUsage(root: string, options: { workers?: number } = {}): Promise<NativeUsageReport> {
  const s = await stat(root).catch(() => null);
  if (!s?.isDirectory()) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${root}: not a directory; give a CLAUDE_CONFIG_DIR (e.g. ~/.claude) or its projects/ directory`);
  const scan = await scanUsage(root, options);
  const totals = { ...zeroTokens(), messages: 0 };
  for (const p of scan.participants) {
    addTokens(totals, p.tokens);
    totals.messages += p.messages;
  }
  const missing = scan.participants.filter((p) => p.missing).length;
  const unknown = scan.participants.filter((p) => p.tokens_unknown).length;
  const reasons = [
    ...(missing > 0 ? [`${missing} sub-agent(s) named by their parent have no file: their tokens are unknown and not in the totals`] : []),
    ...(unknown > 0 ? [`${unknown} participant(s) whose files hold only the stream-start usage snapshot of some messages (Claude Code 2.1.20 to 2.1.50): their output counts are unknown, the totals are not true counts`] : []),
  ];
  const partial = reasons.length === 0 ? null : { missing, ...(unknown > 0 ? { tokens_unknown: unknown } : {}), reason: reasons.join('; ') };
  return { schema: 'roller.native-usage/v1', harness: 'claude-code', root, files: scan.files, bytes: scan.bytes, bad_lines: scan.badLines, unreadable: scan.unreadable, totals, partial, participants: scan.participants };
}

/**
 * The text report: a line per participant (sub-agents under their session), then the totals. Yielded in
 * chunks of many lines: a config dir holds thousands of files, and a write per line would cost more than
 * the scan.
 */
export function* formatNativeUsage(r: NativeUsageReport): Generator<string> {
  const n = (x: number) => String(x).padStart(12);
  const row = (label: string, t: TokensByKind, messages: number) => `${label.padEnd(50)} ${n(t.input)} ${n(t.cache_creation)} ${n(t.cache_read)} ${n(t.output)} ${String(messages).padStart(8)}`;
  const line = (label: string, p: ScannedParticipant) =>
    p.missing ? `${label.padEnd(50)} missing: named by ${p.missing.referenced_by}, no ${p.file}` : `${row(label, p.tokens, p.messages)}${p.tokens_unknown ? '  tokens unknown' : ''}`;
  yield `${'participant'.padEnd(50)} ${'input'.padStart(12)} ${'cache write'.padStart(12)} ${'cache read'.padStart(12)} ${'output'.padStart(12)} ${'messages'.padStart(8)}`;
  const children = new Map<string, ScannedParticipant[]>();
  for (const p of r.participants) {
    if (p.parent === null) continue;
    const list = children.get(p.parent);
    if (list) list.push(p);
    else children.set(p.parent, [p]);
  }
  const sessions = new Set(r.participants.filter((p) => p.parent === null).map((p) => p.participant));
  let chunk: string[] = [];
  for (const p of r.participants) {
    if (p.parent !== null && sessions.has(p.parent)) continue; // listed under its session
    chunk.push(line(p.participant, p));
    for (const c of children.get(p.participant) ?? []) chunk.push(line(`  ${c.participant}`, c));
    if (chunk.length >= 1000) {
      yield chunk.join('\n');
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk.join('\n');
  yield row(`total (${r.participants.length} participants, ${r.files} files)${r.partial ? ', PARTIAL' : ''}`, r.totals, r.totals.messages);
  if (r.partial) yield `partial: ${r.partial.reason}`;
  if (r.bad_lines > 0) yield `${r.bad_lines} lines held an assistant record but were not JSON (cut lines?): not counted`;
  for (const u of r.unreadable) yield `not read: ${u.path}: ${u.code === 'ENOENT' ? 'gone before it was read (a live session dir)' : u.message}`;
}
