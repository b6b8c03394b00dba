import { existsSync, readdirSync } from 'node:fs';
import { requestSetup } from '../../transforms/protocols/request-setup.js';
import { dirname, join } from 'node:path';
import { openReadonlySqlite } from '../../core/sqlite.js';
import { decompress } from 'fzstd';
import { ErrorCode, RollerError } from '../../core/errors.js';
import type { ParticipantUsage } from '../../schemas/participant-usage.js';
import { piParticipants, piToActf, sessionOfRecords, type PiSession } from '../pi/session.js';
import type { Actf } from '../../schemas/actf.js';
import type { Call } from '../../schemas/call.js';
import type { NativeCapture } from '../native-capture.js';
import { accountMirrors, type MirrorAccounting } from './mirrors.js';
import { announcedRunOf, announcementInput, isAnnouncementRun, OPENCLAW_CACHE_TRACE_IN_STATE, settledRunsOf, type OpenClawCacheTrace } from './cache-trace.js';

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
  spawns: { toolCallId: string; result: string; childSessionKey: string | null; accepted: boolean }[];
  /** The session's key (session_nodes): `agent:main:main`, a child's `agent:main:subagent:<uuid>`; null if none. */
  key: string | null;
  /** The key of the session that spawned this one (session_nodes.parent_session_key); null for a root. */
  parentKey: string | null;
  /** The agent store it was read from (each agent keeps its own). */
  database: string;
}

/** A root session and the sub-agent sessions under it (Gateway mode), each with its parent and depth. */
export interface OpenClawTree {
  root: OpenClawSession;
  children: { session: OpenClawSession; parent: OpenClawSession; depth: number }[];
}

/** The agent store under an OpenClaw state dir: agents/<agent>/agent/openclaw-agent.sqlite. */
export function findOpenClawStore(native: string, agent = 'main'): string {
  for (const p of [native, join(native, 'agents', agent, 'agent', 'openclaw-agent.sqlite'), join(native, '.openclaw', 'state', 'agents', agent, 'agent', 'openclaw-agent.sqlite')]) {
    if (p.endsWith('.sqlite') && existsSync(p)) return p;
  }
  throw new RollerError(ErrorCode.FILE_NOT_FOUND, `no openclaw-agent.sqlite under ${native}: pass an OpenClaw HOME, its --state-dir, or the .sqlite file`);
}

/**
 * Every agent's store beside main's (agents/<agent>/agent/openclaw-agent.sqlite), main's first: a sub-agent spawned
 * with another agentId keeps its transcript in that agent's store. A .sqlite passed as such is read alone.
 */
export function findOpenClawStores(native: string): string[] {
  const main = findOpenClawStore(native);
  if (main === native) return [main];
  const agents = dirname(dirname(dirname(main)));
  const others = readdirSync(agents, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'main')
    .map((d) => join(agents, d.name, 'agent', 'openclaw-agent.sqlite'))
    .filter((p) => existsSync(p))
    .sort();
  return [main, ...others];
}

/** The sessions of every store, in the stores' order. */
export function readOpenClawStores(dbPaths: readonly string[]): OpenClawSession[] {
  return dbPaths.flatMap((p) => readOpenClawStore(p));
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
    // Which session is which key, and who spawned it (a sub-agent's node names its parent's key).
    const nodes = new Map<string, { key: string; parentKey: string | null }>();
    if (tables.has('session_nodes')) {
      for (const r of db.prepare('select session_key, current_session_id, parent_session_key from session_nodes').all() as Json[]) {
        if (typeof r.current_session_id === 'string') nodes.set(r.current_session_id, { key: String(r.session_key), parentKey: typeof r.parent_session_key === 'string' ? r.parent_session_key : null });
      }
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
        .map((m) => {
          const result = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? (m.content as Json[]).map((c) => String(c.text ?? '')).join('') : JSON.stringify(m.content);
          const parsed = parseObject(result);
          return { toolCallId: String(m.toolCallId), result, childSessionKey: typeof parsed?.childSessionKey === 'string' ? parsed.childSessionKey : null, accepted: parsed?.status === 'accepted' };
        });
      const node = nodes.get(id);
      return { transcript, accounting, compiled: compiled.get(id) ?? null, spawns, key: node?.key ?? null, parentKey: node?.parentKey ?? null, database: dbPath };
    });
  } finally {
    db.close();
  }
}

function parseObject(text: string): Json | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

