/**
 * A harness that exists only in the tests: its CLI is cli/toy.mjs (one `write` tool, Chat Completions, a JSONL
 * session per run under $HOME/.toy/sessions). Everything roller knows of it is in this folder; registering it
 * (registerHarness, the one line) lets `convert`, `collect`, `verify` and `reprocess` run it without a line of
 * src/ knowing it — the proof that adding a harness is its folder and one registry line.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessAdapter, SessionConversion } from '../../../src/harnesses/adapter.js';
import { isolatedHomeEnv, promptFile } from '../../../src/harnesses/launch.js';
import { perIdNativeCapture } from '../../../src/harnesses/native-capture.js';
import { stdoutEvents } from '../../../src/harnesses/stdout-events.js';
import { ACTF_SCHEMA_VERSION, type ActfStep } from '../../../src/schemas/actf.js';
import { newStep, timingOf } from '../../../src/transforms/actf/step.js';

type Usage = { input?: number; cache_read?: number; output?: number; reasoning?: number };
type ToyLine =
  | { kind: 'meta'; system: string; tools: unknown[] }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; id?: string; reasoning?: string | null; tool_calls?: { id: string; name: string; arguments: string }[]; finish?: string; usage?: Usage }
  | { kind: 'tool'; tool_call_id: string; text: string; is_error: boolean };

/** The session files under a converter root: the toy CLI's sessions dir, or .toy.jsonl files given directly. */
function sessionFilesUnder(native: string): string[] {
  if (native.endsWith('.toy.jsonl')) return [native];
  const dir = existsSync(join(native, '.toy', 'sessions')) ? join(native, '.toy', 'sessions') : native;
  return readdirSync(dir).filter((f) => f.endsWith('.toy.jsonl')).sort().map((f) => join(dir, f));
}

function toySession(file: string): SessionConversion {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ToyLine);
  const sessionId = basename(file, '.toy.jsonl');
  const meta = lines.find((l) => l.kind === 'meta');
  const steps: ActfStep[] = [];
  let pending: string | null = null;
  for (const l of lines) {
    if (l.kind === 'user') pending = l.text;
    else if (l.kind === 'assistant') {
      const step = newStep(steps.length + 1, pending, null);
      step.assistant_content = {
        reasoning_content: l.reasoning ?? null,
        content: l.text,
        tool_calls: (l.tool_calls ?? []).map((t) => ({ id: t.id, name: t.name, type: 'function' as const, arguments: JSON.parse(t.arguments) as Record<string, unknown> })),
      };
      step.stop_reason = l.finish ?? 'end_turn';
      if (l.id) step.native_ids = { message: l.id };
      steps.push(step);
      pending = null;
    } else if (l.kind === 'tool') steps.at(-1)?.observation.push({ toolCallId: l.tool_call_id, content: l.text, isError: l.is_error });
  }
  const assistants = lines.filter((l): l is Extract<ToyLine, { kind: 'assistant' }> => l.kind === 'assistant');
  const sum = (k: keyof Usage) => assistants.reduce((a, l) => a + (l.usage?.[k] ?? 0), 0);
  return {
    sessionId,
    trace: lines,
    actf: {
      schema_version: ACTF_SCHEMA_VERSION,
      system_prompt: meta?.system ?? '',
      system_prompt_source: meta ? 'native' : 'none',
      tools: (meta?.tools as NonNullable<SessionConversion['actf']['tools']> | undefined) ?? null,
      tools_source: meta ? 'native_derived' : 'none',
      steps,
      timing: timingOf(steps),
    },
    participants: [
      {
        participant: `session:${sessionId}`,
        role: 'root',
        native_id: sessionId,
        parent: null,
        spawn_tool_call_id: null,
        depth: 0,
        tokens: { input: sum('input'), cache_creation: 0, cache_read: sum('cache_read'), output: sum('output'), reasoning: sum('reasoning') },
        messages: assistants.length,
        message_ids: assistants.map((l) => l.id ?? ''),
        status: 'completed',
        status_source: `${basename(file)}:${lines.length}`,
        cost_usd: null,
        cost_note: null,
        reason: null,
      },
    ],
    source: { file },
    where: file,
  };
}

type ToyResult = { type?: string; session?: string; text?: string };

export const toyAdapter: HarnessAdapter = {
  name: 'toy',
  rawSchema: 'toy-session-jsonl',
  sessionFiles: /(^|\/)[^/]+\.toy\.jsonl$/,
  convert: async (native) => sessionFilesUnder(native).map(toySession),
  // One participant per session, its messages named by the completion ids the model sent: a per-id join.
  nativeCapture: async ({ version, session }) => ({
    ...perIdNativeCapture({ harness: { name: 'toy', version }, participants: session.participants, background: false, nativeFiles: [] }),
    capabilities: { native_output_coverage: 'per_id', delegation: 'not_available_in_bundled_profile', background: false },
  }),
  runner: {
    pin: { package: 'roller-toy-harness', version: '1.0.0', bin: 'toy', source: fileURLToPath(new URL('./cli', import.meta.url)) },
    verify: {
      scenarios: [
        { name: 'ordinary conversation', prompt: '[HELLO] say hello', agents: 0 },
        { name: 'a tool call', prompt: '[WRITE] write hello.txt', agents: 0 },
        { name: 'a single sub-agent', skip: { status: 'not_applicable', reason: 'the toy harness has no delegation tool' } },
      ],
      matrix: ['a tool call'],
    },
    delegationOff: () => 'the toy harness has no delegation tool',
    nativeRoot: (home) => home,
    plan: async (l) => ({
      command: l.bin,
      args: ['--base-url', l.baseUrl, ...(l.model ? ['--model', l.model] : []), ...(l.continueSession ? ['--session', l.continueSession] : [])],
      cwd: l.work,
      stdin: await promptFile(l),
      env: { ...isolatedHomeEnv(l.home), TOY_API_KEY: l.apiKey },
    }),
    sessionOfStdout: async (stdout) => (await stdoutEvents<ToyResult>(stdout)).find((e) => e.type === 'result')?.session ?? null,
    replyOfStdout: async (stdout) => (await stdoutEvents<ToyResult>(stdout)).find((e) => e.type === 'result')?.text ?? null,
    thinkingLevels: [],
    protocols: ['openai-chat-completions'],
    contextSettings: false,
  },
};
