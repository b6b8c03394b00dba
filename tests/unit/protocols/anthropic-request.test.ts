/**
 * Claude Code's tools as ACTF and SFT spell them (seeds/003: nested function schemas), from the requests of a real
 * Claude Code 2.1.332 run (tests/fixtures/claude-code/lab-single); a server tool (its own `type`) passes as sent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anthropicTools } from '../../../src/transforms/protocols/anthropic-request.js';

type Json = Record<string, any>;
const requests = readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'claude-code', 'lab-single', 'requests.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Json);

describe('anthropicTools', () => {
  it("every tool of every real request becomes { type: 'function', function: { name, description, parameters } }, in order, the schema untouched", () => {
    expect(requests.length).toBeGreaterThan(0);
    for (const { body } of requests) {
      const tools = body.tools as Json[];
      const nested = anthropicTools(body);
      expect(nested.map((t) => t.function?.name)).toEqual(tools.map((t) => t.name));
      nested.forEach((t, i) => expect(t).toEqual({ type: 'function', function: { name: tools[i]!.name, description: tools[i]!.description, parameters: tools[i]!.input_schema } }));
    }
  });

  it('a server tool (typed, no input_schema) is kept as sent; a tool without a schema gets an empty object schema; no tools is none', () => {
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };
    expect(anthropicTools({ tools: [search, { name: 'Ping' }] })).toEqual([search, { type: 'function', function: { name: 'Ping', parameters: { type: 'object' } } }]);
    expect(anthropicTools({})).toEqual([]);
  });
});
