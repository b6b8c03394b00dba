#!/usr/bin/env node
// The toy harness: a minimal coding-agent CLI for roller's tests. It reads its prompt on stdin, talks Chat Completions
// (streamed) to --base-url with TOY_API_KEY, runs the model's `write` tool calls in its working directory, and keeps
// its session as $HOME/.toy/sessions/<id>.toy.jsonl. stdout: one JSON line, {"type":"result","session","text"}.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const arg = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const baseUrl = arg('--base-url');
const model = arg('--model') ?? 'scripted-model';
if (!baseUrl || !process.env.TOY_API_KEY || !process.env.HOME) {
  process.stderr.write('toy: --base-url, TOY_API_KEY and HOME are needed\n');
  process.exit(2);
}
const sessionId = arg('--session') ?? randomUUID();
const sessions = join(process.env.HOME, '.toy', 'sessions');
mkdirSync(sessions, { recursive: true });
const file = join(sessions, `${sessionId}.toy.jsonl`);
const record = (line) => appendFileSync(file, `${JSON.stringify(line)}\n`);

const system = `You are toy, a small coding agent. Working directory: ${process.cwd()}`;
const tools = [
  {
    type: 'function',
    function: { name: 'write', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } },
  },
];
const messages = [{ role: 'system', content: system }];
if (arg('--session')) {
  // A continued session: its earlier turns, as recorded.
  for (const l of readFileSync(file, 'utf8').split('\n').filter(Boolean).map((x) => JSON.parse(x))) {
    if (l.kind === 'user') messages.push({ role: 'user', content: l.text });
    if (l.kind === 'assistant') messages.push({ role: 'assistant', content: l.text || null, ...(l.tool_calls.length ? { tool_calls: l.tool_calls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })) } : {}) });
    if (l.kind === 'tool') messages.push({ role: 'tool', tool_call_id: l.tool_call_id, content: l.text });
  }
} else record({ kind: 'meta', system, tools, cwd: process.cwd() });

const prompt = readFileSync(0, 'utf8');
messages.push({ role: 'user', content: prompt });
record({ kind: 'user', text: prompt });

/** One streamed completion, reassembled. */
async function complete() {
  const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.TOY_API_KEY}` },
    body: JSON.stringify({ model, messages, tools, stream: true, stream_options: { include_usage: true } }),
  });
  if (!res.ok) throw new Error(`the model answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const out = { id: null, text: '', reasoning: '', tool_calls: [], usage: null, finish: null };
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += Buffer.from(chunk).toString('utf8');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (!data || data === '[DONE]') continue;
      const c = JSON.parse(data);
      out.id ??= c.id;
      if (c.usage) out.usage = c.usage;
      for (const choice of c.choices ?? []) {
        const d = choice.delta ?? {};
        if (d.content) out.text += d.content;
        if (d.reasoning_content) out.reasoning += d.reasoning_content;
        for (const t of d.tool_calls ?? []) {
          const slot = (out.tool_calls[t.index] ??= { id: '', name: '', arguments: '' });
          if (t.id) slot.id = t.id;
          if (t.function?.name) slot.name += t.function.name;
          if (t.function?.arguments) slot.arguments += t.function.arguments;
        }
        if (choice.finish_reason) out.finish = choice.finish_reason;
      }
    }
  }
  return out;
}

let answer = '';
for (let turn = 0; turn < 20; turn++) {
  const r = await complete();
  const u = r.usage ?? {};
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  record({
    kind: 'assistant',
    id: r.id,
    text: r.text,
    reasoning: r.reasoning || null,
    tool_calls: r.tool_calls,
    finish: r.finish,
    usage: { input: (u.prompt_tokens ?? 0) - cached, cache_read: cached, output: u.completion_tokens ?? 0, reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0 },
  });
  messages.push({ role: 'assistant', content: r.text || null, ...(r.tool_calls.length ? { tool_calls: r.tool_calls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })) } : {}) });
  answer = r.text;
  if (r.tool_calls.length === 0) break;
  for (const t of r.tool_calls) {
    let text;
    let isError = false;
    try {
      if (t.name !== 'write') throw new Error(`no tool named ${t.name}`);
      const input = JSON.parse(t.arguments);
      writeFileSync(resolve(process.cwd(), input.path), input.content);
      text = `wrote ${input.path}`;
    } catch (err) {
      text = `error: ${err.message}`;
      isError = true;
    }
    record({ kind: 'tool', tool_call_id: t.id, text, is_error: isError });
    messages.push({ role: 'tool', tool_call_id: t.id, content: text });
  }
}
process.stdout.write(`${JSON.stringify({ type: 'result', session: sessionId, text: answer })}\n`);
