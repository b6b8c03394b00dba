import { HERMES_EVENTS_SCHEMA } from '../../schemas/harness-events.js';
import type { HarnessAdapter, SessionConversion } from '../adapter.js';
import { hermesParticipants, hermesToActf } from './participants.js';
import { hermesDataOfEvents, hermesEvents, hermesStore, readHermes } from './store.js';
import { basename, relative } from 'node:path';
import { launchFields } from '../launch.js';
import { relativeStatusSources } from '../native-archive.js';
import { hermesNativeCapture } from './native-capture.js';
import { HERMES_VERIFY } from './verify-scenarios.js';
import { HERMES_MAX_PROMPT_BYTES, hermesHome, hermesPlan } from './launch.js';

/**
 * Hermes (Nous Research; Python, from PyPI into a venv of its own): a state.db (SQLite) or a roller.hermes-events/v1
 * file, one converted session per root participant with its delegate_task children and compression chains.
 */
export const hermesAdapter: HarnessAdapter = {
  name: 'hermes',
  rawSchema: HERMES_EVENTS_SCHEMA,
  sessionFiles: /(^|\/)(state\.db(-wal|-shm)?|[^/]*\.events\.jsonl)$/,

  async convert(native) {
    const data = readHermes(hermesStore(native));
    const { participants, ownerOf } = hermesParticipants(data);
    const out: SessionConversion[] = [];
    for (const root of participants.filter((p) => p.role === 'root')) {
      // The root's tree: participants below it, and every session of theirs (compression chains included).
      const tree = new Set<string>([root.participant]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const p of participants) if (p.parent && tree.has(p.parent) && !tree.has(p.participant)) (tree.add(p.participant), (grew = true));
      }
      const sessions = new Set(data.sessions.filter((s) => tree.has(`session:${ownerOf.get(s.id)}`)).map((s) => s.id));
      out.push({
        sessionId: root.native_id,
        trace: hermesEvents(data, sessions),
        actf: hermesToActf(data, root.native_id, ownerOf),
        participants: participants.filter((p) => tree.has(p.participant)),
        source: { input: native, sessions: [...sessions] },
        where: native,
      });
    }
    return out;
  },

  async nativeCapture({ nativeRoot, version, session }) {
    const store = hermesStore(nativeRoot);
    const data = readHermes(store);
    const { participants, ownerOf } = hermesParticipants(data);
    const mine = new Set(session.participants.map((p) => p.participant));
    return hermesNativeCapture(data, relativeStatusSources(participants.filter((p) => mine.has(p.participant)), nativeRoot), ownerOf, version, relative(nativeRoot, store) || basename(store));
  },

  /** delegate_task children, each converted like a root from its own sessions in the trace. */
  atifSubagents(records) {
    const data = hermesDataOfEvents(records, 'trace.jsonl');
    const { participants, ownerOf } = hermesParticipants(data);
    return participants.filter((p) => p.role === 'child').map((p) => ({ id: p.native_id, participant: p.participant, actf: hermesToActf(data, p.native_id, ownerOf) }));
  },

  runner: {
    // The newest release whose requirements resolve on Python 3.11 (docs/harness-notes/hermes.md): later ones need 3.14.
    pin: { package: 'hermes_agent', version: '0.19.0', bin: 'hermes', pypi: { python: { min: '3.11', below: '3.14' } } },
    nativeRoot: hermesHome,
    verify: HERMES_VERIFY,
    plan: (l) => {
      const depth = (l.harnessOptions as { maxSpawnDepth?: number } | undefined)?.maxSpawnDepth;
      return hermesPlan({ ...launchFields(l), ...(depth ? { maxSpawnDepth: depth } : {}) });
    },
    thinkingLevels: [],
    protocols: ['openai-chat-completions'],
    configFiles: [],
    contextSettings: false,
    maxPromptBytes: HERMES_MAX_PROMPT_BYTES,
  },
};
