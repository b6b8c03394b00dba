import { stdoutEvents } from '../stdout-events.js';

type RunEvent = { type?: string; sessionID?: string; part?: { messageID?: string; text?: unknown } };

/** The session `opencode run` worked in: the first event's sessionID (the root; a `task` child's events are not printed). */
export async function sessionOfStdout(stdout: string): Promise<string | null> {
  return (await stdoutEvents<RunEvent>(stdout)).find((e) => typeof e.sessionID === 'string')?.sessionID ?? null;
}

/** The reply the user saw: the text parts of the root session's last message that had text (null: none was printed). */
export async function replyOfStdout(stdout: string): Promise<string | null> {
  const all = await stdoutEvents<RunEvent>(stdout);
  const root = all.find((e) => typeof e.sessionID === 'string')?.sessionID;
  const texts = all.filter((e) => e.type === 'text' && e.sessionID === root && typeof e.part?.text === 'string');
  const last = texts.at(-1)?.part?.messageID;
  return texts.length === 0 ? null : texts.filter((e) => e.part!.messageID === last).map((e) => e.part!.text as string).join('');
}
