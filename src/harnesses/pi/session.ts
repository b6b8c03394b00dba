import { readdirSync, readFileSync, statSync } from 'node:fs';
import { requestSetup } from '../../transforms/protocols/request-setup.js';
import { join } from 'node:path';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { ACTF_SCHEMA_VERSION, type Actf, type ActfStep } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import { newStep, timingOf } from '../../transforms/actf/step.js';
import type { ParticipantUsage, TokensByKind } from '../../schemas/participant-usage.js';

export const PI_VERIFIED_VERSIONS = ['0.60.0 to 0.73.1 (docs/VERSIONS.md)'] as const;
export const PI_RAW_SCHEMA = 'roller.pi-events/v1' as const;

type Json = Record<string, any>;

export interface PiSession {
  file: string;
  id: string;
  /** Every record as written, in file order (trace.jsonl keeps them as they are). */
  records: Json[];
  /** The message records of the active branch (the leaf's ancestry through parentId), in order. */
  messages: Json[];
  /** Every entry of the active branch, the header first (turn boundaries: session, compaction, user). */
  branch: Json[];
}

/** Every session file (sessions/<cwd>/<time>_<uuid>.jsonl) under a HOME, an agent dir, or one file. */
export function findPiSessions(native: string): string[] {
  if (native.endsWith('.jsonl')) return [native];
  for (const dir of [join(native, '.pi', 'agent', 'sessions'), join(native, 'sessions'), native]) {
    try {
      if (!statSync(dir).isDirectory()) continue;
    } catch {
      continue;
    }
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
      .map((e) => join(e.parentPath, e.name))
      .sort();
    if (files.length > 0) return files;
  }
  throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no Pi session file under ${native}: pass a HOME, its .pi/agent dir, or a session .jsonl`);
}

/**
 * Session format 1 (Pi before 0.31) is a linear list of entries without ids: read as the tree Pi itself migrates it
 * to (each entry the child of the one before), so the active branch is the whole file. Format 2 differs from 3 only in
 * a message role (hookMessage, later custom) this reader does not use.
 */
function asTree(records: readonly Json[]): Json[] {
  return records.map((r, i) => (i === 0 ? r : { ...r, id: r.id ?? `line-${i + 1}`, parentId: r.parentId ?? (i === 1 ? null : (records[i - 1]!.id ?? `line-${i}`)) }));
}

/**
 * The entry types of session format version 3: those the releases of the version matrix wrote (message, model_change,
 * thinking_level_change) and the rest of the format Pi documents (docs/session.md: compaction, branch_summary,
 * custom, custom_message, label, session_info); any other is refused, loudly.
 */
const KNOWN_ENTRIES = new Set(['message', 'model_change', 'thinking_level_change', 'compaction', 'branch_summary', 'custom', 'custom_message', 'label', 'session_info']);

/**
 * A Pi session file (version 3): a header line, then entries chained by parentId into a tree. The active
 * branch is the last entry's ancestry, so an abandoned branch (a retried or edited turn) is not read as part
 * of the conversation. A bad line or an unknown header version is an error naming file and line.
 */
export function readPiSession(file: string): PiSession {
  const lines = readFileSync(file, 'utf8').split('\n');
  const records: Json[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      records.push(JSON.parse(line) as Json);
    } catch (err) {
      if (i === lines.length - 1) return; // a last line cut mid-write: what came before stands
      throw new RollerError(ErrorCode.JSONL_INVALID_JSON, `${file}:${i + 1}: not JSON (${(err as Error).message})`, { origin: { file, line: i + 1 } });
    }
  });
  const header = records[0];
  const format = header?.type === 'session' ? (header.version === undefined ? 1 : header.version) : null;
  if (format !== 1 && format !== 2 && format !== 3) {
    throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${file}:1: not a Pi session header of format 1, 2 or 3 (found ${JSON.stringify(header?.type)} version ${JSON.stringify(header?.version)}); roller reads Pi ${PI_VERIFIED_VERSIONS.join('/')}`);
  }

  records.forEach((r, i) => {
    if (i > 0 && !KNOWN_ENTRIES.has(r.type)) {
      throw new RollerError(
        ErrorCode.NATIVE_SHAPE_UNKNOWN,
        `${file}:${i + 1}: a '${String(r.type)}' entry of a type no verified release wrote (session format ${format}; Pi's files name no release); roller reads Pi ${PI_VERIFIED_VERSIONS.join('/')}: run \`roller verify --harness pi --versions <version> --record\` and teach the adapter, or report it with this file`,
        { origin: { file, line: i + 1 } },
      );
    }
  });
  // trace.jsonl keeps the lines as written; the tree is read from format 1's lines with the ids Pi would give them.
  return { ...sessionOfRecords(file, format === 1 ? asTree(records) : records), records };
}

/**
 * A transcript in Pi's entry-tree form (Pi's own files; OpenClaw embeds the same agent core): the active
 * branch is the last entry's ancestry through parentId.
 */
