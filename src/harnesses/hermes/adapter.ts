import { HERMES_EVENTS_SCHEMA } from '../../schemas/harness-events.js';
import type { HarnessAdapter, SessionConversion } from '../adapter.js';
import { hermesParticipants, hermesToActf } from './participants.js';
import { hermesEvents, readHermes } from './store.js';

/**
 * Hermes (Python; not installable here): a state.db (SQLite) or a roller.hermes-events/v1 file, one converted
 * session per root participant with its delegate_task children and compression chains.
 */
export const hermesAdapter: HarnessAdapter = {
  name: 'hermes',
  rawSchema: HERMES_EVENTS_SCHEMA,
  sessionFiles: /(^|\/)(state\.db(-wal|-shm)?|[^/]*\.events\.jsonl)$/,

  async convert(native) {
    const data = readHermes(native);
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
};
