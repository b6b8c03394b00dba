/**
 * roller's dsh driver: dsh's own headless runner (@deepseek-ai/dsh-headless 0.1.0-rc.8: one Agent, the task as one
 * follow-up, flush, print the final text, exit) with one change — before it exits it lets the run settle: while any
 * live agent is running (a background sub-agent, or the root answering its settlement notice) it waits for it, and
 * exits after three checks 100 ms apart find every agent idle. Headless alone exits when the root's first turn ends
 * and stops its background sub-agents mid-turn. Every session is flushed before the exit.
 *
 * Loaded by dsh's plugin loader from the install prefix (roller-dsh-driver.mjs beside node_modules, so dsh's own
 * packages resolve) through a --patch overlay that disables `headless-runner` and inserts this entry in its place.
 * No roller imports; dsh's modules are imported at run time.
 */
type Json = Record<string, any>;

interface DshAgent {
  status: 'idle' | 'running';
  session: { seq: number; events: Json[] };
  whenIdle(): Promise<void>;
  followup(message: unknown): void;
}
interface DshContext {
  get(name: string): any;
}

export const name = 'roller-headless-runner';
export const inject = ['agentDefaultModel', 'agents', 'sessions'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = (specifier: string): Promise<Json> => import(specifier);

/** Every live agent idle at three checks in a row: the run has nothing left to do. */
async function settle(agents: { list(): DshAgent[] }): Promise<void> {
  for (let quiet = 0; quiet < 3; ) {
    const busy = agents.list().filter((a) => a.status === 'running');
    if (busy.length === 0) {
      quiet++;
      await sleep(100);
      continue;
    }
    quiet = 0;
    await Promise.all(busy.map((a) => a.whenIdle()));
  }
}

async function run(ctx: DshContext, task: string, exit: (code: number) => void): Promise<void> {
  await ctx.get('loader')?.await();
  const [{ installModelSelection }, { createUserMessage }, { SessionId }] = await Promise.all([load('@deepseek-ai/dsh-agent'), load('@deepseek-ai/dsh-llm'), load('@deepseek-ai/dsh-session')]);
  const agents = ctx.get('agents');
  const sessions = ctx.get('sessions');
  const selection = ctx.get('agentDefaultModel').currentSelection();
  const { agent } = (await agents.create({
    sessionId: SessionId(`session-${crypto.randomUUID()}`),
    meta: { cwd: process.cwd() },
    agentOptions: { provider: selection.provider, model: selection.model },
    setup: (agentCtx: unknown) => {
      installModelSelection(agentCtx, { current: selection, assembled: undefined });
    },
  })) as { agent: DshAgent };
  await agent.whenIdle();
  const firstSeq = agent.session.seq;
  agent.followup(createUserMessage({ content: [{ type: 'text', text: task }], source: { kind: 'user' } }));
  await settle(agents);
  for (const a of agents.list()) await sessions.flush(a.session);
  let text = '';
  let reason: Json | undefined;
  for (const e of agent.session.events) {
    if (e.seq < firstSeq) continue;
    if (e.type === 'assistant/message') {
      const joined = (e.data.message.content as Json[]).filter((b) => b.type === 'text').map((b) => b.text).join('');
      if (joined !== '') text = joined;
    }
    if (e.type === 'turn/end') reason = e.data.reason;
  }
  process.stdout.write(`${text}\n`);
  if (reason?.kind === 'error') process.stderr.write(`dsh: ${reason.error?.code}: ${reason.error?.message}\n`);
  exit(reason?.kind === 'completed' ? 0 : 1);
}

export function apply(ctx: DshContext, config: { task: string }): void {
  const exit = ctx.get('appExit') as ((code: number) => void) | undefined;
  if (!exit) throw new Error('roller-headless-runner: the launcher must provide ctx.appExit');
  run(ctx, config.task, exit).catch((err: unknown) => {
    process.stderr.write(`roller dsh driver: ${err instanceof Error ? err.message : String(err)}\n`);
    exit(1);
  });
}
