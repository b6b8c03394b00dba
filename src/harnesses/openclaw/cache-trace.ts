import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

type Json = Record<string, any>;

/**
 * Where roller keeps an attempt's OpenClaw cache trace in the native root (the state dir), credential values
 * redacted: OpenClaw's own default place for it (`<state>/logs/cache-trace.jsonl`), so an archive of a user's
 * own run reads the same way.
 */
export const OPENCLAW_CACHE_TRACE_IN_STATE = join('logs', 'cache-trace.jsonl');

/** One run of one session as the cache trace saw it (`runId`: a turn's id, or `announce:v1:<child key>:<child run>`). */
export interface CacheTraceRun {
  runId: string;
  sessionId: string;
  sessionKey: string | null;
  /** stream:context events: one per model call of the run, what OpenClaw's stream wrapper handed the provider. */
  contexts: { system: string | null; messages: Json[] | null; messageCount: number }[];
  /** How many messages the session held when the run began (session:loaded). */
  loadedCount: number | null;
  /** Response ids of the assistant messages the run added (session:after, past the loaded ones). */
  replies: string[];
}

export interface OpenClawCacheTrace {
  file: string;
  runs: Map<string, CacheTraceRun>;
  /** Lines that were not JSON (the harness stopped mid-write). */
  unreadable: number;
}

/** What OpenClaw writes in place of a field its diagnostics redaction judged too large or malformed. */
const REDACTION_MARKER = /^\[(Oversized|Malformed) diagnostic JSON redacted\]$|^\[Unserializable\]$/;

/** A traced text that is the real value (OpenClaw replaces some with a redaction marker). */
export const tracedText = (v: unknown): string | null => (typeof v === 'string' && !REDACTION_MARKER.test(v) ? v : null);

/** The cache trace kept beside an agent store (`<state>/agents/<agent>/agent/openclaw-agent.sqlite`), if any. */
export function cacheTraceBeside(dbPath: string): string | null {
  const state = dirname(dirname(dirname(dirname(dbPath))));
  const file = join(state, OPENCLAW_CACHE_TRACE_IN_STATE);
  return existsSync(file) ? file : null;
}

/** The runs of a cache trace, each with its model calls' contexts and the replies it added. */
export function readOpenClawCacheTrace(file: string): OpenClawCacheTrace {
  const runs = new Map<string, CacheTraceRun>();
  let unreadable = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let e: Json;
    try {
      e = JSON.parse(line) as Json;
    } catch {
      unreadable++;
      continue;
    }
    if (typeof e.runId !== 'string' || typeof e.sessionId !== 'string') continue;
    let run = runs.get(e.runId);
    if (!run) {
      run = { runId: e.runId, sessionId: e.sessionId, sessionKey: typeof e.sessionKey === 'string' ? e.sessionKey : null, contexts: [], loadedCount: null, replies: [] };
      runs.set(e.runId, run);
    }
    const messages = Array.isArray(e.messages) ? (e.messages as Json[]) : null;
    if (e.stage === 'session:loaded' && typeof e.messageCount === 'number') run.loadedCount = e.messageCount;
    else if (e.stage === 'stream:context') run.contexts.push({ system: tracedText(e.system), messages, messageCount: typeof e.messageCount === 'number' ? e.messageCount : 0 });
    else if (e.stage === 'session:after' && messages && run.loadedCount !== null) {
      run.replies = messages.slice(run.loadedCount).flatMap((m) => (m.role === 'assistant' && typeof m.responseId === 'string' ? [m.responseId] : []));
    }
  }
  return { file, runs, unreadable };
}

const ANNOUNCE = 'announce:v1:';

/** A run that delivers a completion to its session: `announce:v1:<child session key>:<child run id>`. */
export const isAnnouncementRun = (runId: string): boolean => runId.startsWith(ANNOUNCE);

/**
 * The child run an announcement run delivers, when it announces `childKey`: null otherwise. Both the key and
 * the run id hold colons (a child woken after its own children settled is announced by its wake run,
 * `announce:v1:<key>:<run>:wake`), so the run is read past the known key, never split at a colon.
 */
export function announcedRunOf(runId: string, childKey: string): string | null {
  const prefix = `${ANNOUNCE}${childKey}:`;
  return runId.startsWith(prefix) && runId.length > prefix.length ? runId.slice(prefix.length) : null;
}

const SETTLE = 'announce:requester-settle:';

/**
 * The child runs a requester-settle run announces: OpenClaw 2026.9.6 names it
 * `announce:requester-settle:<agent>:<requester session key>:<run id>,<run id>…[:yield-N]` and, when completions
 * arrive together, delivers them there in one wake of the parent instead of one `announce:v1` run each. Empty for
 * any other run.
 */
export function settledRunsOf(runId: string): string[] {
  if (!runId.startsWith(SETTLE)) return [];
  const rest = runId.slice(SETTLE.length).replace(/:yield-\d+$/, '');
  return rest.slice(rest.lastIndexOf(':') + 1).split(',').filter(Boolean);
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n') : '';

/**
 * The input an announcement run gave the model that the transcript does not keep (seeds/000: the completion
 * event and OpenClaw's internal context): the user messages its first model call saw past the messages the
 * session had loaded. Their text comes from the reply's actual request when it was captured (`sent`: that
 * request's messages) — the trace's copy has passed OpenClaw's diagnostics redaction — else from the trace when
 * nothing in it was redacted. null when neither can say.
 */
export function announcementInput(run: CacheTraceRun, sent?: readonly Json[]): string[] | null {
  const first = run.contexts[0];
  if (!first?.messages || run.loadedCount === null) return null;
  const added = first.messages.slice(run.loadedCount);
  if (added.length === 0 || added.some((m) => m.role !== 'user')) return null;
  if (sent) {
    const tail = sent.slice(-added.length);
    return tail.length === added.length && tail.every((m) => m.role === 'user') ? tail.map((m) => textOf(m.content)) : null;
  }
  const texts = added.map((m) => textOf(m.content));
  return texts.some((t) => t === '' || tracedText(t) === null || t.includes('<redacted>')) ? null : texts;
}
