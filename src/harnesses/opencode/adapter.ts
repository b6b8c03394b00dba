import { sessionOfStdout, replyOfStdout } from './reported.js';
import type { HarnessAdapter, SessionConversion } from '../adapter.js';
import { OPENCODE_VERIFY } from './verify-scenarios.js';
import { launchFields } from '../launch.js';
import { relativeStatusSources } from '../native-archive.js';
import { openCodeToActf } from './actf.js';
import { openCodeEvents, storeOfEvents, type OpenCodeEvent } from './events.js';
import { openCodeDataDir, opencodePlan } from './launch.js';
import { OPENCODE_TITLE_CALL, openCodeNativeCapture } from './native-capture.js';
import { openCodeParticipants } from './participants.js';
import { OPENCODE_RAW_SCHEMA, readOpenCodeStoreAt, type OpenCodeStore } from './store.js';

/**
 * OpenCode (reference/harnesses/opencode.md): the SQLite store read with SQLite (sessions, messages, parts), one
 * converted session per root session with its `task` child sessions; trace.jsonl holds the rows as
 * roller.opencode-events/v1 records. Calls join sessions by the x-session-id header; coverage is a count.
 */
export const openCodeAdapter: HarnessAdapter = {
  name: 'opencode',
  rawSchema: OPENCODE_RAW_SCHEMA,
  // SQLite in WAL mode: the database with its journal files, as the CLI left them; before 1.2, the JSON storage objects
  sessionFiles: /(^|\/)opencode\.db(-wal|-shm)?$|(^|\/)storage\/(session|message|part)\/[^/]+\/[^/]+\.json$/,
  // OpenCode keeps no response ids: each call names its session in the x-session-id header.
  // …used only in roller's proxy and removed before forwarding (seeds/000); x-session-affinity, the provider's routing hint, stays.
  correlationHeaders: { 'x-session-id': 'session_id' },
  // A proxy started without OpenCode's table (`roller proxy`) forwards it and records it all the same.
  identityHeaders: { 'x-session-id': 'session_id' },
  auxiliaryCall: OPENCODE_TITLE_CALL,

  async convert(native, input) {
    const store = readOpenCodeStoreAt(native);
    const participants = openCodeParticipants(store);
    const out: SessionConversion[] = [];
    for (const root of store.sessions.filter((s) => s.parentId === null)) {
      const tree = new Set<string>([root.id]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const s of store.sessions) if (s.parentId && tree.has(s.parentId) && !tree.has(s.id)) (tree.add(s.id), (grew = true));
      }
      out.push({
        sessionId: root.id,
        trace: openCodeEvents(store, tree),
        actf: openCodeToActf(store, root.id, input.calls ? { wire: input.calls } : {}),
        participants: participants.filter((p) => tree.has(p.native_id)),
        source: { database: store.path, sessions: [...tree] },
        where: `${store.path} (session ${root.id})`,
      });
    }
    return out;
  },

  async nativeCapture({ nativeRoot, version }) {
    const native = openCodeNativeCapture(readOpenCodeStoreAt(nativeRoot), version);
    return { ...native, participants: relativeStatusSources(native.participants, nativeRoot) };
  },

  /** Child sessions (task-tool sub-agents, any depth), each converted like the root from the trace's rows. */
  atifSubagents(records) {
    const store: OpenCodeStore = storeOfEvents(records as unknown as OpenCodeEvent[]);
    return store.sessions.filter((x) => x.parentId !== null).map((x) => ({ id: x.id, participant: `session:${x.id}`, actf: openCodeToActf(store, x.id) }));
  },

  runner: {
    pin: { package: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
    verify: OPENCODE_VERIFY,
    delegationOff: ({ captureCalls }) => (captureCalls ? null : 'OpenCode is offered its task tool only when calls are captured (seeds/000): pass --capture-calls'),
    nativeRoot: (home) => home,
    plan: (l) =>
      opencodePlan({
        ...launchFields(l),
        ...(l.version ? { version: l.version } : {}),
        captureCalls: l.captureCalls === true,
        ...(l.thinking ? { thinking: l.thinking } : {}),
        // A later prompt continues the root session the first run printed (never --continue: the newest may be a child's).
        ...(l.continueSession ? { extraArgs: ['--session', l.continueSession, ...(l.extraArgs ?? [])] } : {}),
      }),
    sessionOfStdout,
    replyOfStdout,
    thinkingLevels: ['minimal', 'low', 'medium', 'high', 'xhigh'], // opencode run --variant, a variant of roller's model
    protocols: ['openai-chat-completions', 'anthropic-messages', 'openai-responses'], // its bundled @ai-sdk/openai-compatible, anthropic and openai providers
    configFiles: ['opencode.json', 'opencode.jsonc', '.opencode/opencode.json', '.opencode/opencode.jsonc'],
    homeConfigFiles: ['.config/opencode/opencode.json', '.config/opencode/opencode.jsonc', '.config/opencode/config.json'],
    contextSettings: false,
  },
};

export { openCodeDataDir };
