import { fileIncludes } from '../../core/file-includes.js';
import { claudeCodeDelivery } from './delivery.js';
import { readFile } from '../../core/thread-fs.js';
import type { NativeCompaction, NativeCompactions } from '../../schemas/native-capture.js';
import type { HarnessAdapter, RunLaunch } from '../adapter.js';
import { perIdNativeCapture } from '../native-capture.js';
import { requestSnapshotsIn } from '../request-snapshots.js';
import { launchFields } from '../launch.js';
import { wireUsageByResponse } from '../../transforms/capture/token-agreement.js';
import { CLAUDE_CODE_VERIFY } from './verify-scenarios.js';
import { claudeCodeToActf } from './actf.js';
import { claudeCodeCompactions, compactionSummaryCalls, jsonlRecords } from './compaction.js';
import { CLAUDE_CODE_FLAGS_SINCE, claudeCodePlan, claudeConfigDir } from './launch.js';
import { findSessionFiles, readNativeSession, type NativeRecord } from './native-session.js';
import { claudeCodeRefusedSpawns } from './refused-spawns.js';
import { claudeCodeMixesSubAgentSteps } from './mixed-steps.js';
import { participantUsage } from './participants.js';
import { claudeCodeResult, sessionOfStdout, replyOfStdout } from './reported.js';
import { crossCheckStream, readStreamJson } from './stream-json.js';
import { CLAUDE_CODE_RAW_SCHEMA, mergeTrace } from './trace.js';

type Json = Record<string, any>;

/** Claude Code (reference/harnesses/claude-code.md): JSONL sessions with sub-agent files, joined by message id. */
export const claudeCodeAdapter: HarnessAdapter = {
  name: 'claude-code',
  rawSchema: CLAUDE_CODE_RAW_SCHEMA,
  // projects/<cwd>/<session>.jsonl, <session>/subagents/agent-<id>.jsonl and .meta.json
  sessionFiles: /^projects\//,
  delivery: claudeCodeDelivery,
  identityHeaders: { 'x-claude-code-session-id': 'session_id', 'x-claude-code-agent-id': 'agent_id' },

  async convert(native, input) {
    const files = await findSessionFiles(native);
    const stream = input.stream ? await readStreamJson(input.stream) : undefined;
    const out = [];
    // Response ids are unique across sessions: releases that send no session header still find their usage here.
    const wireUsage = input.calls ? wireUsageByResponse(input.calls) : undefined;
    for (const file of files) {
      const session = await readNativeSession(file);
      const wire = input.calls?.filter((c) => c.native_identity.session_id === session.sessionId);
      const participants = participantUsage(session, wireUsage);
      const refused = claudeCodeRefusedSpawns(session);
      out.push({
        ...(refused.length > 0 ? { usageExtra: { spawns_without_participant: refused } } : {}),
        sessionId: session.sessionId,
        trace: mergeTrace(session),
        actf: claudeCodeToActf(session.main, wire && wire.length > 0 ? { wire } : {}),
        participants,
        source: { root: session.root, main: session.mainFile, subagents: session.subagents.map((x) => x.records[0]?.file ?? `agent-${x.agentId}.jsonl`) },
        where: file,
        rejects: session.rejects,
        mainFiles: [session.mainFile],
        streamCheck: stream && input.stream ? { source: input.stream, problems: crossCheckStream(stream, participants) } : null,
      });
    }
    return out;
  },

  async nativeCapture({ version, session }) {
    return perIdNativeCapture({ harness: { name: 'claude-code', version }, participants: session.participants, background: true, nativeFiles: [] });
  },

  // 2.1.3xx records each request's parameters (api-request params: model, thinking, output_config.effort).
  requestSnapshots: (tracePath) => requestSnapshotsIn(tracePath, '"api-request"', (r) => (r.type === 'api-request' && r.params && typeof r.params === 'object' ? r.params : undefined)),

  async mainCompactions({ tracePath, calls, participants }): Promise<NativeCompactions | null> {
    const root = participants.find((p) => p.role === 'root');
    if (!root) return null;
    // The common case (no compaction), told without reading the trace whole.
    if (!(await fileIncludes(tracePath, '"compact_boundary"'))) return null;
    const found = claudeCodeCompactions(jsonlRecords(await readFile(tracePath, 'utf8')));
    if (found.length === 0) return null;
    const compactions: NativeCompaction[] = found.map((c) => ({ boundary: c.boundaryUuid, summaryRecord: c.summaryUuid, source: `claude-code compact_boundary ${c.boundaryUuid}` }));
    const summaryCalls = new Map([...compactionSummaryCalls(calls, found, root.native_id)].map(([callId, c]) => [callId, compactions[found.indexOf(c)]!]));
    const recordedOutputs = Object.fromEntries(
      [...summaryCalls].map(([callId, c]) => [
        callId,
        { participant: root.participant, evidence: `compaction summary call: its session header names the main session and its summary is recorded verbatim in compact summary record ${c.summaryRecord} (boundary ${c.boundary})` },
      ]),
    );
    return { root, compactions, summaryCalls, recordedOutputs };
  },

  /** Each sub-agent's own turns (its sidechain records in trace.jsonl), converted like the main one. */
  atifSubagents(records) {
    const byAgent = new Map<string, NativeRecord[]>();
    records.forEach((record: Json, i) => {
      if (record.isSidechain !== true || typeof record.agentId !== 'string') return;
      const list = byAgent.get(record.agentId) ?? [];
      // claudeCodeToActf reads a participant's own records: a sub-agent's are its sidechain.
      list.push({ record: { ...record, isSidechain: false }, file: 'trace.jsonl', line: i + 1 });
      byAgent.set(record.agentId, list);
    });
    return [...byAgent].map(([agentId, list]) => ({ id: agentId, participant: `agent:${agentId}`, actf: claudeCodeToActf(list) }));
  },

  mixesSubAgentSteps: claudeCodeMixesSubAgentSteps,

  runner: {
    // Always installed by its exact version: npm on Node 20 silently picks an older Claude Code (2.1.197) for "latest".
    pin: { package: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
    verify: CLAUDE_CODE_VERIFY,
    nativeRoot: claudeConfigDir,
    plan(l: RunLaunch) {
      return claudeCodePlan({
        ...launchFields(l),
        ...(l.version ? { version: l.version } : {}),
        ...(l.thinking === 'off' ? { thinkingOff: true } : {}),
        extraArgs: [...(l.model ? ['--model', l.model] : []), ...(l.thinking && l.thinking !== 'off' ? ['--effort', l.thinking] : []), ...(l.continueSession ? ['--resume', l.continueSession] : []), ...(l.extraArgs ?? [])],
        ...(l.context ? { context: l.context } : {}),
      });
    },
    thinkingLevels: ['off', 'low', 'medium', 'high', 'xhigh', 'max'],
    thinkingSince: CLAUDE_CODE_FLAGS_SINCE.effort,
    sessionOfStdout,
    replyOfStdout,
    reported: claudeCodeResult,
    protocols: ['anthropic-messages'],
    configFiles: ['.claude/settings.json', '.claude/settings.local.json'],
    homeConfigFiles: ['.claude/settings.json', '.claude/settings.local.json'],
    contextSettings: true,
  },
};
