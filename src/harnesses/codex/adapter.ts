import { dirname } from 'node:path';
import { codexDelivery } from './delivery.js';
import { fileIncludes } from '../../core/file-includes.js';
import type { Rejected } from '../../core/rejected.js';
import { readFile } from '../../core/thread-fs.js';
import type { HarnessAdapter, RunLaunch, SessionConversion } from '../adapter.js';
import { perIdNativeCapture } from '../native-capture.js';
import { launchFields } from '../launch.js';
import { CODEX_VERIFY } from './verify-scenarios.js';
import { codexToActf } from './actf.js';
import { codexPlan, type CodexLaunch } from './launch.js';
import { CODEX_CALL_THREAD_FIELDS, callThreadId, codexParticipants, codexReadNotes, missingChildren, spawnsWithoutParticipant } from './participants.js';
import { CODEX_RAW_SCHEMA, findRollouts, markForkReplays, readThread, threadsOfTrace, type CodexThread } from './rollout.js';
import { codexSftBlocker } from './sft-rules.js';
import { rootThreadOfStdout, replyOfStdout } from './reported.js';

/** Codex's multi_agent v2 (`--enable multi_agent_v2`): a child is a warm fork of its parent's thread. */
export const CODEX_MULTI_AGENT_V2_PROFILE = 'codex-multi-agent-v2';

/** Codex (reference/harnesses/codex.md): one rollout per thread, joined by response id; a session is a root and its children. */
export const codexAdapter: HarnessAdapter = {
  name: 'codex',
  rawSchema: CODEX_RAW_SCHEMA,
  sessionFiles: /(^|\/)rollout-[^/]*\.jsonl$/,
  delivery: codexDelivery,
  // Each request names its thread: session-id / thread-id; before the hyphenated headers session_id (and from 0.50
  // to 0.8x conversation_id) is the thread id.
  identityHeaders: { 'session-id': 'session_id', 'thread-id': 'thread_id', session_id: 'session_id', conversation_id: 'session_id', thread_id: 'thread_id' },
  // Releases whose rollouts name no response id (before token_usage_record) join calls by the thread's header.

  async convert(native, input) {
    const files = findRollouts(native);
    const root = files.length === 1 ? dirname(files[0]!) : native;
    const rejects: Rejected[] = [];
    const threads: CodexThread[] = [];
    // A damaged thread (its first line cut) keeps its place: identified by its file name, converted from what is intact.
    for (const f of files) threads.push(await readThread(f, root, rejects));
    inheritSessions(threads);
    markForkReplays(threads);
    const out: SessionConversion[] = [];
    for (const sessionId of [...new Set(threads.map((t) => t.sessionId))]) {
      const tree = threads.filter((t) => t.sessionId === sessionId);
      const rootThread = tree.find((t) => t.parentThreadId === null) ?? tree[0]!;
      const ordered = [rootThread, ...tree.filter((t) => t !== rootThread)];
      const wire = input.calls?.filter((c) => callThreadId(c) === rootThread.threadId);
      const actf = codexToActf(rootThread, wire && wire.length > 0 ? { wire } : {});
      const found = codexParticipants(ordered, input.calls);
      out.push({
        sessionId,
        // trace.jsonl: every thread's rollout, root first, each record as the CLI wrote it.
        trace: ordered.flatMap((t) => t.records.map((r) => r.raw ?? r.record)),
        actf,
        participants: [...found, ...missingChildren(ordered, found)],
        source: { root, threads: ordered.map((t) => t.file) },
        where: rootThread.file,
        sftBlocker: codexSftBlocker(
          actf,
          wire ?? [],
          rootThread.own.filter((r) => r.record.type === 'response_item').map((r) => String(r.record.payload?.type)),
        ),
        usageExtra: { spawns_without_participant: spawnsWithoutParticipant(ordered) },
        rejects: rejects.filter((r) => ordered.some((t) => t.file === r.origin.file)),
        mainFiles: [rootThread.file],
        readNotes: codexReadNotes(ordered),
      });
    }
    return out;
  },

  async nativeCapture({ version, session, tracePath }) {
    const base = perIdNativeCapture({ harness: { name: 'codex', version }, participants: session.participants, background: false, nativeFiles: [], agentPaths: await agentPaths(tracePath) });
    const headerJoin = { field: CODEX_CALL_THREAD_FIELDS, participants: Object.fromEntries(session.participants.map((p) => [p.native_id, p.participant])) };
    const threads = session.participants.filter((p) => p.status !== 'missing');
    if (threads.every((p) => p.message_ids.length > 0 || p.messages === 0)) return { ...base, headerJoin };
    // Releases before token_usage_record name no response id: calls join their thread by its header, and
    // coverage is the weaker count (responses per thread from token_count) — or none where nothing counts them.
    if (!(await fileIncludes(tracePath, '"token_count"'))) {
      return { ...base, headerJoin, capabilities: { ...base.capabilities, native_output_coverage: 'none' }, outputs: { method: 'none', reason: 'Codex before 0.34 writes neither response ids nor token counts: nothing native to check the calls against' } };
    }
    return { ...base, headerJoin, capabilities: { ...base.capabilities, native_output_coverage: 'count' }, outputs: { method: 'count', counts: Object.fromEntries(threads.map((p) => [p.participant, p.messages])) } };
  },

  /** Each child thread's own records (a warm fork's replayed parent prefix left out), converted like the root. */
  atifSubagents(records) {
    return threadsOfTrace(records)
      .filter((t) => t.parentThreadId !== null)
      .map((t) => ({ id: t.threadId, participant: `thread:${t.threadId}`, actf: codexToActf(t) }));
  },

  runner: {
    pin: { package: '@openai/codex', version: '0.171.0', bin: 'codex' },
    verify: CODEX_VERIFY,
    profiles: [
      { name: null, option: '--codex-multi-agent', value: 'v1', description: "Codex's default sub-agents (spawn_agent / wait)" },
      { name: CODEX_MULTI_AGENT_V2_PROFILE, option: '--codex-multi-agent', value: 'v2', description: 'multi_agent v2: each child a warm fork of its parent thread (--enable multi_agent_v2)' },
    ],
    nativeRoot: (home) => home,
    plan(l: RunLaunch) {
      const options = (l.harnessOptions ?? {}) as Pick<CodexLaunch, 'roles' | 'agentsMaxDepth'>;
      return codexPlan({
        ...launchFields(l),
        extraArgs: [...(l.model ? ['-m', l.model] : []), ...(l.thinking ? ['-c', `model_reasoning_effort="${l.thinking}"`] : []), ...(l.profile === CODEX_MULTI_AGENT_V2_PROFILE ? ['--enable', 'multi_agent_v2'] : []), ...(l.extraArgs ?? [])],
        ...(options.roles ? { roles: options.roles } : {}),
        ...(options.agentsMaxDepth ? { agentsMaxDepth: options.agentsMaxDepth } : {}),
        ...(l.continueSession ? { resumeThreadId: l.continueSession } : {}),
      });
    },
    // Follow-up prompts resume the confirmed root thread (seeds/000 A9.7).
    sessionOfStdout: rootThreadOfStdout,
    replyOfStdout,
    thinkingLevels: ['minimal', 'low', 'medium', 'high', 'xhigh'],
    keepsToolsCapture: true,
    protocols: ['openai-responses'], // wire_api "responses": the only one this Codex speaks
    configFiles: ['.codex/config.toml'],
    homeConfigFiles: ['config.toml'], // HOME is CODEX_HOME
    contextSettings: false,
  },
};

