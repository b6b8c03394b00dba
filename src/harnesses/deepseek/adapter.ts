import { ErrorCode, RollerError } from '../../core/errors.js';
import { DEEPSEEK_EVENTS_SCHEMA } from '../../schemas/harness-events.js';
import type { HarnessAdapter } from '../adapter.js';
import { launchFields } from '../launch.js';
import { relativeStatusSources } from '../native-archive.js';
import { PINNED_HARNESSES } from '../pins.js';
import { deepSeekToActf } from './actf.js';
import { DSH_MAX_PROMPT_BYTES, deepSeekPlan, dshSessionsDir } from './launch.js';
import { DEEPSEEK_TITLE_CALL, deepSeekNativeCapture } from './native-capture.js';
import { deepSeekParticipants, deepSeekSpawnsWithoutParticipant } from './participants.js';
import { readDshSessions, sessionsOfTrace, sessionTree } from './session-log.js';

/**
 * DeepSeek's dsh (docs/harness-notes/deepseek.md): one zstd JSONL event log per session; a sub-agent's log names its
 * parent session. One converted session per root with its sub-agent sessions; trace.jsonl (roller.deepseek-events/v1)
 * holds each session's log lines as dsh wrote them, root first. Calls join sessions by dsh's session header.
 */
export const deepSeekAdapter: HarnessAdapter = {
  name: 'deepseek',
  rawSchema: DEEPSEEK_EVENTS_SCHEMA,
  sessionFiles: /(^|\/)session\.jsonl(\.zstd)?$/,
  auxiliaryCall: DEEPSEEK_TITLE_CALL,

  async convert(native, input) {
    const sessions = readDshSessions(native);
    const roots = sessions.filter((s) => s.header.parentSession === undefined || !sessions.some((p) => p.header.id === s.header.parentSession));
    if (roots.length === 0) throw new RollerError(ErrorCode.NATIVE_SHAPE_UNKNOWN, `${native}: every session log names a parent among the others (a cycle): no root session`);
    return roots.map((root) => {
      const tree = sessionTree(sessions, root.header.id);
      const orphanSpawns = deepSeekSpawnsWithoutParticipant(tree);
      return {
        sessionId: root.header.id,
        trace: tree.flatMap((s) => s.lines),
        actf: deepSeekToActf(root, input.calls),
        participants: deepSeekParticipants(tree),
        source: { logs: tree.map((s) => s.file) },
        where: root.file,
        rejects: tree.flatMap((s) => s.rejects),
        mainFiles: [root.file],
        ...(orphanSpawns.length > 0 ? { usageExtra: { spawns_without_participant: orphanSpawns } } : {}),
      };
    });
  },

  async nativeCapture({ nativeRoot, version, session }) {
    const tree = sessionTree(readDshSessions(nativeRoot), session.sessionId);
    const native = deepSeekNativeCapture(tree, deepSeekParticipants(tree), version);
    return { ...native, participants: relativeStatusSources(native.participants, nativeRoot) };
  },

  /** Sub-agent sessions, each converted like the root from its own lines of the trace. */
  atifSubagents(records) {
    const sessions = sessionsOfTrace(records as Record<string, any>[]);
    return sessions.filter((s) => s.header.parentSession !== undefined).map((s) => ({ id: s.header.id, participant: `session:${s.header.id}`, actf: deepSeekToActf(s) }));
  },

  runner: {
    pin: PINNED_HARNESSES.deepseek,
    nativeRoot: dshSessionsDir,
    plan: (l) => {
      if (!l.runtime) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'deepseek: its Node 24 runtime is not installed (roller harness install deepseek)');
      const readerTool = (l.harnessOptions as { readerTool?: boolean } | undefined)?.readerTool === true;
      return deepSeekPlan({ ...launchFields(l), runtime: l.runtime, ...(readerTool ? { readerTool } : {}) });
    },
    thinkingLevels: [], // roller sets no reasoning level for dsh: --thinking is refused for it
    apiModels: false,
    configFiles: [],
    contextSettings: false,
    maxPromptBytes: DSH_MAX_PROMPT_BYTES,
  },
};