export function sessionOfRecords(file: string, records: Json[]): PiSession {
  const header = records[0]!;
  const byId = new Map(records.slice(1).map((r) => [r.id as string, r]));
  const branch: Json[] = [];
  for (let r = records.at(-1); r && r !== header; r = r.parentId ? byId.get(r.parentId) : undefined) branch.unshift(r);
  return { file, id: String(header.id), records, messages: branch.filter((r) => r.type === 'message' && r.message), branch: [header, ...branch] };
}

const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
const assistants = (s: PiSession) => s.messages.map((r) => r.message as Json).filter((m) => m.role === 'assistant');

/**
 * The root participant, and — with the example sub-agent extension — one child per result of each
 * `subagent` tool call: the child writes no session file, its messages (with their responseIds) are in the
 * parent's toolResult details. Without the extension there is no delegation.
 */
/** `wire`: the capture's usage by response id (convert --wire, collect), for what Pi's records do not count. */
export function piParticipants(s: PiSession, wire?: ReadonlyMap<string, TokensByKind>): ParticipantUsage[] {
  const rootId = `session:${s.id}`;
  const children: ParticipantUsage[] = [];
  for (const r of s.messages) {
    const m = r.message as Json;
    if (m.role !== 'toolResult' || m.toolName !== 'subagent' || !Array.isArray(m.details?.results)) continue;
    (m.details.results as Json[]).forEach((child, i) => {
      const msgs = (Array.isArray(child.messages) ? child.messages : []) as Json[];
      children.push(participantOf(`subagent:${String(m.toolCallId)}#${i}`, `${String(m.toolCallId)}#${i}`, rootId, String(m.toolCallId), msgs.filter((x) => x.role === 'assistant'), `${s.file}: toolResult ${String(m.toolCallId)} details.results[${i}]`, child.exitCode === 0 ? null : `exit code ${String(child.exitCode)}`, wire));
    });
  }
  const root = participantOf(rootId, s.id, null, null, assistants(s), s.file, null, wire);
  return [root, ...children];
}

function participantOf(participant: string, nativeId: string, parent: string | null, spawn: string | null, mine: Json[], where: string, failure: string | null, wire?: ReadonlyMap<string, TokensByKind>): ParticipantUsage {
  const tokens: TokensByKind = { input: 0, cache_creation: 0, cache_read: 0, output: 0, reasoning: 0 };
  let cost = 0;
  for (const m of mine) {
    tokens.input += n(m.usage?.input);
    tokens.output += n(m.usage?.output);
    tokens.cache_read += n(m.usage?.cacheRead);
    tokens.cache_creation += n(m.usage?.cacheWrite);
    cost += n(m.usage?.cost?.total);
  }
  // Pi records no reasoning count, and what its output holds where the model reasoned depends on the release, which
  // its files do not name: 0.73 records the completion tokens, 0.60 to 0.67 the completion plus the reasoning again.
  // Such counts are the capture's (by response id) where every message has one there; else unknown, not guessed.
  const ids = mine.map((m) => m.responseId);
  const sent = wire && ids.length > 0 && ids.every((id) => typeof id === 'string' && wire.has(id)) ? ids.map((id) => wire.get(id as string)!) : undefined;
  const reasoned = mine.filter((m) => Array.isArray(m.content) && (m.content as Json[]).some((b) => b.type === 'thinking')).length;
  let counts: Pick<ParticipantUsage, 'unknown_kinds' | 'tokens_note'> = {};
  if (sent) {
    tokens.output = sent.reduce((a, t) => a + t.output, 0);
    tokens.reasoning = sent.reduce((a, t) => a + t.reasoning, 0);
    counts = { tokens_note: "output and reasoning counted from the capture by response id (Pi's records count no reasoning, and their output where the model reasoned differs by release)" };
  } else if (mine.length > 0) {
    counts = {
      unknown_kinds: reasoned > 0 ? ['output', 'reasoning'] : ['reasoning'],
      tokens_note:
        reasoned > 0
          ? `Pi's records count no reasoning, and ${reasoned} message(s) reasoned, whose recorded output holds the reasoning once or twice by release (0.60-0.67 add it again; the files name no release): output and reasoning unknown, not zero; convert with --wire to count them`
          : "Pi's records count no reasoning (its output includes any): reasoning unknown, not zero; convert with --wire to count it",
    };
  }
  const last = mine.at(-1);
  return {
    participant,
    role: parent ? 'child' : 'root',
    native_id: nativeId,
    parent,
    spawn_tool_call_id: spawn,
    depth: parent ? 1 : 0,
    tokens,
    ...counts,
    messages: mine.length,
    message_ids: mine.map((m) => m.responseId).filter((id): id is string => typeof id === 'string'),
    status: failure ? 'failed' : !last ? 'unknown' : last.stopReason === 'stop' ? 'completed' : last.stopReason === 'error' || last.stopReason === 'aborted' ? 'failed' : 'unknown',
    status_source: last ? `${where}: last assistant message (stopReason ${String(last.stopReason)})` : `${where}: no assistant message`,
    cost_usd: cost > 0 ? cost : null,
    cost_note: cost > 0 ? null : 'Pi reports cost from the model config; 0 where none is configured',
    reason: failure,
    spawn_result: parent ? 'result' : null,
  };
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).filter((c) => c.type === 'text').map((c) => String(c.text ?? '')).join('\n\n') : '';

