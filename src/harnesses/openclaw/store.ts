import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openReadonlySqlite } from '../../core/sqlite.js';
import { decompress } from 'fzstd';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ParticipantUsage } from '../claude-code/participants.js';
import { piParticipants, piToActf, sessionOfRecords, type PiSession } from '../pi/session.js';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import type { NativeCapture } from '../native-capture.js';
import { accountMirrors, type MirrorAccounting } from './mirrors.js';

export const OPENCLAW_VERIFIED_VERSIONS = ['2026.9.6'] as const;
export const OPENCLAW_RAW_SCHEMA = 'roller.openclaw-transcript/v1' as const;

type Json = Record<string, any>;

export interface OpenClawSession {
  /** The transcript; its messages leave out CLI mirrors that repeat the delivered reply. */
  transcript: PiSession;
  /** Tokens, requests and cost with CLI mirror replies counted once (mirrors.ts). */
  accounting: MirrorAccounting;
  /** The trajectory trace's context.compiled event: the system prompt and tools the model was given. */
  compiled: Json | null;
  /** sessions_spawn attempts: their tool result (a child key, or the error that kept the child from running). */
  spawns: { toolCallId: string; result: string }[];
}

/** The agent store under an OpenClaw state dir: agents/<agent>/agent/openclaw-agent.sqlite. */
export function findOpenClawStore(native: string, agent = 'main'): string {
  for (const p of [native, join(native, 'agents', agent, 'agent', 'openclaw-agent.sqlite'), join(native, '.openclaw', 'state', 'agents', agent, 'agent', 'openclaw-agent.sqlite')]) {
    if (p.endsWith('.sqlite') && existsSync(p)) return p;
  }
  throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no openclaw-agent.sqlite under ${native}: pass an OpenClaw HOME, its --state-dir, or the .sqlite file`);
}

/**
 * The transcripts (transcript_events: a Pi-style entry tree, large events zstd-compressed) and the
 * trajectory trace (trajectory_runtime_events), read with SQLite. Unknown shapes are errors naming the table.
 */
export function readOpenClawStore(dbPath: string): OpenClawSession[] {
  const db = openReadonlySqlite(dbPath);
  try {
    const tables = new Set((db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((t) => t.name));
    for (const t of ['transcript_events', 'trajectory_runtime_events']) {
      if (!tables.has(t)) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${dbPath}: no '${t}' table; roller reads OpenClaw ${OPENCLAW_VERIFIED_VERSIONS.join('/')}`);
    }
    const rows = db.prepare('select session_id, seq, event_json, event_zstd from transcript_events order by session_id, seq').all() as Json[];
    const bySession = new Map<string, Json[]>();
    for (const r of rows) {
      let text: string;
      if (typeof r.event_json === 'string') text = r.event_json;
      else if (r.event_zstd) text = new TextDecoder().decode(decompress(new Uint8Array(r.event_zstd as Buffer)));
      else throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${dbPath}: transcript_events ${r.session_id}/${r.seq} has neither event_json nor event_zstd`);
      const list = bySession.get(String(r.session_id)) ?? [];
      list.push(JSON.parse(text) as Json);
      bySession.set(String(r.session_id), list);
    }
    const compiled = new Map<string, Json>();
    for (const r of db.prepare("select event_json from trajectory_runtime_events where json_extract(event_json, '$.type') = 'context.compiled' order by seq").all() as Json[]) {
      const e = JSON.parse(String(r.event_json)) as Json;
      if (typeof e.sessionId === 'string') compiled.set(e.sessionId, e.data ?? null);
    }
    return [...bySession.entries()].map(([id, records]) => {
      if (records[0]?.type !== 'session') throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${dbPath}: transcript of session ${id} does not start with a session entry`);
      const whole = sessionOfRecords(`${dbPath}#${id}`, records);
      const accounting = accountMirrors(whole.branch);
      const omitted = new Set(accounting.messages.filter((a) => !a.kept).map((a) => a.entry));
      const transcript = { ...whole, messages: whole.messages.filter((m) => !omitted.has(m)) };
      const spawns = transcript.messages
        .map((m) => m.message as Json)
        .filter((m) => m.role === 'toolResult' && m.toolName === 'sessions_spawn')
        .map((m) => ({
          toolCallId: String(m.toolCallId),
          result: typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? (m.content as Json[]).map((c) => String(c.text ?? '')).join('') : JSON.stringify(m.content),
        }));
      return { transcript, accounting, compiled: compiled.get(id) ?? null, spawns };
    });
  } finally {
    db.close();
  }
}

