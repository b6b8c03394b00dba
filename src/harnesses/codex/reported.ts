import { readFile } from 'node:fs/promises';

/**
 * The root thread a `codex exec --json` run started (its first thread.started event): the confirmed id a follow-up
 * resumes (seeds/000) — never `--last`, which after a delegation picks a child's rollout.
 */
export async function rootThreadOfStdout(stdout: string): Promise<string | null> {
  const text = await readFile(stdout, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.includes('"thread.started"')) continue;
    try {
      const event = JSON.parse(line) as { type?: string; thread_id?: unknown };
      if (event.type === 'thread.started' && typeof event.thread_id === 'string') return event.thread_id;
    } catch {
      // a line cut short: not the event
    }
  }
  return null;
}

/** The reply of one prompt as the user saw it: the root thread's last agent_message item (null: none was printed). */
export async function replyOfStdout(stdout: string): Promise<string | null> {
  const text = await readFile(stdout, 'utf8').catch(() => '');
  let reply: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes('"agent_message"')) continue;
    try {
      const e = JSON.parse(line) as { type?: string; item?: { type?: string; text?: unknown } };
      if (e.type === 'item.completed' && e.item?.type === 'agent_message' && typeof e.item.text === 'string') reply = e.item.text;
    } catch {
      // a cut line: not an item
    }
  }
  return reply;
}
