import { request } from 'undici';
import { ErrorCode, RollerError } from '../../core/errors.js';
import { USER_SIMULATOR_EVENTS_SCHEMA, type DialogueTermination, type UserSimulatorEvent, type VisibleTurn } from '../../schemas/dialogue.js';
import type { UserSimulatorSpec } from '../../schemas/task.js';
import { newStandIn } from './custody.js';
import { startProxyPipeline, type RunningProxyPipeline } from '../proxy.js';
import type { ModelUpstream, ResolvedModel } from './models.js';

/** The simulator's answer to one Task Agent reply: the next user message, or its stop (with any words said alongside). */
export type SimulatorAnswer = { kind: 'message'; text: string } | { kind: 'stop'; said: string };

const now = () => new Date().toISOString();

/**
 * The simulated user of one attempt (seeds/003 §2.3): a Chat Completions client whose calls go through a recording
 * proxy of their own, reading only the dialogue both sides see. Its client events become user_simulator/trace.jsonl.
 */
export class UserSimulator {
  readonly events: UserSimulatorEvent[] = [];
  readonly turns: VisibleTurn[] = [];
  readonly pending: string[] = [];
  readonly startedAt = now();
  termination: DialogueTermination | null = null;
  answers = 0;

  private constructor(
    readonly spec: UserSimulatorSpec,
    readonly model: ResolvedModel,
    readonly captureDir: string,
    private readonly pipeline: RunningProxyPipeline,
    private readonly timeoutMs: number,
    private readonly standIn: string,
  ) {}

  static async start(spec: UserSimulatorSpec, model: ResolvedModel, upstream: ModelUpstream, captureDir: string, prompt: string, timeoutMs: number): Promise<UserSimulator> {
    // The simulator's client holds a stand-in too: the model's key stays in its proxy.
    const standIn = newStandIn();
    const pipeline = await startProxyPipeline({ upstream: upstream.url, ...(upstream.headers ? { upstreamHeaders: upstream.headers } : {}), outDir: captureDir, wireTrace: 'full', credential: { standIn, key: model.apiKey } });
    const sim = new UserSimulator(spec, model, captureDir, pipeline, timeoutMs, standIn);
    sim.events.push({ schema: USER_SIMULATOR_EVENTS_SCHEMA, type: 'session', at: sim.startedAt, model: model.id, instructions: spec.instructions, stop: spec.stop, max_turns: spec.max_turns });
    sim.turns.push({ role: 'user', text: prompt, source: 'task', turn: 1, at: sim.startedAt });
    return sim;
  }

  /** The system prompt the simulator model gets: the task's instructions, the role it plays, and how it stops. */
  get systemPrompt(): string {
    return [
      this.spec.instructions,
      '',
      'You play the user in a conversation with an AI coding assistant. Each message you read is the assistant\'s reply to you.',
      'Answer with your next message to the assistant only, in the user\'s voice, nothing else.',
      `When your goal is reached or there is nothing more to ask, answer exactly: ${this.spec.stop}`,
      '',
      'Your first message to the assistant was:',
      this.turns[0]!.text,
    ].join('\n');
  }

  /** A user message the harness received as turn `turn` (the simulator's, delivered). */
  delivered(text: string, turn: number): void {
    this.turns.push({ role: 'user', text, source: 'user_simulator', turn, at: now() });
  }

  /** The Task Agent's visible reply to turn `turn`; then the simulator answers it. Throws USER_SIMULATOR_FAILED. */
  async answer(reply: string, turn: number): Promise<SimulatorAnswer> {
    this.turns.push({ role: 'assistant', text: reply, source: 'task_agent', turn, at: now() });
    // The simulator's own view: the Task Agent's replies are its user messages, its own messages its assistant turns.
    const messages = [
      { role: 'system', content: this.systemPrompt },
      ...this.turns.slice(1).map((t) => ({ role: t.role === 'assistant' ? 'user' : 'assistant', content: t.text })),
    ];
    const body = { model: this.model.kind === 'api' ? this.model.modelName : this.model.id, messages, stream: false };
    const path = '/chat/completions';
    this.events.push({ schema: USER_SIMULATOR_EVENTS_SCHEMA, type: 'request', at: now(), turn, path, body });
    let status: number | null = null;
    let answer: unknown;
    try {
      const res = await request(`${this.pipeline.proxy.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.standIn}` },
        body: JSON.stringify(body),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      status = res.statusCode;
      const text = await res.body.text();
      try {
        answer = JSON.parse(text);
      } catch {
        answer = text.slice(0, 2000);
      }
      if (status !== 200) throw new Error(`the simulator's model answered HTTP ${status}: ${typeof answer === 'string' ? answer : JSON.stringify(answer).slice(0, 400)}`);
      const content = (answer as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new Error('the simulator\'s model answered without a message text (choices[0].message.content)');
      this.events.push({ schema: USER_SIMULATOR_EVENTS_SCHEMA, type: 'response', at: now(), turn, http_status: status, body: answer, error: null });
      this.answers++;
      const at = content.indexOf(this.spec.stop);
      return at >= 0 ? { kind: 'stop', said: (content.slice(0, at) + content.slice(at + this.spec.stop.length)).trim() } : { kind: 'message', text: content.trim() };
    } catch (err) {
      // The proxy's 502 names an unreachable model API in its body, which the message quotes.
      const message = `user simulator (${this.model.id}), after Task Agent turn ${turn}: ${(err as Error).message}`;
      this.events.push({ schema: USER_SIMULATOR_EVENTS_SCHEMA, type: 'response', at: now(), turn, http_status: status, body: answer ?? null, error: { code: ErrorCode.USER_SIMULATOR_FAILED, message, at: now() } });
      throw new RollerError(ErrorCode.USER_SIMULATOR_FAILED, message);
    }
  }

  end(termination: DialogueTermination): void {
    if (this.termination) return;
    this.termination = termination;
    this.events.push({ schema: USER_SIMULATOR_EVENTS_SCHEMA, type: 'termination', at: now(), termination });
  }

  /** Closes the simulator's proxy; resolves when its calls.jsonl is complete. */
  async close(): Promise<Error | null> {
    await this.pipeline.proxy.close();
    return this.pipeline.done.then(
      () => null,
      (err: unknown) => err as Error,
    );
  }
}