/** The root participant (children of sessions_spawn do not run in embedded exec mode: see spawns). */
export function openClawParticipants(s: OpenClawSession): ParticipantUsage[] {
  const [root] = piParticipants(s.transcript);
  const failed = s.spawns.filter((x) => /"status"\s*:\s*"error"/.test(x.result));
  const a = s.accounting;
  const notes = [
    failed.length > 0 ? `${failed.length} sessions_spawn call(s) made no child here: ${failed.map((f) => f.result.slice(0, 160)).join(' | ')}` : '',
    a.invalidCounters.length > 0 ? `invalid native usage counters (counted as 0): ${a.invalidCounters.join('; ')}` : '',
  ].filter(Boolean);
  return [
    {
      ...root!,
      // Mirror replies counted once (seeds/003 §5.3); the requests are the calls that produced a message.
      tokens: { input: a.tokens.input, output: a.tokens.output, cache_read: a.tokens.cacheRead, cache_creation: a.tokens.cacheWrite, reasoning: root!.tokens.reasoning },
      messages: a.requests,
      cost_usd: a.cost,
      cost_note: a.cost === null ? 'no cost reported' : 'session-reported cost, CLI mirrors credited only for what no earlier report covered',
      reason: notes.length > 0 ? notes.join('; ') : root!.reason,
    },
  ];
}

/**
 * ACTF of the session: the transcript's steps. System prompt and tools from the captured requests when there
 * are some (what the model was offered — the wire offered tools the trajectory trace's context.compiled
 * lacks, sessions_spawn among them); otherwise from context.compiled.
 */
export function openClawToActf(s: OpenClawSession, options: { wire?: readonly Call[] } = {}): Actf {
  const actf = piToActf(s.transcript);
  const request = options.wire?.find((c) => Array.isArray((c.context as Json | null)?.tools))?.context as Json | undefined;
  if (request) {
    const system = ((request.messages ?? []) as Json[]).filter((m) => m.role === 'system' || m.role === 'developer').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
    return { ...actf, system_prompt: system.join('\n\n'), system_prompt_source: system.length > 0 ? 'wire' : actf.system_prompt_source, tools: request.tools as Actf['tools'], tools_source: 'wire' };
  }
  if (!s.compiled) return actf;
  const tools = Array.isArray(s.compiled.tools)
    ? (s.compiled.tools as Json[]).map((t) => ({ type: 'function' as const, function: { name: String(t.name), ...(t.description ? { description: String(t.description) } : {}), parameters: (t.parameters ?? { type: 'object' }) as Record<string, unknown> } }))
    : null;
  return {
    ...actf,
    system_prompt: typeof s.compiled.systemPrompt === 'string' ? s.compiled.systemPrompt : actf.system_prompt,
    system_prompt_source: typeof s.compiled.systemPrompt === 'string' ? 'native' : actf.system_prompt_source,
    tools: tools ?? actf.tools,
    tools_source: tools ? 'native_derived' : actf.tools_source,
  };
}

/**
 * OpenClaw's NativeCapture: the transcript keeps no response id and requests carry no session header, so a
 * call belongs to the root because it went through this run's own proxy (exec mode runs one participant);
 * coverage is the count of its assistant messages.
 */
export function openClawNativeCapture(s: OpenClawSession, version: string, dbPath: string): NativeCapture {
  const participants = openClawParticipants(s);
  const root = participants[0]!;
  return {
    harness: { name: 'openclaw', version },
    participants,
    capabilities: { native_output_coverage: 'count', delegation: 'native', background: false },
    outputs: { method: 'count', counts: { [root.participant]: root.messages } },
    soleParticipant: { participant: root.participant, evidence: "the call went through this run's own proxy and OpenClaw exec runs one participant (no response id or session header to join on)" },
    nativeFiles: [dbPath],
  };
}