/** Codex sub-agent paths from the rollouts' session_meta records (trace.jsonl), for naming relations. */
async function agentPaths(trace: string): Promise<Record<string, string>> {
  const paths: Record<string, string> = {};
  const text = await readFile(trace, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.includes('"session_meta"')) continue;
    const p = (JSON.parse(line) as { payload?: { agent_path?: unknown; id?: unknown } }).payload;
    if (typeof p?.agent_path === 'string' && typeof p.id === 'string') paths[p.id] ??= p.agent_path;
  }
  return paths;
}

/**
 * Releases whose child session_meta names no session_id (0.120 to 0.140 in the matrix) still name the parent
 * thread: such a child belongs to its parent's session, found up the chain of parent_thread_id.
 */
function inheritSessions(threads: CodexThread[]): void {
  const byId = new Map(threads.map((t) => [t.threadId, t]));
  const sessionOf = (t: CodexThread): string => {
    const seen = new Set<string>();
    for (let up = t; ; ) {
      if (typeof up.meta.session_id === 'string' || up.parentThreadId === null) return up.sessionId;
      const parent = byId.get(up.parentThreadId);
      // The topmost thread read names a parent not read: that parent's id stands for the session.
      if (!parent || seen.has(parent.threadId)) return up.parentThreadId;
      seen.add(up.threadId);
      up = parent;
    }
  };
  for (const t of threads) t.sessionId = sessionOf(t);
}