/**
 * ACTF of a Pi session (seeds/003 §4.2): one step per assistant message of the active branch, thinking to
 * reasoning_content, toolCall blocks to tool calls, toolResult messages to the observations of their calls.
 * System prompt and tools come from the captured requests (they carry them); the session file does not.
 */
/**
 * The sub-agents of a session run by the example sub-agent extension: each result of a `subagent` tool call
 * as a session of its own (its messages are in the parent's toolResult details), with the native id its
 * participant has (`<toolCallId>#<i>`).
 */
export function piSubagentSessions(s: PiSession): { nativeId: string; session: PiSession }[] {
  const out: { nativeId: string; session: PiSession }[] = [];
  for (const r of s.messages) {
    const m = r.message as Json;
    if (m.role !== 'toolResult' || m.toolName !== 'subagent' || !Array.isArray(m.details?.results)) continue;
    (m.details.results as Json[]).forEach((child, i) => {
      const msgs = (Array.isArray(child.messages) ? child.messages : []) as Json[];
      const nativeId = `${String(m.toolCallId)}#${i}`;
      out.push({ nativeId, session: { file: `${s.file}: toolResult ${String(m.toolCallId)} details.results[${i}]`, id: nativeId, records: [], messages: msgs.map((message) => ({ type: 'message', message, timestamp: typeof message.timestamp === 'string' ? message.timestamp : null })), branch: [] } });
    });
  }
  return out;
}

export function piToActf(s: PiSession, options: { wire?: readonly Call[] } = {}): Actf {
  const steps: ActfStep[] = [];
  const stepOfCall = new Map<string, ActfStep>();
  let pending: string | null = null;
  for (const r of s.messages) {
    const m = r.message as Json;
    if (m.role === 'user') pending = pending === null ? textOf(m.content) : `${pending}\n\n${textOf(m.content)}`;
    else if (m.role === 'toolResult') {
      const owner = stepOfCall.get(String(m.toolCallId)) ?? steps.at(-1);
      owner?.observation.push({ toolCallId: String(m.toolCallId), content: textOf(m.content), isError: m.isError === true });
    } else if (m.role === 'assistant') {
      const step = newStep(steps.length + 1, pending, typeof r.timestamp === 'string' ? r.timestamp : null);
      pending = null;
      const blocks = (Array.isArray(m.content) ? m.content : []) as Json[];
      step.assistant_content.content = blocks.filter((b) => b.type === 'text').map((b) => String(b.text ?? '')).join('\n\n');
      const thinking = blocks.filter((b) => b.type === 'thinking').map((b) => String(b.thinking ?? b.text ?? ''));
      step.assistant_content.reasoning_content = thinking.length > 0 ? thinking.join('\n\n') : null;
      for (const b of blocks.filter((x) => x.type === 'toolCall')) {
        step.assistant_content.tool_calls.push({ id: String(b.id), name: String(b.name), type: 'function', arguments: b.arguments && typeof b.arguments === 'object' && !Array.isArray(b.arguments) ? (b.arguments as Record<string, unknown>) : {} });
        stepOfCall.set(String(b.id), step);
      }
      const u = (m.usage ?? {}) as Json;
      step.metric = {
        prompt_tokens_len: n(u.input) + n(u.cacheRead) + n(u.cacheWrite),
        completion_tokens_len: n(u.output),
        cache_read_tokens_len: n(u.cacheRead),
        cache_creation_tokens_len: n(u.cacheWrite),
        reasoning_tokens_len: 0,
        cost_usd: n(u.cost?.total) > 0 ? n(u.cost?.total) : null,
        model: typeof m.model === 'string' ? m.model : null,
        llm_call_count: 1,
      };
      step.stop_reason = m.stopReason === 'toolUse' ? 'tool_calls' : typeof m.stopReason === 'string' ? m.stopReason : null;
      if (typeof m.responseId === 'string') step.native_ids = { response_id: m.responseId };
      steps.push(step);
    }
  }
  const ids = new Set(steps.map((x) => x.native_ids?.response_id).filter(Boolean));
  // Releases before 0.60 name no response id: then a session's capture (its own proxy) is all its calls.
  const byId = options.wire?.find((c) => c.response_id !== null && ids.has(c.response_id));
  const firstCall = ids.size === 0 && steps.length > 0 ? options.wire?.find((c) => Array.isArray((c.context as Json | null)?.tools)) : byId;
  const { system, tools } = requestSetup(firstCall?.protocol ?? 'openai-chat-completions', firstCall?.context as Json | undefined);
  return {
    schema_version: ACTF_SCHEMA_VERSION,
    system_prompt: system.join('\n\n'),
    system_prompt_source: system.length > 0 ? 'wire' : 'none',
    tools: tools as Actf['tools'] | null,
    tools_source: tools ? 'wire' : 'none',
    steps,
    timing: timingOf(steps),
  };
}