/**
 * Root sessions with their sub-agent sessions: a session whose node names a parent key hangs under the
 * session with that key (recursively). A session whose parent is not in the store stays a root of its own,
 * so it is reported (several roots), never attached by guess.
 */
export function openClawTrees(sessions: readonly OpenClawSession[]): OpenClawTree[] {
  const byKey = new Map(sessions.filter((s) => s.key !== null).map((s) => [s.key!, s]));
  const roots = sessions.filter((s) => s.parentKey === null || !byKey.has(s.parentKey));
  return roots.map((root) => {
    const children: OpenClawTree['children'] = [];
    const walk = (parent: OpenClawSession, depth: number): void => {
      for (const s of sessions) {
        if (s.parentKey !== null && s.parentKey === parent.key && s !== parent) {
          children.push({ session: s, parent, depth });
          walk(s, depth + 1);
        }
      }
    };
    walk(root, 1);
    return { root, children };
  });
}

const participantIdOf = (s: OpenClawSession) => `session:${s.transcript.id}`;

/** One session's participant: tokens, requests and cost with CLI mirrors counted once (seeds/003 §5.3). */
function participantOfSession(s: OpenClawSession, place: { parent: OpenClawSession; depth: number } | null): ParticipantUsage {
  const [base] = piParticipants(s.transcript);
  const a = s.accounting;
  const failed = s.spawns.filter((x) => !x.accepted && /"status"\s*:\s*"error"/.test(x.result));
  const notes = [
    failed.length > 0 ? `${failed.length} sessions_spawn call(s) made no child here: ${failed.map((f) => f.result.slice(0, 160)).join(' | ')}` : '',
    a.invalidCounters.length > 0 ? `invalid native usage counters (counted as 0): ${a.invalidCounters.join('; ')}` : '',
  ].filter(Boolean);
  const spawn = place ? place.parent.spawns.find((x) => x.childSessionKey !== null && x.childSessionKey === s.key) : undefined;
  if (place && !spawn) notes.push(`no sessions_spawn result of ${participantIdOf(place.parent)} names ${s.key}`);
  return {
    ...base!,
    participant: participantIdOf(s),
    // A child is known by its session key: the spawn result, the completion event and the task list name it.
    native_id: place ? s.key! : s.transcript.id,
    role: place ? 'child' : 'root',
    parent: place ? participantIdOf(place.parent) : null,
    spawn_tool_call_id: spawn?.toolCallId ?? null,
    depth: place?.depth ?? 0,
    tokens: { input: a.tokens.input, output: a.tokens.output, cache_read: a.tokens.cacheRead, cache_creation: a.tokens.cacheWrite, reasoning: base!.tokens.reasoning },
    messages: a.requests,
    cost_usd: a.cost,
    cost_note: a.cost === null ? 'no cost reported' : 'session-reported cost, CLI mirrors credited only for what no earlier report covered',
    reason: notes.length > 0 ? notes.join('; ') : base!.reason,
    // sessions_spawn answers "accepted" at once; the child's result comes later as a completion event.
    spawn_result: place ? (spawn?.accepted ? 'acknowledgement' : 'result') : null,
  };
}

/** The root participant and, in Gateway mode, one child per sub-agent session under it. */
export function openClawParticipants(tree: OpenClawTree): ParticipantUsage[] {
  return [participantOfSession(tree.root, null), ...tree.children.map((c) => participantOfSession(c.session, { parent: c.parent, depth: c.depth }))];
}

/**
 * The completion events the transcript does not keep (seeds/000 A9.12): for each announcement run of this
 * session in the cache trace, its first reply's response id -> the input that run gave the model.
 */
function announcementInputs(s: OpenClawSession, trace: OpenClawCacheTrace | null, wire: readonly Call[] | undefined): Map<string, string[]> {
  const inputs = new Map<string, string[]>();
  for (const run of trace?.runs.values() ?? []) {
    if (run.sessionId !== s.transcript.id || !isAnnouncementRun(run.runId) || run.replies.length === 0) continue;
    const reply = wire?.find((c) => c.response_id === run.replies[0]);
    // The request's conversation: Chat Completions' and Anthropic's messages, Responses' input items.
    const body = reply?.context as Json | null | undefined;
    const sent = (reply?.protocol === 'openai-responses' ? body?.input : body?.messages) as Json[] | undefined;
    const input = announcementInput(run, Array.isArray(sent) ? sent : undefined);
    if (input) inputs.set(run.replies[0]!, input);
  }
  return inputs;
}

