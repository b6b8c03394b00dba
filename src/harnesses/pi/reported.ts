import { stdoutEvents } from '../stdout-events.js';

type JsonEvent = { type?: string; id?: string; message?: { role?: string; content?: { type?: string; text?: unknown }[] } };

/** `pi --mode json` prints its session header first: the id `--session` continues. */
export async function sessionOfStdout(stdout: string): Promise<string | null> {
  const header = (await stdoutEvents<JsonEvent>(stdout)).find((e) => e.type === 'session');
  return typeof header?.id === 'string' ? header.id : null;
}

/** The reply the user saw: the last finished assistant message's text parts (null: none had text). */
export async function replyOfStdout(stdout: string): Promise<string | null> {
  const texts = (await stdoutEvents<JsonEvent>(stdout))
    .filter((e) => e.type === 'message_end' && e.message?.role === 'assistant')
    .map((e) => (e.message!.content ?? []).filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string).join(''))
    .filter((t) => t !== '');
  return texts.at(-1) ?? null;
}
