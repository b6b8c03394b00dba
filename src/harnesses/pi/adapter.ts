import type { HarnessAdapter } from '../adapter.js';
import { perIdNativeCapture } from '../native-capture.js';
import { PI_VERIFY } from './verify-scenarios.js';
import { PI_SUBAGENT_PROFILE } from './profile.js';
import { launchFields } from '../launch.js';
import { piPlan } from './launch.js';
import { sessionOfStdout, replyOfStdout } from './reported.js';
import { wireUsageByResponse } from '../../transforms/capture/token-agreement.js';
import { PI_EVENT_TYPE } from './recorder-extension.js';
import { readPiEvents } from './events.js';
import { requestSnapshotsIn } from '../request-snapshots.js';
import { findPiSessions, PI_RAW_SCHEMA, piParticipants, piSubagentSessions, piToActf, readPiSession, sessionOfRecords } from './session.js';

export { PI_SUBAGENT_PROFILE };

/** Pi (reference/harnesses/pi.md): each session file, the active branch of its entry tree, joined to calls by responseId. */
export const piAdapter: HarnessAdapter = {
  name: 'pi',
  rawSchema: PI_RAW_SCHEMA,
  // The session files, and roller's recorder events (recorder-extension.ts).
  sessionFiles: /^\.pi\/agent\/sessions\/.*\.jsonl$|^\.pi\/agent\/roller-events\.jsonl$/,

  async convert(native, input) {
    const events = readPiEvents(native);
    return findPiSessions(native).map((file) => {
      const session = readPiSession(file);
      return {
        sessionId: session.id,
        // roller.pi-events/v1: the session file as written, then the recorder's events of this session.
        trace: [...session.records, ...(events.get(session.id) ?? [])],
        actf: piToActf(session, input.calls ? { wire: input.calls } : {}),
        participants: piParticipants(session, input.calls ? wireUsageByResponse(input.calls) : undefined),
        sftBlocker: piCompactionBlocker(session.branch),
        source: { session: file },
        where: file,
      };
    });
  },

  async nativeCapture({ version, session, profile }) {
    const delegation = profile === PI_SUBAGENT_PROFILE ? 'native' : 'not_available_in_bundled_profile';
    const base = perIdNativeCapture({ harness: { name: 'pi', version }, participants: session.participants, background: false, nativeFiles: [] });
    const [only] = session.participants;
    // Releases before 0.60 write no responseId: a one-participant session's calls are the ones through its own proxy,
    // and coverage is a count (its assistant messages against the calls).
    if (session.participants.length === 1 && only!.message_ids.length === 0 && only!.messages > 0) {
      return {
        ...base,
        capabilities: { native_output_coverage: 'count', delegation, background: false },
        outputs: { method: 'count', counts: { [only!.participant]: only!.messages } },
        soleParticipant: { participant: only!.participant, evidence: "the call went through this run's own proxy and the Pi session has one participant (its release writes no responseId)" },
      };
    }
    // responseId = the Chat Completions id: a per-id join; no delegation without an extension.
    return { ...base, capabilities: { native_output_coverage: 'per_id', delegation, background: false } };
  },

  requestSnapshots: (tracePath) => requestSnapshotsIn(tracePath, '"provider_request"', (r) => (r.type === PI_EVENT_TYPE && r.event === 'provider_request' ? (r.payload ?? undefined) : undefined)),

  /** The example extension's children, whose transcripts Pi keeps in the parent's tool results. */
  atifSubagents(records) {
    const own = (records as Record<string, any>[]).filter((r) => r.type !== PI_EVENT_TYPE);
    return piSubagentSessions(sessionOfRecords('trace.jsonl', own)).map((c) => ({ id: c.nativeId, participant: `subagent:${c.nativeId}`, actf: piToActf(c.session) }));
  },

  runner: {
    pin: { package: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
    verify: PI_VERIFY,
    delegationOff: ({ profile }) => (profile === PI_SUBAGENT_PROFILE ? null : "Pi's bundled profile has no delegation tool: pass --pi-subagent-extension for the example sub-agent extension Pi ships"),
    profiles: [{ name: PI_SUBAGENT_PROFILE, option: '--pi-subagent-extension', description: "enable the example sub-agent extension Pi ships (roller's profile has none)" }],
    nativeRoot: (home) => home,
    plan: (l) =>
      piPlan({
        ...launchFields(l),
        ...(l.version ? { version: l.version } : {}),
        subagentExtension: l.profile === PI_SUBAGENT_PROFILE,
        ...(l.thinking ? { thinking: l.thinking } : {}),
        // A later prompt continues the session the first run printed in its header.
        ...(l.continueSession ? { extraArgs: ['--session', l.continueSession, ...(l.extraArgs ?? [])] } : {}),
      }),
    sessionOfStdout,
    replyOfStdout,
    thinkingLevels: ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'], // pi --thinking
    protocols: ['openai-chat-completions', 'anthropic-messages', 'openai-responses'], // models.json api: openai-completions, anthropic-messages, openai-responses
    configFiles: ['.pi/settings.json', '.pi/models.json'],
    homeConfigFiles: ['.pi/agent/settings.json', '.pi/agent/models.json'],
    contextSettings: false,
  },
};

/**
 * A session Pi compacted: the ACTF holds every turn, but the model never saw them at once after a compaction (it saw
 * the summary and the kept turns), so one linear record would misstate its context. roller rebuilds compaction
 * segments for Claude Code only so far: no SFT then, saying why.
 */
function piCompactionBlocker(branch: readonly Record<string, any>[]): string | null {
  const compactions = branch.filter((e) => e.type === 'compaction');
  if (compactions.length === 0) return null;
  return `the main context was compacted ${compactions.length} time(s) (compaction entries ${compactions.map((c) => String(c.id)).join(', ')}): a linear SFT would join windows the model never saw at once, and roller rebuilds compaction segments for Claude Code only so far`;
}
