/**
 * roller's Pi recorder (seeds/003 roller.pi-events/v1): a Pi extension that only observes. It appends, for each
 * session, the turn boundaries, the context Pi hands the model before each call, the provider payload it then
 * sends (Pi 0.60+) and the response status, one JSON line each, to the file named by ROLLER_PI_EVENTS. It
 * registers no tool, command or prompt, and changes nothing it sees.
 *
 * Runs inside Pi's process, loaded by Pi from the agent dir (`extensions/roller-recorder.ts`, the compiled
 * JavaScript — valid TypeScript for Pi's loader): Node built-ins only, no roller imports.
 */
import { appendFileSync } from 'node:fs';

type Json = Record<string, any>;
interface PiContext {
  sessionManager?: { getSessionId?(): string };
}
interface PiExtensionApi {
  on(event: string, handler: (event: Json, ctx: PiContext) => unknown): void;
}

export const PI_EVENTS_SCHEMA = 'roller.pi-events/v1';
/** The `type` of a recorder line in trace.jsonl, beside the session file's own records. */
export const PI_EVENT_TYPE = 'roller.pi-event';

export default function rollerRecorder(pi: PiExtensionApi): void {
  const file = process.env.ROLLER_PI_EVENTS;
  if (!file) return;
  let seq = 0;
  const record = (event: string, ctx: PiContext, data: Json): void => {
    const line = { type: PI_EVENT_TYPE, schema: PI_EVENTS_SCHEMA, seq: seq++, at: new Date().toISOString(), event, session_id: ctx.sessionManager?.getSessionId?.() ?? null, pid: process.pid, ...data };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  pi.on('agent_start', (_e, ctx) => record('agent_start', ctx, {}));
  pi.on('turn_start', (e, ctx) => record('turn_start', ctx, { turn_index: e.turnIndex ?? null }));
  pi.on('context', (e, ctx) => {
    record('context', ctx, { messages: e.messages ?? null });
    return undefined;
  });
  pi.on('before_provider_request', (e, ctx) => {
    record('provider_request', ctx, { payload: e.payload ?? null });
    return undefined;
  });
  pi.on('after_provider_response', (e, ctx) => record('provider_response', ctx, { status: e.status ?? null }));
  pi.on('turn_end', (e, ctx) => record('turn_end', ctx, { turn_index: e.turnIndex ?? null }));
  pi.on('agent_end', (_e, ctx) => record('agent_end', ctx, {}));
}