/**
 * The transcript with each announcement run's input put back before the reply it led to, and the replies
 * whose input is missing and could not be bound (an assistant message right after another one).
 */
function withAnnouncementInputs(s: OpenClawSession, trace: OpenClawCacheTrace | null, wire?: readonly Call[]): { transcript: OpenClawSession['transcript']; unbound: string[] } {
  const inputs = announcementInputs(s, trace, wire);
  const messages: Json[] = [];
  const unbound: string[] = [];
  let previous: string | null = null;
  for (const entry of s.transcript.messages) {
    const m = entry.message as Json;
    if (m.role === 'assistant' && previous === 'assistant') {
      const input = typeof m.responseId === 'string' ? inputs.get(m.responseId) : undefined;
      if (input) messages.push(...input.map((text) => ({ type: 'message', message: { role: 'user', content: text } })));
      else unbound.push(typeof m.responseId === 'string' ? m.responseId : `entry ${String(entry.id)}`);
    }
    messages.push(entry);
    previous = String(m.role);
  }
  return { transcript: { ...s.transcript, messages }, unbound };
}

/**
 * Why the session cannot become linear SFT (seeds/000 A9.12): a reply whose input, a completion event, the
 * transcript does not keep and no announcement run of the cache trace binds. undefined when nothing blocks it.
 */
export function openClawSftBlocker(s: OpenClawSession, trace: OpenClawCacheTrace | null, wire?: readonly Call[]): string | undefined {
  const { unbound } = withAnnouncementInputs(s, trace, wire);
  if (unbound.length === 0) return undefined;
  const why = trace ? `no announcement run of ${OPENCLAW_CACHE_TRACE_IN_STATE} binds it (or its text was redacted and no request was captured)` : 'there is no cache trace to bind it (--no-cache-trace)';
  return `${unbound.length} repl(ies) of session ${s.transcript.id} answer an input the transcript does not keep (a completion event): ${why} (${unbound.slice(0, 3).join(', ')})`;
}

/**
 * ACTF of the session: the transcript's steps, with the completion events the transcript leaves out put back
 * as their announcement runs gave them (the text from the run's reply request when captured). System prompt: the
 * captured request's, what the model was given; else the cache trace's first stream:context of the session (seeds/003)
 * when OpenClaw kept it (it writes a redaction marker in place of a long one); else context.compiled. The trace's
 * copy is the prompt before the provider wrapper: 2026.9.6 still holds its cache-boundary markers and a relocatable
 * runtime block the request does not carry. Tools: the wire's (it offers sessions_spawn, context.compiled does
 * not), else context.compiled's.
 */
export function openClawToActf(s: OpenClawSession, options: { wire?: readonly Call[]; trace?: OpenClawCacheTrace | null } = {}): Actf {
  const actf = piToActf(withAnnouncementInputs(s, options.trace ?? null, options.wire).transcript);
  const traced = [...(options.trace?.runs.values() ?? [])].filter((r) => r.sessionId === s.transcript.id).flatMap((r) => r.contexts)[0]?.system ?? null;
  const fromTrace = traced !== null ? { system_prompt: traced, system_prompt_source: 'cache_trace' as const } : null;
  const requestCall = options.wire?.find((c) => Array.isArray((c.context as Json | null)?.tools));
  if (requestCall) {
    const { system, tools } = requestSetup(requestCall.protocol, requestCall.context as Json);
    const prompt = system.length > 0 ? { system_prompt: system.join('\n\n'), system_prompt_source: 'wire' as const } : (fromTrace ?? {});
    return { ...actf, ...prompt, tools: tools as Actf['tools'] | null, tools_source: 'wire' };
  }
  if (!s.compiled) return fromTrace ? { ...actf, ...fromTrace } : actf;
  const tools = Array.isArray(s.compiled.tools)
    ? (s.compiled.tools as Json[]).map((t) => ({ type: 'function' as const, function: { name: String(t.name), ...(t.description ? { description: String(t.description) } : {}), parameters: (t.parameters ?? { type: 'object' }) as Record<string, unknown> } }))
    : null;
  const compiledPrompt = typeof s.compiled.systemPrompt === 'string' ? { system_prompt: s.compiled.systemPrompt, system_prompt_source: 'native' as const } : {};
  return {
    ...actf,
    ...(fromTrace ?? compiledPrompt),
    tools: tools ?? actf.tools,
    tools_source: tools ? 'native_derived' : actf.tools_source,
  };
}

