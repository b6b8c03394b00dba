/**
 * Deterministic generator of call-like JSONL records (20–60 KB each): a request context with messages
 * and tools, a reassembled output, usage and ids, shaped like roller.call/v1. Same seed, same bytes.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname } from 'node:path';

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Mostly ASCII, like real model traffic (code, logs, prose); non-ASCII text is rare but present.
const WORDS = 'the agent read file src/index.ts then ran npm test and fixed a failing assertion in the parser module while keeping the stream bounded { } ( ) => const let return'.split(' ');
const RARE = ['café', 'naïve', '中文', '✓', 'Zürich'];

function text(rand: () => number, chars: number): string {
  const parts: string[] = [];
  let n = 0;
  while (n < chars) {
    const r = rand();
    const w = r < 0.0005 ? RARE[Math.floor(rand() * RARE.length)]! : WORDS[Math.floor(r * WORDS.length)]!;
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(' ');
}

export function makeRecord(rand: () => number, seq: number): Record<string, unknown> {
  const target = 20_000 + Math.floor(rand() * 40_000);
  const turns = 2 + Math.floor(rand() * 8);
  // Each turn holds a user text of `per` chars and an assistant text of per/2: 1.5 × per a turn.
  const per = Math.floor((target - 3000) / (turns * 1.5));
  const messages: unknown[] = [];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: [{ type: 'text', text: text(rand, per) }] });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: text(rand, Math.floor(per / 2)) },
        { type: 'tool_use', id: `toolu_${seq}_${t}`, name: 'Bash', input: { command: `grep -rn ${WORDS[t % WORDS.length]} src` } },
      ],
    });
  }
  return {
    schema: 'roller.call/v1',
    call_id: `c-bench-${seq.toString(16).padStart(8, '0')}`,
    seq,
    protocol: 'anthropic-messages',
    method: 'POST',
    path: '/v1/messages?beta=true',
    upstream_path: '/v1/messages?beta=true',
    started_at: new Date(Date.UTC(2026, 10, 30, 8, 0, 0) + seq * 1000).toISOString(),
    http_status: 200,
    participant_id: 'p-bench-root',
    native_identity: { session_id: 'sess-bench' },
    request_model: 'claude-bench',
    response_id: `msg_${seq}`,
    context: {
      model: 'claude-bench',
      max_tokens: 32000,
      system: [{ type: 'text', text: text(rand, 1500) }],
      tools: [{ name: 'Bash', description: 'Run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      metadata: { user_id: `user_${seq % 97}` },
      messages,
    },
    output: { id: `msg_${seq}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: text(rand, 400 + Math.floor(rand() * 800)) }] },
    usage: { reported: { input_tokens: 1000 + seq, output_tokens: 50 }, normalized: { input: 1000 + seq, cached_input: 0, cache_creation: 0, output: 50, reasoning: 0 } },
    tool_refs: [],
  };
}

/** Writes at least `bytes` of records to `path` (via a temp name, so a half-made file is never reused). */
export async function generateJsonl(path: string, bytes: number, seed = 42): Promise<{ records: number; bytes: number }> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.partial`;
  const out = createWriteStream(temp, { highWaterMark: 1 << 20 });
  const rand = mulberry32(seed);
  let written = 0;
  let records = 0;
  while (written < bytes) {
    const line = `${JSON.stringify(makeRecord(rand, records))}\n`;
    records++;
    written += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await rename(temp, path);
  return { records, bytes: written };
}

export async function ensureJsonl(path: string, bytes: number): Promise<number> {
  const existing = await stat(path).catch(() => undefined);
  if (existing && existing.size >= bytes) return existing.size;
  const made = await generateJsonl(path, bytes);
  return made.bytes;
}
