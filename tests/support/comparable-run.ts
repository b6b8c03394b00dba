import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { info, readJson, readJsonl, sample } from './collect-run.js';

type Json = Record<string, any>;

/**
 * Text with what differs between two runs of the same task masked: the attempt directories' random names, and the
 * ids a harness or the scripted model draws at random (tool calls, sessions, agents). Everything else must be equal.
 */
export function masked(text: string): string {
  return text
    .replace(/([/-])tmp[/-]roller-sample-\d+-[A-Za-z0-9]{6}/g, '$1<attempt>')
    .replace(/\b(toolu|call|fc|msg|resp|chatcmpl|ses|prt|rs)_[A-Za-z0-9-]+/g, '$1_<id>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
    .replace(/\b[0-9a-f]{16,}\b/g, '<hex>')
    .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?\b/g, '<time>')
    .replace(/Chunk ID: [0-9a-f]+/g, 'Chunk ID: <id>') // Codex's exec output chunks
    .replace(/Wall time: [\d.]+ seconds/g, 'Wall time: <s> seconds') // Codex's exec output timing
    .replace(/duration_ms: \d+/g, 'duration_ms: <ms>') // Claude Code's sub-agent report
    .replace(/\[\w{3} \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\]/g, '[<time>]') // OpenClaw's completion event
    .replace(/Stats: runtime [\d.]+m?s/g, 'Stats: runtime <time>') // OpenClaw's sub-agent stats
    .replace(/("nickname\\?":\s*\\?")[A-Za-z]+/g, '$1<name>'); // Codex's sub-agents are named at random
}

/** Every string in a JSON value masked (numbers and keys as they are). */
function maskedValue(value: unknown): unknown {
  if (typeof value === 'string') return masked(value);
  if (Array.isArray(value)) return value.map(maskedValue);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskedValue(v)]));
  return value;
}

/**
 * What two runs of the same tasks on the scripted model must agree on, sample by sample: status, tokens (the sample's
 * and each participant's, by role), relation types and statuses, and the SFT messages (ids and paths masked).
 */
export function comparableRun(run: string): Json[] {
  return info(run).samples.map((row) => {
    const s = sample(run, row) as Json;
    const dir = join(run, row.path);
    const relationsFile = join(dir, 'capture', 'attempt-0001', 'relations.jsonl');
    const relations = existsSync(relationsFile) && readFileSync(relationsFile, 'utf8').trim() ? readJsonl(relationsFile).map((r) => `${r.type}:${r.status}`).sort() : [];
    const sftText = existsSync(join(dir, 'trace_SFT.json')) ? readFileSync(join(dir, 'trace_SFT.json'), 'utf8') : null;
    const sft = sftText === null ? null : maskedValue(JSON.parse(sftText));
    // What the harness draws at random or times (Codex's sub-agent nicknames, OpenClaw's sub-agent runtime) is in the
    // context: its length moves the tokens, between two local runs as much as between local and docker.
    const randomLength = sftText !== null && /nickname\\?":\s*\\?"|Stats: runtime /.test(sftText);
    const tokens = <T>(t: T): T | string => (randomLength ? '<random-length context>' : t);
    return {
      task: row.task_id,
      status: row.status,
      error: s.error?.code ?? null,
      // Tokens, not cost: the embedded scripted model costs nothing, the same model served as an API is priced.
      usage: tokens(s.usage ? { input: s.usage.input, cached_input: s.usage.cached_input, cache_creation: s.usage.cache_creation, output: s.usage.output, reasoning: s.usage.reasoning, requests: s.usage.requests } : null),
      participants: (s.runtime.participants as Json[]).map((p) => ({ role: p.role, depth: p.depth, tokens: tokens(p.tokens), status: p.status })),
      relations,
      sft,
    };
  });
}

/** The lock's record of the container, and its image. */
export function lockedContainer(run: string): Json {
  const lock = readJson<Json>(join(run, 'lock.json'));
  return { image_id: lock.image_id, container: lock.container };
}