/**
 * Each child's announcement run (seeds/000 A5.3): the parent's run `announce:v1:<child key>:<child run id>`
 * whose child run id is one of the child's own runs, and the response ids of the replies it added.
 */
export function openClawAnnouncements(tree: OpenClawTree, trace: OpenClawCacheTrace): Record<string, { runId: string; responseIds: string[] }> {
  const out: Record<string, { runId: string; responseIds: string[] }> = {};
  for (const c of tree.children) {
    const key = c.session.key;
    if (!key) continue;
    const childRuns = new Set([...trace.runs.values()].filter((r) => r.sessionId === c.session.transcript.id).map((r) => r.runId));
    const parentRuns = [...trace.runs.values()].filter((r) => r.sessionId === c.parent.transcript.id);
    // Its own announcement run; else the requester-settle run that delivered it with its siblings' (their completions
    // arrived together), which names the child's run.
    const run =
      parentRuns.find((r) => {
        const announced = announcedRunOf(r.runId, key);
        return announced !== null && childRuns.has(announced);
      }) ?? parentRuns.find((r) => settledRunsOf(r.runId).some((id) => childRuns.has(id)));
    if (run) out[key] = { runId: run.runId, responseIds: run.replies };
  }
  return out;
}

/**
 * OpenClaw's NativeCapture. Gateway runs keep each reply's response id (`responseId`, the Chat Completions
 * id): a per-id join, like Pi, and sub-agents are participants; a child's delivery is bound to its
 * announcement run in the cache trace (none without one: its deliveries stay unknown). Embedded exec keeps
 * none and sends no session header: a call belongs to the root because it went through this run's own proxy
 * (exec runs one participant); coverage is the count of the stream contexts the cache trace's stream wrapper
 * recorded for the root's session (seeds/000), or without a cache trace the count of its assistant messages.
 */
export function openClawNativeCapture(tree: OpenClawTree, version: string, trace: OpenClawCacheTrace | null = null): NativeCapture {
  const participants = openClawParticipants(tree);
  const root = participants[0]!;
  const sessions = [tree.root, ...tree.children.map((c) => c.session)];
  const dbPaths = [...new Set(sessions.map((s) => s.database))];
  const outputs = sessions.flatMap((s) => s.accounting.messages.filter((m) => m.counted).map((m) => m.entry.message as Json | undefined));
  const perId = outputs.length > 0 && outputs.every((m) => typeof m?.responseId === 'string');
  const nativeFiles = trace ? [...dbPaths, trace.file] : dbPaths;
  if (perId) {
    return {
      harness: { name: 'openclaw', version },
      participants,
      capabilities: { native_output_coverage: 'per_id', delegation: 'native', background: true },
      outputs: { method: 'per_id' },
      announcements: { source: OPENCLAW_CACHE_TRACE_IN_STATE, runs: trace ? openClawAnnouncements(tree, trace) : {} },
      nativeFiles,
    };
  }
  const traced = trace ? [...trace.runs.values()].filter((r) => r.contexts.length > 0) : [];
  const contexts = trace ? traced.filter((r) => r.sessionId === tree.root.transcript.id).reduce((n, r) => n + r.contexts.length, 0) : null;
  // A stream wrapper that fed another session's model calls through this proxy: "one participant" does not hold.
  const strangers = [...new Set(traced.filter((r) => r.sessionId !== tree.root.transcript.id).map((r) => r.sessionId))];
  const count = { method: 'count' as const, counts: { [root.participant]: contexts ?? root.messages } };
  const base = { harness: { name: 'openclaw', version }, participants, capabilities: { native_output_coverage: 'count' as const, delegation: 'native' as const, background: false }, outputs: count, nativeFiles };
  if (strangers.length > 0) return { ...base, participants: participants.map((p, i) => (i === 0 ? { ...p, reason: [p.reason, `the cache trace's stream wrapper also fed session(s) ${strangers.join(', ')}: calls are not all the root's`].filter(Boolean).join('; ') } : p)) };
  return {
    ...base,
    soleParticipant: {
      participant: root.participant,
      evidence:
        contexts !== null
          ? `the call went through this run's own proxy, and the cache trace's stream wrapper names only session ${tree.root.transcript.id} (${contexts} stream contexts)`
          : "the call went through this run's own proxy and OpenClaw exec runs one participant (no response id or session header to join on)",
    },
  };
}
