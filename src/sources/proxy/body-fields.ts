/**
 * Fields a model config adds to every request body (vLLM's `return_token_ids`, `logprobs`): written first into the
 * body's top-level JSON object, the rest forwarded byte for byte as it came. A textual insert, not a re-serialization,
 * so a large body streamed past the proxy gets them too; a key the harness also sends comes later and wins, as JSON
 * parsers take the last.
 */
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The body's chunks with `fields` inserted after its opening brace; null when the body is not a JSON object. */
export function withBodyFields(parts: readonly Buffer[], fields: Readonly<Record<string, unknown>>): { parts: Buffer[]; added: number } | null {
  const entries = Object.entries(fields);
  if (entries.length === 0) return { parts: [...parts], added: 0 };
  // Where the opening brace is, and whether the object is empty (no comma after the inserted fields then).
  let brace: { part: number; at: number } | null = null;
  let empty: boolean | null = null;
  for (let p = 0; p < parts.length && empty === null; p++) {
    const b = parts[p]!;
    for (let i = 0; i < b.length; i++) {
      if (SPACE.has(b[i]!)) continue;
      if (brace === null) {
        if (b[i] !== 0x7b) return null;
        brace = { part: p, at: i };
        continue;
      }
      empty = b[i] === 0x7d;
      break;
    }
  }
  if (brace === null || empty === null) return null;
  const text = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',') + (empty ? '' : ',');
  const insert = Buffer.from(text);
  const head = parts[brace.part]!;
  const out = [...parts.slice(0, brace.part), head.subarray(0, brace.at + 1), insert, head.subarray(brace.at + 1), ...parts.slice(brace.part + 1)].filter((b) => b.length > 0);
  return { parts: out, added: insert.length };
}
